//! The DRA driver's ValidatingAdmissionPolicy (deploy/helm/ascend-npu/templates/dra-driver/admission-policy.yaml)
//! on the real API server: with the token the kubelet gives the driver's pod (its service account, bound to the pod, so
//! the API server knows the pod's node), a ResourceSlice of another node is refused with the policy's message, and a
//! slice of the driver's own node is allowed, to create and to delete. RBAC alone would allow both.

use std::time::Duration;

use ascend_cluster_tests::stack::{deploy_dra, remove_dra, DRA_DRIVER, DRA_NAMESPACE};
use ascend_cluster_tests::{Cluster, Timer, NODE_NAME};
use serde_json::json;

/// A slice of `node` with no devices, in a pool of its own.
fn slice(name: &str, node: &str) -> serde_json::Value {
    json!({
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceSlice",
        "metadata": {"name": name},
        "spec": {
            "driver": DRA_DRIVER,
            "nodeName": node,
            "pool": {"name": format!("{name}-pool"), "generation": 1, "resourceSliceCount": 1},
            "devices": [],
        },
    })
}

/// kubectl as the driver: `args` run with `token` in place of the admin's.
fn as_driver(cluster: &Cluster, token: &str, args: &[&str]) -> Result<String, String> {
    let mut all = vec!["--token", token];
    all.extend_from_slice(args);
    // The error repeats the command line: the token is left out of it.
    cluster.try_kubectl(&all).map_err(|error| error.replace(token, "<driver token>"))
}

fn manifest_file(name: &str, object: &serde_json::Value) -> std::path::PathBuf {
    let path = std::env::temp_dir().join(format!("ascend-cluster-test-{name}-{}.json", std::process::id()));
    std::fs::write(&path, object.to_string()).expect("write manifest");
    path
}

#[tokio::test]
async fn the_driver_may_write_only_its_own_nodes_slices() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra admission");
    deploy_dra(&cluster, &mut timer).await;
    let driver = cluster
        .wait_pods_running(DRA_NAMESPACE, "app.kubernetes.io/name=ascend-dra-driver", 1, Duration::from_secs(60))
        .await;
    let driver_pod = driver[0].metadata.name.clone().expect("driver pod name");
    // The token the kubelet projects into the driver's pod: its service account's, bound to the pod.
    let token = cluster.kubectl(&[
        "create",
        "token",
        "ascend-dra-driver",
        "-n",
        DRA_NAMESPACE,
        "--bound-object-kind",
        "Pod",
        "--bound-object-name",
        &driver_pod,
        "--duration",
        "10m",
    ]);
    let token = token.trim();
    for name in ["admission-other-node", "admission-own-node"] {
        let _ = cluster.try_kubectl(&["delete", "resourceslice", name, "--ignore-not-found"]);
    }

    let other = manifest_file("other", &slice("admission-other-node", "worker-elsewhere"));
    let refused = as_driver(&cluster, token, &["create", "-f", other.to_str().expect("path")])
        .expect_err("the driver must not write another node's slice");
    timer.mark("another node's slice refused");
    println!("API server: {refused}");
    assert!(refused.contains("ascend-dra-driver-own-node-slices"), "refused by our policy: {refused}");
    assert!(
        refused
            .contains(&format!("the driver on node {NODE_NAME} may not write ResourceSlices of node worker-elsewhere")),
        "with the policy's message: {refused}"
    );

    let own = manifest_file("own", &slice("admission-own-node", NODE_NAME));
    as_driver(&cluster, token, &["create", "-f", own.to_str().expect("path")]).expect("its own node's slice");
    as_driver(&cluster, token, &["delete", "resourceslice", "admission-own-node"]).expect("and its deletion");
    timer.mark("its own node's slice created and deleted");

    // The admin is not the driver: the policy does not apply, and RBAC allows the slice the driver was refused.
    cluster.kubectl(&["create", "-f", other.to_str().expect("path")]);
    cluster.kubectl(&["delete", "resourceslice", "admission-other-node"]);
    for path in [other, own] {
        let _ = std::fs::remove_file(path);
    }
    remove_dra(&cluster).await;
}
