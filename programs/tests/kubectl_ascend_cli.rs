//! The `kubectl-ascend` binary against the fake API server: kubectl's flags (`--kubeconfig`, `$KUBECONFIG`,
//! `--context`, `-n`, `-A`) choose the cluster and namespace as kubectl does, output has no colour off a terminal,
//! and the exit codes are the documented ones.

use std::path::Path;
use std::process::Output;

use fake_apiserver::FakeApiServer;
use serde_json::json;

fn seed(server: &FakeApiServer) {
    server.seed(json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": "infer-1", "labels": {"ascend.huawei.com/chip-type": "310P"}},
        "status": {"capacity": {"huawei.com/Ascend310P": "4"}, "allocatable": {"huawei.com/Ascend310P": "3"},
                   "conditions": [{"type": "Ready", "status": "True"}]}
    }));
    for (namespace, name) in [("infer", "svc-0"), ("train", "job-0")] {
        server.seed(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": namespace, "name": name},
            "spec": {"nodeName": "infer-1", "containers": [{"name": "main", "image": "x",
                     "resources": {"limits": {"huawei.com/Ascend310P": "1"}}}]},
            "status": {"phase": "Running"}
        }));
    }
}

/// Contexts `fake` (namespace infer, current), `other` (namespace train), `down` (a port nobody listens on).
fn kubeconfig(url: &str, down_url: &str) -> String {
    format!(
        "apiVersion: v1
kind: Config
clusters:
- name: fake
  cluster: {{server: {url}}}
- name: down
  cluster: {{server: {down_url}}}
users:
- name: nobody
  user: {{}}
contexts:
- name: fake
  context: {{cluster: fake, user: nobody, namespace: infer}}
- name: other
  context: {{cluster: fake, user: nobody, namespace: train}}
- name: down
  context: {{cluster: down, user: nobody}}
current-context: fake
"
    )
}

async fn plugin(args: &[&str], kubeconfig_env: Option<&Path>) -> Output {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let kubeconfig_env = kubeconfig_env.map(Path::to_owned);
    tokio::task::spawn_blocking(move || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_kubectl-ascend"));
        command.args(&args).env_remove("KUBERNETES_SERVICE_HOST").env_remove("NO_COLOR");
        match kubeconfig_env {
            Some(path) => command.env("KUBECONFIG", path),
            None => command.env("KUBECONFIG", "/nonexistent/kubeconfig"),
        };
        command.output().expect("kubectl-ascend runs")
    })
    .await
    .expect("the command's thread")
}

fn pod_names(output: &Output) -> Vec<String> {
    let stdout = String::from_utf8_lossy(&output.stdout);
    stdout.lines().skip(1).filter_map(|line| line.split_whitespace().next()).map(str::to_owned).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_flags_choose_the_cluster_and_namespace_and_exit_codes_are_documented() {
    let server = FakeApiServer::start().await.expect("fake API server");
    seed(&server);
    let closed = std::net::TcpListener::bind("127.0.0.1:0").expect("a port");
    let down_url = format!("http://{}", closed.local_addr().expect("address"));
    drop(closed);
    let directory = tempfile::tempdir().expect("temp dir");
    let file = directory.path().join("config");
    std::fs::write(&file, kubeconfig(&server.url(), &down_url)).expect("kubeconfig");
    let config = file.to_str().expect("UTF-8 path");

    // The current context's namespace, then another context's, then -n and -A.
    let current = plugin(&["--kubeconfig", config, "pods"], None).await;
    assert_eq!(current.status.code(), Some(0), "{}", String::from_utf8_lossy(&current.stderr));
    assert_eq!(pod_names(&current), ["svc-0"]);
    assert_eq!(pod_names(&plugin(&["--kubeconfig", config, "--context", "other", "pods"], None).await), ["job-0"]);
    assert_eq!(pod_names(&plugin(&["--kubeconfig", config, "pods", "-n", "train"], None).await), ["job-0"]);
    assert_eq!(pod_names(&plugin(&["--kubeconfig", config, "pods", "-A"], None).await), ["infer", "train"]);

    // $KUBECONFIG without --kubeconfig; no colour codes when stdout is not a terminal.
    let nodes = plugin(&["nodes"], Some(&file)).await;
    let stdout = String::from_utf8_lossy(&nodes.stdout);
    assert_eq!(nodes.status.code(), Some(0), "{}", String::from_utf8_lossy(&nodes.stderr));
    assert!(stdout.contains("infer-1") && !stdout.contains('\x1b'), "{stdout}");

    // 1: capacity finds no node; 2: a bad command line; 3: no such context, or an API server that is down.
    assert_eq!(plugin(&["--kubeconfig", config, "capacity", "--chips", "2"], None).await.status.code(), Some(1));
    assert_eq!(plugin(&["--kubeconfig", config, "capacity"], None).await.status.code(), Some(2));
    let missing = plugin(&["--kubeconfig", config, "--context", "missing", "nodes"], None).await;
    assert_eq!(missing.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("context \"missing\""), "{missing:?}");
    let down = plugin(&["--kubeconfig", config, "--context", "down", "nodes"], None).await;
    assert_eq!(down.status.code(), Some(3));
    // The lists run concurrently: whichever fails first is named.
    let stderr = String::from_utf8_lossy(&down.stderr);
    assert!(stderr.starts_with("error: list ") && stderr.contains("Connection refused"), "{stderr}");
}
