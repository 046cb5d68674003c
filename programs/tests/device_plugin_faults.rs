//! Fault runs and an Allocate storm against the real `ascend-device-plugin` process, as it runs in production: the
//! simulated driver (dcmi-sim, an Atlas 300I Duo: 8 Ascend 310P chips on 4 cards, health polled every 200 ms) and
//! the in-repo kubelet peer over unix sockets. Each case proves that the daemon keeps serving, recovers by itself,
//! and never advertises or hands out a chip in the wrong state. `docs/robustness.md` lists the cases and figures;
//! `scripts/load.sh device-plugin` runs the storm for longer.
//!
//! The duo's logic ids 0..7 are physical ids 4,5,6,7,0,1,2,3 (device `Ascend310P-<phy>`); card 2 holds logic 0 and 1.

mod daemon_support;
mod device_plugin_support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ascend_deviceplugin::api::v1beta1::device_plugin_client::DevicePluginClient;
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use dcmi_sim::fake_host::FakeHost;
use dcmi_sim::OVERLAY_SETTLE;
use device_plugin_support::{
    all_healthy, chip_dropped, chip_faults, failing_rule, free_port, hang_rule, http_get, is, overlay, sim_args,
    sim_host, unhealthy_count, wait_health_of, wait_http, Daemon, WAIT,
};
use tempfile::TempDir;
use tonic::transport::Channel;

const RESOURCE: &str = "huawei.com/Ascend310P";
const CHIPS: usize = 8;
const POLL: &str = "--poll-interval=200ms";
const DEADLINE: &str = "--health-deadline=500ms";
/// DCMI's "driver not initialised / not loaded" (what every call returns once the driver is gone).
const DRIVER_GONE: i32 = -8005;

/// A simulated node: host root, plugin directory, overlay, fake kubelet and the daemon's flags.
struct Node {
    root: TempDir,
    plugins: PathBuf,
    host: FakeHost,
    overlay: PathBuf,
    kubelet: FakeKubelet,
    args: Vec<String>,
    port: u16,
    /// Kept so that the default plugin directory lives as long as the node.
    _plugin_dir: Option<TempDir>,
}

impl Node {
    /// A node whose injected hangs last `hang`, with a fresh plugin directory.
    async fn start(hang: Duration, extra: &[&str]) -> Node {
        let plugin_dir = tempfile::tempdir().expect("plugin dir");
        let plugins = plugin_dir.path().to_owned();
        Node::start_in(plugins, Some(plugin_dir), hang, extra).await
    }

    async fn start_in(plugins: PathBuf, plugin_dir: Option<TempDir>, hang: Duration, extra: &[&str]) -> Node {
        let root = tempfile::tempdir().expect("host root");
        let host = sim_host("atlas-300i-duo.toml", root.path(), hang);
        let overlay = root.path().join("overlay.toml");
        let kubelet = FakeKubelet::start(&plugins).await.expect("fake kubelet");
        let port = free_port();
        let mut flags = vec![POLL, DEADLINE, "--driver-retry=200ms", "--log-format=json"];
        flags.extend_from_slice(extra);
        let args = sim_args(&plugins, &host, port, &flags);
        Node { root, plugins, host, overlay, kubelet, args, port, _plugin_dir: plugin_dir }
    }

    fn command(&self) -> Command {
        let mut command = Command::new(env!("CARGO_BIN_EXE_ascend-device-plugin"));
        command
            .args(&self.args)
            .env("RUST_LOG", "info")
            .env("DCMI_SIM_CONFIG", &self.host.topology)
            .env("DCMI_SIM_OVERLAY", &self.overlay)
            .stdout(std::process::Stdio::null());
        command
    }

    fn spawn(&self) -> Daemon {
        Daemon::spawn_command(self.command())
    }

    async fn wait(&self, what: &str, condition: impl Fn(&[(String, String)]) -> bool) -> Duration {
        wait_health_of(&self.kubelet, RESOURCE, what, condition).await
    }

    async fn wait_all_healthy(&self, what: &str) -> Duration {
        self.wait(what, |d| all_healthy(d, CHIPS)).await
    }

    async fn client(&self) -> DevicePluginClient<Channel> {
        self.kubelet.plugin_client(RESOURCE).await.expect("plugin client")
    }

    async fn wait_registrations(&self, count: usize) {
        self.kubelet
            .wait_until(&format!("{count} registrations"), WAIT, |k| k.registrations().len() >= count)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn overlay(&self, chips: Vec<dcmi_sim::ChipOverlay>, injections: Vec<dcmi_sim::InjectionRule>) {
        overlay(&self.overlay, chips, injections);
    }
}

fn device(phy: u32) -> String {
    format!("Ascend310P-{phy}")
}

/// Allocates `ids` for one container; the CDI names handed out, or the refusal.
async fn allocate(client: &mut DevicePluginClient<Channel>, ids: &[String]) -> Result<Vec<String>, tonic::Status> {
    let request = AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: ids.to_vec() }] };
    let response = client.allocate(request).await?.into_inner();
    Ok(response.container_responses.into_iter().flat_map(|c| c.cdi_devices).map(|c| c.name).collect())
}

async fn assert_refused(client: &mut DevicePluginClient<Channel>, phy: u32) {
    let refused = allocate(client, &[device(phy)]).await.expect_err("an unhealthy chip is refused");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{refused:?}");
    assert!(refused.message().contains(&device(phy)), "names the chip: {}", refused.message());
}

async fn assert_allocates(client: &mut DevicePluginClient<Channel>, phy: u32) {
    let names = allocate(client, &[device(phy)]).await.unwrap_or_else(|e| panic!("{} allocates: {e:?}", device(phy)));
    assert_eq!(names, [format!("huawei.com/npu={phy}")]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_card_drops_and_returns_and_the_driver_goes_away_and_comes_back() {
    let node = Node::start(Duration::from_millis(1500), &[]).await;
    let mut daemon = node.spawn();
    node.wait_all_healthy("eight healthy chips").await;
    let mut client = node.client().await;

    // Card 2 drops off the bus: both its chips (phys 4, 5) go Unhealthy, the others stay Healthy and allocatable.
    node.overlay(vec![chip_dropped(0, true), chip_dropped(1, true)], Vec::new());
    node.wait("card 2 unhealthy", |d| {
        d.len() == CHIPS && is(d, &device(4), "Unhealthy") && is(d, &device(5), "Unhealthy") && unhealthy_count(d) == 2
    })
    .await;
    assert_refused(&mut client, 4).await;
    assert_allocates(&mut client, 0).await;
    node.overlay(vec![chip_dropped(0, false), chip_dropped(1, false)], Vec::new());
    node.wait_all_healthy("card 2 back").await;
    assert_allocates(&mut client, 4).await;

    // The driver goes away under the running daemon (every call fails as DCMI does without its driver): every chip
    // is still listed but Unhealthy, nothing is handed out, the daemon's own endpoint answers.
    node.overlay(Vec::new(), vec![failing_rule("*", DRIVER_GONE)]);
    node.wait("every chip unhealthy", |d| d.len() == CHIPS && unhealthy_count(d) == CHIPS).await;
    for phy in [0, 4, 7] {
        assert_refused(&mut client, phy).await;
    }
    assert_eq!(http_get(node.port, "/healthz").map(|(status, _)| status), Some(200));
    node.overlay(Vec::new(), Vec::new());
    node.wait_all_healthy("the driver back").await;
    assert_allocates(&mut client, 7).await;

    assert_eq!(node.kubelet.registrations().len(), 1, "served throughout, never re-registered");
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_library_appears_after_start_and_may_vanish_once_loaded() {
    let mut node = Node::start(Duration::from_millis(1500), &[]).await;
    let library = node.root.path().join("later/lib64/libdcmi.so");
    let flag = node.args.iter().position(|arg| arg.starts_with("--dcmi-library=")).expect("library flag");
    node.args[flag] = format!("--dcmi-library={}", library.display());
    let mut daemon = node.spawn();
    daemon.wait_log("no usable Ascend driver", 2);
    assert_eq!(wait_http(node.port, "/healthz", &daemon), "ok: waiting for the Ascend driver\n");
    assert!(node.kubelet.registrations().is_empty(), "nothing advertised without a driver");

    // The driver is installed: the next retry loads it and every chip is advertised, without a restart.
    std::fs::create_dir_all(library.parent().expect("parent")).expect("library dir");
    std::fs::copy(&node.host.library, &library).expect("library installed");
    node.wait_all_healthy("chips after the driver appeared").await;

    // The file goes away (an uninstall under a running daemon): the loaded copy keeps answering.
    std::fs::remove_file(&library).expect("library removed");
    node.overlay(vec![chip_faults(2, vec![0x80E0_1801], 2)], Vec::new());
    node.wait("a fault seen after the file vanished", |d| is(d, &device(6), "Unhealthy")).await;
    node.overlay(vec![chip_faults(2, Vec::new(), 0)], Vec::new());
    node.wait_all_healthy("recovered after the file vanished").await;
    assert_allocates(&mut node.client().await, 6).await;
    assert!(daemon.is_running());
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hung_chips_beyond_the_worker_count_and_then_every_chip_hanging() {
    let hang = Duration::from_secs(2);
    let node = Node::start(hang, &[]).await;
    let mut daemon = node.spawn();
    node.wait_all_healthy("eight healthy chips").await;
    let mut client = node.client().await;

    // Five chips hang (more than the monitor's four driver-call workers): they go Unhealthy, the other three stay
    // Healthy, and are still probed: a fault raised on one of them now is seen, and so is its recovery.
    let five_hung: Vec<_> = (0..5).map(|logic| hang_rule("dcmi_get_device_health", Some(logic))).collect();
    let hung_phys = [4, 5, 6, 7, 0];
    node.overlay(Vec::new(), five_hung.clone());
    node.wait("five hung chips unhealthy", |d| {
        hung_phys.iter().all(|phy| is(d, &device(*phy), "Unhealthy")) && unhealthy_count(d) == 5
    })
    .await;
    node.overlay(vec![chip_faults(6, vec![0x80E0_1801], 2)], five_hung.clone());
    node.wait("a fault on a free chip seen", |d| is(d, &device(2), "Unhealthy") && unhealthy_count(d) == 6).await;
    node.overlay(vec![chip_faults(6, Vec::new(), 0)], five_hung);
    node.wait("its recovery seen", |d| is(d, &device(2), "Healthy") && unhealthy_count(d) == 5).await;
    assert_allocates(&mut client, 2).await;
    assert_refused(&mut client, 4).await;

    // Every chip hangs at once: all Unhealthy, nothing handed out; the daemon keeps serving.
    node.overlay(Vec::new(), vec![hang_rule("dcmi_get_device_health", None)]);
    node.wait("every chip unhealthy", |d| d.len() == CHIPS && unhealthy_count(d) == CHIPS).await;
    assert_refused(&mut client, 1).await;
    assert_eq!(http_get(node.port, "/healthz").map(|(status, _)| status), Some(200));

    // The hangs end: every chip recovers by itself once its stuck call returns.
    node.overlay(Vec::new(), Vec::new());
    let recovered = node.wait_all_healthy("every chip back").await;
    eprintln!("every chip hung, recovered {recovered:?} after the hang was lifted (a hung call lasts {hang:?})");
    assert_allocates(&mut client, 1).await;
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_kubelet_restarts_ten_times_in_a_row() {
    let mut node = Node::start(Duration::from_millis(1500), &[]).await;
    let mut daemon = node.spawn();
    node.wait_all_healthy("eight healthy chips").await;

    // Ten restarts back to back, some faster than the daemon's 100 ms directory check, some slower.
    let mut last_restart = Instant::now();
    for round in 0..10u64 {
        last_restart = Instant::now();
        node.kubelet.restart().await.expect("kubelet restarts");
        tokio::time::sleep(Duration::from_millis(round * 37 % 160)).await;
    }
    node.kubelet
        .wait_until("registration with the last kubelet", WAIT, |k| {
            k.registrations().iter().any(|r| r.at > last_restart)
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let delay = node.kubelet.registrations().iter().rev().find(|r| r.at > last_restart).map(|r| r.at - last_restart);
    eprintln!("ten kubelet restarts: registered with the last one {delay:?} after it started");
    node.wait_all_healthy("the list after the restarts").await;
    node.overlay(vec![chip_faults(3, vec![0x80E0_1801], 2)], Vec::new());
    node.wait("a fault after the restarts", |d| is(d, &device(7), "Unhealthy") && unhealthy_count(d) == 1).await;
    assert_refused(&mut node.client().await, 7).await;
    assert_allocates(&mut node.client().await, 3).await;

    let mut files: Vec<String> = std::fs::read_dir(&node.plugins)
        .expect("plugin dir")
        .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    files.sort();
    assert_eq!(files, ["ascend-Ascend310P.sock", "kubelet.sock"], "one socket, nothing left behind");
    assert!(!daemon.log().contains("panicked"), "{}", daemon.log());
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigkill_during_allocate_calls_then_a_restart() {
    let node = Node::start(Duration::from_millis(1500), &[]).await;
    let mut daemon = node.spawn();
    node.wait_all_healthy("eight healthy chips").await;

    let stop = Arc::new(AtomicBool::new(false));
    let mut callers = Vec::new();
    for caller in 0..4u32 {
        let mut client = node.client().await;
        let stop = Arc::clone(&stop);
        callers.push(tokio::spawn(async move {
            let (mut served, mut failed) = (0u64, 0u64);
            let mut phy = caller;
            while !stop.load(Ordering::Relaxed) {
                match allocate(&mut client, &[device(phy % 8)]).await {
                    Ok(_) => served += 1,
                    Err(_) => failed += 1,
                }
                phy += 1;
            }
            (served, failed)
        }));
    }
    tokio::time::sleep(Duration::from_millis(400)).await;
    daemon.kill_hard();
    tokio::time::sleep(Duration::from_millis(100)).await;
    stop.store(true, Ordering::Relaxed);
    let (mut served, mut failed) = (0, 0);
    for caller in callers {
        let (s, f) = tokio::time::timeout(WAIT, caller).await.expect("callers return after the kill").expect("joined");
        served += s;
        failed += f;
    }
    eprintln!("SIGKILL during Allocate: {served} calls served before, {failed} failed at or after the kill");
    assert!(served > 0 && failed > 0, "the kill landed among Allocate calls: {served} served, {failed} failed");
    assert!(node.plugins.join("ascend-Ascend310P.sock").exists(), "the killed daemon's socket is left behind");

    // A restarted daemon replaces the stale socket, registers again and serves fresh health.
    let mut restarted = node.spawn();
    node.wait_registrations(2).await;
    // Until its first health check the new process advertises its chips unhealthy ("not yet checked"), as it must.
    node.wait_all_healthy("the new process's first health check").await;
    let mut client = node.client().await;
    assert_allocates(&mut client, 5).await;
    node.overlay(vec![chip_faults(1, vec![0x80E0_1801], 2)], Vec::new());
    node.wait("fresh health from the new process", |d| is(d, &device(5), "Unhealthy")).await;
    assert_refused(&mut client, 5).await;
    let status = restarted.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", restarted.log());
}

/// A small tmpfs mounted for the test (the device plugin directory), unmounted on drop.
struct SmallTmpfs {
    dir: TempDir,
}

impl SmallTmpfs {
    /// At most `inodes` files (the root directory counts).
    fn mount(inodes: u32) -> SmallTmpfs {
        let dir = tempfile::tempdir().expect("mount point");
        let options = format!("size=1m,nr_inodes={inodes},mode=0755");
        run("mount", &["-t", "tmpfs", "-o", &options, "ascend-dp-test", &dir.path().to_string_lossy()]);
        SmallTmpfs { dir }
    }

    fn remount(&self, mode: &str) {
        run("mount", &["-o", &format!("remount,{mode}"), &self.dir.path().to_string_lossy()]);
    }

    /// Creates files until the file system refuses one with ENOSPC; returns them.
    fn fill(&self, tag: &str) -> Vec<PathBuf> {
        let mut fillers = Vec::new();
        for serial in 0..10_000 {
            let path = self.dir.path().join(format!("filler-{tag}-{serial}"));
            match std::fs::File::create(&path) {
                Ok(_) => fillers.push(path),
                Err(error) if error.raw_os_error() == Some(28) => return fillers,
                Err(error) => panic!("filling {}: {error}", path.display()),
            }
        }
        panic!("the small tmpfs never filled up");
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(self.dir.path()).status();
    }
}

/// Runs a mount command as root; the test needs it (CI runs as root).
fn run(program: &str, args: &[&str]) {
    let status = Command::new(program).args(args).status().unwrap_or_else(|e| panic!("{program}: {e}"));
    assert!(status.success(), "{program} {args:?} failed ({status}); this test needs root");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_full_then_read_only_plugin_directory() {
    // The daemon keeps no cache or checkpoint of its own (health lives in memory, the kubelet keeps the
    // checkpoint): the only files it writes are its sockets in the plugin directory, so that is the directory
    // made full and then read-only here.
    let tmpfs = SmallTmpfs::mount(64);
    let node = Node::start_in(tmpfs.dir.path().to_owned(), None, Duration::from_millis(1500), &[]).await;

    // Full: not one inode left for the socket. The daemon says why, keeps its endpoint up, and serves once freed.
    let fillers = tmpfs.fill("full");
    let mut daemon = node.spawn();
    daemon.wait_log("No space left on device", 2);
    assert!(daemon.log().contains("cannot serve; retrying"), "{}", daemon.log());
    assert_eq!(http_get(node.port, "/healthz").map(|(status, _)| status), Some(200));
    assert!(node.kubelet.registrations().is_empty());
    for filler in fillers {
        std::fs::remove_file(filler).expect("space freed");
    }
    node.wait_registrations(1).await;
    node.wait_all_healthy("served once space was freed").await;
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());

    // Read-only when the daemon (re)starts: the same, until the directory is writable again.
    tmpfs.remount("ro");
    let mut daemon = node.spawn();
    daemon.wait_log("Read-only file system", 2);
    assert!(daemon.is_running());
    assert_eq!(node.kubelet.registrations().len(), 1);
    tmpfs.remount("rw");
    node.wait_registrations(2).await;
    assert_allocates(&mut node.client().await, 0).await;
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

/// The multi-threaded libfaketime of Debian's `libfaketime` package (scripts/deps/debian.txt).
fn libfaketime() -> PathBuf {
    let found = std::fs::read_dir("/usr/lib")
        .into_iter()
        .flatten()
        .flatten()
        .map(|entry| entry.path().join("faketime/libfaketimeMT.so.1"))
        .find(|path| path.exists());
    found.expect("libfaketimeMT.so.1 not found under /usr/lib/*/faketime: install the Debian package libfaketime")
}

/// Sets the daemon's wall clock: libfaketime re-reads the file on a clock call once its cache (1 s, counted in
/// whole seconds) has expired.
async fn set_wall_clock(file: &Path, spec: &str) {
    std::fs::write(file, spec).expect("clock file written");
    tokio::time::sleep(Duration::from_millis(2100)).await;
}

/// This year by the test's own (real) clock, to within a day.
fn real_year() -> i64 {
    let seconds = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs();
    1970 + i64::try_from(seconds / 31_556_952).expect("years fit")
}

/// The year of the daemon's last JSON log line.
fn last_logged_year(log: &str) -> i64 {
    let line = log.lines().rev().find(|line| line.contains("\"timestamp\":\"")).expect("a JSON log line");
    let (_, rest) = line.split_once("\"timestamp\":\"").expect("timestamp");
    rest.get(..4).and_then(|year| year.parse().ok()).unwrap_or_else(|| panic!("no year in {line}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wall_clock_jumps_change_nothing() {
    let mut node = Node::start(Duration::from_millis(1500), &[]).await;
    let clock = node.root.path().join("faketime");
    std::fs::write(&clock, "+0").expect("clock file");
    let mut command = node.command();
    command
        .env("LD_PRELOAD", libfaketime())
        .env("FAKETIME_TIMESTAMP_FILE", &clock)
        .env("FAKETIME_CACHE_DURATION", "1")
        .env("FAKETIME_DONT_FAKE_MONOTONIC", "1");
    let mut daemon = Daemon::spawn_command(command);
    node.wait_all_healthy("eight healthy chips").await;

    // The wall clock jumps forward about 14 years, then back about 39 (libfaketime offsets from the real time):
    // polling, fault handling and re-registration go on at their monotonic pace (a timer on the wall clock would
    // fire all at once, or stall for decades).
    let bound = Duration::from_secs(3);
    for (logic, phy, offset_days) in [(5, 1, 5000), (0, 4, -9000)] {
        set_wall_clock(&clock, &format!("{offset_days:+}d")).await;
        node.overlay(vec![chip_faults(logic, vec![0x80E0_1801], 2)], Vec::new());
        let seen = node.wait("a fault after the jump", |d| is(d, &device(phy), "Unhealthy")).await;
        assert!(seen < bound, "fault seen {seen:?} after a jump of {offset_days} days");
        let expected_year = real_year() + offset_days / 365;
        let waiting = Instant::now();
        while last_logged_year(&daemon.log()).abs_diff(expected_year) > 1 {
            assert!(waiting.elapsed() < WAIT, "the jump never reached the daemon's log:\n{}", daemon.log());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        node.overlay(vec![chip_faults(logic, Vec::new(), 0)], Vec::new());
        let cleared = node.wait_all_healthy("recovery after the jump").await;
        assert!(cleared < bound, "recovery seen {cleared:?} after a jump of {offset_days} days");
        let registrations = node.kubelet.registrations().len();
        let restarted = Instant::now();
        node.kubelet.restart().await.expect("kubelet restarts");
        node.wait_registrations(registrations + 1).await;
        let delay = restarted.elapsed();
        assert!(delay < bound, "re-registered {delay:?} after a jump of {offset_days} days");
    }
    assert_allocates(&mut node.client().await, 2).await;
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

/// One Allocate call of the storm.
struct Call {
    phy: u32,
    sent: Instant,
    answered: Instant,
    outcome: Result<(), tonic::Code>,
}

/// When a flapping chip's fault was raised and cleared (as written to the overlay).
type FaultWindows = BTreeMap<u32, Vec<(Instant, Instant)>>;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocate_storm_while_chips_flap() {
    let seconds: u64 = std::env::var("ASCEND_DP_STORM_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let callers: u32 = std::env::var("ASCEND_DP_STORM_CALLERS").ok().and_then(|s| s.parse().ok()).unwrap_or(4);
    let node = Arc::new(Node::start(Duration::from_millis(1500), &[]).await);
    let mut daemon = node.spawn();
    node.wait_all_healthy("eight healthy chips").await;
    let rss_before = daemon.rss_kib();

    // Chips of logic 0..3 (phys 4..7) flap: faulted 1.5 s, healthy 1 s; phys 0..3 never fault.
    let flapping_phys = [4u32, 5, 6, 7];
    let stop = Arc::new(AtomicBool::new(false));
    let windows: Arc<Mutex<FaultWindows>> = Arc::default();
    let flapper = {
        let (node, stop, windows) = (Arc::clone(&node), Arc::clone(&stop), Arc::clone(&windows));
        tokio::spawn(async move {
            let mut flips = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let raised = Instant::now();
                node.overlay((0..4).map(|logic| chip_faults(logic, vec![0x80E0_1801], 2)).collect(), Vec::new());
                tokio::time::sleep(Duration::from_millis(1500)).await;
                node.overlay((0..4).map(|logic| chip_faults(logic, Vec::new(), 0)).collect(), Vec::new());
                let cleared = Instant::now();
                if let Ok(mut windows) = windows.lock() {
                    for phy in [4, 5, 6, 7] {
                        windows.entry(phy).or_default().push((raised, cleared));
                    }
                }
                flips += 2;
                tokio::time::sleep(Duration::from_millis(1000)).await;
            }
            flips
        })
    };

    let started = Instant::now();
    let mut tasks = Vec::new();
    for caller in 0..callers {
        let mut client = node.client().await;
        let stop = Arc::clone(&stop);
        tasks.push(tokio::spawn(async move {
            let mut calls = Vec::new();
            let mut phy = caller;
            while !stop.load(Ordering::Relaxed) {
                let sent = Instant::now();
                let outcome = match allocate(&mut client, &[device(phy % 8)]).await {
                    Ok(names) if names == [format!("huawei.com/npu={}", phy % 8)] => Ok(()),
                    Ok(names) => panic!("{} answered with {names:?}", device(phy % 8)),
                    Err(status) => Err(status.code()),
                };
                calls.push(Call { phy: phy % 8, sent, answered: Instant::now(), outcome });
                phy += 1;
            }
            calls
        }));
    }
    tokio::time::sleep(Duration::from_secs(seconds)).await;
    stop.store(true, Ordering::Relaxed);
    let mut calls = Vec::new();
    for task in tasks {
        calls.extend(task.await.expect("caller joined"));
    }
    let elapsed = started.elapsed();
    let flips = flapper.await.expect("flapper joined");
    let rss_after = daemon.rss_kib();
    let windows = windows.lock().map(|w| w.clone()).unwrap_or_default();

    // A refusal must be FailedPrecondition, of a flapping chip; an allocation of a flapping chip must not fall
    // entirely inside a fault window after the daemon had time to see the fault (a poll, the overlay settling, a
    // margin for a loaded machine).
    let detection = Duration::from_millis(200) + OVERLAY_SETTLE + Duration::from_millis(700);
    let mut wrongly_served = Vec::new();
    let mut refused_in_window = 0;
    for call in &calls {
        let faulted = windows
            .get(&call.phy)
            .into_iter()
            .flatten()
            .any(|(raised, cleared)| call.sent >= *raised + detection && call.answered <= *cleared);
        match call.outcome {
            Ok(()) if faulted => wrongly_served.push((call.phy, call.sent - started)),
            Ok(()) => {}
            Err(tonic::Code::FailedPrecondition) => {
                assert!(flapping_phys.contains(&call.phy), "{} refused but never faulted", device(call.phy));
                refused_in_window += u64::from(faulted);
            }
            Err(code) => panic!("{} failed with {code:?}", device(call.phy)),
        }
    }
    let served = calls.iter().filter(|c| c.outcome.is_ok()).count();
    let refused = calls.len() - served;
    let mut latencies: Vec<Duration> = calls.iter().map(|c| c.answered - c.sent).collect();
    latencies.sort();
    let p99 = latencies.get(latencies.len() * 99 / 100).copied().unwrap_or_default();
    eprintln!(
        "allocate storm: {} calls in {elapsed:.1?} by {callers} callers ({:.0}/s), {served} served, {refused} refused \
         (unhealthy), {flips} health flips, p99 {p99:?}, daemon RSS {rss_before} KiB before, {rss_after} KiB after",
        calls.len(),
        calls.len() as f64 / elapsed.as_secs_f64(),
    );
    assert!(wrongly_served.is_empty(), "unhealthy chips handed out (chip, at): {wrongly_served:?}");
    assert!(served > 0 && refused_in_window > 0, "the storm met both states: {served} served, {refused} refused");
    assert!(daemon.is_running());
    node.overlay(Vec::new(), Vec::new());
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

/// Recovery on (`--recovery-mode=inference`): a restart fault on a chip whose card-mate a pod holds (the duo's two
/// chips reset together) leaves both alone; once the pod ends the chip is reset, its card-mate withdrawn meanwhile,
/// and both are offered healthy again, counted in the daemon's metrics.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_resets_a_faulty_chip_once_its_card_is_free() {
    use ascend_deviceplugin::fake_kubelet::FakePodResources;
    let node = Node::start(Duration::from_millis(1500), &[]).await;
    let socket = node.root.path().join("pod-resources.sock");
    // Logic 0 (Ascend310P-4) gets the fault; logic 1 (Ascend310P-5), on the same card, is held.
    let pod = FakePodResources::pod("default", "trainer", RESOURCE, &["Ascend310P-5"]);
    let pod_resources = FakePodResources::start(&socket, vec![pod]).expect("PodResources");
    let mut command = node.command();
    command.args(["--recovery-mode=inference", "--recovery-idle=1s"]);
    command.arg(format!("--pod-resources-socket={}", socket.display()));
    let _daemon = Daemon::spawn_command(command);
    node.wait_all_healthy("all healthy at start").await;

    // The sample duo runs a process on some chips; none on this card, so that only the pod holds it.
    let idle = |chip: dcmi_sim::ChipOverlay| dcmi_sim::ChipOverlay { processes: Some(Vec::new()), ..chip };
    let mate = dcmi_sim::ChipOverlay { logic_id: 1, ..Default::default() };
    node.overlay(vec![idle(chip_faults(0, vec![0x80E0_1801], 2)), idle(mate)], Vec::new());
    node.wait("the faulty chip listed Unhealthy", |d| is(d, &device(4), "Unhealthy")).await;
    // Longer than a free chip takes to be reset: the idle second, the runner's 5 s round, the 2 s withdrawal.
    tokio::time::sleep(Duration::from_secs(10)).await;
    let devices = device_plugin_support::health_list_of(&node.kubelet, RESOURCE);
    assert!(is(&devices, &device(4), "Unhealthy"), "not reset while its card-mate is held: {devices:?}");
    let metrics = http_get(node.port, "/metrics").map(|(_, body)| body).unwrap_or_default();
    assert!(!metrics.contains("chip_resets_total{"), "no reset yet:\n{metrics}");

    pod_resources.set(Vec::new());
    let withdrawn = Arc::new(AtomicBool::new(false));
    let seen = Arc::clone(&withdrawn);
    node.wait("both chips of the card healthy after the reset", move |d| {
        if is(d, &device(5), "Unhealthy") {
            seen.store(true, Ordering::Relaxed);
        }
        all_healthy(d, CHIPS)
    })
    .await;
    assert!(withdrawn.load(Ordering::Relaxed), "the card-mate was withdrawn while the card reset");
    let metrics = http_get(node.port, "/metrics").map(|(_, body)| body).unwrap_or_default();
    assert!(metrics.contains(r#"ascend_device_plugin_chip_resets_total{outcome="booted"} 1"#), "{metrics}");
}
