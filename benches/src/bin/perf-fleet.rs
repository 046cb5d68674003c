//! `perf-fleet`: a simulated fleet of NPU nodes against the real API server of the test bed: what our node daemons
//! cost the control plane at idle, under churn and after an API server restart (issue 35, docs/scale.md; section 10
//! of `benches/run.sh`).
//!
//! Each simulated node is a Node object, tainted so that nothing is scheduled on it, and on this machine a dcmi-sim
//! fake Atlas 800T A2 host (8 Ascend 910B chips) with the daemons of a node of the fleet: the device plugin in Volcano
//! mode with node Events, the node labeller and the DRA driver, each the real release binary talking to the real API
//! server under its own user agent, beside the in-repo kubelet peers (the device plugin's and the DRA driver's) in
//! this process. The stack of deploy/kubernetes is removed from the test bed's own node for the run, so that the
//! audit log holds the fleet's requests alone, and deployed again at the end.
//!
//! Windows:
//! 0. **baseline**, `--baseline-seconds` before any simulated node exists: the test bed's own control plane;
//! 1. **start-up**, until every node is current: its device-info ConfigMap, its ResourceSlice of 8 devices, its
//!    chip-count label;
//! 2. **idle**, `--idle-seconds` (longer than the watches' 290-s server timeout, so their re-opening is counted);
//! 3. **churn**: every 10 s one chip of every node faults or recovers, for `--churn-seconds`;
//! 4. **API server restart**: stopped for a few seconds while one chip of every node faults; the first minute after
//!    it is ready, and the time until every node's ConfigMap and slice show the fault.
//!
//! For each: our requests by daemon, verb and resource (`ascend_benches::audit_log`), the busiest second, and the CPU
//! time of the API server and etcd. The process needs an open-file limit of at least 16 per node (`ulimit -n`).

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use ascend_benches::audit_log::{window, AuditLog, Counts};
use ascend_benches::daemon::{free_port, Daemon};
use ascend_benches::figures_file::measure_into;
use ascend_cluster_tests::stack::{
    chip_fault, deploy_910b_pool, device_list, remove_plain_stack, DRA_DRIVER, RESOURCE,
};
use ascend_cluster_tests::{Cluster, Timer};
use ascend_kube::node_labels::CHIP_COUNT_LABEL;
use ascend_kube::UNHEALTHY_TAINT_KEY;
use clap::Parser;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::{write_overlay, Overlay, Topology};
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use k8s_openapi::api::resource::v1::ResourceSlice;
use kube::api::{Api, DeleteParams, ListParams, PostParams};
use serde_json::json;

/// The simulated host of every node.
const SAMPLE: &str = "atlas-800t-a2";
/// Its chips.
const CHIPS: usize = 8;
/// The label and taint key that mark a simulated node (and keep every pod off it).
const SIMULATED: &str = "ascend.test/simulated";
/// The chip that faults in the churn and restart windows.
const FAULTY_LOGIC_ID: u32 = 2;
/// Where the device plugin in Volcano mode writes its device-info ConfigMaps, and their names' prefix.
const DEVICE_INFO_NAMESPACE: &str = "kube-system";
const DEVICE_INFO_PREFIX: &str = "mindx-dl-deviceinfo-";
/// How long the API server stays stopped in the restart window.
const OUTAGE_SECONDS: u64 = 6;
/// How long the fleet may take to become current, at start and after the restart.
const CURRENT_LIMIT: Duration = Duration::from_secs(600);

/// A simulated fleet against the test bed's API server.
#[derive(Debug, Parser)]
struct Args {
    /// Simulated nodes.
    #[arg(long, default_value_t = 100)]
    nodes: usize,
    /// The release binaries (ascend-device-plugin, ascend-node-labeller, ascend-dra-driver).
    #[arg(long)]
    release_dir: PathBuf,
    /// The simulator's libdcmi.so (default: the one dcmi-sim's build left beside its rlib).
    #[arg(long)]
    library: Option<PathBuf>,
    /// The API server's audit log (scripts/cluster/lib.sh's `CLUSTER_LOGS`).
    #[arg(long, default_value = "/var/log/ascend-cluster/audit.log")]
    audit_log: PathBuf,
    /// The baseline window, before the fleet starts.
    #[arg(long, default_value_t = 60)]
    baseline_seconds: u64,
    /// Seconds after the fleet is current before the idle window (the daemons' first writes settle).
    #[arg(long, default_value_t = 30)]
    settle_seconds: u64,
    /// The idle window.
    #[arg(long, default_value_t = 300)]
    idle_seconds: u64,
    /// The churn window (a chip of every node faults or recovers every 10 s).
    #[arg(long, default_value_t = 120)]
    churn_seconds: u64,
    /// Where the figures go.
    #[arg(long)]
    out: PathBuf,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone();
    measure_into(&out, measure(args)).await
}

async fn measure(args: Args) -> Result<serde_json::Value> {
    check_open_file_limit(args.nodes)?;
    let cluster = Cluster::connect().await;
    let version = cluster.client().apiserver_version().await?.git_version;
    let audit = AuditLog { path: args.audit_log.clone() };
    let mut timer = Timer::start("fleet");
    remove_plain_stack(&cluster).await;
    delete_fleet(&cluster).await?;
    timer.mark("the test bed's node runs nothing of ours");
    let baseline = measured_window(&audit, args.baseline_seconds, async {}).await?;
    timer.mark("baseline");

    let work = tempfile::Builder::new().prefix("perf-fleet").tempdir()?;
    let start = audit.mark()?;
    let cpu_start = ControlPlaneCpu::read()?;
    let started = Instant::now();
    let mut fleet = Vec::with_capacity(args.nodes);
    for index in 0..args.nodes {
        fleet.push(SimNode::start(&cluster, &args, work.path(), index).await?);
    }
    timer.mark(&format!("{} nodes started", args.nodes));
    let current = wait_current(&cluster, &fleet, false).await?;
    let startup_seconds = started.elapsed().as_secs_f64();
    timer.mark("every node current");
    tokio::time::sleep(Duration::from_secs(args.settle_seconds)).await;
    let startup = audit.counted_since(&start)?;
    let startup_cpu = ControlPlaneCpu::read()?.since(&cpu_start);
    let resident_mib = fleet_resident_mib(&fleet);

    let idle = measured_window(&audit, args.idle_seconds, async {}).await?;
    timer.mark("idle");

    let churn = measured_window(&audit, args.churn_seconds, async {
        for round in 0..args.churn_seconds / 10 {
            let started = Instant::now();
            for node in &fleet {
                if let Err(error) = node.set_fault(round % 2 == 0) {
                    eprintln!("perf-fleet: {error:#}");
                }
            }
            tokio::time::sleep(Duration::from_secs(10).saturating_sub(started.elapsed())).await;
        }
    })
    .await?;
    for node in &fleet {
        node.set_fault(false)?;
    }
    wait_current(&cluster, &fleet, false).await?;
    timer.mark("churn");

    let restart = restart_window(&cluster, &audit, &fleet).await?;
    timer.mark("API server restart");

    let log_tail = fleet.first().map(SimNode::logs).unwrap_or_default();
    drop(fleet);
    delete_fleet(&cluster).await?;
    deploy_910b_pool(&cluster, &mut timer).await;
    timer.mark("fleet removed, the 910B pool deployed again");

    Ok(json!({
        "kubernetes": version,
        "nodes": args.nodes,
        "node": {"host": SAMPLE, "chips": CHIPS, "daemons": ["ascend-device-plugin --volcano --node-events",
            "ascend-node-labeller", "ascend-dra-driver"]},
        "daemons_resident_mib": resident_mib,
        "baseline": baseline,
        "startup": {
            "seconds_until_current": startup_seconds,
            "current": current,
            "settle_seconds": args.settle_seconds,
            "requests": startup.to_json(None),
            "cpu": startup_cpu.to_json(None),
        },
        "idle": idle,
        "churn": churn,
        "apiserver_restart": restart,
        "first_node_log_tail": log_tail.lines().rev().take(20).collect::<Vec<_>>(),
    }))
}

/// One simulated node: its fake host, its kubelet peers and its three daemons (stopped on drop).
struct SimNode {
    name: String,
    overlay: PathBuf,
    _plugin_kubelet: ascend_deviceplugin::fake_kubelet::FakeKubelet,
    _dra_kubelet: dra_kubelet_plugin::fake_kubelet::FakeKubelet,
    daemons: Vec<Daemon>,
}

impl SimNode {
    async fn start(cluster: &Cluster, args: &Args, work: &Path, index: usize) -> Result<SimNode> {
        let name = format!("fleet-{index:03}");
        let nodes: Api<Node> = Api::all(cluster.client());
        let node: Node = serde_json::from_value(json!({
            "metadata": {"name": name, "labels": {SIMULATED: "true"}},
            "spec": {"taints": [
                {"key": SIMULATED, "value": "true", "effect": "NoSchedule"},
                {"key": SIMULATED, "value": "true", "effect": "NoExecute"},
            ]},
        }))?;
        nodes.create(&PostParams::default(), &node).await.with_context(|| format!("create Node {name}"))?;

        let directory = work.join(&name);
        let sample = dcmi_sim::samples::by_name(SAMPLE).ok_or_else(|| anyhow!("dcmi-sim has no sample {SAMPLE}"))?;
        let topology: Topology = sample.topology()?;
        let options = FakeHostOptions { library: args.library.clone(), ..FakeHostOptions::default() };
        let host = FakeHost::build(&topology, &directory.join("host"), &options)?;
        let overlay = directory.join("overlay.toml");
        write_overlay(&overlay, &Overlay::default())?;
        let plugin_dir = directory.join("device-plugins");
        std::fs::create_dir_all(&plugin_dir)?;
        let plugin_kubelet = ascend_deviceplugin::fake_kubelet::FakeKubelet::start(&plugin_dir).await?;
        let registry = directory.join("plugins_registry");
        let dra_kubelet = dra_kubelet_plugin::fake_kubelet::FakeKubelet::start(&registry);

        let kubeconfig = Cluster::admin_kubeconfig();
        let envs = [
            ("KUBECONFIG", kubeconfig.as_path()),
            ("DCMI_SIM_CONFIG", host.topology.as_path()),
            ("DCMI_SIM_OVERLAY", overlay.as_path()),
        ];
        let (library, host_root) = (host.library.display(), host.root.display());
        let node_name = format!("--node-name={name}");
        let skip_check = "--skip-library-ownership-check".to_owned();
        let plugin = vec![
            node_name.clone(),
            skip_check.clone(),
            format!("--dcmi-library={library}"),
            format!("--host-root={host_root}"),
            format!("--plugin-dir={}", plugin_dir.display()),
            format!("--listen=127.0.0.1:{}", free_port()?),
            "--volcano".to_owned(),
            "--node-events".to_owned(),
        ];
        // The labeller spells the library flag `--library`.
        let labeller = vec![
            node_name.clone(),
            skip_check.clone(),
            format!("--library={library}"),
            format!("--host-root={host_root}"),
        ];
        let dra = vec![
            node_name,
            skip_check,
            format!("--dcmi-library={library}"),
            format!("--host-root={host_root}"),
            format!("--driver-name={DRA_DRIVER}"),
            format!("--registry-dir={}", registry.display()),
            format!("--plugins-dir={}", directory.join("plugins").display()),
            format!("--cdi-dir={}", directory.join("cdi").display()),
            format!("--listen=127.0.0.1:{}", free_port()?),
        ];
        let release = &args.release_dir;
        let daemons = vec![
            Daemon::spawn(&release.join("ascend-device-plugin"), &plugin, &envs)?,
            Daemon::spawn(&release.join("ascend-node-labeller"), &labeller, &envs)?,
            Daemon::spawn(&release.join("ascend-dra-driver"), &dra, &envs)?,
        ];
        Ok(SimNode { name, overlay, _plugin_kubelet: plugin_kubelet, _dra_kubelet: dra_kubelet, daemons })
    }

    /// Raises or clears the fault of chip [`FAULTY_LOGIC_ID`] in the simulator's overlay.
    fn set_fault(&self, faulty: bool) -> Result<()> {
        let overlay = Overlay { chips: vec![chip_fault(FAULTY_LOGIC_ID, faulty)], injections: Vec::new() };
        write_overlay(&self.overlay, &overlay).with_context(|| format!("{}: overlay", self.name))
    }

    /// The daemons' stderr, for a failure's message.
    fn logs(&self) -> String {
        self.daemons.iter().map(Daemon::log).collect::<Vec<_>>().join("\n")
    }
}

/// What the API server holds for each simulated node.
#[derive(Debug, Default, Clone, Copy)]
struct NodeState {
    device_info: bool,
    device_info_unhealthy: bool,
    slice_devices: usize,
    slice_tainted: bool,
    labelled: bool,
}

impl NodeState {
    fn current(&self, faulty: bool) -> bool {
        self.device_info
            && self.device_info_unhealthy == faulty
            && self.slice_devices == CHIPS
            && self.slice_tainted == faulty
            && self.labelled
    }
}

/// The state of every simulated node, from three LISTs.
async fn fleet_state(cluster: &Cluster) -> Result<BTreeMap<String, NodeState>> {
    let mut states: BTreeMap<String, NodeState> = BTreeMap::new();
    let nodes: Api<Node> = Api::all(cluster.client());
    for node in nodes.list(&ListParams::default().labels(SIMULATED)).await? {
        let labels = node.metadata.labels.unwrap_or_default();
        let state = states.entry(node.metadata.name.unwrap_or_default()).or_default();
        state.labelled = labels.get(CHIP_COUNT_LABEL).map(String::as_str) == Some("8");
    }
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), DEVICE_INFO_NAMESPACE);
    for map in maps.list(&ListParams::default()).await? {
        let name = map.metadata.name.as_deref().unwrap_or_default();
        let Some(state) = name.strip_prefix(DEVICE_INFO_PREFIX).and_then(|node| states.get_mut(node)) else {
            continue;
        };
        state.device_info = true;
        let unhealthy = device_list(&map, &format!("{RESOURCE}-Unhealthy"));
        state.device_info_unhealthy = unhealthy.is_ok_and(|chips| !chips.is_empty());
    }
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    for slice in slices.list(&ListParams::default()).await? {
        let Some(state) = slice.spec.node_name.as_ref().and_then(|node| states.get_mut(node)) else { continue };
        let devices = slice.spec.devices.unwrap_or_default();
        state.slice_devices += devices.len();
        state.slice_tainted |= serde_json::to_string(&devices)?.contains(UNHEALTHY_TAINT_KEY);
    }
    Ok(states)
}

/// Waits until every node of the fleet is current (with or without the fault); returns how many were current when
/// the wait ended and how long it took.
async fn wait_current(cluster: &Cluster, fleet: &[SimNode], faulty: bool) -> Result<serde_json::Value> {
    let started = Instant::now();
    loop {
        let states = fleet_state(cluster).await;
        if let Ok(states) = &states {
            let current = fleet.iter().filter(|node| states.get(&node.name).is_some_and(|s| s.current(faulty))).count();
            if current == fleet.len() {
                return Ok(json!({"nodes": current, "seconds": started.elapsed().as_secs_f64()}));
            }
            if started.elapsed() > CURRENT_LIMIT {
                let stale: Vec<_> = fleet
                    .iter()
                    .filter(|node| !states.get(&node.name).is_some_and(|s| s.current(faulty)))
                    .take(3)
                    .map(|node| format!("{} {:?}\n{}", node.name, states.get(&node.name), node.logs()))
                    .collect();
                bail!("{current} of {} nodes current after {CURRENT_LIMIT:?}; e.g.\n{}", fleet.len(), stale.join("\n"));
            }
        }
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Our requests and the control plane's CPU over a window of `seconds` while `during` runs.
async fn measured_window(
    audit: &AuditLog,
    seconds: u64,
    during: impl std::future::Future<Output = ()>,
) -> Result<serde_json::Value> {
    let cpu = ControlPlaneCpu::read()?;
    let counts = window(audit, Duration::from_secs(seconds), during).await?;
    let cpu = ControlPlaneCpu::read()?.since(&cpu);
    Ok(json!({"requests": counts.to_json(Some(seconds)), "cpu": cpu.to_json(Some(seconds))}))
}

/// The API server stopped for [`OUTAGE_SECONDS`] while a chip of every node faults; our requests from the stop to a
/// minute after it is ready (reconnection apart from the fault's writes), the new API server's CPU time in that
/// minute, and the time until every node is current.
async fn restart_window(cluster: &Cluster, audit: &AuditLog, fleet: &[SimNode]) -> Result<serde_json::Value> {
    let mark = audit.mark()?;
    let script = cluster.repository().join("scripts/cluster/control_plane.sh");
    let restart = tokio::task::spawn_blocking(move || {
        std::process::Command::new("bash").arg(script).args(["restart-apiserver", &OUTAGE_SECONDS.to_string()]).output()
    });
    let faults = async {
        tokio::time::sleep(Duration::from_secs(OUTAGE_SECONDS / 2)).await;
        for node in fleet {
            node.set_fault(true)?;
        }
        anyhow::Ok(())
    };
    let (restarted, faults) = tokio::join!(restart, faults);
    faults?;
    let restarted = restarted?.context("control_plane.sh restart-apiserver")?;
    anyhow::ensure!(restarted.status.success(), "restart-apiserver: {}", String::from_utf8_lossy(&restarted.stderr));
    let ready_at = Instant::now();
    let cpu = ControlPlaneCpu::read()?;
    let current = wait_current(cluster, fleet, true).await?;
    tokio::time::sleep(Duration::from_secs(60).saturating_sub(ready_at.elapsed())).await;
    let counts: Counts = audit.counted_since(&mark)?;
    let cpu = ControlPlaneCpu::read()?.since(&cpu);
    for node in fleet {
        node.set_fault(false)?;
    }
    Ok(json!({
        "outage_seconds": OUTAGE_SECONDS,
        "first_minute": counts.to_json(Some(60)),
        "reconnection_requests": counts.of_verbs(&["watch", "list", "get"]),
        "write_requests": counts.of_verbs(&["create", "update", "patch", "delete"]),
        "cpu_first_minute": cpu.to_json(Some(60)),
        "current_after": current,
    }))
}

/// Deletes the simulated Nodes (their ResourceSlices go with them: the DRA driver makes the Node their owner) and
/// their device-info ConfigMaps.
async fn delete_fleet(cluster: &Cluster) -> Result<()> {
    let nodes: Api<Node> = Api::all(cluster.client());
    nodes.delete_collection(&DeleteParams::default(), &ListParams::default().labels(SIMULATED)).await?;
    let maps: Api<ConfigMap> = Api::namespaced(cluster.client(), DEVICE_INFO_NAMESPACE);
    for map in maps.list(&ListParams::default()).await? {
        let name = map.metadata.name.unwrap_or_default();
        if name.starts_with(&format!("{DEVICE_INFO_PREFIX}fleet-")) {
            maps.delete(&name, &DeleteParams::default()).await?;
        }
    }
    Ok(())
}

/// The daemons' resident memory together, MiB.
fn fleet_resident_mib(fleet: &[SimNode]) -> f64 {
    let kib: u64 = fleet.iter().flat_map(|node| &node.daemons).filter_map(|d| d.resident_kib().ok()).map(|k| k.0).sum();
    kib as f64 / 1024.0
}

/// Fails early, with what to do, when this process may open too few files for the fleet's kubelet peers and the
/// daemons' pipes.
fn check_open_file_limit(nodes: usize) -> Result<()> {
    let limits = std::fs::read_to_string("/proc/self/limits").context("/proc/self/limits")?;
    let soft = limits
        .lines()
        .find(|line| line.starts_with("Max open files"))
        .and_then(|line| line.split_whitespace().nth(3))
        .and_then(|value| value.parse::<usize>().ok())
        .unwrap_or(usize::MAX);
    if soft < nodes * 16 {
        bail!("the open-file limit is {soft}, {nodes} nodes need {}: raise it (ulimit -n 65536)", nodes * 16);
    }
    Ok(())
}

/// CPU time of the API server and etcd (their pid files in scripts/cluster/lib.sh's `CLUSTER_RUN`).
#[derive(Debug, Clone, Copy)]
struct ControlPlaneCpu {
    apiserver_pid: u32,
    apiserver_seconds: f64,
    etcd_seconds: f64,
}

impl ControlPlaneCpu {
    fn read() -> Result<ControlPlaneCpu> {
        let (apiserver_pid, apiserver_seconds) = process_cpu("kube-apiserver")?;
        let (_, etcd_seconds) = process_cpu("etcd")?;
        Ok(ControlPlaneCpu { apiserver_pid, apiserver_seconds, etcd_seconds })
    }

    /// The CPU time since `earlier`; a restarted API server's counts from its start.
    fn since(&self, earlier: &ControlPlaneCpu) -> ControlPlaneCpu {
        let base = if earlier.apiserver_pid == self.apiserver_pid { earlier.apiserver_seconds } else { 0.0 };
        ControlPlaneCpu {
            apiserver_pid: self.apiserver_pid,
            apiserver_seconds: self.apiserver_seconds - base,
            etcd_seconds: self.etcd_seconds - earlier.etcd_seconds,
        }
    }

    /// CPU seconds, and over a window of `seconds` the share of one core.
    fn to_json(self, seconds: Option<u64>) -> serde_json::Value {
        let share = |cpu: f64| seconds.map(|seconds| cpu / seconds as f64);
        json!({
            "apiserver_cpu_seconds": self.apiserver_seconds, "apiserver_cores": share(self.apiserver_seconds),
            "etcd_cpu_seconds": self.etcd_seconds, "etcd_cores": share(self.etcd_seconds),
        })
    }
}

/// The pid of a test bed daemon and its CPU time (user + system) in seconds.
fn process_cpu(name: &str) -> Result<(u32, f64)> {
    let pid_file = Cluster::state_dir().join("run").join(format!("{name}.pid"));
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .with_context(|| format!("{}", pid_file.display()))?
        .trim()
        .parse()
        .with_context(|| format!("{}", pid_file.display()))?;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).with_context(|| format!("{name} ({pid})"))?;
    // Fields after the command name, which may hold spaces: state is the 1st, utime the 12th, stime the 13th.
    let fields: Vec<&str> =
        stat.rsplit_once(')').map(|(_, rest)| rest.split_whitespace().collect()).unwrap_or_default();
    let ticks = |index: usize| fields.get(index).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    Ok((pid, (ticks(11) + ticks(12)) / clock_ticks_per_second()))
}

/// `getconf CLK_TCK` (100 on Linux almost everywhere).
fn clock_ticks_per_second() -> f64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|output| String::from_utf8_lossy(&output.stdout).trim().parse().ok())
        .unwrap_or(100.0)
}
