//! The recovery runner resets a free faulty chip when its idle time ends, not at its next periodic round: with the
//! rounds an hour apart and nothing else changing, the chip is withdrawn for its reset within a second of its idle
//! time. (The simulated host of `support`; one test per file, as the simulator reads its configuration once.)

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_node::recovery::{NoRecoveryObserver, RecoveryConfig, RecoveryMode, RecoveryRunner};
use ascend_node::{Health, UnhealthyCause};
use support::{faulty, host, set_faults, wait_for, TestHolders, RESTART_FAULT};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_free_chip_is_reset_when_its_idle_time_ends() {
    let host = host().await;
    let mut snapshots = host.monitor.subscribe();
    let idle = Duration::from_millis(500);
    let config = RecoveryConfig { mode: RecoveryMode::Inference, idle, ..RecoveryConfig::default() };
    let runner = RecoveryRunner::new(
        config,
        Arc::clone(&host.manager),
        host.monitor.subscribe(),
        Arc::new(host.monitor.withdrawals()),
        Arc::new(TestHolders::default()),
        Arc::new(NoRecoveryObserver),
    )
    .with_timing(Duration::from_secs(3600), Duration::from_millis(100));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(runner.run(async {
        let _ = stopped.await;
    }));

    set_faults(&host.overlay, &[RESTART_FAULT]);
    wait_for(&mut snapshots, 10, "the fault seen", faulty).await;
    let seen = Instant::now();
    wait_for(&mut snapshots, 10, "withdrawn for its reset", |health| {
        matches!(health, Health::Unhealthy(UnhealthyCause::Recovering))
    })
    .await;
    let waited = seen.elapsed();
    assert!(waited < idle + Duration::from_secs(1), "withdrawn {waited:?} after the fault (idle {idle:?})");
    wait_for(&mut snapshots, 10, "healthy after the reset", |health| *health == Health::Healthy).await;
    let _ = stop.send(());
    task.await.expect("runner");
}
