//! `perf-dra-driver`: the "DRA driver" section of `benches/run.sh` (issue 15's figures).
//!
//! Starts the real `ascend-dra-driver` binary on a fake Atlas 800T A2 host (dcmi-sim, eight 910B chips) as
//! `programs/tests/dra_driver_e2e.rs` does: the fake API server holds the Node and the ResourceClaims (their
//! allocation written as the scheduler would) and receives the ResourceSlices; the in-process DRA kubelet peer
//! registers the driver and calls it over the real unix sockets. The driver runs with its default health flags
//! (5 s poll interval, fault events on). Measured:
//!
//! 1. `NodePrepareResources` latency, as the kubelet sees it, for claims of one chip and of eight chips (no vNPU):
//!    the driver reads the claim from the API server, plans, writes the CDI spec and the checkpoint, answers. Each
//!    prepare is followed by an unprepare, timed too;
//! 2. fault raised in the simulator's overlay → taint in the published ResourceSlice, and recovery → taint gone;
//! 3. the driver's resident memory after `--load-seconds` of prepare/unprepare back to back (claims of one to eight
//!    chips in turn). The fake API server and kubelet live in this helper's process, so the figure is the driver's
//!    alone.
//!
//! Writes the figures as one JSON object to `--out`.

#![forbid(unsafe_code)]

mod claims;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context, Result};
use ascend_benches::daemon::{free_port, Daemon};
use ascend_benches::figures_file::{measure_into, summary};
use clap::Parser;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::topology::FaultSpec;
use dcmi_sim::{write_overlay, ChipOverlay, Overlay, Topology};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use fake_apiserver::FakeApiServer;
use serde_json::json;

use claims::Claims;

const SAMPLE: &str = "atlas-800t-a2";
const NODE: &str = "perf-node";
const DRIVER: &str = "npu.huawei.com";
const STARTUP_WAIT: Duration = Duration::from_secs(30);
const CHANGE_WAIT: Duration = Duration::from_secs(15);
/// The fault the device plugin's figures raise too (section 5).
const FAULT_CODE: u32 = 0x80E0_1801;
const FAULT_HEALTH: u32 = 2;
/// The chip (index in the topology) that takes the faults.
const FAULTY_CHIP: usize = 3;

/// DRA driver latencies and memory on a simulated eight-chip node.
#[derive(Debug, Parser)]
struct Args {
    /// The `ascend-dra-driver` binary.
    #[arg(long)]
    driver: PathBuf,
    /// The simulator library (default: the one built next to this tool).
    #[arg(long)]
    library: Option<PathBuf>,
    /// Timed prepare/unprepare pairs per claim size.
    #[arg(long, default_value_t = 300)]
    prepares: usize,
    /// Fault raise/clear repeats.
    #[arg(long, default_value_t = 10)]
    fault_repeats: usize,
    /// Seconds of prepare/unprepare load before the resident memory is read.
    #[arg(long, default_value_t = 60)]
    load_seconds: u64,
    /// Where to write the JSON figures.
    #[arg(long)]
    out: PathBuf,
}

/// The simulated node with the driver running on it.
struct Node {
    directory: tempfile::TempDir,
    server: FakeApiServer,
    kubelet: FakeKubelet,
    driver: Daemon,
    overlay: PathBuf,
    topology: Topology,
}

impl Node {
    async fn start(args: &Args) -> Result<Node> {
        let sample = dcmi_sim::samples::by_name(SAMPLE).ok_or_else(|| anyhow!("dcmi-sim has no sample {SAMPLE}"))?;
        let topology: Topology = sample.topology()?;
        let directory = tempfile::Builder::new().prefix("perf-dra-driver").tempdir()?;
        let work = directory.path();
        let options = FakeHostOptions { library: args.library.clone(), ..FakeHostOptions::default() };
        let host = FakeHost::build(&topology, &work.join("host"), &options)?;
        let overlay = work.join("overlay.toml");
        write_overlay(&overlay, &Overlay::default())?;
        let server = FakeApiServer::start().await.context("cannot start the fake API server")?;
        server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
        let kubeconfig = write_kubeconfig(work, &server.url())?;
        let registry = work.join("plugins_registry");
        let kubelet = FakeKubelet::start(&registry);
        let driver_args = vec![
            format!("--node-name={NODE}"),
            format!("--driver-name={DRIVER}"),
            format!("--registry-dir={}", registry.display()),
            format!("--plugins-dir={}", work.join("plugins").display()),
            format!("--cdi-dir={}", work.join("cdi").display()),
            format!("--host-root={}", host.root.display()),
            format!("--dcmi-library={}", host.library.display()),
            "--skip-library-ownership-check".to_owned(),
            format!("--listen=127.0.0.1:{}", free_port()?),
        ];
        let envs = [
            ("KUBECONFIG", kubeconfig.as_path()),
            ("DCMI_SIM_CONFIG", host.topology.as_path()),
            ("DCMI_SIM_OVERLAY", overlay.as_path()),
        ];
        let driver = Daemon::spawn(&args.driver, &driver_args, &envs)?;
        kubelet
            .wait_registered(DRIVER, STARTUP_WAIT)
            .await
            .map_err(|e| anyhow!("{e}; driver log:\n{}", driver.log()))?;
        let node = Node { directory, server, kubelet, driver, overlay, topology };
        let chips = node.topology.chips().count();
        node.wait_for("every chip published", STARTUP_WAIT, |node| node.claims().published_devices() == chips).await?;
        Ok(node)
    }

    fn claims(&self) -> Claims<'_> {
        Claims { server: &self.server, kubelet: &self.kubelet, driver: DRIVER, node: NODE }
    }

    /// Waits until `condition` holds; the time it took.
    async fn wait_for(&self, what: &str, timeout: Duration, condition: impl Fn(&Node) -> bool) -> Result<Duration> {
        let started = Instant::now();
        while !condition(self) {
            if started.elapsed() > timeout {
                bail!("{what}: not within {timeout:?}; driver log:\n{}", self.driver.log());
            }
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        Ok(started.elapsed())
    }

    /// `prepares` timed prepare/unprepare pairs of claims of `chips` chips.
    async fn prepare_latency(&self, chips: usize, prepares: usize) -> Result<(Vec<Duration>, Vec<Duration>)> {
        let claims = self.claims();
        let (mut prepare, mut unprepare) = (Vec::with_capacity(prepares), Vec::with_capacity(prepares));
        for serial in 0..prepares {
            let (prepared, unprepared) = claims.prepare_and_unprepare(chips, serial).await?;
            prepare.push(prepared);
            unprepare.push(unprepared);
        }
        Ok((prepare, unprepare))
    }

    /// Raises and clears a fault `repeats` times: (fault → taint, recovery → no taint).
    async fn fault_to_taint(&self, repeats: usize) -> Result<(Vec<Duration>, Vec<Duration>)> {
        let chip = self.topology.chips().nth(FAULTY_CHIP).ok_or_else(|| anyhow!("no chip {FAULTY_CHIP}"))?;
        let (logic_id, device) = (chip.chip.logic_id, format!("npu-{}", chip.chip.phy_id));
        let (mut taint, mut recovery) = (Vec::new(), Vec::new());
        for _ in 0..repeats {
            self.set_fault(logic_id, true)?;
            taint.push(self.wait_for("the taint", CHANGE_WAIT, |node| node.claims().tainted(&device)).await?);
            self.set_fault(logic_id, false)?;
            recovery
                .push(self.wait_for("the taint removed", CHANGE_WAIT, |node| !node.claims().tainted(&device)).await?);
        }
        Ok((taint, recovery))
    }

    /// Raises or clears the fault on chip `logic_id`. Clearing writes health 0 and no faults (rather than an empty
    /// overlay) so that the simulator reports the recovery as a fault event, as a driver does.
    fn set_fault(&self, logic_id: u32, raised: bool) -> Result<()> {
        let chip = ChipOverlay {
            logic_id,
            health: Some(if raised { FAULT_HEALTH } else { 0 }),
            faults: Some(if raised { vec![FaultSpec::Code(FAULT_CODE)] } else { Vec::new() }),
            ..ChipOverlay::default()
        };
        write_overlay(&self.overlay, &Overlay { chips: vec![chip], injections: Vec::new() })
            .with_context(|| format!("cannot write {}", self.overlay.display()))
    }

    /// Prepare/unprepare back to back for `duration`: the pairs made.
    async fn load(&self, duration: Duration) -> Result<u64> {
        let claims = self.claims();
        let chips = self.topology.chips().count();
        let started = Instant::now();
        let mut rounds = 0u64;
        while started.elapsed() < duration {
            claims.prepare_and_unprepare(1 + rounds as usize % chips, rounds as usize).await?;
            rounds += 1;
            if rounds.is_multiple_of(100) {
                // The fake server records every request and keeps a watch history: this process's memory, not the
                // driver's, but kept bounded all the same.
                self.server.clear_requests();
                self.server.compact();
            }
        }
        Ok(rounds)
    }
}

/// A kubeconfig naming the fake API server, for the driver's kube-rs client.
fn write_kubeconfig(dir: &Path, url: &str) -> Result<PathBuf> {
    let path = dir.join("kubeconfig");
    let text = format!(
        "apiVersion: v1\nkind: Config\nclusters: [{{name: fake, cluster: {{server: \"{url}\"}}}}]\n\
         users: [{{name: fake, user: {{}}}}]\ncontexts: [{{name: fake, context: {{cluster: fake, user: fake}}}}]\n\
         current-context: fake\n"
    );
    std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    Ok(path)
}

async fn run(args: Args) -> Result<serde_json::Value> {
    let node = Node::start(&args).await?;
    let chips = node.topology.chips().count();
    // Warm-up: the first calls open the driver's API server connection and the CDI directory.
    node.prepare_latency(1, 20).await?;
    // Each prepare and unprepare makes one fsync; on ext4 (data=ordered) that commits the journal and so waits for
    // whatever else is dirty on the file system. The sections before this one write container bundles and logs:
    // write them back now, so that their writeback is not charged to the driver (it moved this section's p99 from
    // under 4 ms to 10 ms in one run).
    let synced = std::process::Command::new("sync").status().context("cannot run sync")?;
    if !synced.success() {
        bail!("sync failed: {synced}");
    }
    let (prepare_one, unprepare_one) = node.prepare_latency(1, args.prepares).await?;
    let (prepare_all, unprepare_all) = node.prepare_latency(chips, args.prepares).await?;
    let (taint, recovery) = node.fault_to_taint(args.fault_repeats).await?;
    let (idle_rss, _) = node.driver.resident_kib()?;
    let rounds = node.load(Duration::from_secs(args.load_seconds)).await?;
    let (rss, high_water) = node.driver.resident_kib()?;
    let Node { driver, directory, .. } = node;
    driver.stop()?;
    drop(directory);
    Ok(json!({
        "topology": SAMPLE,
        "chips": chips,
        "prepare_1chip": summary(prepare_one, "prepare of one chip")?,
        "unprepare_1chip": summary(unprepare_one, "unprepare of one chip")?,
        "prepare_all_chips": summary(prepare_all, "prepare of every chip")?,
        "unprepare_all_chips": summary(unprepare_all, "unprepare of every chip")?,
        "fault_to_taint": summary(taint, "fault to taint")?,
        "recovery_to_untaint": summary(recovery, "recovery to untaint")?,
        "load": {
            "seconds": args.load_seconds,
            "pairs": rounds,
            "rss_idle_kib": idle_rss,
            "rss_kib": rss,
            "rss_high_water_kib": high_water,
        },
    }))
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> Result<()> {
    let args = Args::parse();
    let out = args.out.clone();
    measure_into(&out, run(args)).await
}
