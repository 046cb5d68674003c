//! The plugin against an in-process fake kubelet over unix sockets, on mocked chips: registration, ListAndWatch,
//! health in both directions (events and polling), hung calls, late chips, kubelet restarts, shutdown.

mod support;

use std::time::{Duration, Instant};

use ascend_dcmi::{ChipType, FaultCode};
use support::{health_of, FakeHost, Harness, WAIT};

const ASCEND910: &str = "huawei.com/Ascend910";
const FAULT: FaultCode = FaultCode(0x80E0_1801);

fn all_healthy(count: usize) -> impl Fn(&[(String, String)]) -> bool {
    move |devices| devices.len() == count && devices.iter().all(|(_, health)| health == "Healthy")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn registers_and_lists_every_chip_with_its_numa_node() {
    let mut harness = Harness::start(FakeHost::eight_910b(), |_| {}).await;
    harness.wait_devices(ASCEND910, "eight healthy chips", all_healthy(8)).await;

    let registrations = harness.kubelet.registrations();
    assert_eq!(registrations.len(), 1, "one resource, registered once");
    let registered = &registrations[0];
    assert_eq!(registered.request.version, "v1beta1");
    assert_eq!(registered.request.resource_name, ASCEND910);
    assert_eq!(registered.request.endpoint, "ascend-Ascend910.sock");
    assert!(registered.options.get_preferred_allocation_available);
    assert!(!registered.options.pre_start_required);

    let devices = harness.kubelet.devices(ASCEND910).expect("device list");
    let mut ids: Vec<&str> = devices.iter().map(|d| d.id.as_str()).collect();
    ids.sort_unstable();
    assert_eq!(ids, (0..8).map(|phy| format!("Ascend910-{phy}")).collect::<Vec<_>>());
    for device in &devices {
        let phy: i64 = device.id.trim_start_matches("Ascend910-").parse().expect("phy id");
        let nodes: Vec<i64> = device.topology.as_ref().expect("topology").nodes.iter().map(|n| n.id).collect();
        assert_eq!(nodes, [phy / 4], "{}", device.id);
    }
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fault_events_turn_a_chip_unhealthy_and_back_within_100ms() {
    // A poll interval far longer than the test: only events can explain a fast change.
    let mut harness = Harness::start(FakeHost::eight_910b(), |config| {
        config.monitor.poll_interval = Duration::from_secs(30);
    })
    .await;
    harness.wait_devices(ASCEND910, "eight healthy chips", all_healthy(8)).await;

    let raised = Instant::now();
    harness.host.raise(3, FAULT, true);
    let devices =
        harness.wait_devices(ASCEND910, "chip 3 unhealthy", |d| health_of(d, "Ascend910-3") == Some("Unhealthy")).await;
    let to_unhealthy = raised.elapsed();
    assert_eq!(devices.iter().filter(|(_, h)| h == "Unhealthy").count(), 1, "only chip 3: {devices:?}");

    let cleared = Instant::now();
    harness.host.clear(3, true);
    harness.wait_devices(ASCEND910, "chip 3 healthy again", all_healthy(8)).await;
    let to_healthy = cleared.elapsed();
    assert!(to_unhealthy < Duration::from_millis(100), "fault reached ListAndWatch after {to_unhealthy:?}");
    assert!(to_healthy < Duration::from_millis(100), "recovery reached ListAndWatch after {to_healthy:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn polling_finds_faults_without_events_within_one_interval() {
    let poll = Duration::from_millis(300);
    let mut harness = Harness::start(FakeHost::four_duo_cards(), |config| {
        config.monitor.fault_events = false;
        config.monitor.poll_interval = poll;
    })
    .await;
    let resource = "huawei.com/Ascend310P";
    harness.wait_devices(resource, "eight healthy chips", all_healthy(8)).await;

    let raised = Instant::now();
    harness.host.raise(5, FAULT, false);
    harness.wait_devices(resource, "chip 5 unhealthy", |d| health_of(d, "Ascend310P-5") == Some("Unhealthy")).await;
    let to_unhealthy = raised.elapsed();
    let cleared = Instant::now();
    harness.host.clear(5, false);
    harness.wait_devices(resource, "chip 5 healthy", all_healthy(8)).await;
    let to_healthy = cleared.elapsed();
    // One interval plus scheduling slack.
    let bound = poll + Duration::from_millis(100);
    assert!(to_unhealthy <= bound, "fault seen after {to_unhealthy:?}");
    assert!(to_healthy <= bound, "recovery seen after {to_healthy:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_health_call_makes_the_chip_unhealthy_after_the_deadline() {
    let deadline = Duration::from_millis(300);
    let mut harness = Harness::start(FakeHost::eight_910b(), |config| {
        config.monitor.health_deadline = deadline;
        config.monitor.poll_interval = Duration::from_millis(100);
    })
    .await;
    harness.wait_devices(ASCEND910, "eight healthy chips", all_healthy(8)).await;

    let hung = Instant::now();
    harness.host.edit(6, |chip| chip.hang = true);
    let devices =
        harness.wait_devices(ASCEND910, "chip 6 unhealthy", |d| health_of(d, "Ascend910-6") == Some("Unhealthy")).await;
    let elapsed = hung.elapsed();
    assert!(elapsed >= deadline, "unhealthy before the deadline passed: {elapsed:?}");
    assert!(elapsed < deadline + Duration::from_millis(300), "too slow: {elapsed:?}");
    assert_eq!(devices.iter().filter(|(_, h)| h == "Unhealthy").count(), 1, "other chips unaffected: {devices:?}");
    // Still hung a while later: the other chips keep being polled, and no pile of calls builds up for chip 6.
    let calls_before = harness.host.health_calls();
    tokio::time::sleep(Duration::from_millis(500)).await;
    let calls = harness.host.health_calls() - calls_before;
    assert!((7..=7 * 8).contains(&calls), "{calls} health calls in 500 ms at 100 ms polling for 7 chips");

    harness.host.edit(6, |chip| chip.hang = false);
    harness.wait_devices(ASCEND910, "chip 6 back", all_healthy(8)).await;
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chips_absent_faulty_or_unreadable_at_start_are_advertised_when_they_recover() {
    let host = FakeHost::eight_910b();
    host.edit(1, |chip| chip.present = false);
    host.edit(2, |chip| chip.faults.push(FAULT));
    host.edit(4, |chip| chip.identity_works = false);
    let mut harness = Harness::start(host, |_| {}).await;
    let devices = harness
        .wait_devices(ASCEND910, "six chips, one unhealthy", |d| {
            d.len() == 6 && health_of(d, "Ascend910-2") == Some("Unhealthy")
        })
        .await;
    assert_eq!(health_of(&devices, "Ascend910-1"), None);
    assert_eq!(health_of(&devices, "Ascend910-4"), None);

    harness.host.edit(1, |chip| chip.present = true);
    harness.host.edit(4, |chip| chip.identity_works = true);
    harness.host.clear(2, false);
    harness.wait_devices(ASCEND910, "all eight healthy", all_healthy(8)).await;

    // A chip that disappears is reported unhealthy, not silently dropped.
    harness.host.edit(7, |chip| chip.present = false);
    harness.wait_devices(ASCEND910, "chip 7 unhealthy", |d| health_of(d, "Ascend910-7") == Some("Unhealthy")).await;
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_kubelet_restart_leads_to_reregistration_within_a_second_keeping_health() {
    // The periodic check far apart: the directory's inotify events alone must bring the plugin back within a second.
    let mut harness =
        Harness::start(FakeHost::eight_910b(), |config| config.watch_interval = Duration::from_secs(20)).await;
    harness.wait_devices(ASCEND910, "eight healthy chips", all_healthy(8)).await;
    harness.host.raise(0, FAULT, true);
    harness.wait_devices(ASCEND910, "chip 0 unhealthy", |d| health_of(d, "Ascend910-0") == Some("Unhealthy")).await;

    for round in 1..=2 {
        let restarted = Instant::now();
        harness.kubelet.restart().await.expect("kubelet restarts");
        harness
            .kubelet
            .wait_until("re-registration", WAIT, |k| k.registrations().len() == round + 1)
            .await
            .expect("plugin registers again");
        let registered = harness.kubelet.registrations()[round].at;
        let delay = registered.duration_since(restarted);
        assert!(delay < Duration::from_secs(1), "round {round}: re-registered after {delay:?}");
        let devices = harness.wait_devices(ASCEND910, "list after restart", |d| d.len() == 8).await;
        assert_eq!(health_of(&devices, "Ascend910-0"), Some("Unhealthy"), "health survives the restart");
        assert!(harness.dir.path().join("ascend-Ascend910.sock").exists(), "socket served again");
    }
    // No duplicate registrations once settled.
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(harness.kubelet.registrations().len(), 3);

    // Only the kubelet.sock is recreated (the plugin socket stays): the plugin still registers again.
    let new_kubelet_sock = harness.dir.path().join("kubelet.sock");
    harness.kubelet.shutdown().await;
    std::fs::remove_file(&new_kubelet_sock).expect("remove kubelet.sock");
    let mut kubelet =
        ascend_deviceplugin::fake_kubelet::FakeKubelet::start(harness.dir.path()).await.expect("new kubelet");
    kubelet
        .wait_until("registration with the new kubelet", WAIT, |k| k.registrations().len() == 1)
        .await
        .expect("registers");
    kubelet.shutdown().await;
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_for_a_missing_kubelet_and_removes_sockets_on_shutdown() {
    let host = FakeHost::four_duo_cards();
    host.add(support_chip_910b(8));
    let mut harness = Harness::start(host, |_| {}).await;
    harness.kubelet.wait_until("two resources", WAIT, |k| k.registrations().len() == 2).await.expect("both register");
    let mut resources: Vec<String> =
        harness.kubelet.registrations().into_iter().map(|r| r.request.resource_name).collect();
    resources.sort();
    assert_eq!(resources, ["huawei.com/Ascend310P", ASCEND910]);
    let sockets = ["ascend-Ascend310P.sock", "ascend-Ascend910.sock"];
    for socket in sockets {
        assert!(harness.dir.path().join(socket).exists(), "{socket} served");
    }
    harness.stop().await;
    for socket in sockets {
        assert!(!harness.dir.path().join(socket).exists(), "{socket} removed on shutdown");
    }
    assert!(harness.dir.path().join("kubelet.sock").exists(), "the kubelet's socket is left alone");
}

fn support_chip_910b(phy: u32) -> support::FakeChip {
    let mut chip = FakeHost::eight_910b().manager_chip(0);
    chip.ids.phy = ascend_dcmi::PhyId(phy);
    chip.ids.logic = ascend_dcmi::LogicId(phy);
    chip.ids.locator =
        Some(ascend_dcmi::ChipLocator { card: ascend_dcmi::CardId(phy as i32), device: ascend_dcmi::DeviceId(0) });
    chip.chip_type = ChipType::Ascend910B;
    chip
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serves_without_a_kubelet_and_registers_once_one_appears() {
    let dir = tempfile::tempdir().expect("plugin dir");
    let config = ascend_deviceplugin::PluginConfig { plugin_dir: dir.path().to_owned(), ..Default::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let plugin = tokio::spawn(ascend_deviceplugin::run(
        FakeHost::eight_910b().manager(),
        config,
        std::sync::Arc::new(ascend_deviceplugin::NoopObserver),
        async {
            let _ = stopped.await;
        },
    ));
    let socket = dir.path().join("ascend-Ascend910.sock");
    let started = Instant::now();
    while !socket.exists() {
        assert!(started.elapsed() < WAIT, "plugin never served");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let appeared = Instant::now();
    let kubelet = ascend_deviceplugin::fake_kubelet::FakeKubelet::start(dir.path()).await.expect("kubelet");
    kubelet.wait_until("registration", WAIT, |k| k.registrations().len() == 1).await.expect("registers");
    let delay = kubelet.registrations()[0].at.duration_since(appeared);
    assert!(delay < Duration::from_secs(1), "registered {delay:?} after the kubelet appeared");
    let _ = stop.send(());
    plugin.await.expect("plugin task").expect("plugin ran");
    assert!(!socket.exists(), "socket removed");
}
