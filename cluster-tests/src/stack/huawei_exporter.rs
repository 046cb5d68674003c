//! Huawei's npu-exporter on the node, as the reference a test compares ours with: the comparison tier's build of it
//! (scripts/peers/build.sh, cached there), deployed from cluster-tests/manifests/huawei-npu-exporter.yaml (our
//! manifest modelled on Huawei's), and removed again.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::Cluster;

/// Our manifest of Huawei's exporter, under the repository root.
pub const MANIFEST: &str = "cluster-tests/manifests/huawei-npu-exporter.yaml";
/// The placeholder the manifest names the directory of Huawei's programs by.
pub const PROGRAM_DIR_PLACEHOLDER: &str = "@HUAWEI_BIN@";
/// Its namespace, as Huawei's deployment names it.
pub const NAMESPACE: &str = "npu-exporter";
/// Its DaemonSet, as Huawei's deployment names it.
pub const DAEMON_SET: &str = "npu-exporter";
/// The selector of its pod.
pub const SELECTOR: &str = "app=npu-exporter";
/// The port it serves on (Huawei's default).
pub const PORT: u16 = 8082;

/// Applies [`MANIFEST`] with the directory of Huawei's programs that scripts/peers/build.sh names (a cached build:
/// scripts/cluster/up.sh packs Huawei's device plugin from the same one). Does not wait for the pod.
pub fn apply(cluster: &Cluster) {
    let built = Command::new("bash")
        .arg(cluster.repository().join("scripts/peers/build.sh"))
        .output()
        .expect("run scripts/peers/build.sh");
    let stdout = String::from_utf8_lossy(&built.stdout);
    let bin = stdout.lines().last().unwrap_or_default().trim();
    assert!(
        built.status.success() && Path::new(bin).join("npu-exporter").exists(),
        "scripts/peers/build.sh names no npu-exporter of Huawei's ({}): {stdout}{}",
        built.status,
        String::from_utf8_lossy(&built.stderr)
    );
    let text = std::fs::read_to_string(cluster.repository().join(MANIFEST)).expect("read the manifest");
    let file = std::env::temp_dir().join(format!("huawei-npu-exporter-{}.yaml", std::process::id()));
    std::fs::write(&file, text.replace(PROGRAM_DIR_PLACEHOLDER, bin)).expect("write the manifest");
    cluster.kubectl(&["apply", "--server-side", "--force-conflicts", "-f", file.to_str().expect("path")]);
    let _ = std::fs::remove_file(&file);
}

/// Rewrites its command line with `edit` (a flag of Huawei's, as an operator edits the DaemonSet) and waits for the
/// rollout and the running pod; returns the pod's name.
pub async fn edit_command(cluster: &Cluster, edit: impl FnOnce(&mut Vec<String>)) -> String {
    let path = "jsonpath={.spec.template.spec.containers[0].command}";
    let listed = cluster.kubectl(&["-n", NAMESPACE, "get", "daemonset", DAEMON_SET, "-o", path]);
    let mut command: Vec<String> =
        serde_json::from_str(&listed).unwrap_or_else(|error| panic!("Huawei's exporter's command: {error}"));
    edit(&mut command);
    let patch =
        serde_json::json!([{"op": "replace", "path": "/spec/template/spec/containers/0/command", "value": command}]);
    cluster.kubectl(&["-n", NAMESPACE, "patch", "daemonset", DAEMON_SET, "--type=json", "-p", &patch.to_string()]);
    cluster.kubectl(&["-n", NAMESPACE, "rollout", "status", &format!("daemonset/{DAEMON_SET}"), "--timeout=120s"]);
    let pods = cluster.wait_pods_running(NAMESPACE, SELECTOR, 1, Duration::from_secs(120)).await;
    pods[0].metadata.name.clone().expect("pod name")
}

/// Removes it with its namespace, whatever state a test left it in.
pub fn remove(cluster: &Cluster) {
    let _ =
        cluster.try_kubectl(&["delete", "namespace", NAMESPACE, "--ignore-not-found", "--wait=true", "--timeout=120s"]);
}
