//! `Watched` against the fake API server: a writer waiting for its own write to come back through the watch is not
//! held up when another write of the same object arrives first.

use std::time::{Duration, Instant};

use ascend_kube::Watched;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

const NODE: &str = "worker-1";

async fn label(nodes: &Api<Node>, value: &str) -> String {
    let patch = Patch::Merge(json!({"metadata": {"labels": {"example.com/step": value}}}));
    let node = nodes.patch(NODE, &PatchParams::default(), &patch).await.expect("patch");
    node.metadata.resource_version.expect("a resourceVersion")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_overtaken_by_a_later_one_counts_as_caught_up() {
    let server = FakeApiServer::start().await.expect("server");
    let mut node = Node::default();
    node.metadata.name = Some(NODE.into());
    server.seed(&node);
    let nodes: Api<Node> = Api::all(server.client());
    let watched = Watched::start(nodes.clone(), &format!("metadata.name={NODE}"), format!("nodes/{NODE}"));
    watched.ready(Duration::from_secs(10)).await.expect("listed");

    // Our write, then someone else's; the watch applies both before we look.
    let ours = label(&nodes, "ours").await;
    let theirs = label(&nodes, "theirs").await;
    assert!(watched.caught_up(None, NODE, Some(&theirs), Duration::from_secs(10)).await, "the later write arrives");

    let started = Instant::now();
    assert!(watched.caught_up(None, NODE, Some(&ours), Duration::from_secs(5)).await, "a later version is caught up");
    assert!(started.elapsed() < Duration::from_secs(1), "answered from the store, not after the timeout");

    // A version the watch has not reached yet is waited for, and the wait ends at its timeout.
    let future = (theirs.parse::<u64>().expect("an integer version") + 1000).to_string();
    assert!(!watched.caught_up(None, NODE, Some(&future), Duration::from_millis(300)).await);
    assert!(!watched.caught_up(None, NODE, None, Duration::from_millis(300)).await, "no version: nothing to wait for");
}
