//! Chip faults as Events on the Node: a scripted fault timeline on an eight-chip 910B host produces the expected
//! Events in the fake API server (real kube-rs recorder), a flapping chip stays within the rate limit, and an API
//! server that answers 500, hangs or is gone never holds up health updates or Allocate. The Node condition
//! `AscendNPUUnhealthy` follows the chips, keeps the other conditions, and moves its transition time only on flips.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::FaultCode;
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use ascend_deviceplugin::{node_condition, node_events, HealthMonitor, MonitorConfig, NoopObserver, Snapshot};
use ascend_kube::NodeConditionWriter;
use ascend_kube::{NodeEvents, NodeEventsConfig};
use fake_apiserver::{FakeApiServer, FaultRule};
use k8s_openapi::api::core::v1::{Node, NodeCondition};
use k8s_openapi::api::events::v1::Event;
use serde_json::json;
use support::{FakeHost, Harness, NODE};

fn monitor(host: &FakeHost) -> HealthMonitor {
    let config = MonitorConfig {
        poll_interval: Duration::from_millis(100),
        health_deadline: Duration::from_millis(300),
        ..MonitorConfig::default()
    };
    HealthMonitor::start(host.manager(), config, Arc::new(NoopObserver)).expect("monitor starts")
}

async fn wait_snapshot(monitor: &HealthMonitor, what: &str, done: impl Fn(&Snapshot) -> bool) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while !done(&monitor.snapshot()) {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn chip_healthy(snapshot: &Snapshot, id: &str) -> Option<bool> {
    snapshot.resource("huawei.com/Ascend910")?.device(id).map(|device| device.health.is_healthy())
}

fn all_healthy(snapshot: &Snapshot) -> bool {
    snapshot
        .resource("huawei.com/Ascend910")
        .is_some_and(|r| r.devices.len() == 8 && r.devices.values().all(|d| d.health.is_healthy()))
}

async fn wait_events(server: &FakeApiServer, what: &str, done: impl Fn(&[Event]) -> bool) -> Vec<Event> {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let events = server.list::<Event>();
        if done(&events) {
            return events;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {events:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn with_reason<'a>(events: &'a [Event], reason: &str) -> Option<&'a Event> {
    events.iter().find(|event| event.reason.as_deref() == Some(reason))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fault_timeline_becomes_events_on_the_node() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let node = server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
    let host = FakeHost::eight_910b();
    let monitor = monitor(&host);
    wait_snapshot(&monitor, "eight healthy chips", all_healthy).await;
    let events = NodeEvents::start(server.client(), NODE, NodeEventsConfig::default()).expect("valid node");
    tokio::spawn(node_events::report(monitor.subscribe(), events, std::future::pending()));

    // t = 0: a SeparateNPU fault on chip 3.
    host.raise(3, FaultCode(0x80E1_8402), true);
    let seen = wait_events(&server, "the fault", |events| with_reason(events, "NpuFaultRaised").is_some()).await;
    let raised = with_reason(&seen, "NpuFaultRaised").expect("raised");
    assert_eq!(raised.type_.as_deref(), Some("Warning"));
    assert_eq!(raised.action.as_deref(), Some("Ascend910-3"));
    let note = raised.note.as_deref().unwrap_or_default();
    assert!(note.contains("NPU Ascend910-3") && note.contains("80E18402") && note.contains("SeparateNPU"), "{note}");
    let regarding = raised.regarding.as_ref().expect("regarding");
    assert_eq!((regarding.kind.as_deref(), regarding.name.as_deref()), (Some("Node"), Some(NODE)));
    assert_eq!(regarding.uid, node.pointer("/metadata/uid").and_then(|uid| uid.as_str()).map(str::to_owned));
    assert_eq!(raised.reporting_controller.as_deref(), Some("ascend-device-plugin"));
    assert_eq!(raised.metadata.namespace.as_deref(), Some("default"));

    // t = 1: it clears.
    host.clear(3, true);
    let seen = wait_events(&server, "the recovery", |events| with_reason(events, "NpuFaultRecovered").is_some()).await;
    let recovered = with_reason(&seen, "NpuFaultRecovered").expect("recovered");
    assert_eq!(recovered.type_.as_deref(), Some("Normal"));
    assert!(recovered.note.as_deref().unwrap_or_default().contains("80E18402"));

    // t = 2: chip 6 hangs in the driver, then answers again.
    host.edit(6, |chip| chip.hang = true);
    let seen = wait_events(&server, "the hang", |events| with_reason(events, "NpuChipHung").is_some()).await;
    assert_eq!(with_reason(&seen, "NpuChipHung").and_then(|e| e.action.as_deref()), Some("Ascend910-6"));
    host.edit(6, |chip| chip.hang = false);
    wait_events(&server, "chip 6 back", |events| with_reason(events, "NpuRecovered").is_some()).await;
    let reasons: Vec<String> = server.list::<Event>().into_iter().filter_map(|event| event.reason).collect();
    assert_eq!(reasons.len(), 4, "one Event per change: {reasons:?}");
    drop(monitor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flapping_chip_stays_within_the_rate_limit() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let host = FakeHost::eight_910b();
    let monitor = monitor(&host);
    wait_snapshot(&monitor, "eight healthy chips", all_healthy).await;
    let config = NodeEventsConfig { burst: 4, refill: Duration::from_secs(3600), ..NodeEventsConfig::default() };
    let events = NodeEvents::start(server.client(), NODE, config).expect("valid node");
    tokio::spawn(node_events::report(monitor.subscribe(), events.clone(), std::future::pending()));
    for _ in 0..15 {
        host.raise(2, FaultCode(0x80E1_8402), true);
        wait_snapshot(&monitor, "chip 2 down", |s| chip_healthy(s, "Ascend910-2") == Some(false)).await;
        host.clear(2, true);
        wait_snapshot(&monitor, "chip 2 up", |s| chip_healthy(s, "Ascend910-2") == Some(true)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let writes = server.requests().iter().filter(|r| r.path.contains("/events") && r.method != "GET").count();
    assert!(writes <= 4, "{writes} Event writes for 30 changes, budget 4");
    assert_eq!(events.stats().published(), writes as u64);
    assert!(events.stats().suppressed() >= 20, "suppressed: {}", events.stats().suppressed());
    // Repeats of one reason on one chip fold into one Event with a series.
    let stored = server.list::<Event>();
    assert!(stored.len() <= 2, "{stored:#?}");
    assert!(stored.iter().any(|event| event.series.as_ref().is_some_and(|series| series.count >= 2)), "{stored:#?}");
    drop(monitor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_api_server_never_holds_up_health() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let host = FakeHost::eight_910b();
    let monitor = monitor(&host);
    wait_snapshot(&monitor, "eight healthy chips", all_healthy).await;
    let config =
        NodeEventsConfig { request_timeout: Duration::from_millis(200), queue: 4, ..NodeEventsConfig::default() };
    let events = NodeEvents::start(server.client(), NODE, config).expect("valid node");
    tokio::spawn(node_events::report(monitor.subscribe(), events.clone(), std::future::pending()));

    server.inject(FaultRule::status(500));
    for phy in 0..4 {
        let started = Instant::now();
        host.raise(phy, FaultCode(0x80E1_8402), true);
        wait_snapshot(&monitor, "the fault in the snapshot", |s| {
            chip_healthy(s, &format!("Ascend910-{phy}")) == Some(false)
        })
        .await;
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "health took {:?} with the API answering 500",
            started.elapsed()
        );
    }
    server.clear_faults();
    server.inject(FaultRule::hang());
    for phy in 0..4 {
        let started = Instant::now();
        host.clear(phy, true);
        wait_snapshot(&monitor, "the recovery", |s| chip_healthy(s, &format!("Ascend910-{phy}")) == Some(true)).await;
        assert!(started.elapsed() < Duration::from_secs(1), "health took {:?} with the API hanging", started.elapsed());
    }
    // The eight Events of the two faulty phases (four faults, four recoveries) are sent one at a time, each request
    // hanging up to its timeout: wait until every one has failed (or was dropped) before releasing the server, whose
    // `clear_faults` would let a request still hanging succeed.
    let settled = Instant::now() + Duration::from_secs(10);
    while events.stats().failed() + events.stats().suppressed() + events.stats().published() < 8 {
        assert!(Instant::now() < settled, "Events still in flight: {:?}", events.stats());
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    server.clear_faults();
    server.stop_listening();
    host.raise(7, FaultCode(0x80E1_8402), true);
    wait_snapshot(&monitor, "a fault with the API gone", |s| chip_healthy(s, "Ascend910-7") == Some(false)).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(events.stats().failed() >= 1, "the 500s were counted");
    assert_eq!(events.stats().published(), 0);
    drop(monitor);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocate_in_volcano_mode_fails_fast_when_the_api_server_hangs_or_is_gone() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), server.client(), |_, volcano| {
        volcano.request_timeout = Duration::from_millis(300);
    })
    .await;
    harness.wait_devices("huawei.com/Ascend910", "eight chips", |d| d.len() == 8).await;
    let request = || AllocateRequest {
        container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["Ascend910-0".to_owned()] }],
    };
    server.inject(FaultRule::hang().path_contains("/pods"));
    let started = Instant::now();
    let mut client = harness.kubelet.plugin_client("huawei.com/Ascend910").await.expect("client");
    let refused = client.allocate(request()).await.expect_err("no pod can be read");
    assert!(started.elapsed() < Duration::from_secs(3), "Allocate took {:?}", started.elapsed());
    assert!(refused.message().contains("listing the node's pods"), "{}", refused.message());
    server.clear_faults();
    server.stop_listening();
    let started = Instant::now();
    let refused = client.allocate(request()).await.expect_err("API server gone");
    assert!(started.elapsed() < Duration::from_secs(3), "Allocate took {:?}", started.elapsed());
    assert!(refused.message().contains("pods"), "{}", refused.message());
    harness.stop().await;
}

fn conditions(server: &FakeApiServer) -> Vec<NodeCondition> {
    server.get::<Node>(None, NODE).and_then(|node| node.status?.conditions).unwrap_or_default()
}

async fn wait_condition(server: &FakeApiServer, what: &str, done: impl Fn(&NodeCondition) -> bool) -> NodeCondition {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let found = conditions(server).into_iter().find(|c| c.type_ == "AscendNPUUnhealthy");
        if let Some(condition) = found.filter(|c| done(c)) {
            return condition;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}: {:#?}", conditions(server));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn transition(condition: &NodeCondition) -> String {
    serde_json::to_value(&condition.last_transition_time).expect("time").as_str().unwrap_or_default().to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_condition_follows_the_chips_and_keeps_the_others() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let old = "2020-01-01T00:00:00Z";
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}, "status": {"conditions": [
        {"type": "Ready", "status": "True", "reason": "KubeletReady", "lastTransitionTime": old},
        {"type": "AscendNPUUnhealthy", "status": "True", "reason": "NPUUnhealthy", "message": "from before a restart",
         "lastTransitionTime": old},
    ]}}));
    let host = FakeHost::eight_910b();
    host.raise(3, FaultCode(0x80E1_8402), true);
    let monitor = monitor(&host);
    wait_snapshot(&monitor, "chip 3 unhealthy", |s| chip_healthy(s, "Ascend910-3") == Some(false)).await;
    let writer = NodeConditionWriter::new(server.client(), NODE).expect("valid node");
    let retry = ascend_kube::BackoffPolicy { first: Duration::from_millis(200), max: Duration::from_secs(1) };
    tokio::spawn(node_condition::report(monitor.subscribe(), writer, retry, std::future::pending()));

    // Still True after a restart of the plugin: the message is new, the transition time is the old one.
    let still = wait_condition(&server, "chip 3 in the message", |c| {
        c.message.as_deref().is_some_and(|m| m.starts_with("1 of 8 NPUs unhealthy: Ascend910-3: fault level"))
    })
    .await;
    assert_eq!((still.status.as_str(), transition(&still).as_str()), ("True", old));
    assert!(still.message.as_deref().unwrap_or_default().contains("80E18402"), "{still:?}");

    // It recovers: False, a new transition time; the kubelet's Ready condition is untouched.
    host.clear(3, true);
    let healthy = wait_condition(&server, "all healthy", |c| c.status == "False").await;
    assert_eq!(healthy.reason.as_deref(), Some("AllNPUsHealthy"));
    assert_eq!(healthy.message.as_deref(), Some("all 8 NPUs are healthy"));
    assert_ne!(transition(&healthy), old);
    let ready = conditions(&server).into_iter().find(|c| c.type_ == "Ready").expect("Ready kept");
    assert_eq!(
        (ready.status.as_str(), ready.reason.as_deref(), transition(&ready).as_str()),
        ("True", Some("KubeletReady"), old)
    );
    assert_eq!(conditions(&server).len(), 2);
    let writes = |server: &FakeApiServer| {
        server.requests().iter().filter(|r| r.method == "PATCH" && r.path.ends_with("/nodes/worker-1/status")).count()
    };
    assert_eq!(writes(&server), 2, "one write per change of the condition");
    let reads = server.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with("/nodes/worker-1")).count();
    assert_eq!(reads, 1, "the Node is read before the first write only");

    // The API answers 500: health goes on at once, and the condition is written once the API is back.
    server.inject(FaultRule::status(500).path_contains("/nodes"));
    let started = Instant::now();
    host.raise(5, FaultCode(0x80E1_8402), true);
    wait_snapshot(&monitor, "chip 5 unhealthy", |s| chip_healthy(s, "Ascend910-5") == Some(false)).await;
    assert!(started.elapsed() < Duration::from_secs(1), "health took {:?}", started.elapsed());
    tokio::time::sleep(retry.first * 2).await;
    assert_eq!(wait_condition(&server, "still False", |_| true).await.status, "False");
    server.clear_faults();
    let flipped = wait_condition(&server, "True after the API came back", |c| c.status == "True").await;
    assert!(flipped.message.as_deref().unwrap_or_default().contains("Ascend910-5"), "{flipped:?}");
    drop(monitor);
}
