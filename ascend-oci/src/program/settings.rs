//! Settings shared by the subcommands that read the host.

use std::path::PathBuf;

use crate::chip_discovery::{ChipSource, DiscoveredChips};
use crate::inject::{InjectionConfig, DEFAULT_CDI_KIND};
use crate::mount_list::DEFAULT_MOUNT_LIST_DIR;
use crate::runtime_exec::{CDI_KIND_ENV, CHIP_TYPE_ENV, HOST_ROOT_ENV, MOUNT_LIST_DIR_ENV};
use clap::Args;

/// Where the host is and how to read it.
#[derive(Debug, Clone, Args)]
pub struct HostSettings {
    /// The host's root filesystem (for a host mounted elsewhere, or a fake host).
    #[arg(long, env = HOST_ROOT_ENV, default_value = "/")]
    pub host_root: PathBuf,
    /// Directory of `.list` mount lists, beneath the host root.
    #[arg(long, env = MOUNT_LIST_DIR_ENV, default_value = DEFAULT_MOUNT_LIST_DIR)]
    pub mount_list_dir: PathBuf,
    /// Chip type (910B, 310P, 310B, 950 ...): selects the shared device nodes. Without it the
    /// chips, chip type and product type come from DCMI (libdcmi.so under the host root, or the
    /// file ASCEND_DCMI_LIBRARY names), and from a /dev/davinci* scan when DCMI cannot be used.
    #[arg(long, env = CHIP_TYPE_ENV)]
    pub chip_type: Option<String>,
    /// CDI kind whose names (in cdi.k8s.io annotations or CDI specs) stand for our chips.
    #[arg(long, env = CDI_KIND_ENV, default_value = DEFAULT_CDI_KIND)]
    pub cdi_kind: String,
}

impl HostSettings {
    /// The injection configuration.
    pub fn injection(&self) -> InjectionConfig {
        InjectionConfig { mount_list_dir: self.mount_list_dir.clone() }
    }
}

/// Says on stderr where the chips came from, and why DCMI was not used when it was not.
pub fn report_chip_source(discovered: &DiscoveredChips) {
    eprintln!("ascend-ctk: {}", discovered.summary());
    report_fallback(&discovered.source);
}

/// The warning for a `/dev` scan that replaced DCMI (nothing for the other sources).
pub fn report_fallback(source: &ChipSource) {
    if let Some(warning) = source.fallback_warning() {
        eprintln!("ascend-ctk: warning: {warning}");
    }
}
