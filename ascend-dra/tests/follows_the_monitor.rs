//! The driver's published devices follow the node layer's health monitor, and its slices survive others deleting or
//! rewriting them. In process: a dcmi-sim host (an Atlas 800T A2, eight chips; its device nodes and driver files
//! under a temporary root) behind a driver whose chip list the test edits (a chip hidden from `chips()` is what the
//! driver reports for a card that is not there), the in-repo fake API server, and the in-repo kubelet peer.
//!
//! - A chip missing at start is published once the driver lists it, a chip that leaves the list is withdrawn, and a
//!   fault the simulator raises taints the chip with the monitor's fault level (no second driver call, no text).
//! - Slices deleted or rewritten by someone else (what a restarting kubelet does after the driver registered again)
//!   are published again without a re-registration.

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use ascend_dcmi::{ChipIds, Dcmi, DeviceManager, FaultLevel, MockDeviceManager};
use ascend_dra::DriverConfig;
use ascend_node::recovery::RecoveryObserver;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::{write_overlay, ChipOverlay, Overlay};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::resource::v1::{Device, ResourceSlice};
use kube::api::{Api, DeleteParams, Patch, PatchParams};
use serde_json::json;

const NODE: &str = "worker-1";
const WAIT: Duration = Duration::from_secs(20);

/// One simulated host at a time: the simulator's instance is process-wide.
static ONE_HOST_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The overlay file: the simulator reads its variables once per process, so every test of this file writes the same
/// file, and removes it when done.
struct OverlayFile(PathBuf);

impl OverlayFile {
    fn new() -> OverlayFile {
        let path = std::env::temp_dir().join(format!("ascend-dra-follows-the-monitor-{}.toml", std::process::id()));
        let _ = std::fs::remove_file(&path);
        OverlayFile(path)
    }
}

impl Drop for OverlayFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The simulated host, its driver with an editable chip list, and the driver running against the fake API server.
struct Node {
    server: FakeApiServer,
    hidden: Arc<Mutex<BTreeSet<u32>>>,
    overlay: OverlayFile,
    /// The logic id of each physical id (they differ on this host).
    logic_of: std::collections::BTreeMap<u32, u32>,
    driver_name: String,
    driver: tokio::task::JoinHandle<ascend_dra::Result<()>>,
    stop: tokio::sync::oneshot::Sender<()>,
    /// What the driver told its recovery observer (`run_observed`), one line per call.
    recovery_calls: Arc<RecoveryCalls>,
    _kubelet: FakeKubelet,
    _dir: tempfile::TempDir,
}

/// The recovery observer's calls, as `<call> <physical id>`.
#[derive(Default)]
struct RecoveryCalls(Mutex<Vec<String>>);

impl RecoveryObserver for RecoveryCalls {
    fn reset_started(&self, chip: ChipIds, _group: &[ChipIds]) {
        self.0.lock().unwrap().push(format!("started {}", chip.phy));
    }
    fn reset_finished(&self, chip: ChipIds, outcome: &Result<Duration, String>) {
        let outcome = if outcome.is_ok() { "booted" } else { "failed" };
        self.0.lock().unwrap().push(format!("{outcome} {}", chip.phy));
    }
}

/// A driver that answers from the simulator but lists only the chips whose physical id is not `hidden`. Every
/// call the monitor makes is named, so a call the driver should not make fails the test.
fn hiding_driver(dcmi: Arc<Dcmi>, hidden: Arc<Mutex<BTreeSet<u32>>>) -> MockDeviceManager {
    let mut mock = MockDeviceManager::new();
    let listing = Arc::clone(&dcmi);
    mock.expect_chips().returning(move || {
        let hidden = hidden.lock().expect("hidden chips").clone();
        let chips: Vec<ChipIds> = listing.chips()?.into_iter().filter(|ids| !hidden.contains(&ids.phy.get())).collect();
        Ok(chips)
    });
    let identity = Arc::clone(&dcmi);
    mock.expect_identity().returning(move |logic| DeviceManager::identity(identity.as_ref(), logic));
    let memory = Arc::clone(&dcmi);
    mock.expect_hbm_memory().returning(move |logic| DeviceManager::hbm_memory(memory.as_ref(), logic));
    let version = Arc::clone(&dcmi);
    mock.expect_driver_version().returning(move || DeviceManager::driver_version(version.as_ref()));
    let processes = Arc::clone(&dcmi);
    mock.expect_processes().returning(move |logic| DeviceManager::processes(processes.as_ref(), logic));
    let boot = Arc::clone(&dcmi);
    mock.expect_boot_status().returning(move |logic| DeviceManager::boot_status(boot.as_ref(), logic));
    let reset = Arc::clone(&dcmi);
    mock.expect_reset().returning(move |logic, timeout| DeviceManager::reset(reset.as_ref(), logic, timeout));
    mock.expect_health().returning(move |logic| DeviceManager::health(dcmi.as_ref(), logic));
    mock
}

impl Node {
    async fn start(test: &str, hidden: &[u32]) -> Node {
        Node::start_with(test, hidden, |_| {}).await
    }

    async fn start_with(test: &str, hidden: &[u32], configure: impl FnOnce(&mut DriverConfig)) -> Node {
        let dir = tempfile::tempdir().expect("work directory");
        let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("topology");
        let host = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default()).expect("host");
        let overlay = OverlayFile::new();
        let logic_of = topology.chips().map(|found| (found.chip.phy_id, found.chip.logic_id)).collect();
        std::env::set_var(dcmi_sim::CONFIG_ENV, &host.topology);
        std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay.0);
        // A temporary directory is not root's to guard: the ownership rule is for a server's driver.
        let dcmi = Dcmi::builder().host_root(&host.root).verify_library_ownership(false).init().expect("simulator");
        let hidden = Arc::new(Mutex::new(hidden.iter().copied().collect::<BTreeSet<u32>>()));
        let manager: Arc<dyn DeviceManager> = Arc::new(hiding_driver(Arc::new(dcmi), Arc::clone(&hidden)));

        let driver_name = format!("{test}.npu.example.com");
        let mut config = DriverConfig::in_work_dir(NODE, dir.path(), &host.root);
        config.plugin.driver_name.clone_from(&driver_name);
        config.monitor.poll_interval = Duration::from_millis(100);
        config.monitor.health_deadline = Duration::from_secs(2);
        config.monitor.fault_events = false;
        configure(&mut config);
        let server = FakeApiServer::start().await.expect("fake API server");
        server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
        let kubelet = FakeKubelet::start(&config.plugin.registry_dir);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let recovery_calls = Arc::new(RecoveryCalls::default());
        let observer = Arc::clone(&recovery_calls);
        let driver = tokio::spawn(ascend_dra::run_observed(config, manager, server.client(), observer, async {
            let _ = stopped.await;
        }));
        kubelet.wait_registered(&driver_name, WAIT).await.expect("the driver registers");
        Node {
            server,
            hidden,
            overlay,
            logic_of,
            driver_name,
            driver,
            stop,
            recovery_calls,
            _kubelet: kubelet,
            _dir: dir,
        }
    }

    fn devices(&self) -> Vec<Device> {
        let mut devices: Vec<Device> = self
            .server
            .list::<ResourceSlice>()
            .into_iter()
            .filter(|slice| slice.spec.driver == self.driver_name && slice.spec.node_name.as_deref() == Some(NODE))
            .flat_map(|slice| slice.spec.devices.unwrap_or_default())
            .collect();
        devices.sort_by(|a, b| a.name.cmp(&b.name));
        devices
    }

    fn device_names(&self) -> Vec<String> {
        self.devices().into_iter().map(|device| device.name).collect()
    }

    fn slice_names(&self) -> Vec<String> {
        self.server
            .list::<ResourceSlice>()
            .into_iter()
            .filter(|slice| slice.spec.driver == self.driver_name)
            .filter_map(|slice| slice.metadata.name)
            .collect()
    }

    async fn wait_for(&self, what: &str, mut done: impl FnMut(&Node) -> bool) {
        let started = Instant::now();
        while !done(self) {
            assert!(started.elapsed() < WAIT, "{what}: not within {WAIT:?}; published: {:?}", self.device_names());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    async fn stop(self) {
        let _ = self.stop.send(());
        let stopped = tokio::time::timeout(WAIT, self.driver).await.expect("the driver stops");
        stopped.expect("the driver task").expect("the driver ends without error");
    }
}

fn names(phys: impl IntoIterator<Item = u32>) -> Vec<String> {
    let mut names: Vec<String> = phys.into_iter().map(|phy| format!("npu-{phy}")).collect();
    names.sort();
    names
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chips_that_appear_are_published_chips_that_go_are_withdrawn_and_faults_taint() {
    let _host = ONE_HOST_AT_A_TIME.lock().await;
    let node = Node::start("follows", &[3]).await;
    node.wait_for("seven chips, npu-3 missing", |node| node.device_names() == names((0..8).filter(|&p| p != 3))).await;

    node.hidden.lock().expect("hidden chips").remove(&3);
    node.wait_for("npu-3 published once listed", |node| node.device_names() == names(0..8)).await;

    node.hidden.lock().expect("hidden chips").insert(5);
    node.wait_for("npu-5 withdrawn", |node| node.device_names() == names((0..8).filter(|&p| p != 5))).await;
    assert!(node.devices().iter().all(|device| device.taints.is_none()), "no chip is faulty yet");

    // A fault on npu-1: the taint carries the monitor's fault level.
    let logic_id = node.logic_of[&1];
    let fault = ChipOverlay {
        logic_id,
        health: Some(2),
        faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)]),
        ..ChipOverlay::default()
    };
    write_overlay(&node.overlay.0, &Overlay { chips: vec![fault], injections: Vec::new() }).expect("overlay");
    node.wait_for("npu-1 tainted", |node| node.devices().iter().any(|d| d.name == "npu-1" && d.taints.is_some())).await;
    let devices = node.devices();
    let tainted: Vec<&Device> = devices.iter().filter(|device| device.taints.is_some()).collect();
    assert_eq!(tainted.len(), 1, "only npu-1 is tainted: {devices:?}");
    let taint = &tainted[0].taints.as_ref().expect("taints")[0];
    assert_eq!(taint.key, ascend_kube::UNHEALTHY_TAINT_KEY);
    let level = taint.value.as_deref().unwrap_or_default();
    assert!(
        FaultLevel::ALL.iter().any(|known| known.name() == level),
        "the taint's value is a fault level, not {level:?}"
    );

    let recovered = ChipOverlay { logic_id, health: Some(0), faults: Some(Vec::new()), ..ChipOverlay::default() };
    write_overlay(&node.overlay.0, &Overlay { chips: vec![recovered], injections: Vec::new() }).expect("overlay");
    node.wait_for("npu-1 untainted", |node| node.devices().iter().all(|d| d.taints.is_none())).await;
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slices_others_delete_or_rewrite_are_published_again() {
    let _host = ONE_HOST_AT_A_TIME.lock().await;
    let node = Node::start("republish", &[]).await;
    node.wait_for("eight chips", |node| node.device_names() == names(0..8)).await;
    let api: Api<ResourceSlice> = Api::all(node.server.client());

    // What a restarting kubelet does to its node's slices, after the driver registered again.
    for name in node.slice_names() {
        api.delete(&name, &DeleteParams::default()).await.expect("slice deleted");
    }
    node.wait_for("the slices published again after the deletion", |node| node.device_names() == names(0..8)).await;

    // Someone empties a slice.
    let name = node.slice_names().into_iter().next().expect("a slice");
    let emptied = json!({"spec": {"devices": []}});
    api.patch(&name, &PatchParams::default(), &Patch::Merge(&emptied)).await.expect("slice emptied");
    node.wait_for("the slice published again after the rewrite", |node| node.device_names() == names(0..8)).await;

    // And the driver is quiet again: its own writes are not taken for someone else's.
    tokio::time::sleep(Duration::from_millis(500)).await;
    node.server.clear_requests();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(node.server.requests().is_empty(), "an idle driver asks: {:?}", node.server.request_counts());
    node.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recovery_resets_a_chip_with_a_restart_fault_tainting_its_ring_meanwhile() {
    use ascend_node::recovery::{RecoveryConfig, RecoveryMode};
    let _host = ONE_HOST_AT_A_TIME.lock().await;
    let node = Node::start_with("recovers", &[], |config| {
        config.recovery = RecoveryConfig {
            mode: RecoveryMode::Inference,
            idle: Duration::from_millis(300),
            ..RecoveryConfig::default()
        };
    })
    .await;
    node.wait_for("eight chips", |node| node.device_names() == names(0..8)).await;

    // A restart fault on npu-1, and no process on any chip of its ring of 8 (the sample runs some) nor claim.
    let mut chips: Vec<ChipOverlay> = node
        .logic_of
        .values()
        .map(|&logic_id| ChipOverlay { logic_id, processes: Some(Vec::new()), ..ChipOverlay::default() })
        .collect();
    let faulty = node.logic_of[&1];
    for chip in chips.iter_mut().filter(|chip| chip.logic_id == faulty) {
        chip.health = Some(2);
        chip.faults = Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)]);
    }
    write_overlay(&node.overlay.0, &Overlay { chips, injections: Vec::new() }).expect("overlay");
    let recovering = |device: &Device| {
        device.taints.as_ref().is_some_and(|taints| taints.iter().any(|t| t.value.as_deref() == Some("Recovering")))
    };
    node.wait_for("the ring tainted Recovering while it resets", |node| {
        node.devices().iter().filter(|d| recovering(d)).count() == 8
    })
    .await;
    node.wait_for("every chip untainted after the reset", |node| node.devices().iter().all(|d| d.taints.is_none()))
        .await;
    // What it did: told to the daemon's observer (its metrics) and recorded as Events on the Node, named as the
    // fault Events name the chip.
    assert_eq!(*node.recovery_calls.0.lock().unwrap(), ["started 1", "booted 1"]);
    let reasons = |node: &Node| -> Vec<String> {
        let mut reasons: Vec<String> = node
            .server
            .list::<Event>()
            .into_iter()
            .filter(|event| event.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(NODE))
            .filter(|event| event.action.as_deref() == Some("npu-1"))
            .filter(|event| event.reporting_controller.as_deref() == Some("ascend-dra-driver"))
            .filter_map(|event| event.reason)
            .collect();
        reasons.sort();
        reasons
    };
    node.wait_for("the reset's Events on the Node", |node| reasons(node) == ["NpuReset", "NpuResetStarted"]).await;
    node.stop().await;
}
