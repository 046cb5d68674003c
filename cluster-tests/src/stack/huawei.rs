//! Huawei's device plugin on the node in place of ours, as the reference a test compares ours with: the comparison
//! tier's build of it (scripts/peers/build.sh, packed by scripts/cluster/images/huawei_device_plugin.sh and imported
//! by scripts/cluster/up.sh), deployed from cluster-tests/manifests/huawei-device-plugin.yaml, in plain or Volcano
//! mode, and removed again with what it wrote for Volcano.

use std::time::Duration;

use crate::{Cluster, NODE_NAME};

use super::RESOURCE;

/// Our manifest of Huawei's device plugin, under the repository root.
pub const MANIFEST: &str = "cluster-tests/manifests/huawei-device-plugin.yaml";
/// Its DaemonSet, in kube-system.
pub const DAEMON_SET: &str = "ascend-device-plugin-daemonset";
/// The selector of its pod.
pub const SELECTOR: &str = "name=ascend-device-plugin-ds";
/// The node label Huawei's installation puts on every NPU worker, which its DaemonSet selects.
pub const WORKER_LABEL: (&str, &str) = ("workerselector", "dls-worker-node");
/// The Node annotations a device plugin in Volcano mode writes for Volcano's Ascend plugin (Huawei's and ours).
pub const VOLCANO_ANNOTATIONS: &[&str] = &["baseDeviceInfos", "superPodID", "serverIndex", "serverType", "rackID"];

/// Whether the image of Huawei's device plugin is on the node (scripts/cluster/up.sh packs it where
/// scripts/peers/build.sh finds a mind-cluster tree). Without it `test` says loudly that it skips Huawei's side; under
/// CI, which lays the tree beside the checkout, the lack is an error.
pub fn image_present(test: &str) -> bool {
    if Cluster::state_dir().join("images/huawei-device-plugin.tar").exists() {
        return true;
    }
    let why = "no image of Huawei's device plugin: scripts/cluster/up.sh packs it where scripts/peers/build.sh finds \
               a mind-cluster tree (give one with MIND_CLUSTER_TREE)";
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    println!("SKIPPED {test}: {why}");
    false
}

/// Deploys Huawei's device plugin as its installation does (the worker label, the DaemonSet) and waits until it
/// offers the node's 8 chips. With `volcano`, in Volcano mode: the one change ascendplugin-volcano.yaml makes to the
/// command, `-volcanoType=true` (its `-presetVirtualDevice=true` is the flag's default). Nothing of ours may serve the
/// resource meanwhile.
pub async fn deploy(cluster: &Cluster, volcano: bool) {
    cluster.label_node(WORKER_LABEL.0, Some(WORKER_LABEL.1));
    cluster.apply(MANIFEST);
    if volcano {
        let patch =
            r#"[{"op": "add", "path": "/spec/template/spec/containers/0/command/-", "value": "-volcanoType=true"}]"#;
        cluster.kubectl(&["-n", "kube-system", "patch", "daemonset", DAEMON_SET, "--type=json", "-p", patch]);
    }
    cluster.kubectl(&["-n", "kube-system", "rollout", "status", &format!("daemonset/{DAEMON_SET}"), "--timeout=180s"]);
    cluster.wait_pods_running("kube-system", SELECTOR, 1, Duration::from_secs(180)).await;
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(120)).await;
}

/// Removes Huawei's device plugin and its worker label, whatever state a test left them in.
pub fn remove(cluster: &Cluster) {
    let path = cluster.repository().join(MANIFEST);
    let path = path.to_str().expect("path");
    let _ = cluster.try_kubectl(&["delete", "-f", path, "--ignore-not-found", "--wait=true", "--timeout=120s"]);
    let _ = cluster.try_kubectl(&["label", "node", NODE_NAME, &format!("{}-", WORKER_LABEL.0)]);
}

/// Removes what a device plugin in Volcano mode wrote for Volcano and nothing else owns: the node's device-info
/// ConfigMap and the Node annotations [`VOLCANO_ANNOTATIONS`] (the other tests expect neither; `kubectl ascend` takes a
/// node with the ConfigMap for a Volcano node).
pub fn remove_volcano_writes(cluster: &Cluster) {
    let device_info = ascend_kube::device_info::config_map_name(NODE_NAME);
    let _ = cluster.try_kubectl(&["-n", "kube-system", "delete", "configmap", &device_info, "--ignore-not-found"]);
    let annotations: serde_json::Map<String, serde_json::Value> =
        VOLCANO_ANNOTATIONS.iter().map(|key| ((*key).to_owned(), serde_json::Value::Null)).collect();
    let patch = serde_json::json!({"metadata": {"annotations": annotations}}).to_string();
    let _ = cluster.try_kubectl(&["patch", "node", NODE_NAME, "--type=merge", "-p", &patch]);
}
