//! An Atlas server without the hardware: lay out a fake host (device nodes, driver files, `/sys`, the simulator as the
//! driver's `libdcmi.so`) from a sample topology, then find and load the driver under that root exactly as a node
//! daemon does under `/`.
//!
//! ```text
//! cargo run -p dcmi-sim --example fake_atlas_host                          # atlas-800t-a2, in a temporary directory
//! cargo run -p dcmi-sim --example fake_atlas_host -- atlas-950-8 /tmp/host  # another sample, kept in /tmp/host
//! ```
//!
//! Pass the root to any of the bundled programs as their host root (`ascend-smi --host-root`, the device plugin's
//! `--host-root`, `ascend-doctor --host-root`) with `DCMI_SIM_CONFIG` pointing at the topology it prints. The
//! example fails unless the driver found under the root reports every chip the host has a device node for.

use std::path::PathBuf;

use ascend_dcmi::Dcmi;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let sample_name = args.next().unwrap_or_else(|| "atlas-800t-a2".to_owned());
    let scratch = tempfile::tempdir()?;
    let root = args.next().map_or_else(|| scratch.path().to_path_buf(), PathBuf::from);
    let sample = dcmi_sim::samples::by_name(&sample_name).ok_or_else(|| {
        let names: Vec<&str> = dcmi_sim::SAMPLES.iter().map(|sample| sample.name).collect();
        format!("no sample topology {sample_name:?}; the samples are {}", names.join(", "))
    })?;

    let host = FakeHost::build(&sample.topology()?, &root, &FakeHostOptions::default())?;
    println!("{} laid out under {}", sample.name, host.root.display());
    println!("  device nodes /dev/davinci{:?} ({:?})", host.phy_ids, host.device_nodes);
    println!("  driver library {}", host.library.display());
    println!("  topology {} (set DCMI_SIM_CONFIG to it)", host.topology.display());

    std::env::set_var(dcmi_sim::CONFIG_ENV, &host.topology);
    // The root is a temporary directory of whoever runs the example, not root's to guard: the ownership rule is for
    // the driver's libdcmi.so on a server.
    let dcmi = Dcmi::builder().host_root(&host.root).verify_library_ownership(false).init()?;
    println!("driver {} found at {}", dcmi.driver_version()?, dcmi.library_path().display());
    let chips = dcmi.chips()?;
    for ids in &chips {
        let chip_type = dcmi.chip(ids.logic)?.chip_type()?;
        println!("  {ids}: {}", chip_type.map_or_else(|| "unknown type".to_owned(), |t| format!("{t:?}")));
    }
    if chips.len() != host.phy_ids.len() {
        return Err(format!(
            "the driver reports {} chips, the host has {} device nodes",
            chips.len(),
            host.phy_ids.len()
        )
        .into());
    }
    Ok(())
}
