//! `ascend-ctk hook`.

use std::path::PathBuf;
use std::process::ExitCode;

use crate::hook::HookConfig;
use crate::inject::DEFAULT_CDI_KIND;
use crate::mount_list::DEFAULT_MOUNT_LIST_DIR;
use crate::runtime_exec::hook_main;
use clap::Args;

/// Arguments of the hook. Deliberately no environment fallbacks: a hook inherits whatever
/// environment its caller chose, and none of it is trusted.
#[derive(Debug, Args)]
pub struct HookArgs {
    /// The host's root filesystem.
    #[arg(long, default_value = "/")]
    host_root: PathBuf,
    /// Directory of `.list` mount lists, beneath the host root.
    #[arg(long, default_value = DEFAULT_MOUNT_LIST_DIR)]
    mount_list_dir: PathBuf,
    /// CDI kind whose names in cdi.k8s.io annotations count as requests.
    #[arg(long, default_value = DEFAULT_CDI_KIND)]
    cdi_kind: String,
    /// A mount the runtime resolved (a path in the container), checked again and mounted; with any, the request and
    /// the mount lists are not read.
    #[arg(long = "mount", value_name = "PATH")]
    mounts: Vec<PathBuf>,
    /// Follow symlinks in the --mount paths, confined to the host root (the request's ASCEND_ALLOW_LINK).
    #[arg(long, requires = "mounts")]
    allow_link: bool,
}

/// Reads the state from stdin and mounts the driver files into the container.
pub fn run(args: &HookArgs) -> anyhow::Result<ExitCode> {
    let config = HookConfig {
        host_root: args.host_root.clone(),
        mount_list_dir: args.mount_list_dir.clone(),
        cdi_kind: args.cdi_kind.clone(),
        mounts: (!args.mounts.is_empty()).then(|| args.mounts.clone()),
        allow_link: args.allow_link,
    };
    Ok(hook_main(&config))
}
