//! The fake API server through real kube-rs clients: each verb, patch type and failure as a client sees it.

use std::collections::BTreeMap;
use std::time::Duration;

use fake_apiserver::{FakeApiServer, FaultRule, Kind};
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::{ConfigMap, Node, NodeCondition, NodeStatus, Pod, PodSpec, PodStatus};
use k8s_openapi::api::resource::v1::ResourceSlice;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};
use kube::runtime::watcher;
use serde_json::json;

fn config_map(name: &str, data: &[(&str, &str)]) -> ConfigMap {
    let mut map = ConfigMap::default();
    map.metadata.name = Some(name.into());
    map.data = Some(data.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
    map
}

fn api_status(error: kube::Error) -> (u16, String) {
    match error {
        kube::Error::Api(status) => (status.code, status.reason.clone()),
        other => panic!("expected an API error, got {other:?}"),
    }
}

fn pod(name: &str, node: &str, labels: &[(&str, &str)]) -> Pod {
    let mut pod = Pod::default();
    pod.metadata.name = Some(name.into());
    pod.metadata.labels = Some(labels.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
    pod.spec = Some(PodSpec { node_name: Some(node.into()), ..PodSpec::default() });
    pod.status = Some(PodStatus { phase: Some("Pending".into()), ..PodStatus::default() });
    pod
}

#[tokio::test]
async fn create_get_replace_and_delete_with_the_apis_metadata_rules() {
    let server = FakeApiServer::start().await.expect("server");
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "kube-system");
    let created = maps.create(&PostParams::default(), &config_map("a", &[("k", "1")])).await.expect("create");
    let metadata = &created.metadata;
    assert_eq!(metadata.namespace.as_deref(), Some("kube-system"));
    assert!(metadata.uid.is_some() && metadata.creation_timestamp.is_some());
    let first_version = metadata.resource_version.clone().expect("resourceVersion");

    let (code, reason) =
        api_status(maps.create(&PostParams::default(), &config_map("a", &[])).await.expect_err("exists"));
    assert_eq!((code, reason.as_str()), (409, "AlreadyExists"));

    let mut generated = config_map("", &[]);
    generated.metadata.name = None;
    generated.metadata.generate_name = Some("mindx-".into());
    let generated = maps.create(&PostParams::default(), &generated).await.expect("generateName");
    let name = generated.metadata.name.expect("a name");
    assert!(name.starts_with("mindx-") && name.len() == "mindx-".len() + 5, "{name}");

    let mut changed = created.clone();
    changed.data = Some(BTreeMap::from([("k".to_owned(), "2".to_owned())]));
    let replaced = maps.replace("a", &PostParams::default(), &changed).await.expect("replace");
    assert_ne!(replaced.metadata.resource_version.as_deref(), Some(first_version.as_str()));
    // The same stale copy again: its resourceVersion is a precondition.
    let (code, reason) = api_status(maps.replace("a", &PostParams::default(), &changed).await.expect_err("stale"));
    assert_eq!((code, reason.as_str()), (409, "Conflict"));

    assert_eq!(maps.get("a").await.expect("get").data, changed.data);
    assert_eq!(api_status(maps.get("missing").await.expect_err("404")).0, 404);
    maps.delete("a", &DeleteParams::default()).await.expect("delete");
    assert!(maps.get_opt("a").await.expect("get_opt").is_none());
    assert!(server.get::<ConfigMap>(Some("kube-system"), &name).is_some());
}

#[tokio::test]
async fn lists_select_by_label_and_field_and_page() {
    let server = FakeApiServer::start().await.expect("server");
    let pods: Api<Pod> = Api::namespaced(server.client(), "default");
    for (name, node, app) in [("p1", "n1", "train"), ("p2", "n2", "train"), ("p3", "n1", "infer")] {
        pods.create(&PostParams::default(), &pod(name, node, &[("app", app)])).await.expect("create");
    }
    let names = |list: kube::core::ObjectList<Pod>| -> Vec<String> {
        list.items.into_iter().filter_map(|pod| pod.metadata.name).collect()
    };
    let on_n1 = pods.list(&ListParams::default().fields("spec.nodeName=n1,status.phase=Pending")).await.expect("list");
    assert_eq!(names(on_n1), ["p1", "p3"]);
    let training = pods.list(&ListParams::default().labels("app in (train),app!=infer")).await.expect("list");
    assert_eq!(names(training), ["p1", "p2"]);
    let first_page = pods.list(&ListParams::default().limit(2)).await.expect("page 1");
    let token = first_page.metadata.continue_.clone().expect("a continue token");
    assert_eq!(names(first_page), ["p1", "p2"]);
    let second = pods.list(&ListParams::default().limit(2).continue_token(&token)).await.expect("page 2");
    assert!(second.metadata.continue_.is_none());
    assert_eq!(names(second), ["p3"]);
    let everywhere: Api<Pod> = Api::all(server.client());
    assert_eq!(everywhere.list(&ListParams::default()).await.expect("all").items.len(), 3);
}

#[tokio::test]
async fn merge_strategic_and_json_patches() {
    let server = FakeApiServer::start().await.expect("server");
    let mut node = Node::default();
    node.metadata.name = Some("worker-1".into());
    node.metadata.labels =
        Some(BTreeMap::from([("keep".to_owned(), "x".to_owned()), ("drop".to_owned(), "y".to_owned())]));
    server.seed(&node);
    let nodes: Api<Node> = Api::all(server.client());
    let params = PatchParams::default();
    let patched = nodes
        .patch("worker-1", &params, &Patch::Merge(json!({"metadata": {"labels": {"drop": null, "new": "z"}}})))
        .await
        .expect("merge");
    let labels = patched.metadata.labels.expect("labels");
    assert_eq!(labels.keys().collect::<Vec<_>>(), ["keep", "new"]);

    let conditions = |status: Option<NodeStatus>| -> Vec<(String, String)> {
        status.and_then(|s| s.conditions).unwrap_or_default().into_iter().map(|c| (c.type_, c.status)).collect()
    };
    let condition = |kind: &str, status: &str| NodeCondition {
        type_: kind.into(),
        status: status.into(),
        ..NodeCondition::default()
    };
    let ready = json!({"status": {"conditions": [condition("Ready", "True")]}});
    nodes.patch_status("worker-1", &params, &Patch::Strategic(ready)).await.expect("ready");
    let npu = json!({"status": {"conditions": [condition("NPUHealthy", "False")]}});
    let patched = nodes.patch_status("worker-1", &params, &Patch::Strategic(npu)).await.expect("npu");
    assert_eq!(conditions(patched.status), [("Ready".into(), "True".into()), ("NPUHealthy".into(), "False".into())]);

    // A Node's status write takes its labels and annotations too, as kube-apiserver's Node status strategy does (the
    // kubelet and Huawei's device plugin label Nodes through nodes/status); its spec stays.
    let labelled = json!({"metadata": {"labels": {"status-written": "1"}}, "spec": {"unschedulable": true}});
    let patched = nodes.patch_status("worker-1", &params, &Patch::Strategic(labelled)).await.expect("labels");
    assert_eq!(patched.metadata.labels.expect("labels").get("status-written").map(String::as_str), Some("1"));
    assert_eq!(patched.spec.and_then(|spec| spec.unschedulable), None);

    // A write of the main resource does not change the status (the status subresource's rule).
    let ignored = json!({"status": {"conditions": []}, "metadata": {"annotations": {"a": "b"}}});
    let patched = nodes.patch("worker-1", &params, &Patch::Merge(ignored)).await.expect("merge");
    assert_eq!(conditions(patched.status).len(), 2);

    let stale = json!({"metadata": {"resourceVersion": "1", "labels": {"x": "y"}}});
    let (code, _) = api_status(nodes.patch("worker-1", &params, &Patch::Merge(stale)).await.expect_err("stale rv"));
    assert_eq!(code, 409);
    let (code, _) = api_status(nodes.patch("absent", &params, &Patch::Merge(json!({}))).await.expect_err("404"));
    assert_eq!(code, 404);

    let json_patch: kube::core::params::Patch<()> = Patch::Json(
        serde_json::from_value(json!([{"op": "add", "path": "/metadata/labels/added", "value": "1"}])).expect("patch"),
    );
    let patched = nodes.patch("worker-1", &params, &json_patch).await.expect("json patch");
    assert_eq!(patched.metadata.labels.expect("labels").get("added").map(String::as_str), Some("1"));
    let recorded: Vec<_> = server
        .requests()
        .into_iter()
        .filter(|r| r.method == "PATCH")
        .map(|r| r.content_type.unwrap_or_default())
        .collect();
    assert_eq!(recorded[0], "application/merge-patch+json");
    assert_eq!(recorded[1], "application/strategic-merge-patch+json");
    assert_eq!(recorded.last().map(String::as_str), Some("application/json-patch+json"));
}

#[tokio::test]
async fn server_side_apply_owns_fields_per_manager() {
    let server = FakeApiServer::start().await.expect("server");
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "kube-system");
    let apply = |data: serde_json::Value| {
        Patch::Apply(json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "info"}, "data": data}))
    };
    let plugin = PatchParams::apply("ascend-device-plugin");
    let created = maps.patch("info", &plugin, &apply(json!({"a": "1", "b": "2"}))).await.expect("apply creates");
    assert_eq!(created.data.as_ref().map(BTreeMap::len), Some(2));
    // Fields the manager stops naming are removed.
    let shrunk = maps.patch("info", &plugin, &apply(json!({"a": "1"}))).await.expect("apply");
    assert_eq!(shrunk.data, Some(BTreeMap::from([("a".to_owned(), "1".to_owned())])));
    // Another manager may not change them without force.
    let other = PatchParams::apply("someone-else");
    let (code, reason) = api_status(maps.patch("info", &other, &apply(json!({"a": "9"}))).await.expect_err("conflict"));
    assert_eq!((code, reason.as_str()), (409, "Conflict"));
    let forced = maps.patch("info", &other.force(), &apply(json!({"a": "9"}))).await.expect("forced");
    assert_eq!(forced.data.and_then(|d| d.get("a").cloned()).as_deref(), Some("9"));
    let recorded = server.requests().into_iter().rfind(|r| r.method == "PATCH").expect("a PATCH");
    assert_eq!(recorded.query_value("fieldManager"), Some("someone-else"));
    assert_eq!(recorded.content_type.as_deref(), Some("application/apply-patch+yaml"));
    let (code, _) =
        api_status(maps.patch("info", &PatchParams::default(), &apply(json!({}))).await.expect_err("no manager"));
    assert_eq!(code, 400);
}

#[tokio::test]
async fn finalizers_delay_deletion_and_preconditions_guard_it() {
    let server = FakeApiServer::start().await.expect("server");
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    let mut map = config_map("held", &[]);
    map.metadata.finalizers = Some(vec!["example.com/hold".into()]);
    let created = maps.create(&PostParams::default(), &map).await.expect("create");
    let wrong_uid = DeleteParams {
        preconditions: Some(kube::api::Preconditions { uid: Some("nope".into()), resource_version: None }),
        ..DeleteParams::default()
    };
    assert_eq!(api_status(maps.delete("held", &wrong_uid).await.expect_err("precondition")).0, 409);
    maps.delete("held", &DeleteParams::default()).await.expect("delete marks");
    let marked = maps.get("held").await.expect("still there");
    assert!(marked.metadata.deletion_timestamp.is_some());
    maps.patch("held", &PatchParams::default(), &Patch::Merge(json!({"metadata": {"finalizers": null}})))
        .await
        .expect("remove finalizer");
    assert!(maps.get_opt("held").await.expect("get").is_none(), "gone with its last finalizer");
    assert_ne!(created.metadata.uid, None);
}

async fn next<S>(events: &mut S) -> watcher::Event<ResourceSlice>
where
    S: futures_util::Stream<Item = Result<watcher::Event<ResourceSlice>, watcher::Error>> + Unpin,
{
    tokio::time::timeout(Duration::from_secs(10), events.next())
        .await
        .expect("an event in time")
        .expect("stream open")
        .expect("no error")
}

#[tokio::test]
async fn kube_runtime_watcher_sees_changes_and_recovers_from_compaction() {
    let server = FakeApiServer::start().await.expect("server");
    let slices: Api<ResourceSlice> = Api::all(server.client());
    let seed = |name: &str| {
        json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": name, "labels": {"driver": "npu"}},
        "spec": {"driver": "npu.huawei.com", "nodeName": "n1", "pool": {"name": "n1", "generation": 1, "resourceSliceCount": 1}, "devices": []}})
    };
    server.seed(seed("s1"));
    let config = watcher::Config::default().labels("driver=npu");
    let mut events = watcher::watcher(slices.clone(), config).boxed();
    let mut seen = Vec::new();
    loop {
        match next(&mut events).await {
            watcher::Event::InitDone => break,
            watcher::Event::InitApply(slice) => seen.push(slice.metadata.name.unwrap_or_default()),
            _ => {}
        }
    }
    assert_eq!(seen, ["s1"]);
    server.seed(seed("s2"));
    match next(&mut events).await {
        watcher::Event::Apply(slice) => assert_eq!(slice.metadata.name.as_deref(), Some("s2")),
        other => panic!("expected s2 applied, got {other:?}"),
    }
    slices.delete("s1", &DeleteParams::default()).await.expect("delete");
    match next(&mut events).await {
        watcher::Event::Delete(slice) => assert_eq!(slice.metadata.name.as_deref(), Some("s1")),
        other => panic!("expected s1 deleted, got {other:?}"),
    }
    // After a compaction the open watch goes on; a new one from an old resourceVersion gets 410 and relists.
    server.compact();
    let (code, _) = {
        let old = kube::api::WatchParams::default();
        let mut stream = slices.watch(&old, "2").await.expect("watch").boxed();
        match stream.next().await {
            Some(Ok(kube::api::WatchEvent::Error(status))) => (status.code, status.reason),
            other => panic!("expected a 410 error event, got {other:?}"),
        }
    };
    assert_eq!(code, 410);
}

#[tokio::test]
async fn injected_failures_and_an_unreachable_server() {
    let server = FakeApiServer::start().await.expect("server");
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    server.inject(FaultRule::status(500).method("POST").times(1));
    let (code, reason) = api_status(maps.create(&PostParams::default(), &config_map("x", &[])).await.expect_err("500"));
    assert_eq!((code, reason.as_str()), (500, "InternalError"));
    maps.create(&PostParams::default(), &config_map("x", &[])).await.expect("the rule is spent");

    server.inject(FaultRule::hang().path_contains("/configmaps/x"));
    let held = tokio::time::timeout(Duration::from_millis(300), maps.get("x")).await;
    assert!(held.is_err(), "a hanging server does not answer");
    server.clear_faults();
    maps.get("x").await.expect("answers again");

    server.stop_listening();
    let error = maps.get("x").await.expect_err("unreachable");
    assert!(!matches!(error, kube::Error::Api(_)), "a transport error, not an API answer: {error:?}");
    server.resume_listening().await.expect("listen again");
    let fresh: Api<ConfigMap> = Api::namespaced(server.client(), "default");
    assert!(fresh.get("x").await.is_ok(), "the objects survive");
}

#[tokio::test]
async fn more_kinds_and_discovery() {
    let server = FakeApiServer::builder()
        .kind(Kind::namespaced("example.com", "v1", "widgets", "Widget"))
        .start()
        .await
        .expect("server");
    let client = server.client();
    let version = client.apiserver_version().await.expect("version");
    assert_eq!(version.major, "1");
    let discovery = kube::Discovery::new(client.clone()).run().await.expect("discovery");
    let (resource, _) = discovery
        .groups()
        .flat_map(|group| group.recommended_resources())
        .find(|(resource, _)| resource.kind == "Widget")
        .expect("the added kind is discovered");
    let widgets: Api<kube::api::DynamicObject> = Api::namespaced_with(client, "default", &resource);
    let widget: kube::api::DynamicObject = serde_json::from_value(
        json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {"size": 3}}),
    )
    .expect("object");
    widgets.create(&PostParams::default(), &widget).await.expect("create a widget");
    assert_eq!(widgets.get("w").await.expect("get").data["spec"]["size"], 3);
}

/// A client that does not retry by itself, so that each throttled answer reaches the test.
fn client_without_retries(server: &FakeApiServer, user_agent: &'static str) -> kube::Client {
    let mut config = server.config();
    config.default_retry = false;
    config.headers.push((hyper::header::USER_AGENT, hyper::header::HeaderValue::from_static(user_agent)));
    kube::Client::try_from(config).expect("client")
}

#[tokio::test]
async fn requests_are_counted_by_verb_resource_and_user_agent() {
    let server = FakeApiServer::start().await.expect("server");
    let client = client_without_retries(&server, "counting-test/1.0");
    let maps: Api<ConfigMap> = Api::namespaced(client.clone(), "kube-system");
    maps.create(&PostParams::default(), &config_map("a", &[])).await.expect("create");
    maps.get("a").await.expect("get");
    maps.list(&ListParams::default()).await.expect("list");
    maps.patch("a", &PatchParams::default(), &Patch::Merge(json!({"data": {"k": "v"}}))).await.expect("patch");
    let nodes: Api<Node> = Api::all(client.clone());
    let mut node = Node::default();
    node.metadata.name = Some("worker-1".into());
    nodes.create(&PostParams::default(), &node).await.expect("create node");
    let status = json!({"status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    nodes.patch_status("worker-1", &PatchParams::default(), &Patch::Merge(&status)).await.expect("status");
    maps.delete("a", &DeleteParams::default()).await.expect("delete");
    let namespaces: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client);
    assert!(namespaces.get_opt("jobs").await.expect("get namespace").is_none());

    let counts: BTreeMap<String, usize> =
        server.request_counts().into_iter().map(|(key, count)| (key.to_string(), count)).collect();
    let expected: BTreeMap<String, usize> = [
        ("create configmaps (counting-test/1.0)", 1),
        ("get configmaps (counting-test/1.0)", 1),
        ("list configmaps (counting-test/1.0)", 1),
        ("patch configmaps (counting-test/1.0)", 1),
        ("delete configmaps (counting-test/1.0)", 1),
        ("create nodes (counting-test/1.0)", 1),
        ("patch nodes/status (counting-test/1.0)", 1),
        ("get namespaces (counting-test/1.0)", 1),
    ]
    .into_iter()
    .map(|(key, count)| (key.to_owned(), count))
    .collect();
    assert_eq!(counts, expected);
}

#[tokio::test]
async fn throttling_answers_429_with_retry_after() {
    let server = FakeApiServer::start().await.expect("server");
    let maps: Api<ConfigMap> = Api::namespaced(client_without_retries(&server, "t/1"), "kube-system");
    server.inject(FaultRule::too_many_requests(7).times(1));
    match maps.get_opt("x").await.expect_err("throttled") {
        kube::Error::Api(status) => {
            assert_eq!((status.code, status.reason.as_str()), (429, "TooManyRequests"));
            assert_eq!(status.details.map(|details| details.retry_after_seconds), Some(7));
        }
        other => panic!("expected an API error, got {other:?}"),
    }
    // API Priority and Fairness answers plain text: the header is the only word on when to come back.
    server.inject(FaultRule::rejected_by_flow_control(3).times(1));
    let raw = reqwest_free_get(&server, "/api/v1/namespaces/kube-system/configmaps/x").await;
    assert_eq!(raw.0, 429);
    assert_eq!(raw.1.as_deref(), Some("3"));
    assert!(raw.2.starts_with("Too many requests"), "{}", raw.2);
    assert!(maps.get_opt("x").await.expect("served again").is_none());
}

/// One GET with a bare HTTP/1.1 client: status, `Retry-After`, body.
async fn reqwest_free_get(server: &FakeApiServer, path: &str) -> (u16, Option<String>, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut stream = tokio::net::TcpStream::connect(server.address()).await.expect("connect");
    let request = format!("GET {path} HTTP/1.1\r\nHost: fake\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("send");
    let mut answer = String::new();
    stream.read_to_string(&mut answer).await.expect("read");
    let (head, body) = answer.split_once("\r\n\r\n").expect("a head and a body");
    let code = head.split(' ').nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    let retry_after = head
        .lines()
        .find_map(|line| line.strip_prefix("retry-after: ").or_else(|| line.strip_prefix("Retry-After: ")))
        .map(str::to_owned);
    (code, retry_after, body.to_owned())
}
