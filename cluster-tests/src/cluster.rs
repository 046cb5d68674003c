//! The running test cluster, reached as its admin: a kube-rs client, kubectl of the cluster's version, the scripts
//! that restart its components, and the simulated host's fault overlay.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use k8s_openapi::api::core::v1::{Node, Pod};
use kube::api::Api;
use kube::config::{KubeConfigOptions, Kubeconfig};

use crate::wait::wait_until;

/// The node's name: the kubelet runs with its loopback address as hostname override (scripts/cluster/lib.sh).
pub const NODE_NAME: &str = "127.0.0.1";

/// Where scripts/cluster/lib.sh keeps the admin kubeconfig unless `CLUSTER_STATE` moves it.
const DEFAULT_STATE: &str = "/var/lib/ascend-cluster";

/// The test cluster.
#[derive(Clone)]
pub struct Cluster {
    client: kube::Client,
    scripts: PathBuf,
}

impl std::fmt::Debug for Cluster {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("Cluster").field("scripts", &self.scripts).finish_non_exhaustive()
    }
}

/// A command run in a pod's container with `kubectl exec`, and what it printed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodCommand {
    /// Standard output.
    pub stdout: String,
}

impl Cluster {
    /// Connects as the cluster's admin; panics, naming the kubeconfig and how to start the cluster, when there is
    /// none or the API server does not answer. From then on a failing test prints the cluster's state after its
    /// panic message (our pods, their recent logs, warning events).
    pub async fn connect() -> Cluster {
        let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/cluster");
        let kubeconfig_path = Self::admin_kubeconfig();
        let kubeconfig = Kubeconfig::read_from(&kubeconfig_path).unwrap_or_else(|error| {
            panic!("{}: {error}; start the cluster first: scripts/cluster/up.sh", kubeconfig_path.display())
        });
        let config = kube::Config::from_custom_kubeconfig(kubeconfig, &KubeConfigOptions::default())
            .await
            .unwrap_or_else(|error| panic!("{}: {error}", kubeconfig_path.display()));
        let client = kube::Client::try_from(config).expect("kube client");
        let cluster = Cluster { client, scripts };
        crate::failure_report::install(cluster.kubectl_path());
        let version = cluster.client.apiserver_version().await.unwrap_or_else(|error| {
            panic!("the test cluster's API server does not answer ({error}); start it: scripts/cluster/up.sh")
        });
        println!("cluster: Kubernetes {}", version.git_version);
        cluster
    }

    /// The cluster's state directory (scripts/cluster/lib.sh's `CLUSTER_STATE`): PKI, kubeconfigs, pid files.
    pub fn state_dir() -> PathBuf {
        std::env::var_os("CLUSTER_STATE").map_or_else(|| PathBuf::from(DEFAULT_STATE), PathBuf::from)
    }

    /// The admin's kubeconfig, for a program the tests start.
    pub fn admin_kubeconfig() -> PathBuf {
        Self::state_dir().join("admin.kubeconfig")
    }

    /// The kube-rs client.
    pub fn client(&self) -> kube::Client {
        self.client.clone()
    }

    /// A typed API of all namespaces (cluster-scoped kinds) or of one.
    pub fn api<K>(&self, namespace: Option<&str>) -> Api<K>
    where
        K: kube::Resource<Scope = k8s_openapi::NamespaceResourceScope>,
        <K as kube::Resource>::DynamicType: Default,
    {
        match namespace {
            Some(namespace) => Api::namespaced(self.client(), namespace),
            None => Api::all(self.client()),
        }
    }

    /// The kubectl wrapper of scripts/cluster (the cluster's version, as admin).
    pub fn kubectl_path(&self) -> PathBuf {
        self.scripts.join("kubectl")
    }

    /// Forwards a local port to `port` of `pod`.
    pub fn port_forward(&self, namespace: &str, pod: &str, port: u16) -> crate::PortForward {
        crate::PortForward::start(&self.kubectl_path(), namespace, pod, port)
    }

    /// Runs kubectl of the cluster's version as admin; its standard output, or its error output.
    pub fn try_kubectl(&self, args: &[&str]) -> Result<String, String> {
        self.run_wrapper("kubectl", args)
    }

    /// Runs helm of the test bed's version (scripts/cluster/helm) as admin; its standard output, or its error output.
    pub fn try_helm(&self, args: &[&str]) -> Result<String, String> {
        self.run_wrapper("helm", args)
    }

    /// Runs a tool wrapper of scripts/cluster from the repository root (relative chart and manifest paths resolve
    /// there).
    fn run_wrapper(&self, tool: &str, args: &[&str]) -> Result<String, String> {
        let output = Command::new(self.scripts.join(tool))
            .args(args)
            .current_dir(self.repository())
            .output()
            .map_err(|error| format!("{tool} {}: {error}", args.join(" ")))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(format!("{tool} {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()))
        }
    }

    /// Runs kubectl and returns its standard output; panics with its error output.
    pub fn kubectl(&self, args: &[&str]) -> String {
        self.try_kubectl(args).unwrap_or_else(|error| panic!("{error}"))
    }

    /// `kubectl apply` of a manifest file under the repository root.
    pub fn apply(&self, repository_path: &str) -> String {
        let path = self.repository().join(repository_path);
        self.kubectl(&["apply", "--server-side", "--force-conflicts", "-f", path.to_str().expect("path")])
    }

    /// The repository root.
    pub fn repository(&self) -> PathBuf {
        self.scripts.join("../..")
    }

    /// Runs a script of scripts/cluster (for example `node.sh restart-kubelet`); panics with its output on failure.
    pub fn script(&self, name: &str, args: &[&str]) {
        let output = self.script_output(name, args);
        assert!(
            output.status.success(),
            "{name} {}: {}{}",
            args.join(" "),
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        );
    }

    /// Runs a script of scripts/cluster and returns how it ended and what it printed, whatever its exit status
    /// (`doctor.sh` exits 1 when a check fails).
    pub fn script_output(&self, name: &str, args: &[&str]) -> std::process::Output {
        Command::new("bash")
            .arg(self.scripts.join(name))
            .args(args)
            .output()
            .unwrap_or_else(|error| panic!("{name}: {error}"))
    }

    /// The node.
    pub async fn node(&self) -> Node {
        Api::<Node>::all(self.client()).get(NODE_NAME).await.expect("get node")
    }

    /// The node's allocatable quantity of `resource`, if it has the resource.
    pub async fn allocatable(&self, resource: &str) -> Option<String> {
        let node = self.node().await;
        node.status?.allocatable?.get(resource).map(|quantity| quantity.0.clone())
    }

    /// Waits until the node's allocatable `resource` is `expected`; returns how long it took.
    pub async fn wait_allocatable(&self, resource: &str, expected: &str, limit: Duration) -> Duration {
        let started = std::time::Instant::now();
        wait_until(&format!("allocatable {resource} = {expected}"), limit, || async {
            match self.allocatable(resource).await {
                Some(quantity) if quantity == expected => Ok(()),
                other => Err(format!("{other:?}")),
            }
        })
        .await;
        started.elapsed()
    }

    /// Labels (or, with `None`, unlabels) the node as an operator would.
    pub fn label_node(&self, key: &str, value: Option<&str>) {
        let label = match value {
            Some(value) => format!("{key}={value}"),
            None => format!("{key}-"),
        };
        self.kubectl(&["label", "node", NODE_NAME, &label, "--overwrite"]);
    }

    /// Waits until the pod runs (every container ready); panics with its phase and conditions otherwise.
    pub async fn wait_running(&self, namespace: &str, name: &str, limit: Duration) -> Pod {
        let pods: Api<Pod> = Api::namespaced(self.client(), namespace);
        wait_until(&format!("pod {namespace}/{name} running"), limit, || async {
            let pod = pods.get(name).await.map_err(|error| error.to_string())?;
            let status = pod.status.clone().unwrap_or_default();
            let ready = status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True");
            if status.phase.as_deref() == Some("Running") && ready {
                Ok(pod)
            } else {
                Err(format!("phase {:?}, conditions {:?}", status.phase, status.conditions))
            }
        })
        .await
    }

    /// Waits until the pods selected by `selector` in `namespace` number `count` and all run and are ready.
    pub async fn wait_pods_running(&self, namespace: &str, selector: &str, count: usize, limit: Duration) -> Vec<Pod> {
        let pods: Api<Pod> = Api::namespaced(self.client(), namespace);
        wait_until(&format!("{count} running pods {selector} in {namespace}"), limit, || async {
            let list = pods
                .list(&kube::api::ListParams::default().labels(selector))
                .await
                .map_err(|error| error.to_string())?;
            let running: Vec<Pod> = list
                .items
                .iter()
                .filter(|pod| pod.metadata.deletion_timestamp.is_none())
                .filter(|pod| {
                    let status = pod.status.clone().unwrap_or_default();
                    status.phase.as_deref() == Some("Running")
                        && status.conditions.iter().flatten().any(|c| c.type_ == "Ready" && c.status == "True")
                })
                .cloned()
                .collect();
            if running.len() == count && list.items.len() == count {
                Ok(running)
            } else {
                let phases: Vec<_> = list
                    .items
                    .iter()
                    .map(|pod| {
                        let status = pod.status.clone().unwrap_or_default();
                        let waiting: Vec<String> = status
                            .container_statuses
                            .iter()
                            .flatten()
                            .filter_map(|c| c.state.as_ref()?.waiting.as_ref())
                            .map(|w| format!("{:?}: {:?}", w.reason, w.message))
                            .collect();
                        format!("{:?} {:?} {waiting:?}", pod.metadata.name, status.phase)
                    })
                    .collect();
                Err(format!("{phases:?}"))
            }
        })
        .await
    }

    /// Runs `command` in the pod's (first) container with `kubectl exec`.
    pub fn exec(&self, namespace: &str, pod: &str, command: &[&str]) -> PodCommand {
        let mut args = vec!["exec", "-n", namespace, pod, "--"];
        args.extend_from_slice(command);
        PodCommand { stdout: self.kubectl(&args) }
    }

    /// Runs `command` in the pod like [`Cluster::exec`], retrying for up to a minute while the kubelet cannot yet
    /// serve it (just after a kubelet restart it answers "pod does not exist" until it has synced its pods).
    pub async fn exec_retrying(&self, namespace: &str, pod: &str, command: &[&str]) -> PodCommand {
        let mut args = vec!["exec", "-n", namespace, pod, "--"];
        args.extend_from_slice(command);
        let stdout = wait_until(&format!("exec in {namespace}/{pod}"), Duration::from_secs(60), || async {
            self.try_kubectl(&args)
        })
        .await;
        PodCommand { stdout }
    }

    /// The simulator's overlay on the node (faults, health): every daemon's libdcmi.so watches this one file beside
    /// it (dcmi_sim::OVERLAY_FILE_NAME), through the driver directory the manifests mount.
    pub fn set_overlay(&self, chips: Vec<dcmi_sim::ChipOverlay>) {
        let path = Path::new("/").join(dcmi_sim::fake_host::beside_library(dcmi_sim::OVERLAY_FILE_NAME));
        let overlay = dcmi_sim::Overlay { chips, injections: Vec::new() };
        dcmi_sim::write_overlay(&path, &overlay).unwrap_or_else(|error| panic!("{error}"));
    }
}
