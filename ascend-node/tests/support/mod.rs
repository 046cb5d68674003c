//! What the recovery tests share: a simulated Atlas 950 (8 chips, each reset alone; the simulator boots a chip 500 ms
//! after its reset and clears its faults) under an overlay of its own, a health monitor over it, holders the test
//! sets, and waits on the monitor's verdict for one chip. The simulator reads its configuration from the environment
//! once per process, so each test file holds one test.

#![allow(dead_code)]

use std::collections::BTreeSet;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ascend_dcmi::{FaultCode, PhyId};
use ascend_node::recovery::Holders;
use ascend_node::{
    load_driver, DriverOptions, Health, HealthMonitor, MonitorConfig, NoopObserver, Snapshot, UnhealthyCause,
};
use tokio::sync::watch;

/// The faulty chip: logic id 2.
pub const FAULTY: u32 = 2;
/// A fault Huawei's fault policy grades `RestartBusiness`: a reset clears it.
pub const RESTART_FAULT: u32 = 0x80E0_1801;

pub struct Host {
    pub monitor: HealthMonitor,
    pub manager: Arc<dyn ascend_dcmi::DeviceManager>,
    pub overlay: PathBuf,
    _directory: tempfile::TempDir,
}

/// A simulated Atlas 950 under its own overlay, and a health monitor over it.
pub async fn host() -> Host {
    let directory = tempfile::tempdir().expect("temporary directory");
    let overlay = directory.path().join("overlay.toml");
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-950-8");
    std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
    let options = DriverOptions {
        library: Some(dcmi_sim::library_path().expect("the simulator is built")),
        verify_library_ownership: false,
        ..DriverOptions::default()
    };
    let manager: Arc<dyn ascend_dcmi::DeviceManager> = Arc::new(load_driver(&options).await.expect("driver"));
    let config = MonitorConfig { poll_interval: Duration::from_millis(200), ..MonitorConfig::default() };
    let monitor = HealthMonitor::start(Arc::clone(&manager), config, Arc::new(NoopObserver)).expect("monitor");
    Host { monitor, manager, overlay, _directory: directory }
}

/// Sets the faulty chip's faults through the overlay (none: healthy).
pub fn set_faults(overlay: &Path, faults: &[u32]) {
    let chip = dcmi_sim::ChipOverlay {
        logic_id: FAULTY,
        health: Some(if faults.is_empty() { 0 } else { 2 }),
        faults: Some(faults.iter().copied().map(dcmi_sim::topology::FaultSpec::Code).collect()),
        ..Default::default()
    };
    dcmi_sim::write_overlay(overlay, &dcmi_sim::Overlay { chips: vec![chip], ..Default::default() }).expect("overlay");
}

/// Holders the test sets.
#[derive(Default)]
pub struct TestHolders(pub Mutex<BTreeSet<PhyId>>);

impl Holders for TestHolders {
    fn held(&self) -> Pin<Box<dyn Future<Output = Result<BTreeSet<PhyId>, String>> + Send + '_>> {
        let held = self.0.lock().expect("holders").clone();
        Box::pin(async move { Ok(held) })
    }
}

pub fn chip_health(snapshot: &Snapshot) -> Option<Health> {
    snapshot.chips().find(|(record, _)| record.ids.logic.0 == FAULTY).map(|(_, health)| health.clone())
}

/// Waits until the chip's health satisfies `wanted`, or fails after `seconds`.
pub async fn wait_for(
    snapshots: &mut watch::Receiver<Arc<Snapshot>>,
    seconds: u64,
    what: &str,
    wanted: impl Fn(&Health) -> bool,
) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if chip_health(&snapshots.borrow_and_update()).is_some_and(|health| wanted(&health)) {
            return;
        }
        if tokio::time::timeout_at(deadline, snapshots.changed()).await.is_err() {
            panic!("{what}: not within {seconds} s; last {:?}", chip_health(&snapshots.borrow()));
        }
    }
}

pub fn faulty(health: &Health) -> bool {
    matches!(health, Health::Unhealthy(UnhealthyCause::Faulty { faults, .. }) if faults.contains(&FaultCode(RESTART_FAULT.into())))
}
