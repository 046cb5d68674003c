//! A DRA driver's pool and claims through real kube-rs clients against the fake API server.

use ascend_kube::get_claim;
use ascend_kube::{PoolPublisher, SliceContent};
use fake_apiserver::{FakeApiServer, FaultRule};
use k8s_openapi::api::resource::v1::{Device, ResourceSlice};
use kube::Api;
use serde_json::json;

const DRIVER: &str = "widgets.example.com";

fn content(names: &[&str]) -> SliceContent {
    SliceContent {
        devices: names.iter().map(|name| Device { name: (*name).to_owned(), ..Device::default() }).collect(),
        shared_counters: Vec::new(),
    }
}

fn slices(server: &FakeApiServer) -> Vec<ResourceSlice> {
    let mut slices: Vec<ResourceSlice> = server.list();
    slices.sort_by(|a, b| a.metadata.name.cmp(&b.metadata.name));
    slices
}

#[tokio::test]
async fn the_pool_is_owned_by_its_node_and_every_publication_raises_its_generation() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let node = server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}));
    // A slice of another driver on the same node, and one of ours on another node: neither is touched.
    server.seed(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "foreign"},
        "spec": {"driver": "other.example.com", "nodeName": "worker-1",
                 "pool": {"name": "worker-1", "generation": 9, "resourceSliceCount": 1}}}));
    server.seed(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": "elsewhere"},
        "spec": {"driver": DRIVER, "nodeName": "worker-2",
                 "pool": {"name": "worker-2", "generation": 7, "resourceSliceCount": 1}}}));

    let mut publisher = PoolPublisher::for_node(server.client(), "worker-1", DRIVER).await.expect("node found");
    let written = publisher.publish(vec![content(&["a", "b"]), content(&["c"])]).await.expect("published");
    assert_eq!(written.len(), 2);
    assert_eq!(publisher.generation(), Some(1));
    let ours: Vec<ResourceSlice> =
        slices(&server).into_iter().filter(|s| s.spec.driver == DRIVER && s.spec.node_name.is_some()).collect();
    let ours: Vec<&ResourceSlice> = ours.iter().filter(|s| s.spec.pool.name == "worker-1").collect();
    let names: Vec<&str> = ours.iter().filter_map(|s| s.metadata.name.as_deref()).collect();
    assert_eq!(names, ["worker-1-widgets-example-com-0", "worker-1-widgets-example-com-1"]);
    for slice in &ours {
        assert_eq!((slice.spec.pool.generation, slice.spec.pool.resource_slice_count), (1, 2));
        let owner = &slice.metadata.owner_references.as_ref().expect("owned")[0];
        assert_eq!((owner.kind.as_str(), owner.name.as_str()), ("Node", "worker-1"));
        assert_eq!(Some(owner.uid.as_str()), node["metadata"]["uid"].as_str());
    }
    let apply = server.requests().into_iter().find(|r| r.method == "PATCH").expect("an apply");
    assert_eq!(apply.query_value("fieldManager"), Some("ascend-dra-driver"));

    // Fewer devices: one slice under generation 2, the other deleted.
    publisher.publish(vec![content(&["a"])]).await.expect("published again");
    let now = slices(&server);
    let names: Vec<&str> = now.iter().filter_map(|s| s.metadata.name.as_deref()).collect();
    assert_eq!(names, ["elsewhere", "foreign", "worker-1-widgets-example-com-0"]);
    let mine = &now[2];
    assert_eq!((mine.spec.pool.generation, mine.spec.pool.resource_slice_count), (2, 1));
    assert_eq!(now[1].spec.pool.generation, 9, "another driver's slice is untouched");
    assert_eq!(slice_lists(&server), 1, "the second publication knows what the first left: no LIST");

    // A restarted driver continues above what is published.
    let mut restarted = PoolPublisher::for_node(server.client(), "worker-1", DRIVER).await.expect("node found");
    restarted.publish(Vec::new()).await.expect("an empty pool is published");
    assert_eq!(restarted.generation(), Some(3));
    let empty: ResourceSlice = server.get(None, "worker-1-widgets-example-com-0").expect("still one slice");
    assert_eq!(empty.spec.devices.as_deref().map(<[Device]>::len), Some(0));
}

/// The LIST requests of ResourceSlices the server received.
fn slice_lists(server: &FakeApiServer) -> usize {
    server.requests().iter().filter(|r| r.method == "GET" && r.path.ends_with("/resourceslices")).count()
}

#[tokio::test]
async fn after_a_failed_publication_the_next_one_lists_the_slices_again() {
    let server = FakeApiServer::start().await.expect("fake API server");
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}));
    let mut publisher = PoolPublisher::for_node(server.client(), "worker-1", DRIVER).await.expect("node found");
    publisher.publish(vec![content(&["a"]), content(&["b"])]).await.expect("published");
    publisher.publish(vec![content(&["a"]), content(&["b"])]).await.expect("published again");
    assert_eq!((slice_lists(&server), publisher.generation()), (1, Some(2)));

    // The second slice's apply fails: the first is written under generation 3, the second is left at 2.
    server.inject(FaultRule::status(500).method("PATCH").path_contains("widgets-example-com-1").times(1));
    publisher.publish(vec![content(&["a"]), content(&["b"])]).await.expect_err("the apply fails");
    // Someone deletes a slice meanwhile; the next publication asks the server, and writes above what it holds.
    let slices: Api<ResourceSlice> = Api::all(server.client());
    slices.delete("worker-1-widgets-example-com-1", &Default::default()).await.expect("delete");
    publisher.publish(vec![content(&["a"])]).await.expect("published after the failure");
    assert_eq!((slice_lists(&server), publisher.generation()), (2, Some(4)));
    let names: Vec<String> = self::slices(&server).into_iter().filter_map(|s| s.metadata.name).collect();
    assert_eq!(names, ["worker-1-widgets-example-com-0"]);
}

#[tokio::test]
async fn a_missing_node_and_a_missing_claim_are_told_apart_from_failures() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let error = PoolPublisher::for_node(server.client(), "worker-9", DRIVER).await.expect_err("no such node");
    assert!(error.is_not_found(), "{error}");
    assert!(error.to_string().contains("nodes/worker-9") && error.to_string().contains("NODE_NAME"), "{error}");
    let error = PoolPublisher::for_node(server.client(), "Worker_9", DRIVER).await.expect_err("invalid name");
    assert!(error.to_string().contains("invalid node name"), "{error}");

    assert!(get_claim(&server.client(), "default", "gone").await.expect("a 404 is no error").is_none());
    server.seed(json!({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "train", "namespace": "default"}, "spec": {}}));
    let claim = get_claim(&server.client(), "default", "train").await.expect("read").expect("exists");
    assert!(claim.metadata.uid.is_some());
}

/// Waits until the watch has applied a change, then asks the publisher whether the pool diverged.
async fn divergence_after_change(
    publisher: &mut PoolPublisher,
    watched: &ascend_kube::Watched<ResourceSlice>,
    changes: &mut tokio::sync::watch::Receiver<u64>,
    until: impl Fn(&Option<String>) -> bool,
) -> Option<String> {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let divergence = publisher.divergence(watched);
        if until(&divergence) {
            return divergence;
        }
        let changed = tokio::time::timeout_at(deadline, changes.changed()).await;
        assert!(matches!(changed, Ok(Ok(()))), "no watch event within 10 s; last answer {divergence:?}");
    }
}

#[tokio::test]
async fn the_publisher_tells_a_deleted_or_rewritten_slice_from_its_own_writes_and_labels() {
    let server = FakeApiServer::start().await.expect("fake API server");
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"}}));
    let mut publisher = PoolPublisher::for_node(server.client(), "worker-1", DRIVER).await.expect("node found");
    let watched = publisher.watch();
    let mut changes = watched.changes();
    watched.ready(std::time::Duration::from_secs(10)).await.expect("the watch lists");
    assert_eq!(publisher.divergence(&watched), None, "nothing published, nothing to diverge from");
    assert_eq!(publisher.next_check(), None);

    publisher.publish(vec![content(&["a", "b"])]).await.expect("published");
    assert!(publisher.next_check().is_some(), "a new slice is checked again until the watch shows it");
    let shown = divergence_after_change(&mut publisher, &watched, &mut changes, |_| {
        watched.get(None, "worker-1-widgets-example-com-0").is_some()
    })
    .await;
    assert_eq!(shown, None, "our own write is not someone else's");
    assert_eq!(publisher.next_check(), None, "every slice seen");

    let api: Api<ResourceSlice> = Api::all(server.client());
    let name = "worker-1-widgets-example-com-0";
    let labelled = json!({"metadata": {"labels": {"team": "ml"}}});
    api.patch(name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&labelled)).await.expect("labelled");
    let after_label = divergence_after_change(&mut publisher, &watched, &mut changes, |_| {
        watched
            .get(None, name)
            .is_some_and(|slice| slice.metadata.labels.as_ref().is_some_and(|l| l.contains_key("team")))
    })
    .await;
    assert_eq!(after_label, None, "a label is not a change of the pool");

    let emptied = json!({"spec": {"devices": []}});
    api.patch(name, &kube::api::PatchParams::default(), &kube::api::Patch::Merge(&emptied)).await.expect("emptied");
    let rewritten = divergence_after_change(&mut publisher, &watched, &mut changes, Option::is_some).await;
    assert_eq!(rewritten.as_deref(), Some("ResourceSlice worker-1-widgets-example-com-0 was changed by someone else"));

    publisher.publish(vec![content(&["a", "b"])]).await.expect("published again");
    let settled = divergence_after_change(&mut publisher, &watched, &mut changes, |_| {
        watched.get(None, name).is_some_and(|slice| slice.spec.devices.as_ref().is_some_and(|d| d.len() == 2))
    })
    .await;
    assert_eq!(settled, None);
    api.delete(name, &kube::api::DeleteParams::default()).await.expect("deleted");
    let deleted = divergence_after_change(&mut publisher, &watched, &mut changes, Option::is_some).await;
    assert_eq!(deleted.as_deref(), Some("ResourceSlice worker-1-widgets-example-com-0 was deleted"));
}
