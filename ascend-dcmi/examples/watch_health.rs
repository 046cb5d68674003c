//! Every chip's health, then the fault events of the next seconds: what a node agent built on this crate does first.
//!
//! ```text
//! cargo run -p ascend-dcmi --example watch_health                 # on dcmi-sim (an Atlas 800T A2), a fault injected
//! cargo run -p ascend-dcmi --example watch_health -- --driver 10  # on this machine's driver, for 10 s
//! ```
//!
//! On the simulator the example points `DCMI_SIM_CONFIG` at a sample topology and an overlay file, loads the simulated
//! `libdcmi.so` (which cargo built beside it) and, after a second, raises a fault on one chip through the overlay, so
//! the event stream has something to show.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ascend_dcmi::{Dcmi, Result};

fn main() -> Result<()> {
    let mut args = std::env::args().skip(1).peekable();
    let on_driver = args.next_if(|arg| arg == "--driver").is_some();
    let seconds = args.next().and_then(|text| text.parse().ok()).unwrap_or(3);
    let simulator = if on_driver { None } else { Some(Simulator::start()?) };

    let mut builder = Dcmi::builder();
    if let Some(simulator) = &simulator {
        // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership
        // rule is for the driver's libdcmi.so.
        builder = builder.library_path(&simulator.library).verify_library_ownership(false);
    }
    let dcmi = builder.init()?;
    println!("driver {} ({:?} API), {}", dcmi.driver_version()?, dcmi.api_family(), dcmi.library_path().display());
    for ids in dcmi.chips()? {
        let health = dcmi.chip(ids.logic)?.health()?;
        println!("{ids}: {:?}, faults {:?}", health.level, health.faults);
    }

    let events = dcmi.fault_events(Duration::from_millis(500))?;
    let started = Instant::now();
    let until = started + Duration::from_secs(seconds);
    let mut injected = false;
    let mut events_seen = 0;
    while Instant::now() < until {
        if let Some(simulator) = &simulator {
            if !injected && started.elapsed() >= Duration::from_secs(1) {
                simulator.raise_fault(0)?;
                injected = true;
            }
        }
        if let Ok(event) = events.recv_timeout(Duration::from_millis(200)) {
            println!("event: chip logic {} {:?} {} ({:?})", event.logic, event.assertion, event.code, event.source);
            events_seen += 1;
        }
    }
    // On the simulator the injected fault must have come through: CI runs this example as a check.
    if simulator.is_some() && events_seen == 0 {
        return Err(config_error(
            Path::new("overlay.toml"),
            format!("no fault event within {seconds} s of the injected fault"),
        ));
    }
    Ok(())
}

/// The simulated driver: the built `libdcmi_sim.so`, a sample topology and an overlay file it re-reads.
struct Simulator {
    library: PathBuf,
    overlay: PathBuf,
    _directory: tempfile::TempDir,
}

impl Simulator {
    fn start() -> Result<Self> {
        let library = dcmi_sim::library_path().map_err(|error| config_error(Path::new("libdcmi_sim.so"), error))?;
        let directory = tempfile::tempdir().map_err(|error| config_error(Path::new("temporary directory"), error))?;
        let overlay = directory.path().join("overlay.toml");
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
        std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
        Ok(Simulator { library, overlay, _directory: directory })
    }

    /// Raises an HBM multi-bit ECC fault (0x80e01801) on one chip, as a failing chip would.
    fn raise_fault(&self, logic_id: u32) -> Result<()> {
        let chip = dcmi_sim::ChipOverlay {
            logic_id,
            faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)]),
            ..Default::default()
        };
        let overlay = dcmi_sim::Overlay { chips: vec![chip], ..Default::default() };
        dcmi_sim::write_overlay(&self.overlay, &overlay).map_err(|error| config_error(&self.overlay, error))
    }
}

fn config_error(path: &Path, error: impl std::fmt::Display) -> ascend_dcmi::Error {
    ascend_dcmi::Error::Config { path: path.to_path_buf(), detail: error.to_string() }
}
