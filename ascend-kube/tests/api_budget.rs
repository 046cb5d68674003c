//! What the node's daemons cost the API server, counted by the fake API server per verb, resource and user agent:
//! at idle nothing but the watches, under churn requests that grow with the events and not with time, and after a
//! failure waits that grow and honour `Retry-After`. Each test fails if its daemon goes back to polling.

mod node_labels_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_kube::client_for;
use ascend_kube::device_info::DeviceList;
use ascend_kube::device_info::{DeviceInfoPublisher, PublisherConfig};
use ascend_kube::pod_assignment::PodAssignments;
use ascend_kube::BackoffPolicy;
use ascend_kube::{LabellerConfig, NodeLabeller};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use node_labels_support::{chip, shared_driver};
use serde_json::json;

const NODE: &str = "worker-1";
const AGENT: &str = "ascend-budget-test/1.0";

fn client(server: &FakeApiServer) -> kube::Client {
    client_for(server.config(), "ascend-budget-test", "1.0").expect("client")
}

/// This test's daemon's requests by `verb resource` (printed with `--nocapture`: the figures of docs/scale.md).
fn counts(server: &FakeApiServer) -> BTreeMap<String, usize> {
    let counts: BTreeMap<String, usize> = server
        .request_counts()
        .into_iter()
        .filter(|(key, _)| key.user_agent == AGENT)
        .map(|(key, count)| (format!("{} {}", key.verb, key.resource), count))
        .collect();
    eprintln!("requests of {AGENT}: {counts:?}");
    counts
}

fn expected(pairs: &[(&str, usize)]) -> BTreeMap<String, usize> {
    pairs.iter().map(|(key, count)| ((*key).to_owned(), *count)).collect()
}

fn pod(name: &str, node: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "jobs"},
        "spec": {"nodeName": node, "containers": []}, "status": {"phase": "Running"}})
}

/// The Node's `ascend.huawei.com/chip-count` label as the server holds it.
fn chip_count_label(server: &FakeApiServer) -> Option<String> {
    server
        .get::<Node>(None, NODE)
        .and_then(|node| node.metadata.labels)
        .unwrap_or_default()
        .get("ascend.huawei.com/chip-count")
        .cloned()
}

async fn wait_for(what: &str, condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for {what}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_pods_come_from_one_watch_however_often_they_are_read() {
    let server = FakeApiServer::start().await.expect("server");
    server.seed(pod("train-0", NODE));
    server.seed(pod("elsewhere", "worker-2"));
    let pods = PodAssignments::new(client(&server), NODE, Duration::from_secs(5)).expect("node");
    for _ in 0..20 {
        assert_eq!(pods.watched_list().await.expect("pods").len(), 1);
    }
    wait_for("the watch", || counts(&server).contains_key("watch pods")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(counts(&server), expected(&[("list pods", 1), ("watch pods", 1)]));
    let selectors: Vec<String> =
        server.requests().iter().filter_map(|r| r.query_value("fieldSelector").map(str::to_owned)).collect();
    assert!(selectors.iter().all(|selector| selector == "spec.nodeName=worker-1"), "{selectors:?}");

    // Churn: ten pods come and go on the node (and one elsewhere). The reads follow, the requests do not grow.
    let mut changes = pods.changes();
    for index in 0..10 {
        server.seed(pod(&format!("job-{index}"), NODE));
    }
    server.seed(pod("other", "worker-2"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while pods.watched_list().await.expect("pods").len() != 11 {
        assert!(tokio::time::Instant::now() < deadline, "timed out waiting for eleven pods on the node");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(changes.has_changed().expect("watch running"), "readers are woken by the changes");
    changes.borrow_and_update();
    assert_eq!(counts(&server), expected(&[("list pods", 1), ("watch pods", 1)]));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_labeller_makes_no_request_beyond_its_watch() {
    let server = FakeApiServer::start().await.expect("server");
    let mut node = Node::default();
    node.metadata.name = Some(NODE.into());
    server.seed(&node);
    let chips = Arc::new(Mutex::new((0..4).map(|logic| chip(logic, "310P3", Some("Atlas 300I Duo"), None)).collect()));
    let manager = Arc::new(shared_driver(Arc::clone(&chips), "24.1.rc2"));
    // The chips are read every 50 ms: a labeller that asked the API server each time would show 40 GETs.
    let config = LabellerConfig { interval: Duration::from_millis(50), ..LabellerConfig::new(NODE) };
    let labeller = Arc::new(NodeLabeller::new(manager, client(&server), config).expect("labeller"));
    let running = Arc::clone(&labeller);
    let task = tokio::spawn(async move { running.run(std::future::pending()).await });
    let labelled = || chip_count_label(&server);
    wait_for("the labels", || labelled().as_deref() == Some("4")).await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(counts(&server), expected(&[("list nodes", 1), ("patch nodes", 1), ("watch nodes", 1)]));

    // Churn: each change (a chip added, a label removed by hand) costs one PATCH, nothing else.
    chips.lock().expect("chips").push(chip(4, "310P3", Some("Atlas 300I Duo"), None));
    wait_for("five chips", || labelled().as_deref() == Some("5")).await;
    let nodes: Api<Node> = Api::all(server.client());
    let by_hand = Patch::Merge(json!({"metadata": {"labels": {"ascend.huawei.com/chip-count": null}}}));
    nodes.patch(NODE, &PatchParams::default(), &by_hand).await.expect("kubectl label node worker-1 chip-count-");
    wait_for("the label back", || labelled().as_deref() == Some("5")).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(counts(&server), expected(&[("list nodes", 1), ("patch nodes", 3), ("watch nodes", 1)]));
    task.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_info_publisher_reads_separations_from_its_watch_and_writes_only_changes_and_heartbeats() {
    let server = FakeApiServer::start().await.expect("server");
    let config = PublisherConfig {
        min_interval: Duration::from_millis(10),
        refresh_interval: Duration::from_millis(1500),
        ..PublisherConfig::default()
    };
    let mut publisher = DeviceInfoPublisher::new(client(&server), NODE, config).expect("node");
    let list = DeviceList::default();
    publisher.publish(&list).await.expect("first write");
    for _ in 0..20 {
        assert!(publisher.manually_separated().await.expect("separations").is_empty());
        publisher.publish(&list).await.expect("unchanged");
    }
    // The first write is a PATCH answered 404 and the POST that creates the map. The watch opens after the list
    // that made the separations readable, on the watch's own task: wait for it to reach the server.
    wait_for("the watch to open", || counts(&server).contains_key("watch configmaps")).await;
    assert_eq!(
        counts(&server),
        expected(&[("create configmaps", 1), ("list configmaps", 1), ("patch configmaps", 1), ("watch configmaps", 1)])
    );
    tokio::time::sleep(Duration::from_millis(1600)).await;
    publisher.publish(&list).await.expect("heartbeat");
    assert_eq!(counts(&server)["patch configmaps"], 2, "one heartbeat after the refresh interval");
    assert_eq!(ascend_kube::device_info::DEFAULT_REFRESH_INTERVAL, Duration::from_secs(540));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn throttling_is_honoured_and_failures_back_off() {
    let server = FakeApiServer::start().await.expect("server");
    let mut node = Node::default();
    node.metadata.name = Some(NODE.into());
    server.seed(&node);
    let chips = Arc::new(Mutex::new(vec![chip(0, "310P3", Some("Atlas 300I Duo"), None)]));
    let manager = Arc::new(shared_driver(chips, "24.1.rc2"));
    let config = LabellerConfig {
        interval: Duration::from_secs(3600),
        backoff: BackoffPolicy { first: Duration::from_millis(100), max: Duration::from_secs(10) },
        ..LabellerConfig::new(NODE)
    };
    // API Priority and Fairness rejects the first PATCH, in plain text with Retry-After: 2; then the server fails
    // four times.
    server.inject(fake_apiserver::FaultRule::rejected_by_flow_control(2).method("PATCH").times(1));
    server.inject(fake_apiserver::FaultRule::status(500).method("PATCH").times(4));
    let labeller = Arc::new(NodeLabeller::new(manager, client(&server), config).expect("labeller"));
    let running = Arc::clone(&labeller);
    let task = tokio::spawn(async move { running.run(std::future::pending()).await });
    wait_for("six PATCHes", || server.requests().iter().filter(|r| r.method == "PATCH").count() == 6).await;
    task.abort();
    let times: Vec<_> = server.requests().iter().filter(|r| r.method == "PATCH").map(|r| r.received).collect();
    let gaps: Vec<Duration> = times.windows(2).map(|pair| pair[1] - pair[0]).collect();
    eprintln!("waits between PATCH attempts (429 with Retry-After: 2, then four 500s): {gaps:?}");
    assert!(gaps[0] >= Duration::from_secs(2), "Retry-After: 2 is honoured: {gaps:?}");
    // After the 500s: 200 ms, 400 ms, 800 ms, 1.6 s (the 429 took the first step, 100 ms, and waited 2 s instead),
    // each spread over [d, 2d) by jitter.
    for (index, gap) in gaps[1..].iter().enumerate() {
        let base = Duration::from_millis(100 << (index + 1));
        assert!(*gap >= base, "wait {index} after a 500 is at least {base:?}: {gaps:?}");
    }
    assert!(gaps[4] > gaps[1] * 2, "the waits grow: {gaps:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_api_server_restart_each_watch_reopens_once_and_the_state_catches_up() {
    let server = FakeApiServer::start().await.expect("server");
    let mut node = Node::default();
    node.metadata.name = Some(NODE.into());
    server.seed(&node);
    server.seed(pod("train-0", NODE));
    let chips = Arc::new(Mutex::new(vec![chip(0, "310P3", Some("Atlas 300I Duo"), None)]));
    let manager = Arc::new(shared_driver(chips, "24.1.rc2"));
    let config = LabellerConfig { interval: Duration::from_millis(100), ..LabellerConfig::new(NODE) };
    let labeller = Arc::new(NodeLabeller::new(manager, client(&server), config).expect("labeller"));
    let running = Arc::clone(&labeller);
    let task = tokio::spawn(async move { running.run(std::future::pending()).await });
    let pods = PodAssignments::new(client(&server), NODE, Duration::from_secs(5)).expect("node");
    let label = || chip_count_label(&server);
    wait_for("the labels", || label().as_deref() == Some("1")).await;
    assert_eq!(pods.watched_list().await.expect("pods").len(), 1);
    wait_for("both watches", || {
        let counts = counts(&server);
        counts.contains_key("watch pods") && counts.contains_key("watch nodes")
    })
    .await;

    // The API server goes away for 3 s; meanwhile a pod arrives and someone removes a label (written to the store
    // directly, as another API server instance would).
    server.stop_listening();
    server.clear_requests();
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.seed(pod("train-1", NODE));
    let mut unlabelled: Node = server.get(None, NODE).expect("node");
    unlabelled.metadata.labels.as_mut().expect("labels").remove("ascend.huawei.com/chip-count");
    unlabelled.metadata.resource_version = None;
    server.seed(&unlabelled);
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let back = tokio::time::Instant::now();
    server.resume_listening().await.expect("listen again");

    wait_for("the label back", || label().as_deref() == Some("1")).await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while pods.watched_list().await.expect("pods").len() != 2 {
        assert!(tokio::time::Instant::now() < deadline, "the pod that arrived meanwhile");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!("state current {:?} after the API server came back", back.elapsed());
    tokio::time::sleep(Duration::from_secs(1)).await;
    // One WATCH per watch from its last resourceVersion (the history is kept: no LIST), and the one PATCH the change
    // needs: no storm.
    assert_eq!(counts(&server), expected(&[("patch nodes", 1), ("watch nodes", 1), ("watch pods", 1)]));
    task.abort();
}
