//! The node labeller against the fake API server through a real kube-rs client: the exact PATCH (body, content type,
//! field manager), idempotence, foreign labels left alone, the on-demand trigger, the bearer token, and the errors
//! when RBAC forbids the patch, the server fails, hangs or is unreachable (labels are never lost).

mod node_labels_support;

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_dcmi::ChipIdentity;
use ascend_kube::Error;
use ascend_kube::{LabellerConfig, NodeLabeller, Reconciled};
use fake_apiserver::{FakeApiServer, FaultRule};
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use node_labels_support::{chip, shared_driver};

const NODE: &str = "worker-1";
const NODE_PATH: &str = "/api/v1/nodes/worker-1";

const FOREIGN: [(&str, &str); 3] = [
    ("kubernetes.io/hostname", "worker-1"),
    ("topology.kubernetes.io/zone", "rack-7"),
    ("ascend.huawei.com/team", "vision"),
];

async fn server_with_node(labels: &[(&str, &str)]) -> FakeApiServer {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut node = Node::default();
    node.metadata.name = Some(NODE.into());
    node.metadata.labels = Some(labels.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect());
    server.seed(&node);
    server
}

fn labels(server: &FakeApiServer) -> BTreeMap<String, String> {
    server.get::<Node>(None, NODE).and_then(|node| node.metadata.labels).unwrap_or_default()
}

fn patches(server: &FakeApiServer) -> Vec<fake_apiserver::RecordedRequest> {
    server.requests().into_iter().filter(|request| request.method == "PATCH").collect()
}

/// The test's node: chips the test can change, a labeller.
struct Setup {
    chips: Arc<Mutex<Vec<ChipIdentity>>>,
    labeller: NodeLabeller,
}

fn setup(server: &FakeApiServer, chips: Vec<ChipIdentity>, config: LabellerConfig) -> Setup {
    let chips = Arc::new(Mutex::new(chips));
    let manager = Arc::new(shared_driver(Arc::clone(&chips), "24.1.rc2"));
    Setup { chips, labeller: NodeLabeller::new(manager, server.client(), config).expect("labeller") }
}

fn hourly() -> LabellerConfig {
    LabellerConfig { interval: Duration::from_secs(3600), ..LabellerConfig::new(NODE) }
}

fn duo(count: u32) -> Vec<ChipIdentity> {
    (0..count).map(|logic| chip(logic, "310P3", Some("Atlas 300I Duo"), None)).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labels_are_patched_once_with_the_exact_body_and_foreign_labels_survive() {
    let mut initial = FOREIGN.to_vec();
    initial.push(("ascend.huawei.com/chip-type", "310P")); // set by hand when the node joined the pool
    initial.push(("ascend.huawei.com/product", "Atlas-300I-Pro")); // stale
    let server = server_with_node(&initial).await;
    let node = setup(&server, duo(8), hourly());

    let first = node.labeller.reconcile().await.expect("first reconcile");
    let Reconciled::Patched(patch) = first else { panic!("expected a patch, got {first:?}") };
    assert_eq!(
        patch.to_string(),
        "accelerator=huawei-Ascend310P, ascend.huawei.com/chip-count=8, ascend.huawei.com/driver-version=24.1.rc2, \
         ascend.huawei.com/product=Atlas-300I-Duo, huawei.com/driver.version=24.1.rc2, infer-card-type=card-300i-duo, \
         node.kubernetes.io/npu.chip.name=310P3"
    );
    let requests = server.requests();
    assert_eq!(
        requests.iter().map(|r| (r.method.as_str(), r.path.as_str())).collect::<Vec<_>>(),
        [("GET", NODE_PATH), ("PATCH", NODE_PATH)]
    );
    let patch_request = &requests[1];
    assert_eq!(
        patch_request.body.as_ref().map(ToString::to_string).as_deref(),
        Some(
            r#"{"metadata":{"labels":{"accelerator":"huawei-Ascend310P","ascend.huawei.com/chip-count":"8","ascend.huawei.com/driver-version":"24.1.rc2","ascend.huawei.com/product":"Atlas-300I-Duo","huawei.com/driver.version":"24.1.rc2","infer-card-type":"card-300i-duo","node.kubernetes.io/npu.chip.name":"310P3"}}}"#
        )
    );
    assert_eq!(patch_request.content_type.as_deref(), Some("application/merge-patch+json"));
    assert_eq!(patch_request.query_value("fieldManager"), Some("ascend-node-labeller"));

    let now = labels(&server);
    for (key, value) in FOREIGN {
        assert_eq!(now.get(key).map(String::as_str), Some(value), "foreign label {key} changed");
    }
    assert_eq!(now.get("ascend.huawei.com/chip-type").map(String::as_str), Some("310P"));
    assert_eq!(now.len(), FOREIGN.len() + 8);

    // Idempotent: the node now matches, so the next reconcile only reads it.
    assert_eq!(node.labeller.reconcile().await.expect("second reconcile"), Reconciled::Unchanged);
    assert_eq!(patches(&server).len(), 1, "no PATCH when nothing changed");
    assert_eq!(server.requests().len(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_the_node_should_not_carry_is_removed_with_null() {
    let mut initial = FOREIGN.to_vec();
    initial.extend([("node.kubernetes.io/npu.chip.name", "310P3"), ("ascend.huawei.com/product", "Atlas-300I-Duo")]);
    let server = server_with_node(&initial).await;
    // Two chip names and no product: the chip-name label goes, the product label goes.
    let chips = vec![chip(0, "910B3", None, None), chip(1, "910B4", None, None)];
    let node = setup(&server, chips, hourly());
    node.labeller.reconcile().await.expect("reconcile");
    let body = patches(&server)[0].body.clone().expect("JSON body");
    assert_eq!(body["metadata"]["labels"]["node.kubernetes.io/npu.chip.name"], serde_json::Value::Null);
    let now = labels(&server);
    assert!(!now.contains_key("node.kubernetes.io/npu.chip.name") && !now.contains_key("ascend.huawei.com/product"));
    assert_eq!(now.get("ascend.huawei.com/chip-type").map(String::as_str), Some("910B"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_bearer_token_of_the_configuration_is_sent() {
    let server = server_with_node(&FOREIGN).await;
    let dir = tempfile::tempdir().expect("temporary directory");
    let token = dir.path().join("token");
    // As the kubelet writes projected tokens: no trailing newline (kube-rs sends the file as it is).
    std::fs::write(&token, "token-1").expect("token");
    let mut config = server.config();
    config.auth_info.token_file = Some(token.display().to_string());
    let client = kube::Client::try_from(config).expect("client");
    let manager = Arc::new(shared_driver(Arc::new(Mutex::new(duo(1))), "24.1.rc2"));
    let labeller = NodeLabeller::new(manager, client, hourly()).expect("labeller");
    labeller.reconcile().await.expect("reconcile");
    let requests = server.requests();
    assert!(requests.iter().all(|r| r.authorization.as_deref() == Some("Bearer token-1")), "{requests:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_patch_names_the_verb_the_object_the_api_message_and_the_fix() {
    let server = server_with_node(&FOREIGN).await;
    server.inject(FaultRule::status(403).method("PATCH").message(
        "nodes \"worker-1\" is forbidden: User \"system:serviceaccount:ascend-system:ascend-device-plugin\" cannot \
         patch resource \"nodes\" in API group \"\" at the cluster scope",
    ));
    let node = setup(&server, duo(1), hourly());
    let error = node.labeller.reconcile().await.expect_err("RBAC forbids the patch");
    assert!(matches!(&error, Error::Api { code: 403, reason, .. } if reason == "Forbidden"), "{error:?}");
    let text = error.to_string();
    assert!(
        text.starts_with(
            "patch nodes/worker-1: HTTP 403 Forbidden: nodes \"worker-1\" is forbidden: User \
             \"system:serviceaccount:ascend-system:ascend-device-plugin\" cannot patch resource \"nodes\""
        ),
        "{text}"
    );
    assert!(text.contains("lacks a permission on nodes"), "{text}");
    assert_eq!(labels(&server).len(), FOREIGN.len(), "nothing changed");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn server_errors_hangs_and_outages_fail_the_reconcile_and_the_next_one_recovers() {
    let server = server_with_node(&FOREIGN).await;
    let config = LabellerConfig { request_timeout: Duration::from_millis(300), ..hourly() };
    let node = setup(&server, duo(2), config);

    server.inject(FaultRule::status(500).times(1));
    let error = node.labeller.reconcile().await.expect_err("500");
    assert_eq!(error.status_code(), Some(500), "{error}");
    assert!(error.to_string().starts_with("get nodes/worker-1: HTTP 500 InternalError"), "{error}");

    server.inject(FaultRule::hang().method("PATCH"));
    let error = node.labeller.reconcile().await.expect_err("hang");
    assert!(matches!(error, Error::Timeout { verb: "patch", .. }), "{error:?}");
    assert!(error.to_string().contains("no answer from the API server within 300ms"), "{error}");
    server.clear_faults();

    server.stop_listening();
    let error = node.labeller.reconcile().await.expect_err("unreachable");
    assert!(matches!(error, Error::Transport { verb: "get", .. }), "{error:?}");
    assert_eq!(labels(&server).len(), FOREIGN.len(), "failures never change labels");

    server.resume_listening().await.expect("listen again");
    let outcome = node.labeller.reconcile().await.expect("the API server is back");
    assert!(matches!(outcome, Reconciled::Patched(_)), "{outcome:?}");
    assert_eq!(labels(&server).get("ascend.huawei.com/chip-count").map(String::as_str), Some("2"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reconciles_at_start_on_demand_and_stops_on_shutdown() {
    let server = server_with_node(&FOREIGN).await;
    let node = Arc::new(setup(&server, duo(4), hourly()));
    let trigger = node.labeller.trigger();
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = Arc::clone(&node);
    let task = tokio::spawn(async move {
        running
            .labeller
            .run(async {
                let _ = stopped.await;
            })
            .await;
    });
    wait_for(|| labels(&server).get("ascend.huawei.com/chip-count").map(String::as_str) == Some("4")).await;

    // Someone removes a label by hand and a card is added; the interval is an hour, the trigger acts now.
    let nodes: Api<Node> = Api::all(server.client());
    let by_hand = Patch::Merge(serde_json::json!({"metadata": {"labels": {"ascend.huawei.com/chip-type": null}}}));
    nodes.patch(NODE, &PatchParams::default(), &by_hand).await.expect("kubectl label node worker-1 chip-type-");
    node.chips.lock().expect("chips").push(chip(4, "310P3", Some("Atlas 300I Duo"), None));
    trigger.request();
    wait_for(|| {
        let now = labels(&server);
        now.get("ascend.huawei.com/chip-count").map(String::as_str) == Some("5")
            && now.get("ascend.huawei.com/chip-type").map(String::as_str) == Some("310P")
    })
    .await;
    // The hand-made change also reaches the labeller by its watch of the Node, which may re-add chip-type in a
    // patch of its own before the trigger's reconcile patches the count.
    let count = patches(&server).len();
    assert!((3..=4).contains(&count), "two or three reconciles and the hand-made change: {count}");

    stop.send(()).expect("labeller still running");
    tokio::time::timeout(Duration::from_secs(5), task).await.expect("run returns on shutdown").expect("no panic");
    for (key, value) in FOREIGN {
        assert_eq!(labels(&server).get(key).map(String::as_str), Some(value));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_label_removed_by_hand_comes_back_through_the_watch_of_the_node() {
    let server = server_with_node(&FOREIGN).await;
    let node = Arc::new(setup(&server, duo(2), hourly()));
    let running = Arc::clone(&node);
    let task = tokio::spawn(async move { running.labeller.run(std::future::pending()).await });
    wait_for(|| labels(&server).get("ascend.huawei.com/chip-type").map(String::as_str) == Some("310P")).await;

    // No trigger, and the interval is an hour: only the watch of the Node can bring it back.
    let nodes: Api<Node> = Api::all(server.client());
    let by_hand = Patch::Merge(serde_json::json!({"metadata": {"labels": {"ascend.huawei.com/chip-type": null}}}));
    nodes.patch(NODE, &PatchParams::default(), &by_hand).await.expect("kubectl label node worker-1 chip-type-");
    wait_for(|| labels(&server).get("ascend.huawei.com/chip-type").map(String::as_str) == Some("310P")).await;
    task.abort();
}

#[tokio::test]
async fn an_invalid_node_name_is_refused_before_any_request() {
    let server = FakeApiServer::start().await.expect("server");
    let manager = Arc::new(shared_driver(Arc::new(Mutex::new(duo(1))), "24.1.rc2"));
    let error = NodeLabeller::new(manager, server.client(), LabellerConfig::new("../x")).err().expect("refused");
    assert!(matches!(error, Error::InvalidNodeName(_)), "{error:?}");
    assert!(server.requests().is_empty());
}

async fn wait_for(condition: impl Fn() -> bool) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while !condition() {
        assert!(tokio::time::Instant::now() < deadline, "condition not met within 10 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hung_driver_fails_the_reconcile_in_time_and_no_second_read_piles_up() {
    let server = server_with_node(&FOREIGN).await;
    // A driver whose chip list blocks until the test releases it, as DCMI does on a dropped card.
    let (release, released) = std::sync::mpsc::channel::<()>();
    let released = Mutex::new(released);
    let reads = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = Arc::clone(&reads);
    let identities = duo(2);
    let listed: Vec<_> = identities.iter().map(|chip| chip.ids).collect();
    let mut driver = ascend_dcmi::MockDeviceManager::new();
    driver.expect_chips().returning(move || {
        if counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst) == 0 {
            let _ = released.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).recv();
        }
        Ok(listed.clone())
    });
    driver
        .expect_identity()
        .returning(move |logic| Ok(identities.iter().find(|chip| chip.ids.logic == logic).cloned().expect("chip")));
    driver.expect_driver_version().returning(|| Ok("24.1.rc2".to_owned()));
    driver.expect_vnpus().returning(|logic| Err(ascend_dcmi::Error::NoSuchChip(logic.to_string())));
    driver.expect_super_pod_info().returning(|logic| Err(ascend_dcmi::Error::NoSuchChip(logic.to_string())));
    let config = LabellerConfig { driver_deadline: Duration::from_millis(200), ..hourly() };
    let labeller = NodeLabeller::new(Arc::new(driver), server.client(), config).expect("labeller");

    let error = tokio::time::timeout(Duration::from_secs(5), labeller.reconcile())
        .await
        .expect("the reconcile must give up on a hung driver at its deadline")
        .expect_err("the driver hangs");
    assert!(matches!(error, Error::DriverDeadline(deadline) if deadline == Duration::from_millis(200)), "{error:?}");
    let error = labeller.reconcile().await.expect_err("the first read is still blocked");
    assert!(matches!(error, Error::DriverBusy), "{error:?}");
    assert_eq!(reads.load(std::sync::atomic::Ordering::SeqCst), 1, "a second read was started behind the hung one");
    assert!(patches(&server).is_empty(), "a failed read must not touch the labels");

    release.send(()).expect("release the driver");
    // The blocked read returns and frees the driver; the next reconcile reads again and labels the node.
    let outcome = loop {
        match labeller.reconcile().await {
            Err(Error::DriverBusy) => tokio::time::sleep(Duration::from_millis(10)).await,
            other => break other.expect("the driver answers again"),
        }
    };
    assert!(matches!(outcome, Reconciled::Patched(_)), "{outcome:?}");
    assert_eq!(labels(&server).get("ascend.huawei.com/chip-count").map(String::as_str), Some("2"));
}
