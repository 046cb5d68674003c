//! `ascend-ctk cdi generate` and `ascend-ctk cdi list`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::cdi::{generate_spec, list_device_names, write_spec, GenerateOptions, DYNAMIC_SPEC_DIR, STATIC_SPEC_DIR};
use crate::chip_discovery::discover_chips;
use crate::request::parse_mount_list_names;
use crate::secure_path::HostRoot;
use clap::{Args, Subcommand};

use super::settings::{report_chip_source, HostSettings};

/// CDI subcommands.
#[derive(Debug, Subcommand)]
pub enum CdiCommand {
    /// Write a CDI spec describing every chip of the host (one device per chip, plus `all`).
    Generate(GenerateArgs),
    /// Print the fully qualified device names of the specs in the spec directories.
    List {
        /// Spec directories (default: /etc/cdi and /var/run/cdi).
        #[arg(long = "spec-dir")]
        spec_dirs: Vec<PathBuf>,
    },
}

/// Arguments of `cdi generate`.
#[derive(Debug, Args)]
pub struct GenerateArgs {
    #[command(flatten)]
    host: HostSettings,
    /// Directory to write `<vendor>-<class>.json` into.
    #[arg(long, default_value = DYNAMIC_SPEC_DIR)]
    output_dir: PathBuf,
    /// Print the spec on stdout instead of writing it.
    #[arg(long)]
    stdout: bool,
    /// Mount lists (comma list of names, like ASCEND_RUNTIME_MOUNTS).
    #[arg(long, default_value = "base")]
    mount_lists: String,
    /// Allow symlinks in mount sources (still confined to the host root).
    #[arg(long)]
    allow_link: bool,
    /// Device nodes only, no driver mounts (like NODRV).
    #[arg(long)]
    no_driver: bool,
}

/// Runs a CDI subcommand.
pub fn run(command: CdiCommand) -> anyhow::Result<ExitCode> {
    match command {
        CdiCommand::Generate(args) => {
            let root = HostRoot::open(&args.host.host_root)?;
            let discovered = discover_chips(&root, args.host.chip_type.clone())?;
            report_chip_source(&discovered);
            let options = GenerateOptions {
                kind: args.host.cdi_kind.clone(),
                mount_lists: parse_mount_list_names(&args.mount_lists)?,
                injection: args.host.injection(),
                allow_link: args.allow_link,
                no_driver: args.no_driver,
            };
            let spec = generate_spec(&root, &discovered.chips, &options)?;
            if args.stdout {
                println!("{}", serde_json::to_string_pretty(&spec)?);
            } else {
                let path = write_spec(&args.output_dir, &spec)?;
                eprintln!("wrote {} (cdiVersion {}, {} devices)", path.display(), spec.cdi_version, spec.devices.len());
            }
        }
        CdiCommand::List { spec_dirs } => {
            let dirs = if spec_dirs.is_empty() {
                vec![PathBuf::from(STATIC_SPEC_DIR), PathBuf::from(DYNAMIC_SPEC_DIR)]
            } else {
                spec_dirs
            };
            for name in list_device_names(&dirs)? {
                println!("{name}");
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}
