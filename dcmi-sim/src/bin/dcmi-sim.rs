//! `dcmi-sim`: tools around the simulated libdcmi.so.
//!
//! `dcmi-sim fake-host --topology T --root DIR` lays out a fake Atlas host (device nodes, driver files, the simulator
//! installed as `libdcmi.so`, `/sys` entries, the driver, firmware and CANN packages' version files) under DIR. `T` is
//! a topology file or the name of a sample topology. The version files fit together unless an option makes one
//! mismatch: `--firmware-version` outside the driver's range, `--cann-requires-ascendhal` above the driver's
//! ascendhal, `--cann-inner-line` a line the driver does not list; `--other-cann-version` installs more CANN versions
//! beside the one `latest` points to. Every chip reports the firmware's version through `dcmi_get_version` unless
//! `--chip-firmware PHY=VERSION` leaves one on another, as a partial firmware upgrade does.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use dcmi_sim::fake_host::{self, DeviceNodeKind, FakeHost, FakeHostOptions, FakeSoftware};

#[derive(Parser)]
#[command(name = "dcmi-sim", version, about = "Tools around the simulated libdcmi.so")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Lay out a fake Atlas host for a topology under a root directory.
    FakeHost {
        /// A topology file, or the name of a sample topology (see `dcmi-sim samples`).
        #[arg(long)]
        topology: String,
        /// The root directory to lay the host out in (created if missing).
        #[arg(long)]
        root: PathBuf,
        /// The simulator library to install as libdcmi.so (default: the one built next to this tool).
        #[arg(long)]
        library: Option<PathBuf>,
        /// The CANN toolkit version `latest` points to.
        #[arg(long, default_value = fake_host::DEFAULT_CANN_VERSION)]
        cann_version: String,
        /// Another CANN toolkit version installed beside it, fitting the driver (repeatable).
        #[arg(long, value_name = "VERSION")]
        other_cann_version: Vec<String>,
        /// The firmware version (the driver accepts 7.0.0 to 7.7.99).
        #[arg(long, default_value = fake_host::DEFAULT_FIRMWARE_VERSION)]
        firmware_version: String,
        /// A chip (by physical id) that runs another firmware than the installed package's, as after a partial
        /// upgrade: PHY=VERSION (repeatable).
        #[arg(long, value_name = "PHY=VERSION", value_parser = chip_firmware)]
        chip_firmware: Vec<(u32, String)>,
        /// The required_driver_ascendhal_version of the latest CANN's runtime (the driver has 7.35.23).
        #[arg(long, value_name = "VERSION", default_value = fake_host::DEFAULT_REQUIRED_ASCENDHAL)]
        cann_requires_ascendhal: String,
        /// The inner version line of the latest CANN (the driver lists V100R001C15, C17, C18, C19).
        #[arg(long, value_name = "LINE", default_value = fake_host::DEFAULT_CANN_INNER_LINE)]
        cann_inner_line: String,
        /// Write plain files instead of character devices even when running as root.
        #[arg(long)]
        plain_device_nodes: bool,
    },
    /// List the sample topologies built into the simulator.
    Samples,
    /// Print a sample topology as TOML.
    Sample {
        /// The sample's name.
        name: String,
    },
}

/// `--chip-firmware PHY=VERSION`.
fn chip_firmware(text: &str) -> Result<(u32, String), String> {
    let (phy_id, version) = text.split_once('=').ok_or_else(|| format!("{text:?}: expected PHY=VERSION"))?;
    let phy_id = phy_id.trim().parse().map_err(|_| format!("{text:?}: {phy_id:?} is not a physical id"))?;
    let version = version.trim();
    if version.is_empty() {
        return Err(format!("{text:?}: the version is empty"));
    }
    Ok((phy_id, version.to_owned()))
}

fn main() -> ExitCode {
    match run(Cli::parse()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("dcmi-sim: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Cli) -> Result<(), String> {
    match cli.command {
        Command::FakeHost {
            topology,
            root,
            library,
            cann_version,
            other_cann_version,
            firmware_version,
            cann_requires_ascendhal,
            cann_inner_line,
            chip_firmware,
            plain_device_nodes,
        } => {
            let topology = dcmi_sim::samples::load_file_or_sample(&topology).map_err(|error| error.to_string())?;
            let software = FakeSoftware {
                cann_version: Some(cann_version),
                other_cann_versions: other_cann_version,
                firmware_version: Some(firmware_version),
                required_ascendhal: cann_requires_ascendhal,
                cann_inner_line,
            };
            let options = FakeHostOptions {
                library,
                plain_device_nodes,
                software,
                chip_firmware,
                hccn_tool: None,
                chip_nodes: None,
            };
            let host = FakeHost::build(&topology, &root, &options).map_err(|error| error.to_string())?;
            let nodes = match host.device_nodes {
                DeviceNodeKind::CharacterDevices => "character devices",
                DeviceNodeKind::PlainFiles => "plain files (not root: no character devices)",
            };
            println!("fake host laid out under {}", host.root.display());
            println!("  chips (phy ids): {:?}, /dev/davinci{:?}", host.phy_ids, host.node_numbers());
            println!("  device nodes:    {nodes}");
            println!("  libdcmi.so:      {}", host.library.display());
            println!("  topology:        {}", host.topology.display());
            println!(
                "use it with: DCMI_SIM_CONFIG={} ASCEND_DCMI_LIBRARY={}",
                host.topology.display(),
                host.library.display()
            );
            Ok(())
        }
        Command::Samples => {
            for sample in dcmi_sim::samples::SAMPLES {
                println!("{:<16} {}", sample.name, sample.description);
            }
            Ok(())
        }
        Command::Sample { name } => {
            let sample = dcmi_sim::samples::by_name(&name).ok_or_else(|| {
                let names: Vec<&str> = dcmi_sim::samples::SAMPLES.iter().map(|s| s.name).collect();
                format!("no sample topology {name:?}; samples: {}", names.join(", "))
            })?;
            print!("{}", sample.toml);
            Ok(())
        }
    }
}
