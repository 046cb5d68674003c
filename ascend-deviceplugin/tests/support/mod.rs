//! A scriptable host of fake chips behind `MockDeviceManager`, and helpers to run the plugin against the fake
//! kubelet in a temporary plugin directory.

#![allow(dead_code)] // Each test file uses a different part of the support code.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use ascend_dcmi::{
    Assertion, BootStatus, CallContext, CardId, Celsius, ChipIdentity, ChipIds, ChipInfo, ChipLocator, ChipType,
    DcmiHealth, DdrMemory, DeviceId, DeviceManager, EccComponent, EccCounters, Error as DcmiError, EventSource,
    FaultCode, FaultCodes, FaultEvent, FaultEventStream, FaultLevel, FrequencyKind, HbmMemory, HccsBandwidth,
    HealthReport, LogicId, MegaHertz, NetworkHealth, PcieBandwidth, Percent, PhyId, Power, ProcessList,
    UtilizationKind, Vnpu, VnpuId, VnpuInventory, Volts,
};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use ascend_deviceplugin::volcano::VolcanoConfig;
use ascend_deviceplugin::{HealthMonitor, HoldingsTracker, NoopObserver, PluginConfig};
use crossbeam_channel::Sender;
use tokio::sync::oneshot;
use tokio::task::JoinHandle;

/// One fake chip.
#[derive(Clone)]
pub struct FakeChip {
    pub ids: ChipIds,
    pub chip_type: ChipType,
    pub numa_node: Option<u32>,
    pub faults: Vec<FaultCode>,
    pub present: bool,
    pub identity_works: bool,
    pub hang: bool,
    pub vnpus: Vec<(u32, &'static str)>,
}

#[derive(Default)]
struct HostState {
    chips: BTreeMap<u32, FakeChip>,
    events: Option<Sender<FaultEvent>>,
    health_calls: u64,
}

/// A host of fake chips; clone it to script faults while the plugin runs.
#[derive(Clone, Default)]
pub struct FakeHost {
    state: Arc<Mutex<HostState>>,
}

fn chip(phy: u32, card: i32, device: i32, chip_type: ChipType, numa: u32) -> FakeChip {
    FakeChip {
        ids: ChipIds {
            logic: LogicId(phy),
            phy: PhyId(phy),
            locator: Some(ChipLocator { card: CardId(card), device: DeviceId(device) }),
        },
        chip_type,
        numa_node: Some(numa),
        faults: Vec::new(),
        present: true,
        identity_works: true,
        hang: false,
        vnpus: Vec::new(),
    }
}

impl FakeHost {
    /// An eight-chip 910B server: one chip per card, NUMA node = phy / 4.
    pub fn eight_910b() -> Self {
        let host = FakeHost::default();
        for phy in 0..8 {
            host.add(chip(phy, phy as i32, 0, ChipType::Ascend910B, phy / 4));
        }
        host
    }

    /// Four Atlas 300I Duo cards: two 310P chips per card, cards 0-1 on NUMA node 0, cards 2-3 on node 1.
    pub fn four_duo_cards() -> Self {
        let host = FakeHost::default();
        for phy in 0..8u32 {
            let card = (phy / 2) as i32;
            host.add(chip(phy, card, (phy % 2) as i32, ChipType::Ascend310P, phy / 4));
        }
        host
    }

    pub fn add(&self, chip: FakeChip) {
        self.with(|state| {
            state.chips.insert(chip.ids.phy.get(), chip);
        });
    }

    fn with<T>(&self, f: impl FnOnce(&mut HostState) -> T) -> T {
        let mut state = self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        f(&mut state)
    }

    pub fn edit(&self, phy: u32, f: impl FnOnce(&mut FakeChip)) {
        self.with(|state| {
            if let Some(chip) = state.chips.get_mut(&phy) {
                f(chip);
            }
        });
    }

    /// Raises a fault; with `event` the driver also sends a fault event.
    pub fn raise(&self, phy: u32, code: FaultCode, event: bool) {
        self.edit(phy, |chip| chip.faults.push(code));
        if event {
            self.send_event(phy, code, Assertion::Occur);
        }
    }

    /// Clears every fault; with `event` the driver sends recovery events.
    pub fn clear(&self, phy: u32, event: bool) {
        let mut cleared = Vec::new();
        self.edit(phy, |chip| cleared = std::mem::take(&mut chip.faults));
        if event {
            for code in cleared {
                self.send_event(phy, code, Assertion::Recovery);
            }
        }
    }

    fn send_event(&self, phy: u32, code: FaultCode, assertion: Assertion) {
        self.with(|state| {
            if let Some(events) = &state.events {
                let _ = events.send(FaultEvent {
                    logic: LogicId(phy),
                    code,
                    severity: None,
                    assertion,
                    name: String::new(),
                    seen_at: SystemTime::now(),
                    source: EventSource::Subscription,
                });
            }
        });
    }

    pub fn health_calls(&self) -> u64 {
        self.with(|state| state.health_calls)
    }

    fn get(&self, logic: LogicId) -> Result<FakeChip, DcmiError> {
        self.with(|state| state.chips.get(&logic.get()).filter(|c| c.present).cloned())
            .ok_or_else(|| DcmiError::NoSuchChip(format!("logic id {logic}")))
    }

    /// A `DeviceManager` over this host.
    pub fn manager(&self) -> Arc<dyn DeviceManager> {
        Arc::new(self.clone())
    }
}

fn not_supported<T>(call: &'static str) -> Result<T, DcmiError> {
    Err(DcmiError::NotSupported(CallContext::global(call)))
}

// Written by hand rather than with `MockDeviceManager`: mockall serialises calls to one method behind a lock,
// so a hung `health` call would block every other chip's, which is exactly what the plugin must not suffer.
impl DeviceManager for FakeHost {
    fn chips(&self) -> ascend_dcmi::Result<Vec<ChipIds>> {
        Ok(self.with(|state| state.chips.values().filter(|c| c.present).map(|c| c.ids).collect()))
    }

    fn driver_version(&self) -> ascend_dcmi::Result<String> {
        Ok("fake".to_owned())
    }

    fn identity(&self, logic: LogicId) -> ascend_dcmi::Result<ChipIdentity> {
        let chip = self.get(logic)?;
        if !chip.identity_works {
            return Err(DcmiError::NoSuchChip(format!("logic id {logic} (identity unreadable)")));
        }
        Ok(identity(&chip))
    }

    fn health(&self, logic: LogicId) -> ascend_dcmi::Result<HealthReport> {
        self.with(|state| state.health_calls += 1);
        let started = Instant::now();
        while self.get(logic)?.hang && started.elapsed() < Duration::from_secs(30) {
            std::thread::sleep(Duration::from_millis(5));
        }
        Ok(report(&self.get(logic)?.faults))
    }

    fn temperature(&self, _: LogicId) -> ascend_dcmi::Result<Celsius> {
        not_supported("dcmi_get_device_temperature")
    }

    fn power(&self, _: LogicId) -> ascend_dcmi::Result<Power> {
        not_supported("dcmi_get_device_power_info")
    }

    fn voltage(&self, _: LogicId) -> ascend_dcmi::Result<Volts> {
        not_supported("dcmi_get_device_voltage")
    }

    fn frequency(&self, _: LogicId, _: FrequencyKind) -> ascend_dcmi::Result<MegaHertz> {
        not_supported("dcmi_get_device_frequency")
    }

    fn utilization(&self, _: LogicId, _: UtilizationKind) -> ascend_dcmi::Result<Percent> {
        not_supported("dcmi_get_device_utilization_rate")
    }

    fn ddr_memory(&self, _: LogicId) -> ascend_dcmi::Result<DdrMemory> {
        not_supported("dcmi_get_device_memory_info_v3")
    }

    fn hbm_memory(&self, _: LogicId) -> ascend_dcmi::Result<HbmMemory> {
        not_supported("dcmi_get_device_hbm_info")
    }

    fn ecc(&self, _: LogicId, _: EccComponent) -> ascend_dcmi::Result<EccCounters> {
        not_supported("dcmi_get_device_ecc_info")
    }

    fn processes(&self, _: LogicId) -> ascend_dcmi::Result<ProcessList> {
        not_supported("dcmi_get_device_resource_info")
    }

    fn pcie_bandwidth(&self, _: LogicId, _: Duration) -> ascend_dcmi::Result<PcieBandwidth> {
        not_supported("dcmi_get_device_pcie_bandwidth")
    }

    fn hccs_bandwidth(&self, _: LogicId, _: Duration) -> ascend_dcmi::Result<HccsBandwidth> {
        not_supported("dcmi_get_hccs_bandwidth")
    }

    fn network_health(&self, _: LogicId) -> ascend_dcmi::Result<NetworkHealth> {
        not_supported("dcmi_get_device_network_health")
    }

    fn vnpus(&self, logic: LogicId) -> ascend_dcmi::Result<VnpuInventory> {
        let chip = self.get(logic)?;
        Ok(VnpuInventory {
            vnpus: chip
                .vnpus
                .iter()
                .map(|(id, template)| Vnpu {
                    id: VnpuId(*id),
                    template: (*template).to_owned(),
                    aicore: 2.0,
                    memory_bytes: 1 << 30,
                    in_use: false,
                    aicore_utilization: None,
                    activity_memory_total_kb: None,
                    activity_memory_used_kb: None,
                })
                .collect(),
            ..VnpuInventory::default()
        })
    }

    fn create_vnpu(&self, _: LogicId, _: &str) -> ascend_dcmi::Result<VnpuId> {
        not_supported("dcmi_create_vdevice")
    }

    fn destroy_vnpu(&self, _: LogicId, _: VnpuId) -> ascend_dcmi::Result<()> {
        not_supported("dcmi_set_destroy_vdevice")
    }

    fn boot_status(&self, _: LogicId) -> ascend_dcmi::Result<BootStatus> {
        not_supported("dcmi_get_device_boot_status")
    }

    fn reset(&self, _: LogicId, _: Duration) -> ascend_dcmi::Result<()> {
        not_supported("dcmi_set_device_reset")
    }

    fn fault_events(&self, _: Duration) -> ascend_dcmi::Result<FaultEventStream> {
        let (sender, receiver) = crossbeam_channel::unbounded();
        self.with(|state| state.events = Some(sender));
        Ok(FaultEventStream::new(receiver, ()))
    }
}

fn identity(chip: &FakeChip) -> ChipIdentity {
    let name = match chip.chip_type {
        ChipType::Ascend310P => "310P3",
        ChipType::Ascend910B => "910B3",
        _ => "910",
    };
    ChipIdentity {
        ids: chip.ids,
        chip_type: Some(chip.chip_type),
        info: ChipInfo {
            chip_type: "Ascend".into(),
            chip_name: name.into(),
            chip_version: "V1".into(),
            aicore_count: 8,
            npu_name: None,
        },
        product_type: None,
        board: None,
        mainboard_id: None,
        pcie_address: None,
        numa_node: chip.numa_node,
        affinity_cpus: None,
        die_id: None,
        elabel: None,
    }
}

fn report(faults: &[FaultCode]) -> HealthReport {
    if faults.is_empty() {
        return HealthReport::healthy();
    }
    HealthReport {
        dcmi: Some(DcmiHealth::Major),
        faults: FaultCodes::from_codes(faults.iter().copied()),
        level: FaultLevel::SeparateNpu,
        card_dropped: false,
    }
}

/// The plugin running against a fake kubelet in a temporary directory.
pub struct Harness {
    pub dir: tempfile::TempDir,
    pub kubelet: FakeKubelet,
    pub host: FakeHost,
    stop: Option<oneshot::Sender<()>>,
    task: Option<JoinHandle<ascend_deviceplugin::Result<()>>>,
}

pub const WAIT: Duration = Duration::from_secs(10);

/// The node of the Volcano-mode harness.
pub const NODE: &str = "worker-1";

impl Harness {
    /// Starts the fake kubelet, then the plugin with `configure` applied to a test configuration.
    pub async fn start(host: FakeHost, configure: impl FnOnce(&mut PluginConfig)) -> Harness {
        let dir = tempfile::tempdir().expect("temporary plugin directory");
        let kubelet = FakeKubelet::start(dir.path()).await.expect("fake kubelet starts");
        let mut config = PluginConfig { plugin_dir: dir.path().to_owned(), ..PluginConfig::default() };
        config.monitor.poll_interval = Duration::from_millis(200);
        config.monitor.health_deadline = Duration::from_millis(300);
        configure(&mut config);
        let (stop, stopped) = oneshot::channel::<()>();
        let manager = host.manager();
        let task = tokio::spawn(ascend_deviceplugin::run(manager, config, Arc::new(NoopObserver), async {
            let _ = stopped.await;
        }));
        Harness { dir, kubelet, host, stop: Some(stop), task: Some(task) }
    }

    /// Starts the fake kubelet, then the plugin in Volcano mode for node `worker-1` against `client` (a fake API
    /// server's), with test-speed lookups and resyncs and `configure` applied.
    pub async fn start_volcano(
        host: FakeHost,
        client: kube::Client,
        configure: impl FnOnce(&mut PluginConfig, &mut VolcanoConfig),
    ) -> Harness {
        let dir = tempfile::tempdir().expect("temporary plugin directory");
        let kubelet = FakeKubelet::start(dir.path()).await.expect("fake kubelet starts");
        let mut config = PluginConfig { plugin_dir: dir.path().to_owned(), ..PluginConfig::default() };
        config.monitor.poll_interval = Duration::from_millis(200);
        config.monitor.health_deadline = Duration::from_millis(300);
        let mut volcano = VolcanoConfig::new(NODE);
        volcano.lookup.retry_interval = Duration::from_millis(100);
        volcano.backoff.first = Duration::from_millis(200);
        volcano.request_timeout = Duration::from_secs(2);
        configure(&mut config, &mut volcano);
        let (stop, stopped) = oneshot::channel::<()>();
        let manager = host.manager();
        let task = tokio::spawn(async move {
            let observer: Arc<dyn ascend_deviceplugin::PluginObserver> = Arc::new(NoopObserver);
            let monitor = HealthMonitor::start(manager, config.monitor.clone(), observer.clone())?;
            let holdings = Arc::new(HoldingsTracker::new(config.pod_resources_socket.clone(), config.call_timeout));
            let assigner = ascend_deviceplugin::volcano::start(
                client,
                &monitor,
                holdings.subscribe(),
                volcano,
                std::future::pending(),
            )?;
            let shutdown = async {
                let _ = stopped.await;
            };
            ascend_deviceplugin::serve(&monitor, config, observer, Some(assigner), holdings, shutdown).await;
            Ok(())
        });
        Harness { dir, kubelet, host, stop: Some(stop), task: Some(task) }
    }

    /// Stops the plugin and waits for it to finish.
    pub async fn stop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(task) = self.task.take() {
            let result = tokio::time::timeout(WAIT, task).await.expect("plugin stops in time").expect("plugin task");
            result.expect("plugin ran without error");
        }
    }

    /// Waits until `resource` lists devices for which `condition` holds, and returns them as (id, health).
    pub async fn wait_devices(
        &self,
        resource: &str,
        what: &str,
        condition: impl Fn(&[(String, String)]) -> bool,
    ) -> Vec<(String, String)> {
        let list = |kubelet: &FakeKubelet| -> Option<Vec<(String, String)>> {
            kubelet.devices(resource).map(|devices| devices.into_iter().map(|d| (d.id, d.health)).collect())
        };
        self.kubelet
            .wait_until(what, WAIT, |kubelet| list(kubelet).is_some_and(|devices| condition(&devices)))
            .await
            .unwrap_or_else(|error| panic!("{error}"));
        list(&self.kubelet).unwrap_or_default()
    }
}

/// The health the kubelet sees for one device.
pub fn health_of<'a>(devices: &'a [(String, String)], id: &str) -> Option<&'a str> {
    devices.iter().find(|(device, _)| device == id).map(|(_, health)| health.as_str())
}

impl FakeHost {
    /// A copy of one chip's script, to build variants.
    pub fn manager_chip(&self, phy: u32) -> FakeChip {
        self.with(|state| state.chips.get(&phy).cloned()).expect("chip exists")
    }
}

/// A private copy of the simulated `libdcmi.so` (its own simulator state), loaded with a sample topology. The
/// simulator reads its topology from a process-wide variable: one sample per test binary.
pub fn simulator(sample: &str) -> (ascend_dcmi::Dcmi, tempfile::TempDir) {
    let built = dcmi_sim::library_path().expect("the simulator is built with the tests");
    let dir = tempfile::tempdir().expect("temporary directory");
    let library = dir.path().join("libdcmi.so");
    std::fs::copy(built, &library).expect("copy libdcmi_sim.so");
    std::env::set_var(dcmi_sim::CONFIG_ENV, format!("sample:{sample}"));
    let dcmi = ascend_dcmi::Dcmi::builder()
        .library_path(&library)
        .verify_library_ownership(false)
        .init()
        .expect("simulator loads");
    (dcmi, dir)
}

/// A fake API server holding Node `config.node_name` (with one foreign annotation, `volcano.sh/other: kept`) and
/// Volcano mode's Node annotation writer started against it for `manager`'s chips; keep the monitor alive.
pub async fn annotated_node(
    manager: Arc<dyn DeviceManager>,
    config: &VolcanoConfig,
) -> (fake_apiserver::FakeApiServer, HealthMonitor) {
    let server = fake_apiserver::FakeApiServer::start().await.expect("fake API server");
    server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": config.node_name,
        "annotations": {"volcano.sh/other": "kept"}}}));
    let client = ascend_kube::client_for(server.config(), "ascend-device-plugin", "test").expect("client");
    let observer: Arc<dyn ascend_deviceplugin::PluginObserver> = Arc::new(NoopObserver);
    let monitor =
        HealthMonitor::start(Arc::clone(&manager), PluginConfig::default().monitor, observer).expect("monitor starts");
    ascend_deviceplugin::volcano::start_node_annotation(client, manager, &monitor, config, std::future::pending())
        .expect("valid node name");
    (server, monitor)
}

/// The kubelet's PodResources socket, in a temporary directory of its own, listing `pods`; the plugin reads it
/// through `PluginConfig::pod_resources_socket` set to the path returned.
pub fn pod_resources(
    pods: Vec<ascend_node::pod_resources::api::PodResources>,
) -> (tempfile::TempDir, std::path::PathBuf, ascend_deviceplugin::fake_kubelet::FakePodResources) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let socket = dir.path().join("kubelet.sock");
    let served =
        ascend_deviceplugin::fake_kubelet::FakePodResources::start(&socket, pods).expect("PodResources socket");
    (dir, socket, served)
}
