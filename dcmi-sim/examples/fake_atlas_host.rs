//! An Atlas server without the hardware: lay out a fake host (device nodes, driver files, `/sys`, the simulator as the
//! driver's `libdcmi.so`) from a sample topology, for the bundled programs to find and load under that root exactly
//! as they do under `/` on a server.
//!
//! ```text
//! cargo run -p dcmi-sim --example fake_atlas_host                          # atlas-800t-a2, in a temporary directory
//! cargo run -p dcmi-sim --example fake_atlas_host -- atlas-950-8 /tmp/host  # another sample, kept in /tmp/host
//! ```
//!
//! Pass the root to any of the bundled programs as their host root (`ascend-smi --host-root`, the device plugin's
//! `--host-root`, `ascend-doctor --root`) with `DCMI_SIM_CONFIG` pointing at the topology it prints. The example
//! fails unless the root holds a device node for every chip of the topology and the driver's library.

use std::path::PathBuf;

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

    let topology = sample.topology()?;
    let host = FakeHost::build(&topology, &root, &FakeHostOptions::default())?;
    println!("{} laid out under {}", sample.name, host.root.display());
    println!("  device nodes /dev/davinci{:?} ({:?})", host.node_numbers(), host.device_nodes);
    println!("  driver library {}", host.library.display());
    println!("  topology {} (set DCMI_SIM_CONFIG to it)", host.topology.display());

    // What a node daemon finds there: a device node per chip of the topology, and the driver's library.
    let missing: Vec<u32> = topology
        .chips()
        .map(|found| dcmi_sim::fake_host::device_node_number(found.chip))
        .filter(|number| !host.root.join(format!("dev/davinci{number}")).exists())
        .collect();
    if !missing.is_empty() {
        return Err(format!("no /dev/davinci node for the topology's chips {missing:?}").into());
    }
    if !host.root.join(dcmi_sim::fake_host::LIBRARY_PATH).is_file() {
        return Err(format!("no driver library at {}", dcmi_sim::fake_host::LIBRARY_PATH).into());
    }
    println!("try: DCMI_SIM_CONFIG={} ascend-smi --host-root {}", host.topology.display(), host.root.display());
    Ok(())
}
