//! Recovery end to end on the simulator: the health monitor over the simulated `libdcmi.so`, the recovery runner
//! resetting a faulty chip through it, and the monitor seeing the chip healthy again.
//!
//! The simulated host is an Atlas 950 with 8 chips, each reset alone; the simulator takes 500 ms to boot a chip after
//! a reset and clears its faults when it has. The simulator reads its configuration from the environment once per
//! process, so this file holds one test.

mod support;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_dcmi::ChipIds;
use ascend_node::recovery::{HeldOut, RecoveryConfig, RecoveryMode, RecoveryObserver, RecoveryRunner};
use ascend_node::{Health, UnhealthyCause};
use support::{chip_health, faulty, host, set_faults, wait_for, TestHolders, FAULTY, RESTART_FAULT};

/// Everything the runner reported, in order.
#[derive(Default)]
struct Recorder(Mutex<Vec<String>>);

impl RecoveryObserver for Recorder {
    fn reset_started(&self, chip: ChipIds, group: &[ChipIds]) {
        self.push(format!("started logic {} group {}", chip.logic, group.len()));
    }
    fn reset_finished(&self, chip: ChipIds, outcome: &Result<Duration, String>) {
        self.push(format!("finished logic {} {}", chip.logic, if outcome.is_ok() { "ok" } else { "failed" }));
    }
    fn reset_aborted(&self, chip: ChipIds, _taken: &[ChipIds]) {
        self.push(format!("aborted logic {}", chip.logic));
    }
    fn held_out(&self, chip: ChipIds, why: &HeldOut) {
        let why = match why {
            HeldOut::BudgetUsed => "budget",
            HeldOut::ResetFailed(_) => "failed",
            HeldOut::FaultedAgain { .. } => "again",
        };
        self.push(format!("held out logic {} {why}", chip.logic));
    }
    fn held_out_now(&self, chips: &[ChipIds]) {
        let logic: Vec<String> = chips.iter().map(|chip| chip.logic.to_string()).collect();
        self.push(format!("out now [{}]", logic.join(",")));
    }
}

impl Recorder {
    fn push(&self, event: String) {
        self.0.lock().expect("recorder").push(event);
    }
    fn events(&self) -> Vec<String> {
        self.0.lock().expect("recorder").clone()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_free_chip_with_a_restart_fault_is_reset_and_offered_again_a_held_one_waits_and_a_refault_stays_out() {
    let host = host().await;
    let mut snapshots = host.monitor.subscribe();
    let phy = host.manager.chips().expect("chips").iter().find(|ids| ids.logic.0 == FAULTY).expect("chip").phy;
    let holders = Arc::new(TestHolders::default());
    holders.0.lock().expect("holders").insert(phy);
    let recorder = Arc::new(Recorder::default());
    let config =
        RecoveryConfig { mode: RecoveryMode::Inference, idle: Duration::from_millis(300), ..RecoveryConfig::default() };
    let runner = RecoveryRunner::new(
        config,
        Arc::clone(&host.manager),
        host.monitor.subscribe(),
        Arc::new(host.monitor.withdrawals()),
        holders.clone(),
        recorder.clone(),
    )
    .with_timing(Duration::from_millis(100), Duration::from_millis(100));
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(runner.run(async {
        let _ = stopped.await;
    }));

    set_faults(&host.overlay, &[RESTART_FAULT]);
    wait_for(&mut snapshots, 10, "the fault seen", faulty).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert!(recorder.events().is_empty(), "a held chip is not reset: {:?}", recorder.events());
    assert!(faulty(&chip_health(&snapshots.borrow()).expect("chip")), "still faulty while held");

    holders.0.lock().expect("holders").clear();
    wait_for(&mut snapshots, 10, "withdrawn for its reset", |health| {
        matches!(health, Health::Unhealthy(UnhealthyCause::Recovering))
    })
    .await;
    wait_for(&mut snapshots, 15, "healthy after the reset", |health| *health == Health::Healthy).await;
    assert_eq!(recorder.events(), [format!("started logic {FAULTY} group 1"), format!("finished logic {FAULTY} ok")]);

    // The fault comes back at once: the chip stays out, reported once, and is not reset again.
    set_faults(&host.overlay, &[RESTART_FAULT]);
    wait_for(&mut snapshots, 10, "the fault seen again", faulty).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(recorder.events()[2..], [format!("held out logic {FAULTY} again"), format!("out now [{FAULTY}]")]);

    // An operator's reset clears it: healthy again by other means, it is no longer held out.
    set_faults(&host.overlay, &[]);
    wait_for(&mut snapshots, 10, "healthy after the operator's reset", |health| *health == Health::Healthy).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(recorder.events()[4..], ["out now []".to_owned()]);
    let _ = stop.send(());
    task.await.expect("runner");
}
