//! `ascend-ctk spec inject`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::inject::MountDelivery;
use crate::runtime_shim::{prepare_bundle, PrepareOptions};
use anyhow::Context;
use clap::{Args, Subcommand};

use super::runtime::hook_entry;
use super::settings::{report_fallback, HostSettings};

/// Spec subcommands.
#[derive(Debug, Subcommand)]
pub enum SpecCommand {
    /// Edit a bundle's config.json for the request in its environment, as the runtime would.
    Inject(InjectArgs),
}

/// Arguments of `spec inject`.
#[derive(Debug, Args)]
pub struct InjectArgs {
    /// The bundle directory (holding config.json).
    #[arg(long)]
    bundle: PathBuf,
    #[command(flatten)]
    host: HostSettings,
    /// Add a createRuntime hook for the driver mounts instead of writing them into the spec.
    #[arg(long)]
    mount_by_hook: bool,
}

/// Runs a spec subcommand.
pub fn run(command: SpecCommand) -> anyhow::Result<ExitCode> {
    match command {
        SpecCommand::Inject(args) => {
            let delivery = if args.mount_by_hook {
                MountDelivery::ByHookWithMounts(hook_entry(&args.host)?)
            } else {
                MountDelivery::InSpec
            };
            let options = PrepareOptions {
                host_root: args.host.host_root.clone(),
                injection: args.host.injection(),
                chip_type: args.host.chip_type.clone(),
                cdi_kind: args.host.cdi_kind.clone(),
                delivery,
                // A one-off edit asks the driver afresh.
                chip_cache: None,
            };
            let outcome = prepare_bundle(&args.bundle, &options)
                .with_context(|| format!("preparing bundle {}", args.bundle.display()))?;
            if let Some(source) = &outcome.chip_source {
                report_fallback(source);
                eprintln!("ascend-ctk: chips from {source}");
            }
            println!("chips: {:?}; mounts: {}", outcome.chips, outcome.mounts.len());
            Ok(ExitCode::SUCCESS)
        }
    }
}
