//! A node agent's first loop: load the driver, start the health monitor, print each snapshot of what the node offers.
//!
//! ```text
//! cargo run -p ascend-node --example health_snapshot                # on dcmi-sim (an Atlas 800T A2), a fault injected
//! cargo run -p ascend-node --example health_snapshot -- --driver    # on this machine's driver, until Ctrl-C
//! ```
//!
//! On the simulator the example points `DCMI_SIM_CONFIG` at a sample topology and an overlay file, loads the simulated
//! `libdcmi.so` that cargo built beside it, and once the first snapshot is in, raises a fault on one chip through the
//! overlay: the next snapshot shows that chip Unhealthy, and the example fails if none does within ten seconds.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::FaultCode;
use ascend_node::{
    load_driver, DriverOptions, Health, HealthMonitor, MonitorConfig, NoopObserver, Snapshot, UnhealthyCause,
};

/// The chip the simulator's fault is raised on.
const FAULTY_LOGIC_ID: u32 = 0;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let on_driver = std::env::args().nth(1).is_some_and(|arg| arg == "--driver");
    let simulator = if on_driver { None } else { Some(Simulator::start()?) };
    let mut options = DriverOptions::default();
    if let Some(simulator) = &simulator {
        // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership
        // rule is for the driver's libdcmi.so.
        options.library = Some(simulator.library.clone());
        options.verify_library_ownership = false;
    }
    let dcmi = load_driver(&options).await?;
    let config = MonitorConfig { poll_interval: Duration::from_millis(500), ..MonitorConfig::default() };
    let monitor = HealthMonitor::start(Arc::new(dcmi), config, Arc::new(NoopObserver))?;
    let mut snapshots = monitor.subscribe();

    let mut injected = false;
    loop {
        let changed = tokio::select! {
            changed = tokio::time::timeout(Duration::from_secs(10), snapshots.changed()) => changed,
            _ = tokio::signal::ctrl_c() => return Ok(()),
        };
        match changed {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err("the health monitor stopped".into()),
            Err(_) if simulator.is_some() => return Err("no snapshot within 10 s".into()),
            Err(_) => continue,
        }
        let snapshot = snapshots.borrow_and_update().clone();
        print(&snapshot);
        let Some(simulator) = &simulator else { continue };
        if !injected && snapshot.resources().next().is_some() {
            simulator.raise_fault(FAULTY_LOGIC_ID)?;
            println!("-- fault raised on chip logic {FAULTY_LOGIC_ID} through the simulator's overlay");
            injected = true;
        } else if injected && unhealthy_chip(&snapshot, FAULTY_LOGIC_ID) {
            println!("-- chip logic {FAULTY_LOGIC_ID} is Unhealthy: the monitor saw the fault");
            return Ok(());
        }
    }
}

fn print(snapshot: &Snapshot) {
    for resource in snapshot.resources() {
        println!("{} ({} devices)", resource.name, resource.devices.len());
        for device in resource.devices.values() {
            let health = match &device.health {
                Health::Healthy => "Healthy".to_owned(),
                Health::Unhealthy(reason) => format!("Unhealthy: {reason}"),
            };
            println!("  {} {} numa {:?}: {health}", device.id, device.chip, device.numa_node);
        }
    }
}

/// Whether the chip is Unhealthy for the raised fault (not merely "not yet checked").
fn unhealthy_chip(snapshot: &Snapshot, logic: u32) -> bool {
    snapshot.resources().flat_map(|resource| resource.devices.values()).any(|device| {
        device.chip.logic.get() == logic
            && matches!(
                device.health.cause(),
                Some(UnhealthyCause::Faulty { faults, .. }) if faults.contains(&FaultCode(0x80E0_1801))
            )
    })
}

/// The simulated driver: the built `libdcmi_sim.so`, a sample topology and an overlay file it re-reads.
struct Simulator {
    library: PathBuf,
    overlay: PathBuf,
    _directory: tempfile::TempDir,
}

impl Simulator {
    fn start() -> Result<Self, Box<dyn std::error::Error>> {
        let library = dcmi_sim::library_path()?;
        let directory = tempfile::tempdir()?;
        let overlay = directory.path().join("overlay.toml");
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
        std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
        Ok(Simulator { library, overlay, _directory: directory })
    }

    /// Raises an HBM multi-bit ECC fault (0x80e01801) on one chip, as a failing chip would.
    fn raise_fault(&self, logic_id: u32) -> Result<(), Box<dyn std::error::Error>> {
        let chip = dcmi_sim::ChipOverlay {
            logic_id,
            faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)]),
            ..Default::default()
        };
        let overlay = dcmi_sim::Overlay { chips: vec![chip], ..Default::default() };
        dcmi_sim::write_overlay(&self.overlay, &overlay)
            .map_err(|error| format!("{}: {error}", self.overlay.display()))?;
        Ok(())
    }
}
