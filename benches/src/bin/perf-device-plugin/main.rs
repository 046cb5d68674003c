//! `perf-device-plugin`: section 5 of `benches/run.sh`, plus the device plugin's resident memory of section 4.
//!
//! Starts the real `ascend-device-plugin` on a fake Atlas 800T A2 host (dcmi-sim, eight 910B chips), registered
//! with the in-process fake kubelet, and measures over the plugin's unix socket:
//!
//! 1. Allocate latency percentiles (one chip per call, calls back to back);
//! 2. fault raised in the simulator → Unhealthy on ListAndWatch, with the driver's fault events (poll interval
//!    30 s, so only the event path can be this fast);
//! 3. the same with events off (`--no-fault-events`) and `--poll-interval`;
//! 4. resident memory after `--load-seconds` of Allocate + GetPreferredAllocation load;
//! 5. time to recover: a restart fault on a free chip of a plugin with `--recovery-mode=inference` until the chip is
//!    listed Healthy again after its reset.
//!
//! Writes the figures as one JSON object to `--out`.

#![forbid(unsafe_code)]

mod allocate_latency;
mod fault_latency;
mod load;
mod recovery_time;

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{anyhow, Context, Result};
use ascend_benches::daemon::{free_port, Daemon};
use ascend_benches::figures_file::{measure_into, summary};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use clap::Parser;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::{write_overlay, Overlay, Topology};

use fault_latency::{ChipTarget, FaultBench};

const SAMPLE: &str = "atlas-800t-a2";
const RESOURCE: &str = "huawei.com/Ascend910";
const DEVICE_PREFIX: &str = "Ascend910";
const EVENT_RUN_POLL_INTERVAL: &str = "30s";
const STARTUP_WAIT: Duration = Duration::from_secs(30);

/// Device plugin latencies and memory on a simulated eight-chip node.
#[derive(Debug, Parser)]
struct Args {
    /// The `ascend-device-plugin` binary.
    #[arg(long)]
    daemon: PathBuf,
    /// The simulator library (default: the one built next to this tool).
    #[arg(long)]
    library: Option<PathBuf>,
    /// Timed Allocate calls.
    #[arg(long, default_value_t = 2000)]
    allocations: usize,
    /// Fault raise/clear repeats per delivery path.
    #[arg(long, default_value_t = 10)]
    fault_repeats: usize,
    /// Health poll interval of the polling run, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    poll_interval_ms: u64,
    /// Seconds of load before the resident memory is read.
    #[arg(long, default_value_t = 60)]
    load_seconds: u64,
    /// File touched when the load starts.
    #[arg(long)]
    ready_file: Option<PathBuf>,
    /// Recoveries timed (each on the next chip).
    #[arg(long, default_value_t = 3)]
    recovery_repeats: usize,
    /// The recovery run's `--recovery-idle`, in milliseconds.
    #[arg(long, default_value_t = 1000)]
    recovery_idle_ms: u64,
    /// Where to write the JSON figures.
    #[arg(long)]
    out: PathBuf,
}

/// The simulated node: a fake host, its overlay file, and its chips as the plugin advertises them.
struct Node {
    _directory: tempfile::TempDir,
    host: FakeHost,
    overlay: PathBuf,
    chips: Vec<ChipTarget>,
}

impl Node {
    fn build(library: Option<PathBuf>) -> Result<Node> {
        let sample = dcmi_sim::samples::by_name(SAMPLE).ok_or_else(|| anyhow!("dcmi-sim has no sample {SAMPLE}"))?;
        let topology: Topology = sample.topology()?;
        let directory = tempfile::Builder::new().prefix("perf-device-plugin").tempdir()?;
        let options = FakeHostOptions { library, ..FakeHostOptions::default() };
        let host = FakeHost::build(&topology, &directory.path().join("host"), &options)?;
        let overlay = directory.path().join("overlay.toml");
        write_overlay(&overlay, &Overlay::default())?;
        let chips = topology
            .chips()
            .map(|found| ChipTarget {
                logic_id: found.chip.logic_id,
                device_id: format!("{DEVICE_PREFIX}-{}", found.chip.phy_id),
            })
            .collect();
        Ok(Node { _directory: directory, host, overlay, chips })
    }

    fn device_ids(&self) -> Vec<String> {
        self.chips.iter().map(|chip| chip.device_id.clone()).collect()
    }

    fn plugin_dir(&self, name: &str) -> Result<PathBuf> {
        let dir = self._directory.path().join(name);
        std::fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
        Ok(dir)
    }

    /// A kubelet in `<dir>/<name>` and a daemon registered with it, once every chip is listed Healthy.
    async fn start(&self, binary: &Path, name: &str, flags: &[&str]) -> Result<(FakeKubelet, Daemon)> {
        let plugin_dir = self.plugin_dir(name)?;
        let kubelet = FakeKubelet::start(&plugin_dir).await?;
        let mut args = vec![
            format!("--plugin-dir={}", plugin_dir.display()),
            format!("--host-root={}", self.host.root.display()),
            format!("--dcmi-library={}", self.host.library.display()),
            "--skip-library-ownership-check".to_owned(),
            format!("--listen=127.0.0.1:{}", free_port()?),
        ];
        args.extend(flags.iter().map(|flag| (*flag).to_owned()));
        let envs = [("DCMI_SIM_CONFIG", &self.host.topology), ("DCMI_SIM_OVERLAY", &self.overlay)];
        let daemon = Daemon::spawn(binary, &args, &envs)?;
        let expected = self.chips.len();
        kubelet
            .wait_until("every chip Healthy", STARTUP_WAIT, |k| {
                let devices = k.devices(RESOURCE).unwrap_or_default();
                devices.len() == expected && devices.iter().all(|device| device.health == "Healthy")
            })
            .await
            .map_err(|error| anyhow!("{error}; daemon log:\n{}", daemon.log()))?;
        Ok((kubelet, daemon))
    }
}

async fn run(args: Args) -> Result<serde_json::Value> {
    let node = Node::build(args.library.clone())?;
    let ids = node.device_ids();

    let poll_flag = format!("--poll-interval={EVENT_RUN_POLL_INTERVAL}");
    let (mut event_kubelet, event_daemon) = node.start(&args.daemon, "plugins-events", &[&poll_flag]).await?;
    let mut client = event_kubelet.plugin_client(RESOURCE).await?;
    let allocate = allocate_latency::measure(&mut client, &ids, args.allocations).await?;
    let bench = FaultBench { kubelet: &event_kubelet, resource: RESOURCE, overlay: &node.overlay, chips: &node.chips };
    let with_events = bench.measure(args.fault_repeats, None).await?;

    let poll_interval = Duration::from_millis(args.poll_interval_ms);
    let polling_flags = ["--no-fault-events".to_owned(), format!("--poll-interval={}ms", args.poll_interval_ms)];
    let polling_refs: Vec<&str> = polling_flags.iter().map(String::as_str).collect();
    let (mut polling_kubelet, polling_daemon) = node.start(&args.daemon, "plugins-polling", &polling_refs).await?;
    let bench =
        FaultBench { kubelet: &polling_kubelet, resource: RESOURCE, overlay: &node.overlay, chips: &node.chips };
    let with_polling = bench.measure(args.fault_repeats, Some(poll_interval)).await?;
    polling_daemon.stop()?;
    polling_kubelet.shutdown().await;

    let (idle_rss, _) = event_daemon.resident_kib()?;
    let load_duration = Duration::from_secs(args.load_seconds);
    let calls = load::run(&mut client, &ids, load_duration, args.ready_file.as_deref()).await?;
    let (rss, high_water) = event_daemon.resident_kib()?;
    event_daemon.stop()?;
    event_kubelet.shutdown().await;
    // Last: its faults would reach the other plugins too (one simulated host), and their clearing waits for a poll.
    let recovery = recover(&node, &args).await?;

    Ok(serde_json::json!({
        "topology": SAMPLE,
        "chips": ids.len(),
        "allocate": summary(allocate, "Allocate")?,
        "fault_events": summary(with_events, "fault with events")?,
        "fault_polling": summary(with_polling, "fault with polling")?,
        "recovery": recovery,
        "poll_interval_ms": args.poll_interval_ms,
        "event_run_poll_interval": EVENT_RUN_POLL_INTERVAL,
        "load": {
            "seconds": args.load_seconds,
            "rpcs": calls,
            "rss_idle_kib": idle_rss,
            "rss_kib": rss,
            "rss_high_water_kib": high_water,
        },
    }))
}

/// The recovery run: its own plugin, with recovery on and an empty PodResources (nothing holds a chip).
async fn recover(node: &Node, args: &Args) -> Result<serde_json::Value> {
    use ascend_deviceplugin::fake_kubelet::FakePodResources;
    let socket = node.plugin_dir("pod-resources")?.join("kubelet.sock");
    let mut pod_resources = FakePodResources::start(&socket, Vec::new())?;
    let flags = [
        "--recovery-mode=inference".to_owned(),
        format!("--recovery-idle={}ms", args.recovery_idle_ms),
        format!("--pod-resources-socket={}", socket.display()),
    ];
    let refs: Vec<&str> = flags.iter().map(String::as_str).collect();
    let (mut kubelet, daemon) = node.start(&args.daemon, "plugins-recovery", &refs).await?;
    let bench = FaultBench { kubelet: &kubelet, resource: RESOURCE, overlay: &node.overlay, chips: &node.chips };
    let measured =
        bench.measure_recoveries(args.recovery_repeats).await.map_err(|e| anyhow!("{e}; log:\n{}", daemon.log()));
    daemon.stop()?;
    kubelet.shutdown().await;
    pod_resources.shutdown().await;
    write_overlay(&node.overlay, &Overlay::default())?;
    let measured = measured?;
    Ok(serde_json::json!({
        "idle_ms": args.recovery_idle_ms,
        "unhealthy": summary(measured.iter().map(|r| r.unhealthy).collect(), "recovery: fault to Unhealthy")?,
        "back": summary(measured.iter().map(|r| r.back).collect(), "recovery: fault to Healthy again")?,
    }))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone();
    measure_into(&out, run(args)).await
}
