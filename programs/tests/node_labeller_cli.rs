//! The `ascend-node-labeller` binary on the simulated driver: `--dry-run` prints the exact merge patch, `--once`
//! labels a node of the fake API server named by a kubeconfig, and without a cluster `--once` fails with a message
//! that says why.

mod daemon_support;

use std::process::{Command, Output};

fn labeller(topology: &str, args: &[&str]) -> Output {
    labeller_with(topology, args, &[])
}

fn labeller_with(topology: &str, args: &[&str], env: &[(&str, &str)]) -> Output {
    let library =
        dcmi_sim::library_path().expect("libdcmi_sim.so is built with ascend-programs (dcmi-sim is a dependency)");
    Command::new(env!("CARGO_BIN_EXE_ascend-node-labeller"))
        .args(args)
        .arg(format!("--library={}", library.display()))
        .arg("--skip-library-ownership-check")
        .env(dcmi_sim::CONFIG_ENV, topology)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("NODE_NAME")
        .env("KUBECONFIG", "/nonexistent/kubeconfig")
        .envs(env.iter().copied())
        .output()
        .expect("ascend-node-labeller runs")
}

#[test]
fn dry_run_prints_the_merge_patch_of_a_310p_node() {
    let output = labeller("sample:atlas-300i-duo", &["--node-name=worker-1", "--dry-run"]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let patch: serde_json::Value = serde_json::from_slice(&output.stdout).expect("stdout is the JSON patch");
    assert_eq!(
        patch,
        serde_json::json!({"metadata": {"labels": {
            "accelerator": "huawei-Ascend310P",
            "ascend.huawei.com/chip-count": "8",
            "ascend.huawei.com/chip-type": "310P",
            "ascend.huawei.com/driver-version": "24.1.rc2",
            "ascend.huawei.com/product": "Atlas-300I-Duo",
            "huawei.com/driver.version": "24.1.rc2",
            "infer-card-type": "card-300i-duo",
            "node.kubernetes.io/npu.chip.name": "310P3",
            "servertype": "Ascend310P-8",
        }}})
    );
    assert!(stderr.contains("KUBERNETES_SERVICE_HOST is not set"), "{stderr}");
    assert!(stderr.contains("dry run, nothing sent"), "{stderr}");
}

#[test]
fn dry_run_of_a_910b_node() {
    let output = labeller("sample:atlas-800t-a2", &["--node-name=trainer-3", "--dry-run"]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let patch: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON patch");
    let labels = &patch["metadata"]["labels"];
    assert_eq!(labels["ascend.huawei.com/chip-type"], "910B");
    assert_eq!(labels["accelerator"], "huawei-Ascend910");
    assert_eq!(labels["ascend.huawei.com/product"], "Atlas-800T-A2");
}

#[test]
fn once_outside_a_cluster_fails_and_says_why() {
    let output = labeller("sample:atlas-300i-duo", &["--node-name=worker-1", "--once"]);
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("connecting to the Kubernetes API"), "{stderr}");
    assert!(stderr.contains("KUBERNETES_SERVICE_HOST") && stderr.contains("KUBECONFIG"), "{stderr}");
}

#[test]
fn once_labels_the_node_of_the_cluster_its_kubeconfig_names() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(fake_apiserver::FakeApiServer::start()).expect("fake API server");
    server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "worker-1", "labels": {"kubernetes.io/hostname": "worker-1"}}}));
    let dir = tempfile::tempdir().expect("temporary directory");
    let kubeconfig = daemon_support::kubeconfig(dir.path(), &server.url());
    let kubeconfig = kubeconfig.display().to_string();
    let output =
        labeller_with("sample:atlas-800t-a2", &["--node-name=worker-1", "--once"], &[("KUBECONFIG", &kubeconfig)]);
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let node = server.get_json("v1", "Node", None, "worker-1").expect("the node");
    let labels = &node["metadata"]["labels"];
    assert_eq!(labels["ascend.huawei.com/chip-type"], "910B");
    assert_eq!(labels["kubernetes.io/hostname"], "worker-1", "foreign labels stay");
    let patch = server.requests().into_iter().find(|r| r.method == "PATCH").expect("one PATCH");
    assert_eq!(patch.query_value("fieldManager"), Some("ascend-node-labeller"));
    let agent = format!("ascend-node-labeller/{}", env!("CARGO_PKG_VERSION"));
    assert!(server.requests().iter().all(|r| r.user_agent.as_deref() == Some(agent.as_str())), "all say {agent}");
}

#[test]
fn the_node_name_is_required() {
    let output = labeller("sample:atlas-300i-duo", &["--dry-run"]);
    assert_eq!(output.status.code(), Some(2), "a usage error");
    assert!(String::from_utf8_lossy(&output.stderr).contains("--node-name"));
}
