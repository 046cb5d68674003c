//! The migration guide (docs/migration.md) on the real cluster, both directions, with its own commands: the test reads
//! each fenced block the guide marks `sh step=NAME` and runs it as an operator would (bash, `kubectl` and `helm` of the
//! cluster's version, `kubectl ascend` of the release build), with `<node>` the test node and `<registry>` the
//! registry of the test bed's images, `<prometheus>` the test's Prometheus. A block of the guide this test does not run must be listed in [`NOT_RUN`] with
//! its reason, so a step added to the guide fails the test until it is run or said to be not run.
//!
//! The node starts as an operator of Huawei's stack has it: Huawei's device plugin and npu-exporter (the comparison
//! tier's builds, deployed from cluster-tests/manifests/huawei-device-plugin.yaml and huawei-npu-exporter.yaml).
//! Huawei's plugin hands chips to Huawei's
//! runtime, as on a node where that runtime started it (`ASCEND_DOCKER_RUNTIME=True`): the test pods run under the
//! RuntimeClass [`STANDIN_RUNTIME_CLASS`], whose handler is the test bed's `ascend` runtime, which acts on
//! `ASCEND_VISIBLE_DEVICES` as Huawei's runtime does; the guide's step 1 keeps that (`runtime-env` mode).
//!
//! Throughout, a watcher ([`Watch`]) reads the kubelet's PodResources and the Node every 250 ms: no device id is
//! given to two pods, the running pods keep exactly the ids they had, the Node never offers more chips than the host
//! has, and a probe pod asking for one chip more than is free is never scheduled. Between the steps each running pod
//! still sees the same `/dev/davinci*`, a new pod gets only the free chips, and the chips of a pod that ended are
//! given again.
//!
//! A Prometheus beside the cluster scrapes the node's exporter pods every [`SCRAPE_INTERVAL`] through the guide, as a
//! job of Kubernetes pod discovery would: Huawei's exporter, ours with Huawei's names from step 3, Huawei's again on
//! the way back. Every series of [`HUAWEI_DASHBOARD_SERIES`] keeps its name and labels and has no gap longer than one
//! scrape interval ([`check_series`]).
//!
//! In Volcano mode (Huawei's plugin with `-volcanoType=true`, the guide's `step1-install-volcano`) the real Volcano
//! scheduler with Huawei's Ascend plugin (scripts/cluster/volcano.sh, docs/volcano.md) places the pods: one under
//! Huawei's plugin before the move, one under ours after it, one under Huawei's after the way back, each on chips no
//! running pod holds, and each pod's chips are the same three ways (what Volcano wrote on it, what its container sees,
//! what the device plugin recorded). The watcher also reads the node as Volcano's Ascend plugin does, the device-info
//! ConfigMap's device lists and the `baseDeviceInfos` annotation, which must stay what Huawei's plugin wrote at every
//! read through step 1 and the way back; a chip fault must then reach those lists from our plugin.
//!
//! The guide's runtime step (step 2) has a test of its own, on a node whose jobs have ended, as the step asks: the
//! chart's node setup registers the runtime and turns CDI on, containerd restarts (the guide's `ssh <node> sudo
//! systemctl restart containerd`, which a stand-in `ssh` runs as scripts/cluster/node.sh's restart), a pod of the
//! default runtime gets its chips by CDI, and the step's undo hands chips to Huawei's runtime again.
//!
//! Another test runs the case the kubelet's own bookkeeping does not cover: our plugin serving the chips under
//! another resource name (a chart `devicePlugin.renames`) while a pod of Huawei's still holds two. There only our
//! plugin's reading of PodResources keeps the held chips out (ascend-deviceplugin's `HoldingsTracker`).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_cluster_tests::prometheus::{PodTargets, Prometheus, Series};
use ascend_cluster_tests::stack::{
    chip_fault, davinci_nodes, delete_pod, deploy_910b_pool, edit_device_plugin_args, release_dir, remove_plain_stack,
    sleeping_container, start_pod, test_namespace, wait_no_chips, NAMESPACE, RESOURCE, SYSTEM,
};
use ascend_cluster_tests::stack::{huawei, huawei_exporter};
use ascend_cluster_tests::{wait_until, Cluster, HostBackup, Timer, CONTAINERD_CONFIG, HOST_CDI_SPEC, NODE_NAME};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};

/// The guide.
const GUIDE: &str = "docs/migration.md";
/// Huawei's plugin's DaemonSet and pod selector (stack::huawei's).
const HUAWEI_DAEMON_SET: &str = huawei::DAEMON_SET;
const HUAWEI_SELECTOR: &str = huawei::SELECTOR;
/// Huawei's exporter's namespace and pod selector, and our chart's exporter pods' selector.
const HUAWEI_EXPORTER_NAMESPACE: &str = huawei_exporter::NAMESPACE;
const EXPORTER_SELECTOR: &str = huawei_exporter::SELECTOR;
const OUR_EXPORTER_SELECTOR: &str = "app.kubernetes.io/name=npu-exporter";
/// Our chart's device plugin pods' selector.
const OUR_PLUGIN_SELECTOR: &str = "app.kubernetes.io/name=ascend-device-plugin";
/// The port both exporters serve on (Huawei's default, our chart's `exporter.port`).
const EXPORTER_PORT: u16 = huawei_exporter::PORT;
/// The chart's release, as the guide names it.
const RELEASE: &str = "ascend-npu";
/// The chart's image registry placeholder, which the test bed's images carry (scripts/cluster/images).
const REGISTRY: &str = "registry.example.com";
/// The RuntimeClass of the test pods, standing for Huawei's runtime (see the module docs).
const STANDIN_RUNTIME_CLASS: &str = "huawei-runtime-standin";
/// The host's chips.
const CHIPS: usize = 8;

/// The series of Huawei's exporter a dashboard or alert rule of Huawei's users reads. No dashboard or rule of
/// Huawei's is published with mind-cluster; these are the names of Huawei's own reference of the exporter's
/// Prometheus API, its first table (MindX DL user guide, "NPU-Exporter Prometheus Metrics API": chip count, error
/// code, name, health, power, temperature, AI-core utilisation, HBM size), which the chip panels and health alerts
/// built on Huawei's exporter read. Less the error code, which both exporters serve only for a chip with a fault, as
/// the test node has none.
const HUAWEI_DASHBOARD_SERIES: &[&str] = &[
    "machine_npu_nums",
    "npu_chip_info_name",
    "npu_chip_info_health_status",
    "npu_chip_info_power",
    "npu_chip_info_temperature",
    "npu_chip_info_utilization",
    "npu_chip_info_hbm_total_memory",
];
/// How often the test's Prometheus scrapes the exporters.
const SCRAPE_INTERVAL: Duration = Duration::from_secs(2);
/// The labels Prometheus gives a target's series (`instance` is the pod's address, so it changes with the exporter).
const TARGET_LABELS: &[&str] = &["instance", "job", "node"];
/// The labels naming the pod that holds a chip: each exporter fills them from its own source (Huawei's from the
/// container runtime, which its `-containerMode=docker` finds no Docker for on the test node; ours from the kubelet's
/// PodResources), and Prometheus drops a label that is empty. The other labels must be the same from both.
const ATTRIBUTION_LABELS: &[&str] = &["namespace", "pod_name", "container_name"];

/// The guide's blocks this test does not run, and why.
const NOT_RUN: &[(&str, &str)] =
    &[("step1-undo", "the failure path of step 1; its commands are the way back's, which the test runs")];

/// The guide's blocks only the Volcano-mode test runs.
const VOLCANO_STEPS: &[&str] = &["step1-install-volcano", "step1-check-volcano"];
/// The guide's blocks only the runtime step's test runs.
const RUNTIME_STEPS: &[&str] = &["step1-switch-info", "step2-runtime", "step2-undo"];

/// The guide's `sh step=NAME` blocks, by name; panics on an `sh` block without a name or a name used twice.
fn guide_steps(cluster: &Cluster) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(cluster.repository().join(GUIDE)).expect("read the guide");
    let mut steps = BTreeMap::new();
    let mut open: Option<(Option<String>, String)> = None;
    for line in text.lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                let mut words = info.split_whitespace();
                let language = words.next().unwrap_or_default();
                let name = words.find_map(|word| word.strip_prefix("step=")).map(str::to_owned);
                assert!(
                    language != "sh" || name.is_some(),
                    "{GUIDE}: an sh block without `step=NAME` in its info string: ```{info}"
                );
                open = Some((name, String::new()));
            }
            (Some(_), Some("")) => {
                let (name, body) = open.take().expect("open block");
                if let Some(name) = name {
                    assert!(steps.insert(name.clone(), body).is_none(), "{GUIDE}: step={name} twice");
                }
            }
            (Some((_, body)), _) => {
                body.push_str(line);
                body.push('\n');
            }
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "{GUIDE}: a fenced block is not closed");
    steps
}

/// The operator's shell: a scratch directory (the guide's files land there) with `deploy/` of the repository, and a
/// `bin/` of `kubectl` and `helm` of the cluster's version and the release build's `kubectl-ascend`.
struct Shell {
    dir: PathBuf,
    steps: BTreeMap<String, String>,
    run: Mutex<BTreeSet<String>>,
    prometheus: Mutex<Option<String>>,
}

impl Shell {
    fn new(cluster: &Cluster) -> Shell {
        let dir = std::env::temp_dir().join(format!("ascend-migration-test-{}", std::process::id()));
        let bin = dir.join("bin");
        std::fs::create_dir_all(&bin).expect("scratch directory");
        let scripts = cluster.repository().join("scripts/cluster").canonicalize().expect("scripts/cluster");
        // kubectl itself, with KUBECONFIG in the environment: scripts/cluster/kubectl puts `--kubeconfig` first,
        // which kubectl refuses before a plugin's name (`kubectl ascend`).
        let lib = scripts.join("lib.sh");
        let kubectl = format!("#!/bin/bash\nsource {}\nexec \"$KUBE_BIN/kubectl\" \"$@\"\n", lib.display());
        write_executable(&bin.join("kubectl"), &kubectl);
        write_executable(&bin.join("helm"), &format!("#!/bin/sh\nexec {} \"$@\"\n", scripts.join("helm").display()));
        let plugin = release_dir(cluster).join("kubectl-ascend");
        assert!(
            plugin.exists(),
            "{} is missing: scripts/cluster/up.sh builds it (or: cargo build --release -p ascend-programs \
             --no-default-features --features kubectl-ascend --bin kubectl-ascend)",
            plugin.display()
        );
        write_executable(&bin.join("kubectl-ascend"), &format!("#!/bin/sh\nexec {} \"$@\"\n", plugin.display()));
        // The guide restarts a node's engine over ssh; the test node is this machine, whose containerd runs under
        // scripts/cluster/node.sh rather than systemd. The stand-in takes that one command and no other.
        let restart = format!("{NODE_NAME} sudo systemctl restart containerd");
        let ssh = format!(
            "#!/bin/sh\n[ \"$*\" = \"{restart}\" ] || {{ echo \"ssh stand-in: only '{restart}', not '$*'\" >&2; exit 2; }}\n\
             exec bash {} restart-containerd\n",
            scripts.join("node.sh").display()
        );
        write_executable(&bin.join("ssh"), &ssh);
        let deploy = dir.join("deploy");
        if !deploy.exists() {
            let repository = cluster.repository().canonicalize().expect("repository");
            std::os::unix::fs::symlink(repository.join("deploy"), &deploy).expect("link deploy/");
        }
        Shell { dir, steps: guide_steps(cluster), run: Mutex::new(BTreeSet::new()), prometheus: Mutex::new(None) }
    }

    /// From now on `<prometheus>` in a step is `prometheus`'s address.
    fn use_prometheus(&self, prometheus: &Prometheus) {
        *self.prometheus.lock().expect("prometheus") = Some(prometheus.url());
    }

    /// Runs the guide's block `step` and returns what it printed; panics with its output when it fails.
    fn step(&self, step: &str) -> String {
        let output = self.try_step(step);
        output.unwrap_or_else(|error| panic!("{error}"))
    }

    fn try_step(&self, step: &str) -> Result<String, String> {
        let body = self.steps.get(step).unwrap_or_else(|| panic!("{GUIDE} has no block step={step}"));
        self.run.lock().expect("steps run").insert(step.to_owned());
        let mut script = body.replace("<node>", NODE_NAME).replace("<registry>", REGISTRY);
        if script.contains("<prometheus>") {
            let prometheus = self.prometheus.lock().expect("prometheus").clone();
            let url =
                prometheus.unwrap_or_else(|| panic!("{GUIDE} step={step} needs a Prometheus, the test started none"));
            script = script.replace("<prometheus>", &url);
        }
        println!("--- {GUIDE} step={step}:\n{script}");
        let path = format!("{}:{}", self.dir.join("bin").display(), std::env::var("PATH").unwrap_or_default());
        let output = Command::new("bash")
            .args(["-euo", "pipefail", "-c", &script])
            .current_dir(&self.dir)
            .env("PATH", path)
            .env("KUBECONFIG", Cluster::admin_kubeconfig())
            .output()
            .expect("run bash");
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr);
        println!("{stdout}{stderr}");
        if output.status.success() {
            Ok(stdout)
        } else {
            Err(format!("{GUIDE} step={step} failed ({}):\n{stdout}{stderr}", output.status))
        }
    }

    /// Every block of the guide is run (here or, `elsewhere`, by another test) or listed in [`NOT_RUN`]; none is
    /// both.
    fn assert_all_run(&self, elsewhere: &[&str]) {
        let mut run = self.run.lock().expect("steps run").clone();
        run.extend(elsewhere.iter().map(|name| (*name).to_owned()));
        for (name, why) in NOT_RUN {
            assert!(self.steps.contains_key(*name), "{name} is listed as not run but {GUIDE} has no such block");
            assert!(!run.contains(*name), "{name} is listed as not run ({why}) but was run");
        }
        let left: Vec<&String> =
            self.steps.keys().filter(|name| !run.contains(*name) && !NOT_RUN.iter().any(|(n, _)| n == name)).collect();
        assert!(left.is_empty(), "{GUIDE}: blocks neither run nor listed in NOT_RUN: {left:?}");
    }
}

impl Drop for Shell {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn write_executable(path: &Path, text: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, text).expect("write a wrapper");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod a wrapper");
}

/// A test pod of `chips` chips of `resource` under the stand-in runtime.
fn runtime_pod(name: &str, resource: &str, chips: usize) -> Pod {
    let mut container = sleeping_container();
    container["resources"] = serde_json::json!({"limits": {resource: chips.to_string()}});
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "runtimeClassName": STANDIN_RUNTIME_CLASS,
            "containers": [container],
        },
    }))
    .expect("pod")
}

async fn create_pod(cluster: &Cluster, name: &str, resource: &str, chips: usize) {
    delete_pod(cluster, name).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &runtime_pod(name, resource, chips)).await.expect("create pod");
}

/// Starts a pod of `chips` chips and returns the `/dev/davinci*` its container sees.
async fn start_pod_seeing(cluster: &Cluster, name: &str, resource: &str, chips: usize) -> BTreeSet<String> {
    create_pod(cluster, name, resource, chips).await;
    cluster.wait_running(NAMESPACE, name, Duration::from_secs(90)).await;
    let seen = chips_seen(cluster, name).await;
    assert_eq!(seen.len(), chips, "{name} sees {chips} chips: {seen:?}");
    seen
}

/// The chips a pod's container sees.
async fn chips_seen(cluster: &Cluster, pod: &str) -> BTreeSet<String> {
    davinci_nodes(&cluster.exec_retrying(NAMESPACE, pod, &["ls", "/dev"]).await.stdout).into_iter().collect()
}

/// The kubelet's assignments: per pod of the test namespace, the `(resource, device id)` pairs PodResources lists.
async fn assignments() -> Result<BTreeMap<String, BTreeSet<(String, String)>>, String> {
    let socket = Path::new(ascend_node::pod_resources::DEFAULT_SOCKET);
    let mut client = ascend_node::pod_resources::PodResourcesClient::connect(socket, Duration::from_secs(5))
        .await
        .map_err(|e| e.to_string())?;
    let response = client.list().await.map_err(|error| error.to_string())?;
    let mut pods: BTreeMap<String, BTreeSet<(String, String)>> = BTreeMap::new();
    for pod in response.pod_resources.iter().filter(|pod| pod.namespace == NAMESPACE) {
        for devices in pod.containers.iter().flat_map(|container| &container.devices) {
            let held = pods.entry(pod.name.clone()).or_default();
            held.extend(devices.device_ids.iter().map(|id| (devices.resource_name.clone(), id.clone())));
        }
    }
    Ok(pods)
}

/// The chip (physical id) of a device id, `<base>-<phy>`.
fn chip_of(id: &str) -> String {
    id.rsplit('-').next().unwrap_or(id).to_owned()
}

/// What the watcher holds to: the pods whose assignments must not change, and the probe pods that must not be
/// scheduled.
#[derive(Default)]
struct Expected {
    held: BTreeMap<String, BTreeSet<(String, String)>>,
    probes: BTreeSet<String>,
    volcano: Option<VolcanoView>,
}

/// What Volcano's Ascend plugin reads of the node (mind-cluster `component/ascend-for-volcano/common/k8s/cmmgr.go`,
/// `getNodeDeviceInfoFromCM` and the `baseDeviceInfos` Node annotation): the device lists of the device-info
/// ConfigMap (each comma list as a sorted set, JSON values canonical), and the annotation as JSON.
#[derive(Debug, Clone, PartialEq)]
struct VolcanoView {
    device_list: BTreeMap<String, String>,
    base_device_infos: Option<serde_json::Value>,
}

async fn volcano_view(cluster: &Cluster) -> Result<VolcanoView, String> {
    let config_maps: Api<k8s_openapi::api::core::v1::ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = ascend_kube::device_info::config_map_name(NODE_NAME);
    let map = config_maps.get_opt(&name).await.map_err(|e| e.to_string())?.ok_or(format!("no ConfigMap {name}"))?;
    let text = map.data.unwrap_or_default().remove("DeviceInfoCfg").ok_or("no DeviceInfoCfg")?;
    let info: serde_json::Value = serde_json::from_str(&text).map_err(|error| format!("DeviceInfoCfg: {error}"))?;
    let list = info["DeviceInfo"]["DeviceList"].as_object().ok_or(format!("no DeviceInfo.DeviceList: {text}"))?;
    let normal = |value: &serde_json::Value| {
        let text = value.as_str().map_or_else(|| value.to_string(), str::to_owned);
        match serde_json::from_str::<serde_json::Value>(&text) {
            Ok(json) if text.starts_with(['[', '{']) => json.to_string(),
            _ => {
                let items: BTreeSet<&str> = text.split(',').filter(|item| !item.is_empty()).collect();
                items.into_iter().collect::<Vec<_>>().join(",")
            }
        }
    };
    let device_list = list.iter().map(|(key, value)| (key.clone(), normal(value))).collect();
    let node = cluster.node().await;
    let annotation = node.metadata.annotations.unwrap_or_default().remove("baseDeviceInfos");
    let base_device_infos =
        annotation.map(|text| serde_json::from_str(&text).unwrap_or(serde_json::Value::String(text)));
    Ok(VolcanoView { device_list, base_device_infos })
}

/// Reads PodResources, the Node and the probe pods every 250 ms until stopped; what it saw wrong is returned by
/// [`Watch::finish`].
struct Watch {
    expected: Arc<Mutex<Expected>>,
    violations: Arc<Mutex<Vec<String>>>,
    samples: Arc<Mutex<u64>>,
    task: tokio::task::JoinHandle<()>,
}

impl Watch {
    fn start(cluster: &Cluster, resources: &[&str]) -> Watch {
        let expected = Arc::new(Mutex::new(Expected::default()));
        let violations = Arc::new(Mutex::new(Vec::new()));
        let samples = Arc::new(Mutex::new(0));
        let (cluster, resources) = (cluster.clone(), resources.iter().map(|r| (*r).to_owned()).collect::<Vec<_>>());
        let (watched, wrong, counted) = (expected.clone(), violations.clone(), samples.clone());
        let task = tokio::spawn(async move {
            loop {
                let found = sample(&cluster, &resources, &watched).await;
                *counted.lock().expect("samples") += 1;
                wrong.lock().expect("violations").extend(found);
                tokio::time::sleep(Duration::from_millis(250)).await;
            }
        });
        Watch { expected, violations, samples, task }
    }

    /// From now on `pod` must keep exactly its current assignments.
    async fn hold(&self, pod: &str) -> BTreeSet<(String, String)> {
        let pods = assignments().await.expect("PodResources");
        let held = pods.get(pod).cloned().unwrap_or_else(|| panic!("PodResources lists no device of {pod}: {pods:?}"));
        self.expected.lock().expect("expected").held.insert(pod.to_owned(), held.clone());
        held
    }

    /// From now on Volcano must read `view` of the node (`None`: anything).
    fn volcano(&self, view: Option<VolcanoView>) {
        self.expected.lock().expect("expected").volcano = view;
    }

    fn release(&self, pod: &str) {
        self.expected.lock().expect("expected").held.remove(pod);
    }

    fn probe(&self, pod: &str, on: bool) {
        let mut expected = self.expected.lock().expect("expected");
        if on {
            expected.probes.insert(pod.to_owned());
        } else {
            expected.probes.remove(pod);
        }
    }

    /// Panics naming what was seen wrong (the first 20).
    fn check(&self, when: &str) {
        let violations = self.violations.lock().expect("violations");
        let samples = *self.samples.lock().expect("samples");
        println!("watcher: {samples} samples, {} violations ({when})", violations.len());
        assert!(violations.is_empty(), "{when}: {:#?}", violations.iter().take(20).collect::<Vec<_>>());
    }

    fn finish(self, when: &str) {
        self.task.abort();
        self.check(when);
    }
}

/// One look at PodResources, the Node and the probes; what is wrong, each with the time.
async fn sample(cluster: &Cluster, resources: &[String], expected: &Mutex<Expected>) -> Vec<String> {
    let mut wrong = Vec::new();
    let now = format!("{:?}", std::time::SystemTime::now());
    let (held, probes, volcano) = {
        let expected = expected.lock().expect("expected");
        (expected.held.clone(), expected.probes.clone(), expected.volcano.clone())
    };
    if let Some(volcano) = volcano {
        match volcano_view(cluster).await {
            Ok(view) if view == volcano => {}
            Ok(view) => wrong.push(format!("{now}: Volcano reads {view:?}, not {volcano:?}")),
            Err(error) => wrong.push(format!("{now}: Volcano reads nothing: {error}")),
        }
    }
    match assignments().await {
        Ok(pods) => {
            let mut owners: BTreeMap<String, Vec<&str>> = BTreeMap::new();
            for (pod, ids) in &pods {
                for (_, id) in ids {
                    owners.entry(chip_of(id)).or_default().push(pod);
                }
            }
            for (chip, pods) in owners.iter().filter(|(_, pods)| pods.len() > 1) {
                wrong.push(format!("{now}: chip {chip} assigned to {pods:?}"));
            }
            for (pod, ids) in &held {
                if pods.get(pod) != Some(ids) {
                    wrong.push(format!("{now}: {pod} held {ids:?}, PodResources lists {:?}", pods.get(pod)));
                }
            }
        }
        // PodResources is not served while the kubelet restarts; the test restarts none.
        Err(error) => wrong.push(format!("{now}: PodResources: {error}")),
    }
    for resource in resources {
        if let Some(quantity) = cluster.allocatable(resource).await {
            if quantity.parse::<usize>().map_or(true, |count| count > CHIPS) {
                wrong.push(format!("{now}: the Node offers {quantity} {resource}"));
            }
        }
    }
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    for probe in &probes {
        if let Ok(Some(pod)) = pods.get_opt(probe).await {
            if let Some(node) = pod.spec.and_then(|spec| spec.node_name) {
                wrong.push(format!("{now}: probe {probe} asking for more than is free was scheduled to {node}"));
            }
        }
    }
    wrong
}

/// Puts the node back as the other tests expect it whatever happened: the test pods, the release, Huawei's plugin and
/// exporter removed, Volcano stopped, the labels of both stacks and of the guide removed.
struct Cleanup(Cluster);

impl Cleanup {
    fn run(&self) {
        let cluster = &self.0;
        let _ = cluster.try_kubectl(&["delete", "pods", "--all", "-n", NAMESPACE, "--grace-period=0", "--wait=true"]);
        // The runtime step drains the node; a failure before its uncordon leaves it cordoned.
        let _ = cluster.try_kubectl(&["uncordon", NODE_NAME]);
        let _ = cluster.script_output("volcano.sh", &["stop"]);
        let _ = cluster.try_helm(&["uninstall", RELEASE, "-n", SYSTEM, "--wait", "--timeout", "120s"]);
        let _ = cluster.try_kubectl(&["delete", "namespace", SYSTEM, "--ignore-not-found", "--wait=true"]);
        huawei::remove(cluster);
        huawei_exporter::remove(cluster);
        let _ = cluster.try_kubectl(&["delete", "runtimeclass", STANDIN_RUNTIME_CLASS, "--ignore-not-found"]);
        // A fault an overlay raised stays until one clears it: every chip healthy.
        cluster.set_overlay((0..8).map(|logic_id| chip_fault(logic_id, false)).collect());
        huawei::remove_volcano_writes(cluster);
        for label in [
            "ascend.huawei.com/migrated-device-plugin",
            "ascend.huawei.com/migrated-exporter",
            "ascend.huawei.com/chip-type",
        ] {
            let _ = cluster.try_kubectl(&["label", "node", NODE_NAME, &format!("{label}-")]);
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        self.run();
    }
}

/// The node as Huawei's installation leaves it, from whatever an earlier run left: our stack removed, Huawei's plugin
/// handing chips to Huawei's runtime, its exporter, and the test pods' RuntimeClass. Returns the
/// test's timer and the guard that puts the node back; `None`, said loudly, without Huawei's image.
async fn huaweis_node(cluster: &Cluster, test: &'static str, volcano: bool) -> Option<(Timer, Cleanup)> {
    if !huawei::image_present(test) {
        return None;
    }
    let mut timer = Timer::start(test);
    let cleanup = Cleanup(cluster.clone());
    cleanup.run();
    remove_plain_stack(cluster).await;
    let _ = cluster.try_helm(&["uninstall", RELEASE, "-n", SYSTEM, "--wait"]);
    cluster.kubectl(&["label", "node", NODE_NAME, "ascend.huawei.com/chip-type-"]);
    test_namespace(cluster).await;
    let class = serde_json::json!({
        "apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
        "metadata": {"name": STANDIN_RUNTIME_CLASS}, "handler": "ascend",
    });
    let file = std::env::temp_dir().join(format!("{STANDIN_RUNTIME_CLASS}-{}.json", std::process::id()));
    std::fs::write(&file, class.to_string()).expect("write the RuntimeClass");
    cluster.kubectl(&["apply", "-f", file.to_str().expect("path")]);
    let _ = std::fs::remove_file(&file);
    cluster.label_node(huawei::WORKER_LABEL.0, Some(huawei::WORKER_LABEL.1));
    cluster.apply(huawei::MANIFEST);
    cluster.kubectl(&[
        "-n",
        "kube-system",
        "set",
        "env",
        &format!("daemonset/{HUAWEI_DAEMON_SET}"),
        "ASCEND_DOCKER_RUNTIME=True",
    ]);
    if volcano {
        // ascendplugin-volcano.yaml's one change of the command, as huawei_device_plugin.rs makes it.
        let patch =
            r#"[{"op": "add", "path": "/spec/template/spec/containers/0/command/-", "value": "-volcanoType=true"}]"#;
        cluster.kubectl(&["-n", "kube-system", "patch", "daemonset", HUAWEI_DAEMON_SET, "--type=json", "-p", patch]);
    }
    huawei_exporter::apply(cluster);
    cluster.kubectl(&[
        "-n",
        "kube-system",
        "rollout",
        "status",
        &format!("daemonset/{HUAWEI_DAEMON_SET}"),
        "--timeout=180s",
    ]);
    cluster.wait_pods_running("kube-system", HUAWEI_SELECTOR, 1, Duration::from_secs(180)).await;
    cluster.wait_pods_running(HUAWEI_EXPORTER_NAMESPACE, EXPORTER_SELECTOR, 1, Duration::from_secs(60)).await;
    cluster.wait_allocatable(RESOURCE, &CHIPS.to_string(), Duration::from_secs(120)).await;
    timer.mark("Huawei's device plugin and exporter running, 8 chips offered");
    Some((timer, cleanup))
}

/// Waits until no pod of `selector` in `namespace` is left (a DaemonSet's pod that left the node).
async fn wait_pods_gone(cluster: &Cluster, namespace: &str, selector: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), namespace);
    wait_until(&format!("no pod {selector} in {namespace}"), Duration::from_secs(120), || async {
        let list = pods.list(&kube::api::ListParams::default().labels(selector)).await.map_err(|e| e.to_string())?;
        let names: Vec<_> = list.items.iter().filter_map(|pod| pod.metadata.name.clone()).collect();
        if names.is_empty() {
            Ok(())
        } else {
            Err(format!("{names:?}"))
        }
    })
    .await;
}

/// After the way back: our chart's pods have left the node and the node is not labelled for its pool (the release's
/// node labeller puts `ascend.huawei.com/chip-type` back when it runs, and our plugin then returns beside Huawei's).
async fn assert_ours_left(cluster: &Cluster, when: &str) {
    wait_pods_gone(cluster, SYSTEM, OUR_PLUGIN_SELECTOR).await;
    wait_pods_gone(cluster, SYSTEM, OUR_EXPORTER_SELECTOR).await;
    let labels = cluster.node().await.metadata.labels.unwrap_or_default();
    let pool = labels.get("ascend.huawei.com/chip-type");
    assert!(pool.is_none(), "{when}: the node is labelled for our pool again ({pool:?})");
}

/// Creates a probe pod asking for `chips`, which the watcher requires to stay unscheduled, and waits until the
/// scheduler has said why.
async fn start_probe(cluster: &Cluster, watch: &Watch, name: &str, resource: &str, chips: usize) {
    create_pod(cluster, name, resource, chips).await;
    watch.probe(name, true);
    let reason = ascend_cluster_tests::stack::unschedulable_reason(cluster, name).await;
    println!("{name} ({chips} chips) unschedulable: {reason}");
}

async fn stop_probe(cluster: &Cluster, watch: &Watch, name: &str) {
    watch.probe(name, false);
    delete_pod(cluster, name).await;
}

/// A Prometheus scraping Huawei's exporter pods and our chart's on the node every [`SCRAPE_INTERVAL`], once it holds
/// every series of [`HUAWEI_DASHBOARD_SERIES`] from Huawei's.
async fn prometheus_on_huaweis_exporter(cluster: &Cluster) -> Prometheus {
    let targets = [
        PodTargets { namespace: HUAWEI_EXPORTER_NAMESPACE, selector: EXPORTER_SELECTOR, port: EXPORTER_PORT },
        PodTargets { namespace: SYSTEM, selector: OUR_EXPORTER_SELECTOR, port: EXPORTER_PORT },
    ];
    let prometheus = Prometheus::start(cluster, "npu-exporter", SCRAPE_INTERVAL, &targets).await;
    fresh_series(&prometheus, 0.0).await;
    prometheus
}

/// Waits until every series Prometheus serves of [`HUAWEI_DASHBOARD_SERIES`] has a sample scraped after `since`
/// (seconds since the epoch), every name has one, and returns the time then: a target that went away stops counting
/// once Prometheus has marked its series stale.
async fn fresh_series(prometheus: &Prometheus, since: f64) -> f64 {
    wait_until("every dashboard series freshly scraped", Duration::from_secs(90), || async {
        let mut stale = Vec::new();
        for name in HUAWEI_DASHBOARD_SERIES {
            // timestamp() of a plain selector is the sample's time (of anything else, the query's).
            let oldest = prometheus.query(&format!("min(timestamp({name}))"), None)?;
            let time = oldest.first().and_then(|series| series["value"][1].as_str()?.parse::<f64>().ok());
            if time.is_none_or(|time| time <= since) {
                stale.push(format!("{name} {time:?}"));
            }
        }
        if stale.is_empty() {
            Ok(epoch_seconds())
        } else {
            Err(format!("not scraped since {since:.1}: {stale:?}; up: {:?}", prometheus.query("up", None)))
        }
    })
    .await
}

fn epoch_seconds() -> f64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("clock after 1970").as_secs_f64()
}

/// The exporters that served a series, and its samples' times.
type Sources = (BTreeSet<&'static str>, Vec<f64>);

/// What is wrong with the dashboard series between `from` and `to` (seconds since the epoch): each series of
/// [`HUAWEI_DASHBOARD_SERIES`], told by its name and labels less [`TARGET_LABELS`] and [`ATTRIBUTION_LABELS`], must
/// be served by Huawei's exporter and by ours (neither serves one the other does not), be there from `from` to `to`,
/// and have no gap between two samples, whichever exporter served them, longer than one scrape interval (a missed
/// scrape). Prints each name's series count, samples and longest gap.
fn check_series(prometheus: &Prometheus, from: f64, to: f64) -> Vec<String> {
    let sources = prometheus.targets_seen();
    let source = |series: &Series| match series.labels.get("instance").and_then(|instance| sources.get(instance)) {
        Some(&HUAWEI_EXPORTER_NAMESPACE) => "Huawei's",
        Some(_) => "ours",
        None => "unknown",
    };
    // A sample at one interval from its neighbour is on time; one scrape missed puts two intervals between them.
    let longest_allowed = SCRAPE_INTERVAL.as_secs_f64() * 1.5;
    let range = Duration::from_secs((to - from).ceil() as u64 + 1);
    let mut wrong = Vec::new();
    for name in HUAWEI_DASHBOARD_SERIES {
        let all = match prometheus.samples(name, range, to) {
            Ok(all) => all,
            Err(error) => {
                wrong.push(format!("{name}: {error}"));
                continue;
            }
        };
        let mut keyed: BTreeMap<BTreeMap<String, String>, Sources> = BTreeMap::new();
        for series in &all {
            let mut key = series.labels.clone();
            key.retain(|label, _| {
                !TARGET_LABELS.contains(&label.as_str()) && !ATTRIBUTION_LABELS.contains(&label.as_str())
            });
            let entry = keyed.entry(key).or_default();
            entry.0.insert(source(series));
            entry.1.extend(series.times.iter().filter(|time| **time >= from));
        }
        let mut longest = 0.0_f64;
        let mut samples = 0;
        for (key, (sources, times)) in &mut keyed {
            if *sources != BTreeSet::from(["Huawei's", "ours"]) {
                wrong.push(format!("{key:?} served by {sources:?} only"));
            }
            times.sort_by(f64::total_cmp);
            samples += times.len();
            let (Some(first), Some(last)) = (times.first(), times.last()) else {
                wrong.push(format!("{key:?}: no sample after {from:.1}"));
                continue;
            };
            let edges = [first - from, to - last];
            let gaps = times.windows(2).map(|pair| pair[1] - pair[0]).chain(edges);
            let widest = gaps.fold(0.0_f64, f64::max);
            longest = longest.max(widest);
            if widest > longest_allowed {
                wrong.push(format!("{key:?}: a gap of {widest:.1} s in {times:?}"));
            }
        }
        println!("{name}: {} series, {samples} samples, longest gap {longest:.2} s", keyed.len());
        if keyed.is_empty() {
            wrong.push(format!("{name}: no series"));
        }
    }
    wrong
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guide_moves_a_running_pod_from_huaweis_plugin_to_ours_and_back() {
    let cluster = Cluster::connect().await;
    let shell = Shell::new(&cluster);
    let Some((mut timer, cleanup)) = huaweis_node(&cluster, "migration", false).await else { return };
    let prometheus = prometheus_on_huaweis_exporter(&cluster).await;
    shell.use_prometheus(&prometheus);
    timer.mark("Prometheus scrapes Huawei's exporter");

    // A job holding two chips from Huawei's plugin, and a probe asking for one chip more than is free.
    let watch = Watch::start(&cluster, &[RESOURCE]);
    let first = start_pod_seeing(&cluster, "job-a", RESOURCE, 2).await;
    let first_ids = watch.hold("job-a").await;
    println!("job-a under Huawei's plugin: {first:?}, {first_ids:?}");
    start_probe(&cluster, &watch, "probe", RESOURCE, CHIPS - 1).await;
    timer.mark("job-a holds 2 chips from Huawei's plugin; the probe of 7 waits");

    shell.step("before");
    let step0 = epoch_seconds();
    shell.step("step0");
    // Step 0 replaces Huawei's exporter pod, whose series miss the scrapes until the new one serves (the guide says
    // so); they are checked from then on. The old pod is gone a second (its grace period) after the rollout.
    let from = fresh_series(&prometheus, epoch_seconds() + 1.0).await;
    println!(
        "step 0 replaced Huawei's exporter: every series scraped from the new pod {:.1} s after it began",
        from - step0
    );
    timer.mark("guide: before you start, step 0; Huawei's exporter serves again");
    watch.check("after step 0");
    shell.step("step1-install");
    timer.mark("guide: step 1, the chart installed");
    shell.step("step1-node");
    timer.mark("guide: step 1, the node moved to our plugin");
    cluster.wait_allocatable(RESOURCE, &CHIPS.to_string(), Duration::from_secs(60)).await;
    let checks = shell.step("step1-check");
    assert!(checks.contains("job-a"), "kubectl ascend pods names the running job: {checks}");
    timer.mark("guide: step 1's checks");
    assert_eq!(chips_seen(&cluster, "job-a").await, first, "job-a sees its chips after step 1");
    let huawei_pods: Api<Pod> = Api::namespaced(cluster.client(), "kube-system");
    let left = huawei_pods.list(&kube::api::ListParams::default().labels(HUAWEI_SELECTOR)).await.expect("list");
    assert!(left.items.is_empty(), "Huawei's plugin left the node");
    watch.check("after step 1");

    shell.step("step3");
    wait_pods_gone(&cluster, HUAWEI_EXPORTER_NAMESPACE, EXPORTER_SELECTOR).await;
    timer.mark("guide: step 3, our exporter with Huawei's names; Huawei's left the node");
    watch.check("after step 3");

    // The free chips to a new job, and nothing else; the held ones once their job has ended.
    stop_probe(&cluster, &watch, "probe").await;
    let second = start_pod_seeing(&cluster, "job-b", RESOURCE, CHIPS - 2).await;
    assert!(second.is_disjoint(&first), "job-b got only free chips: {second:?}, job-a holds {first:?}");
    watch.hold("job-b").await;
    timer.mark("job-b got the 6 free chips from our plugin");
    watch.release("job-a");
    delete_pod(&cluster, "job-a").await;
    let third = start_pod_seeing(&cluster, "job-c", RESOURCE, 2).await;
    assert_eq!(third, first, "job-c got the chips job-a had");
    watch.hold("job-c").await;
    timer.mark("job-a ended; its chips went to job-c");

    // The way back, with every chip held, a probe of one chip waiting.
    start_probe(&cluster, &watch, "probe", RESOURCE, 1).await;
    shell.step("back");
    cluster.wait_pods_running("kube-system", HUAWEI_SELECTOR, 1, Duration::from_secs(120)).await;
    cluster.wait_pods_running(HUAWEI_EXPORTER_NAMESPACE, EXPORTER_SELECTOR, 1, Duration::from_secs(60)).await;
    cluster.wait_allocatable(RESOURCE, &CHIPS.to_string(), Duration::from_secs(120)).await;
    assert_ours_left(&cluster, "after the way back").await;
    timer.mark("guide: the way back; Huawei's plugin and exporter back on the node, ours gone");
    assert_eq!(chips_seen(&cluster, "job-b").await, second, "job-b keeps its chips on the way back");
    assert_eq!(chips_seen(&cluster, "job-c").await, third, "job-c keeps its chips on the way back");
    watch.check("after the way back");
    stop_probe(&cluster, &watch, "probe").await;
    watch.release("job-c");
    delete_pod(&cluster, "job-c").await;
    let fourth = start_pod_seeing(&cluster, "job-d", RESOURCE, 2).await;
    assert_eq!(fourth, third, "Huawei's plugin gives job-d the chips job-c had, the only free ones");
    timer.mark("Huawei's plugin offers the chips job-c left, and only those");

    // What Prometheus saw of the dashboard series, through step 3 and the way back.
    // Through the moment our exporter has left the node, once Prometheus holds a scrape of every series after it.
    assert_ours_left(&cluster, "before the release is removed").await;
    let left = epoch_seconds();
    let settled = fresh_series(&prometheus, left).await;
    println!("Prometheus holds every series scraped after the switch {:.1} s after it", settled - left);
    let wrong = check_series(&prometheus, from, left);
    assert!(
        wrong.is_empty(),
        "the dashboard series through the migration: {:#?}",
        wrong.iter().take(20).collect::<Vec<_>>()
    );
    drop(prometheus);
    timer.mark("every dashboard series of Huawei's kept its name and labels, with no gap longer than a scrape");

    shell.step("back-cleanup");
    timer.mark("guide: the release removed");
    watch.finish("the whole migration");
    shell.assert_all_run(&[VOLCANO_STEPS, RUNTIME_STEPS].concat());

    drop(cleanup);
    wait_no_chips(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;
}

/// Our plugin serving the chips as another resource (`devicePlugin.renames`: `huawei.com/Ascend910` becomes
/// [`RENAMED`]) while a pod of Huawei's plugin holds two: the kubelet counts that pod's ids against the old resource
/// only, so our plugin must keep its chips out itself, from PodResources, until it ends. The renamed resource stays
/// in the Node's capacity, at 0 allocatable, for the kubelet's 5 minutes after its plugin left
/// (`endpointStopGracePeriod`); the other tests read `huawei.com/Ascend910` only.
const RENAMED: &str = "huawei.com/npu-train";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_renamed_resource_does_not_offer_the_chips_a_running_pod_holds_under_huaweis_name() {
    let cluster = Cluster::connect().await;
    let Some((mut timer, cleanup)) = huaweis_node(&cluster, "migration, renamed resource", false).await else { return };
    let watch = Watch::start(&cluster, &[RESOURCE, RENAMED]);
    let held = start_pod_seeing(&cluster, "job-a", RESOURCE, 2).await;
    watch.hold("job-a").await;
    timer.mark("job-a holds 2 chips from Huawei's plugin");

    // Huawei's plugin leaves; ours arrives with the rename (the plain manifest of the pool, its flags edited as the
    // chart value does).
    cluster.label_node("ascend.huawei.com/migrated-device-plugin", Some("true"));
    cluster.kubectl(&["-n", "kube-system", "delete", "daemonset", HUAWEI_DAEMON_SET, "--wait=true"]);
    wait_pods_gone(&cluster, "kube-system", HUAWEI_SELECTOR).await;
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/training-910b.yaml");
    let base = RENAMED.trim_start_matches("huawei.com/");
    edit_device_plugin_args(&cluster, |args| args.push(format!("--rename=Ascend910={base}")));
    let free = (CHIPS - 2).to_string();
    cluster.wait_allocatable(RENAMED, &free, Duration::from_secs(90)).await;
    timer.mark("our plugin offers the 6 chips job-a does not hold, as huawei.com/npu-train");
    start_probe(&cluster, &watch, "probe", RENAMED, CHIPS - 1).await;
    let others = start_pod_seeing(&cluster, "job-b", RENAMED, CHIPS - 2).await;
    assert!(others.is_disjoint(&held), "job-b got only free chips: {others:?}, job-a holds {held:?}");
    assert_eq!(chips_seen(&cluster, "job-a").await, held, "job-a keeps its chips");
    watch.hold("job-b").await;
    stop_probe(&cluster, &watch, "probe").await;
    timer.mark("job-b got the 6 free chips; the probe of 7 was never scheduled");

    watch.release("job-a");
    delete_pod(&cluster, "job-a").await;
    let waited = cluster.wait_allocatable(RENAMED, &CHIPS.to_string(), Duration::from_secs(60)).await;
    println!("job-a's chips offered again {:.1} s after it was gone", waited.as_secs_f64());
    let again = start_pod_seeing(&cluster, "job-c", RENAMED, 2).await;
    assert_eq!(again, held, "job-c got the chips job-a had");
    timer.mark("job-a ended; its chips offered again and given to job-c");
    watch.finish("the renamed takeover");

    drop(cleanup);
    let _ = cluster.try_kubectl(&["label", "node", NODE_NAME, "ascend.huawei.com/migrated-device-plugin-"]);
    deploy_910b_pool(&cluster, &mut timer).await;
}

/// The device-info ConfigMap's key for the L1 switch faults, which Huawei's plugin writes on Atlas A3 and Ascend950
/// nodes only (mind-cluster `component/ascend-device-plugin/pkg/common/proto.go`, `SwitchFaultInfo`).
const SWITCH_INFO: &str = "SwitchInfoCfg";

/// The guide's runtime step, on a node whose jobs have ended as the step asks: after step 1 our plugin hands chips to
/// CDI once the chart's node setup registered the runtime and containerd restarted (the CDI spec is removed first,
/// so a pod's chip proves the spec the node setup wrote), and its undo hands them to Huawei's runtime again. Before
/// it, step 1's removal of a stale `SwitchInfoCfg` (the test node is a 910B, where Huawei's plugin writes none: the
/// record is written here as that plugin writes it on an Atlas A3 node).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_guides_runtime_step_moves_an_idle_node_to_cdi_and_back() {
    let cluster = Cluster::connect().await;
    let shell = Shell::new(&cluster);
    let Some((mut timer, cleanup)) = huaweis_node(&cluster, "migration, the runtime step", false).await else { return };
    shell.step("step0");
    shell.step("step1-install");
    shell.step("step1-node");
    cluster.wait_allocatable(RESOURCE, &CHIPS.to_string(), Duration::from_secs(60)).await;
    timer.mark("guide: step 1, the node moved to our plugin");

    let config_map = ascend_kube::device_info::config_map_name(NODE_NAME);
    let stale = serde_json::json!({
        "FaultCode": [], "FaultLevel": "", "UpdateTime": epoch_seconds() as i64 - 3600,
        "NodeStatus": "Healthy", "FaultTimeAndLevelMap": {},
    });
    let patch = serde_json::json!({"data": {SWITCH_INFO: stale.to_string()}}).to_string();
    cluster.kubectl(&["-n", "kube-system", "patch", "configmap", &config_map, "--type=merge", "-p", &patch]);
    let printed = shell.step("step1-switch-info");
    assert!(printed.contains("NodeStatus"), "the block prints the stale record before removing it: {printed}");
    let data = cluster.kubectl(&["-n", "kube-system", "get", "configmap", &config_map, "-o", "jsonpath={.data}"]);
    assert!(!data.contains(SWITCH_INFO), "{SWITCH_INFO} removed: {data}");
    assert!(data.contains("DeviceInfoCfg"), "the rest of the ConfigMap kept: {data}");
    timer.mark("guide: step 1, the stale SwitchInfoCfg removed");

    // Under Huawei's runtime (`runtime-env`), a pod of the default runtime gets no device node.
    start_pod(&cluster, "default-runtime", 1).await;
    let seen = chips_seen(&cluster, "default-runtime").await;
    assert!(seen.is_empty(), "runtime-env mode: a pod of the default runtime gets no device node: {seen:?}");
    delete_pod(&cluster, "default-runtime").await;
    let host = HostBackup::take(&cluster);
    let checks = shell.step("step2-runtime");
    assert!(
        checks.contains(&format!("{CONTAINERD_CONFIG} already registers \"ascend\""))
            || checks.contains("restart containerd to load it"),
        "the node setup's log says containerd's configuration registers the runtime: {checks}"
    );
    assert!(
        checks.lines().any(|line| line.contains("container_runtime.cdi") && line.contains("OK")),
        "the doctor's container_runtime.cdi is OK after step 2: {checks}"
    );
    assert!(Path::new(HOST_CDI_SPEC).is_file(), "the chart's node setup wrote {HOST_CDI_SPEC}");
    let node = cluster.node().await;
    assert_ne!(node.spec.and_then(|spec| spec.unschedulable), Some(true), "the node is uncordoned");
    timer.mark("guide: step 2, CDI through the node setup, containerd restarted");
    start_pod(&cluster, "cdi", 2).await;
    let seen = chips_seen(&cluster, "cdi").await;
    assert_eq!(seen.len(), 2, "a pod of the default runtime sees its 2 chips by CDI: {seen:?}");
    delete_pod(&cluster, "cdi").await;
    timer.mark("a pod of the default runtime got its 2 chips by CDI");

    shell.step("step2-undo");
    let seen = start_pod_seeing(&cluster, "runtime", RESOURCE, 2).await;
    delete_pod(&cluster, "runtime").await;
    start_pod(&cluster, "default-runtime", 1).await;
    assert!(chips_seen(&cluster, "default-runtime").await.is_empty(), "runtime-env mode again after the undo");
    delete_pod(&cluster, "default-runtime").await;
    timer.mark(&format!("guide: step 2 undone, Huawei's runtime gives a pod its chips again ({seen:?})"));

    for step in RUNTIME_STEPS {
        assert!(shell.run.lock().expect("steps run").contains(*step), "{step} was run");
    }

    drop(host);
    drop(cleanup);
    wait_no_chips(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;
}

/// The name Volcano answers to in `schedulerName`.
const VOLCANO: &str = "volcano";
/// The pod annotation both device plugins write in Volcano mode with the chips they handed out; Volcano's Ascend
/// plugin writes its choice under the resource's name ([`RESOURCE`]).
const REAL_CHIPS: &str = "huawei.com/AscendReal";

/// Starts a pod of `chips` chips for Volcano under the stand-in runtime and returns its chips (`davinci<N>`) once
/// Volcano's choice written on it, the device plugin's record of what it handed out, and what its container sees
/// agree.
async fn start_volcano_pod(cluster: &Cluster, name: &str, chips: usize) -> BTreeSet<String> {
    delete_pod(cluster, name).await;
    let mut pod = runtime_pod(name, RESOURCE, chips);
    pod.spec.as_mut().expect("spec").scheduler_name = Some(VOLCANO.to_owned());
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &pod).await.expect("create a pod for Volcano");
    cluster.wait_running(NAMESPACE, name, Duration::from_secs(120)).await;
    let seen = chips_seen(cluster, name).await;
    let chips_named = |pod: &Pod, key: &str| -> BTreeSet<String> {
        let list = pod.metadata.annotations.as_ref().and_then(|all| all.get(key)).cloned().unwrap_or_default();
        list.split(',').filter(|id| !id.is_empty()).map(|id| format!("davinci{}", chip_of(id))).collect()
    };
    let (chosen, recorded) = wait_until(&format!("{name}: {REAL_CHIPS} written"), Duration::from_secs(30), || async {
        let now = pods.get(name).await.map_err(|error| error.to_string())?;
        match chips_named(&now, REAL_CHIPS) {
            recorded if recorded.is_empty() => Err(format!("{:?}", now.metadata.annotations)),
            recorded => Ok((chips_named(&now, RESOURCE), recorded)),
        }
    })
    .await;
    println!("{name}: Volcano chose {chosen:?}, the device plugin recorded {recorded:?}, the container sees {seen:?}");
    assert_eq!(chosen.len(), chips, "{name}: Volcano's choice of {chips} chips");
    assert_eq!(seen, chosen, "{name}: the container's chips are the ones Volcano chose");
    assert_eq!(recorded, chosen, "{name}: {REAL_CHIPS} names the chips Volcano chose");
    seen
}

/// Waits until what Volcano reads of the node has `baseDeviceInfos` and `free` chips in its free list, and returns it.
async fn volcano_view_with(cluster: &Cluster, free: usize) -> VolcanoView {
    wait_until(
        &format!("the device-info lists {free} free chips and baseDeviceInfos"),
        Duration::from_secs(60),
        || async {
            let view = volcano_view(cluster).await?;
            let listed =
                view.device_list.get(RESOURCE).map_or(0, |list| list.split(',').filter(|c| !c.is_empty()).count());
            if view.base_device_infos.is_some() && listed == free {
                Ok(view)
            } else {
                Err(format!("{view:?}"))
            }
        },
    )
    .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn in_volcano_mode_the_real_scheduler_places_pods_through_the_guide() {
    let cluster = Cluster::connect().await;
    let shell = Shell::new(&cluster);
    let Some((mut timer, cleanup)) = huaweis_node(&cluster, "migration, Volcano mode", true).await else { return };
    volcano_view_with(&cluster, CHIPS).await;
    // The way back waits for Prometheus to scrape Huawei's exporter.
    let prometheus = prometheus_on_huaweis_exporter(&cluster).await;
    shell.use_prometheus(&prometheus);
    // Built (cached) by up.sh from the mind-cluster tree Huawei's image above comes from.
    cluster.script("volcano.sh", &["build"]);
    cluster.script("volcano.sh", &["start"]);
    let watch = Watch::start(&cluster, &[RESOURCE]);
    timer.mark("Volcano with Huawei's Ascend plugin started on Huawei's device plugin in Volcano mode");

    let first = start_volcano_pod(&cluster, "job-a", 2).await;
    watch.hold("job-a").await;
    let huaweis = volcano_view_with(&cluster, CHIPS - 2).await;
    println!("what Volcano reads from Huawei's plugin, job-a running: {huaweis:?}");
    watch.volcano(Some(huaweis.clone()));
    timer.mark("Volcano placed job-a on 2 chips under Huawei's plugin");

    shell.step("before");
    shell.step("step0");
    shell.step("step1-install-volcano");
    shell.step("step1-node");
    cluster.wait_allocatable(RESOURCE, &CHIPS.to_string(), Duration::from_secs(60)).await;
    shell.step("step1-check");
    let managers = shell.step("step1-check-volcano");
    assert!(managers.contains("ascend-device-plugin"), "our plugin writes the device-info ConfigMap: {managers}");
    timer.mark("guide: step 1 in Volcano mode and its checks");
    // Our plugin rewrites the ConfigMap and the annotation: a few rounds of it, all read as Huawei's were.
    tokio::time::sleep(Duration::from_secs(12)).await;
    watch.check("after step 1 in Volcano mode");
    assert_eq!(chips_seen(&cluster, "job-a").await, first, "job-a sees its chips after step 1");

    // Volcano's next pod, on our plugin: only chips job-a does not hold.
    watch.volcano(None);
    let second = start_volcano_pod(&cluster, "job-b", 2).await;
    assert!(second.is_disjoint(&first), "job-b got only free chips: {second:?}, job-a holds {first:?}");
    watch.hold("job-b").await;
    let ours = volcano_view_with(&cluster, CHIPS - 4).await;
    watch.volcano(Some(ours.clone()));
    timer.mark("Volcano placed job-b on 2 other chips under our plugin");

    // Our plugin, not a ConfigMap Huawei's left, is what Volcano reads: a fault of a free chip reaches its lists, and
    // its recovery takes them back. Chip N is logic id N+4 mod 8 of the topology (dcmi-sim/topologies/atlas-800t-a2.toml).
    watch.volcano(None);
    let free_chip = (0..CHIPS as u32).find(|chip| {
        let node = format!("davinci{chip}");
        !first.contains(&node) && !second.contains(&node)
    });
    let free_chip = free_chip.expect("a free chip");
    let logic_id = (free_chip + 4) % 8;
    cluster.set_overlay(vec![chip_fault(logic_id, true)]);
    wait_until("Volcano reads the faulty chip from our plugin", Duration::from_secs(15), || async {
        let view = volcano_view(&cluster).await?;
        let list = |key: &str| view.device_list.get(key).cloned().unwrap_or_default();
        let free = list(RESOURCE).split(',').filter(|chip| !chip.is_empty()).count();
        if list(&format!("{RESOURCE}-Unhealthy")) == format!("Ascend910-{free_chip}") && free == CHIPS - 5 {
            Ok(())
        } else {
            Err(format!("{view:?}"))
        }
    })
    .await;
    cluster.set_overlay(vec![chip_fault(logic_id, false)]);
    volcano_view_with(&cluster, CHIPS - 4).await;
    watch.volcano(Some(ours));
    timer.mark(&format!("a fault of chip {free_chip} written for Volcano by our plugin, and its recovery"));

    shell.step("back");
    cluster.wait_pods_running("kube-system", HUAWEI_SELECTOR, 1, Duration::from_secs(120)).await;
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_ours_left(&cluster, "after the way back").await;
    watch.check("after the way back in Volcano mode");
    assert_eq!(chips_seen(&cluster, "job-a").await, first, "job-a keeps its chips on the way back");
    assert_eq!(chips_seen(&cluster, "job-b").await, second, "job-b keeps its chips on the way back");
    timer.mark("guide: the way back; Huawei's plugin writes again, the pods keep their chips");

    // Volcano's next pod, on Huawei's plugin again: only chips neither running pod holds.
    watch.volcano(None);
    let third = start_volcano_pod(&cluster, "job-c", 2).await;
    let held: BTreeSet<String> = first.union(&second).cloned().collect();
    assert!(third.is_disjoint(&held), "job-c got only free chips: {third:?}, job-a and job-b hold {held:?}");
    watch.hold("job-c").await;
    timer.mark("Volcano placed job-c on 2 other chips under Huawei's plugin");
    shell.step("back-cleanup");
    watch.finish("the whole migration in Volcano mode");

    drop(cleanup);
    wait_no_chips(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;
}
