//! `perf-dra-beside-huawei`: our DRA driver and Huawei's (mind-cluster `component/ascend-dynamic-resource-allocation`)
//! side by side on the real-cluster test bed, for section 11 of `benches/run.sh`.
//!
//! Huawei's driver is first deployed as its installation does (cluster-tests/manifests/huawei-dra-driver.yaml, the
//! image scripts/cluster/up.sh packs from the comparison tier's build) on the test node's simulated 910B host, where
//! the API server rejects its ResourceSlice (its device names are not RFC 1123 labels: see
//! `ascend_cluster_tests::stack::huawei_dra`); what the API server answered goes into the figures. It is then measured
//! where it can run: as a process on a simulated Atlas 950 host of its own (`dcmi-sim fake-host --topology
//! atlas-950-8` in a private mount namespace, registered with the same kubelet), whose devices it names validly.
//!
//! Both drivers are named `npu.huawei.com`, so the node runs one at a time: rounds alternate ours (from
//! deploy/kubernetes/dra.yaml, on the node's 910B host), Huawei's, ours ..., and each round of a driver measures:
//!
//! - prepare latency as the kubelet sees it, for a claim of one chip and one of eight: the kubelet's own timer of its
//!   `NodePrepareResources` call to the driver (the `dra_grpc_operations_duration_seconds` histogram of its
//!   `/metrics`, read with the API server's client certificate for kubelets). The histogram's buckets are too coarse
//!   for percentiles, so its `_sum` and `_count` are read before each pod is created and after it runs: one pod, one
//!   call, and the difference of the sums is that call's time. The same reading for both drivers, whatever their own
//!   logs say;
//! - pod creation to Running for the same pods (the create request until the watch reports the pod Running: the
//!   claim made from the template, allocated by the scheduler, prepared, and the container started with its chips);
//! - the driver's resident memory (`VmRSS`, and the peak `VmHWM`, of its process) after the round's pods;
//! - fault to taint: a chip fault written to the simulator's overlay, until a device of the node's ResourceSlices
//!   carries a taint (within `--fault-limit` seconds; a driver that never taints is reported as such).
//!
//! Each pod is deleted, its claim gone, before the next is created; the first pods of each size in a round warm the
//! caches and are not counted. Writes the figures as JSON to `--out`; the node is left on the device plugin's pool,
//! as the cluster tests leave it, and the overlay as it was found.

#![forbid(unsafe_code)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ascend_benches::figures_file::{measure_into, summary};
use ascend_benches::pod_start::{claim_pod, claim_template, replace_template, time_to_running};
use ascend_cluster_tests::stack::huawei_dra::HostDriver;
use ascend_cluster_tests::stack::{
    chip_fault, delete_pod, deploy_910b_pool, deploy_dra, huawei_dra, release_dir, remove_dra, test_namespace,
    wait_claims_gone, DRA_CLASS_910B, DRA_DRIVER, NAMESPACE, SYSTEM,
};
use ascend_cluster_tests::{Cluster, Timer, NODE_NAME};
use clap::Parser;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::{ResourceClaimTemplate, ResourceSlice};
use kube::api::{Api, ListParams};
use serde_json::json;

/// The kubelet's histogram of its gRPC calls to DRA drivers.
const PREPARE_METRIC: &str = "dra_grpc_operations_duration_seconds";
/// The kubelet's port (scripts/cluster/config/kubelet.yaml).
const KUBELET_PORT: u16 = 10250;
/// The claim sizes timed: one chip, and all eight of the node.
const SIZES: [u32; 2] = [1, 8];

/// Our DRA driver and Huawei's, in turn, on the test bed.
#[derive(Debug, Clone, Parser)]
struct Args {
    /// Where the figures go.
    #[arg(long)]
    out: PathBuf,
    /// Rounds of each driver (ours, Huawei's, ours ...).
    #[arg(long, default_value_t = 3)]
    rounds: usize,
    /// Timed pods of each claim size per round.
    #[arg(long, default_value_t = 5)]
    pods: usize,
    /// Pods of each size per round started first and not counted.
    #[arg(long, default_value_t = 1)]
    warmup: usize,
    /// How long a fault may go without a taint before the round says the driver did not taint, in seconds.
    #[arg(long, default_value_t = 30)]
    fault_limit: u64,
    /// The directory of Huawei's programs (scripts/peers/build.sh prints it), holding `ascend-dra`.
    #[arg(long)]
    huawei_bin: PathBuf,
    /// The directory of our release build, holding `dcmi-sim` and `libdcmi_sim.so` (default: the test bed's).
    #[arg(long)]
    release_dir: Option<PathBuf>,
    /// The simulated host Huawei's driver runs on (a topology of dcmi-sim/topologies).
    #[arg(long, default_value = "atlas-950-8")]
    huawei_host: String,
}

#[tokio::main]
async fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone();
    measure_into(&out, measure(args)).await
}

/// One of the two drivers.
#[derive(Debug, Clone, Copy)]
enum Driver {
    Ours,
    Huawei,
}

impl Driver {
    /// Its key in the figures.
    fn key(self) -> &'static str {
        match self {
            Self::Ours => "ours",
            Self::Huawei => "huawei",
        }
    }

    /// The DeviceClass of its whole chips.
    fn class(self) -> &'static str {
        match self {
            Self::Ours => DRA_CLASS_910B,
            Self::Huawei => huawei_dra::DEVICE_CLASS,
        }
    }

    /// The file name of its program, as its process runs it.
    fn program(self) -> &'static str {
        match self {
            Self::Ours => "ascend-dra-driver",
            Self::Huawei => "ascend-dra",
        }
    }

    /// Starts it on a node that runs no other driver of chips: ours from its manifest, Huawei's in its simulated
    /// host.
    async fn start(self, cluster: &Cluster, timer: &mut Timer, huawei: &HuaweiHost) -> Running {
        match self {
            Self::Ours => {
                deploy_dra(cluster, timer).await;
                Running::Ours
            }
            Self::Huawei => {
                let _ = cluster.try_kubectl(&["delete", "namespace", SYSTEM, "--wait=true", "--timeout=120s"]);
                let driver = HostDriver::start(cluster, &huawei.program, &huawei.root, &huawei.log).await;
                timer.mark("Huawei's DRA driver running, 8 devices published");
                Running::Huawei(driver)
            }
        }
    }
}

/// Where Huawei's driver runs: its program, its simulated host, its log.
#[derive(Debug, Clone)]
struct HuaweiHost {
    program: PathBuf,
    root: PathBuf,
    log: PathBuf,
}

/// A driver running on the node.
enum Running {
    Ours,
    Huawei(HostDriver),
}

impl Running {
    /// The simulator's overlay its chips follow.
    fn overlay(&self) -> PathBuf {
        match self {
            Self::Ours => host_overlay(),
            Self::Huawei(driver) => driver.overlay(),
        }
    }

    /// Removes it with every claim it prepared, then its checkpoint, which the other driver refuses.
    async fn stop(self, cluster: &Cluster) {
        match self {
            Self::Ours => {
                remove_dra(cluster).await;
                huawei_dra::remove_checkpoint();
            }
            Self::Huawei(driver) => driver.stop(cluster).await,
        }
    }
}

/// The simulator's overlay of the test node's host.
fn host_overlay() -> PathBuf {
    Path::new("/").join(dcmi_sim::fake_host::beside_library(dcmi_sim::OVERLAY_FILE_NAME))
}

/// What the rounds of one driver measured.
#[derive(Debug, Default)]
struct Figures {
    /// Prepare latency by claim size.
    prepare: BTreeMap<u32, Vec<Duration>>,
    /// Pod creation to Running by claim size.
    running: BTreeMap<u32, Vec<Duration>>,
    /// Pods whose start took more than one prepare call (a failed call retried): left out of the prepare figures.
    retried: usize,
    /// Resident memory after each round, KiB.
    rss_kib: Vec<u64>,
    /// Peak resident memory after each round, KiB.
    peak_rss_kib: Vec<u64>,
    /// Fault to taint, of the rounds whose fault was tainted.
    fault_to_taint: Vec<Duration>,
    /// Rounds whose fault saw no taint within the limit.
    untainted: usize,
}

async fn measure(args: Args) -> Result<serde_json::Value> {
    let program = args.huawei_bin.join("ascend-dra");
    if !program.is_file() {
        bail!("no {} (scripts/peers/build.sh builds it from a mind-cluster tree)", program.display());
    }
    if let Some(why) = huawei_dra::image_missing() {
        bail!("{why}");
    }
    let cluster = Cluster::connect().await;
    let version = cluster.client().apiserver_version().await?.git_version;
    let release = args.release_dir.clone().unwrap_or_else(|| release_dir(&cluster));
    let work = tempfile::tempdir().context("a scratch directory")?;
    let root = work.path().join("host");
    let made = std::process::Command::new(release.join("dcmi-sim"))
        .args(["fake-host", "--topology", &args.huawei_host, "--root"])
        .arg(&root)
        .arg("--library")
        .arg(release.join("libdcmi_sim.so"))
        .output()
        .context("run dcmi-sim fake-host")?;
    if !made.status.success() {
        bail!("dcmi-sim fake-host: {}", String::from_utf8_lossy(&made.stderr).trim());
    }
    let huawei = HuaweiHost { program, root, log: work.path().join("ascend-dra.log") };
    let overlay_found = std::fs::read(host_overlay()).ok();

    // The rounds in a task of their own: a panic there (a wait that timed out) still leaves the node as found.
    let task = tokio::spawn(rounds(args.clone(), huawei));
    let result = task.await;
    let mut timer = Timer::start("DRA beside Huawei's: the node as found");
    match &overlay_found {
        Some(bytes) => std::fs::write(host_overlay(), bytes).context("restore the overlay")?,
        None => cluster.set_overlay(Vec::new()),
    }
    Running::Ours.stop(&cluster).await;
    huawei_dra::remove_claim_specs();
    let _ = cluster.try_kubectl(&["delete", "deviceclass", huawei_dra::DEVICE_CLASS, "--ignore-not-found"]);
    deploy_910b_pool(&cluster, &mut timer).await;
    let (figures, daemon_set) = result.map_err(|error| anyhow::anyhow!("the rounds stopped: {error}"))??;

    let mut sides = serde_json::Map::new();
    for (key, figures) in figures {
        sides.insert(key.to_owned(), side_json(key, figures, args.fault_limit)?);
    }
    Ok(json!({
        "kubernetes": version,
        "rounds": args.rounds,
        "pods": args.pods,
        "warmup": args.warmup,
        "prepare_source": format!("the kubelet's {PREPARE_METRIC} (NodePrepareResources): _sum difference around each \
                                   pod"),
        "fault_limit_s": args.fault_limit,
        "huawei_host": args.huawei_host,
        "huawei_on_the_node": match daemon_set {
            Ok(()) => json!({"published": true}),
            Err(answer) => json!({"published": false, "api_server": answer}),
        },
        "sides": sides,
    }))
}

/// The JSON of one driver's figures.
fn side_json(key: &str, figures: Figures, fault_limit: u64) -> Result<serde_json::Value> {
    let mut side = serde_json::Map::new();
    for (size, samples) in figures.prepare {
        side.insert(format!("prepare_{size}"), summary(samples, &format!("{key}'s prepares of {size} chips"))?);
    }
    for (size, samples) in figures.running {
        side.insert(format!("running_{size}"), summary(samples, &format!("{key}'s pod starts with {size} chips"))?);
    }
    side.insert("prepare_retried".to_owned(), json!(figures.retried));
    side.insert("rss_kib".to_owned(), json!(figures.rss_kib));
    side.insert("peak_rss_kib".to_owned(), json!(figures.peak_rss_kib));
    side.insert("faults_untainted".to_owned(), json!(figures.untainted));
    let tainted = if figures.fault_to_taint.is_empty() {
        json!({"count": 0, "none_within_s": fault_limit})
    } else {
        summary(figures.fault_to_taint, &format!("{key}'s fault-to-taint times"))?
    };
    side.insert("fault_to_taint".to_owned(), tainted);
    Ok(serde_json::Value::Object(side))
}

/// Huawei's DaemonSet on the node once, then the rounds, alternating the drivers: the figures by driver, and what
/// the API server answered the DaemonSet.
async fn rounds(args: Args, huawei: HuaweiHost) -> Result<(BTreeMap<&'static str, Figures>, Result<(), String>)> {
    let cluster = Cluster::connect().await;
    let cluster = &cluster;
    let mut timer = Timer::start("DRA beside Huawei's");
    let daemon_set = huawei_dra::try_daemon_set(cluster).await;
    println!("Huawei's DaemonSet on the node: {daemon_set:?}");
    timer.mark("Huawei's DaemonSet on the node");
    let mut figures: BTreeMap<&'static str, Figures> = BTreeMap::new();
    for round in 0..args.rounds {
        for driver in [Driver::Ours, Driver::Huawei] {
            let running = driver.start(cluster, &mut timer, &huawei).await;
            test_namespace(cluster).await;
            let figures = figures.entry(driver.key()).or_default();
            for size in SIZES {
                replace_template(cluster, &claim_template(&template_name(size), driver.class(), size)?).await?;
            }
            pods(cluster, &args, driver, round, figures).await?;
            timer.mark(&format!("{} round {round}: pods", driver.key()));
            let (rss, peak) = resident_kib(driver.program())?;
            println!("{} round {round}: VmRSS {rss} KiB, VmHWM {peak} KiB", driver.key());
            figures.rss_kib.push(rss);
            figures.peak_rss_kib.push(peak);
            match fault_to_taint(cluster, &running.overlay(), Duration::from_secs(args.fault_limit)).await? {
                Some(elapsed) => figures.fault_to_taint.push(elapsed),
                None => figures.untainted += 1,
            }
            timer.mark(&format!("{} round {round}: fault", driver.key()));
            let templates: Api<ResourceClaimTemplate> = Api::namespaced(cluster.client(), NAMESPACE);
            for size in SIZES {
                let _ = templates.delete(&template_name(size), &Default::default()).await;
            }
            wait_unprepared().await?;
            running.stop(cluster).await;
        }
    }
    Ok((figures, daemon_set))
}

/// The ResourceClaimTemplate of claims of `size` chips.
fn template_name(size: u32) -> String {
    format!("bench-{size}-npu")
}

/// One round's pods of a driver: `warmup + pods` of each size, the sizes alternating, each timed and its prepare call
/// read from the kubelet's metrics, then deleted with its claim before the next.
async fn pods(cluster: &Cluster, args: &Args, driver: Driver, round: usize, figures: &mut Figures) -> Result<()> {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    for index in 0..args.warmup + args.pods {
        for size in SIZES {
            let name = format!("{}-{size}-r{round}-{index}", driver.key());
            delete_pod(cluster, &name).await;
            let before = prepare_calls()?;
            let running = time_to_running(&pods, &name, &claim_pod(&name, &template_name(size))).await?;
            let after = prepare_calls()?;
            delete_pod(cluster, &name).await;
            wait_claims_gone(cluster).await;
            wait_unprepared().await?;
            if index < args.warmup {
                continue;
            }
            figures.running.entry(size).or_default().push(running);
            let calls = after.count - before.count;
            if calls == 1.0 {
                let prepare = Duration::from_secs_f64((after.sum - before.sum).max(0.0));
                println!("{name}: prepare {:.2} ms", prepare.as_secs_f64() * 1e3);
                figures.prepare.entry(size).or_default().push(prepare);
            } else {
                println!("{name}: {calls} prepare calls, left out of the prepare figures");
                figures.retried += 1;
            }
        }
    }
    Ok(())
}

/// Waits until the kubelet holds no claim prepared: the last pod's claim unprepared (its CDI spec gone), so that
/// the next pod never meets it. The kubelet unprepares after the pod is gone from the API server, at its own pace.
async fn wait_unprepared() -> Result<()> {
    let started = Instant::now();
    while prepare_calls()?.in_use > 0.0 {
        if started.elapsed() > Duration::from_secs(90) {
            bail!("the kubelet still holds a claim prepared 90 s after its pod and claim were deleted");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(())
}

/// The `_sum` and `_count` of the kubelet's histogram of `NodePrepareResources` calls to our driver's name, and the
/// claims the kubelet holds prepared (`dra_resource_claims_in_use`, every driver).
#[derive(Debug, Clone, Copy)]
struct Calls {
    sum: f64,
    count: f64,
    in_use: f64,
}

/// Reads [`Calls`] from the kubelet's `/metrics`, with the client certificate the API server uses for the kubelet
/// (the API server's node proxy refuses this node's loopback address).
fn prepare_calls() -> Result<Calls> {
    let pki = Cluster::state_dir().join("pki");
    let url = format!("https://{NODE_NAME}:{KUBELET_PORT}/metrics");
    let output = std::process::Command::new("curl")
        .args(["--silent", "--show-error", "--fail", "--max-time", "10", "--cacert"])
        .arg(pki.join("ca.crt"))
        .arg("--cert")
        .arg(pki.join("apiserver-kubelet-client.crt"))
        .arg("--key")
        .arg(pki.join("apiserver-kubelet-client.key"))
        .arg(&url)
        .output()
        .context("run curl")?;
    if !output.status.success() {
        bail!("curl {url}: {}", String::from_utf8_lossy(&output.stderr).trim());
    }
    prepare_calls_in(&String::from_utf8_lossy(&output.stdout)).with_context(|| format!("the kubelet's {url}"))
}

/// [`Calls`] in a Prometheus text exposition: the `_sum` and `_count` samples of [`PREPARE_METRIC`] for
/// `NodePrepareResources` of [`DRA_DRIVER`] (zero when the kubelet has made no call yet), and the claims in use.
fn prepare_calls_in(body: &str) -> Result<Calls> {
    let mut calls = Calls { sum: 0.0, count: 0.0, in_use: 0.0 };
    for line in body.lines() {
        let Some((series, value)) = line.rsplit_once(' ') else { continue };
        if series.starts_with("dra_resource_claims_in_use{") && series.contains("driver_name=\"<any>\"") {
            calls.in_use = value.parse::<f64>().with_context(|| format!("not a sample value: {line}"))?;
            continue;
        }
        let field = if series.contains(&format!("{PREPARE_METRIC}_sum{{")) {
            &mut calls.sum
        } else if series.contains(&format!("{PREPARE_METRIC}_count{{")) {
            &mut calls.count
        } else {
            continue;
        };
        if !series.contains("NodePrepareResources") || !series.contains(&format!("driver_name=\"{DRA_DRIVER}\"")) {
            continue;
        }
        *field += value.parse::<f64>().with_context(|| format!("not a sample value: {line}"))?;
    }
    Ok(calls)
}

/// `VmRSS` and `VmHWM` (KiB) of the one process running the program `program`; an error when there is none or more.
fn resident_kib(program: &str) -> Result<(u64, u64)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").context("read /proc")?.flatten() {
        let Ok(exe) = std::fs::read_link(entry.path().join("exe")) else { continue };
        if exe.file_name().is_some_and(|name| name == program) {
            found.push(entry.path());
        }
    }
    let [process] = found.as_slice() else {
        bail!("{} processes run {program}, not one: {found:?}", found.len());
    };
    let status = std::fs::read_to_string(process.join("status")).with_context(|| format!("{process:?}/status"))?;
    let field = |name: &str| -> Result<u64> {
        let line = status.lines().find(|line| line.starts_with(name)).with_context(|| format!("no {name}"))?;
        let kib = line.split_whitespace().nth(1).with_context(|| format!("no value in {line:?}"))?;
        kib.parse().with_context(|| format!("not a number: {line:?}"))
    };
    Ok((field("VmRSS:")?, field("VmHWM:")?))
}

/// Raises a fault on the chip of logic id 0 in the simulator's `overlay` and returns how long until a device of the
/// node's slices carries a taint; `None` when none does within `limit`. Clears the fault again and waits until no
/// device is tainted.
async fn fault_to_taint(cluster: &Cluster, overlay: &Path, limit: Duration) -> Result<Option<Duration>> {
    if tainted_devices(cluster).await? > 0 {
        bail!("a device is tainted before the fault was raised");
    }
    let raised = Instant::now();
    write_overlay(overlay, true)?;
    let mut tainted = None;
    while raised.elapsed() < limit {
        if tainted_devices(cluster).await? > 0 {
            tainted = Some(raised.elapsed());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    match tainted {
        Some(elapsed) => println!("fault to taint: {:.0} ms", elapsed.as_secs_f64() * 1e3),
        None => println!("fault to taint: no taint within {} s", limit.as_secs()),
    }
    write_overlay(overlay, false)?;
    let cleared = Instant::now();
    while tainted_devices(cluster).await? > 0 {
        if cleared.elapsed() > Duration::from_secs(60) {
            bail!("a taint stayed a minute after the fault was cleared");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    Ok(tainted)
}

/// Writes the simulator's `overlay`: the chip of logic id 0 faulty, or healthy again.
fn write_overlay(overlay: &Path, faulty: bool) -> Result<()> {
    let chips = dcmi_sim::Overlay { chips: vec![chip_fault(0, faulty)], injections: Vec::new() };
    dcmi_sim::write_overlay(overlay, &chips).with_context(|| format!("write {}", overlay.display()))
}

/// How many devices of the node's `npu.huawei.com` slices carry a taint.
async fn tainted_devices(cluster: &Cluster) -> Result<usize> {
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.context("list ResourceSlices")?;
    Ok(list
        .items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(NODE_NAME))
        .flat_map(|slice| slice.spec.devices.unwrap_or_default())
        .filter(|device| device.taints.as_ref().is_some_and(|taints| !taints.is_empty()))
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepare_calls_are_read_for_our_driver_name_only() {
        // One sample line of the kubelet's histogram: its part, driver, gRPC method, status, value.
        let sample = |part: &str, driver: &str, method: &str, status: &str, value: &str| {
            format!(
                "dra_grpc_operations_duration_seconds_{part}{{driver_name=\"{driver}\",grpc_status_code=\"{status}\",\
                 method_name=\"/k8s.io.kubelet.pkg.apis.dra.v1.DRAPlugin/{method}\"}} {value}\n"
            )
        };
        let ours = "npu.huawei.com";
        let body = [
            "# TYPE dra_grpc_operations_duration_seconds histogram\n".to_owned(),
            sample("bucket", ours, "NodePrepareResources", "OK", "3").replace("\"}", "\",le=\"0.005\"}"),
            sample("sum", ours, "NodePrepareResources", "OK", "0.012"),
            sample("count", ours, "NodePrepareResources", "OK", "3"),
            sample("sum", ours, "NodeUnprepareResources", "OK", "0.5"),
            sample("count", ours, "NodeUnprepareResources", "OK", "2"),
            sample("sum", "other.example.com", "NodePrepareResources", "OK", "9"),
            sample("count", "other.example.com", "NodePrepareResources", "OK", "9"),
            sample("sum", ours, "NodePrepareResources", "Unavailable", "0.003"),
            sample("count", ours, "NodePrepareResources", "Unavailable", "1"),
            "dra_resource_claims_in_use{driver_name=\"<any>\"} 1\n".to_owned(),
            "dra_resource_claims_in_use{driver_name=\"npu.huawei.com\"} 7\n".to_owned(),
        ]
        .concat();
        let calls = prepare_calls_in(&body).expect("calls");
        assert!((calls.sum - 0.015).abs() < 1e-9, "{calls:?}");
        assert!((calls.count - 4.0).abs() < 1e-9, "{calls:?}");
        assert!((calls.in_use - 1.0).abs() < 1e-9, "{calls:?}");
        let bad = sample("count", ours, "NodePrepareResources", "OK", "x");
        assert!(prepare_calls_in(&bad).is_err());
    }
}
