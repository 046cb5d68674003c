//! Labels a Node with its NPUs, as `ascend-node-labeller` does: the labels read from the driver, one reconcile
//! against an API server, the merge patch it sent, and a second reconcile that sends nothing.
//!
//! ```text
//! cargo run -p ascend-kube --example label_node
//! ```
//!
//! The chips are dcmi-sim's (an Atlas 800I A3); the API server is the in-repo fake (`fake-apiserver`), which speaks
//! the real HTTP/JSON protocol to the kube-rs client, so the same code runs against a cluster with `kube::Client`'s
//! in-cluster configuration. The example fails unless the labels land on the Node and the second reconcile leaves it
//! unchanged.

use std::sync::Arc;

use ascend_dcmi::{Dcmi, DeviceManager};
use ascend_kube::{LabellerConfig, NodeLabeller, Reconciled};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Node;

const NODE: &str = "worker-1";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800i-a3");
    // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership rule
    // is for the driver's libdcmi.so.
    let dcmi = Dcmi::builder().library_path(dcmi_sim::library_path()?).verify_library_ownership(false).init()?;
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);

    let server = FakeApiServer::start().await?;
    let mut node = Node::default();
    node.metadata.name = Some(NODE.to_owned());
    server.seed(&node);

    let labeller = NodeLabeller::new(manager, server.client(), LabellerConfig::new(NODE))?;
    match labeller.reconcile().await? {
        Reconciled::Patched(patch) => println!("patched {NODE}: {patch}"),
        Reconciled::Unchanged => return Err("the first reconcile of an unlabelled node sent nothing".into()),
    }
    let labels = server.get::<Node>(None, NODE).and_then(|node| node.metadata.labels).unwrap_or_default();
    for (key, value) in &labels {
        println!("  {key}={value}");
    }
    if !labels.contains_key("ascend.huawei.com/chip-count") {
        return Err("the node has no chip-count label".into());
    }
    match labeller.reconcile().await? {
        Reconciled::Unchanged => println!("second reconcile: labels are current, nothing sent"),
        Reconciled::Patched(patch) => return Err(format!("the second reconcile patched again: {patch}").into()),
    }
    Ok(())
}
