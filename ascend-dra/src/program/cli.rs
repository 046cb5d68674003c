//! Command-line flags, each also read from an environment variable, with the conventions of the other daemons.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ascend_cli::duration::parse_positive_duration;
use ascend_cli::LogArgs;
use ascend_node::recovery::{RecoveryConfig, RecoveryMode};
use ascend_node::{DriverArgs, DriverOptions};
use clap::Parser;
use dra_kubelet_plugin::{DEFAULT_PLUGINS_DIR, DEFAULT_REGISTRY_DIR};

use crate::{DriverConfig, DEFAULT_DRIVER_NAME};

/// Kubernetes DRA driver for Huawei Ascend NPUs.
#[derive(Debug, Parser)]
#[command(name = "ascend-dra-driver", version)]
#[command(mut_arg("log_format", |arg| arg.env("ASCEND_DRA_LOG_FORMAT")))]
pub struct Args {
    /// This node's name (from the downward API in the DaemonSet).
    #[arg(long, env = "NODE_NAME")]
    pub node_name: String,

    /// The driver name in ResourceSlices and DeviceClasses.
    #[arg(long, env = "ASCEND_DRA_DRIVER_NAME", default_value = DEFAULT_DRIVER_NAME)]
    pub driver_name: String,

    /// The kubelet's plugin-registration directory.
    #[arg(long, env = "ASCEND_DRA_REGISTRY_DIR", default_value = DEFAULT_REGISTRY_DIR)]
    pub registry_dir: PathBuf,

    /// The kubelet's plugin data directory (the driver's socket and checkpoint go in `<dir>/<driver name>`).
    #[arg(long, env = "ASCEND_DRA_PLUGINS_DIR", default_value = DEFAULT_PLUGINS_DIR)]
    pub plugins_dir: PathBuf,

    /// Where the claims' CDI specs are written (the runtime must read this directory).
    #[arg(long, env = "ASCEND_DRA_CDI_DIR", default_value = ascend_oci::cdi::DYNAMIC_SPEC_DIR)]
    pub cdi_dir: PathBuf,

    /// Where the host's `/` is mounted (device nodes, driver files, sysfs).
    #[arg(long, env = "ASCEND_DRA_HOST_ROOT", default_value = "/")]
    pub host_root: PathBuf,

    /// Publish vNPU partitions (needs the DRAPartitionableDevices feature gate; see docs/dra.md).
    #[arg(long, env = "ASCEND_DRA_PARTITIONABLE")]
    pub partitionable: bool,

    /// Time between health polls of every chip (500ms, 5s, 1m).
    #[arg(long, env = "ASCEND_DRA_POLL_INTERVAL", default_value = "5s", value_parser = parse_positive_duration)]
    pub poll_interval: Duration,

    /// A chip whose health call takes longer than this is unhealthy.
    #[arg(long, env = "ASCEND_DRA_HEALTH_DEADLINE", default_value = "10s", value_parser = parse_positive_duration)]
    pub health_deadline: Duration,

    /// The driver library.
    #[command(flatten)]
    pub driver: DriverArgs,

    /// Address of `/healthz` and `/metrics`.
    #[arg(long, env = "ASCEND_DRA_LISTEN", default_value = "0.0.0.0:11253")]
    pub listen: SocketAddr,

    /// Chips that heal: hot-reset a chip whose fault asks for a restart once no prepared claim and no process holds
    /// it. `off` (the default); `inference`: once its reset group has been free for --recovery-idle;
    /// `offline-training`: once no chip of the node is held. Huawei's -hotReset values -1, 0 and 2 are accepted.
    #[arg(long, env = "ASCEND_DRA_RECOVERY_MODE", default_value = "off")]
    pub recovery_mode: RecoveryMode,

    /// How long a faulty chip's reset group must have been free before recovery resets it.
    #[arg(long, env = "ASCEND_DRA_RECOVERY_IDLE", default_value = "60s", value_parser = parse_positive_duration)]
    pub recovery_idle: Duration,

    /// How long the boot after a recovery reset may take before the reset counts as failed.
    #[arg(long, env = "ASCEND_DRA_RECOVERY_BOOT_TIMEOUT", default_value = "180s", value_parser = parse_positive_duration)]
    pub recovery_boot_timeout: Duration,

    /// Logging.
    #[command(flatten)]
    pub log: LogArgs,
}

impl Args {
    /// The driver configuration these flags describe.
    pub fn driver_config(&self) -> DriverConfig {
        let mut config = DriverConfig::new(&self.node_name);
        config.plugin.driver_name.clone_from(&self.driver_name);
        config.plugin.registry_dir.clone_from(&self.registry_dir);
        config.plugin.plugins_dir.clone_from(&self.plugins_dir);
        config.cdi_dir.clone_from(&self.cdi_dir);
        config.host_root.clone_from(&self.host_root);
        config.partitionable = self.partitionable;
        config.monitor.poll_interval = self.poll_interval;
        config.monitor.health_deadline = self.health_deadline;
        config.recovery = RecoveryConfig {
            mode: self.recovery_mode,
            idle: self.recovery_idle,
            boot_timeout: self.recovery_boot_timeout,
            ..RecoveryConfig::default()
        };
        config
    }

    /// Where the driver library is, how far to trust it, and how long its calls may take.
    pub fn driver_options(&self) -> DriverOptions {
        DriverOptions { call_deadline: Some(self.health_deadline), ..self.driver.options(&self.host_root) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_reach_the_driver_configuration() {
        let args =
            Args::parse_from(["ascend-dra-driver", "--node-name", "n1", "--partitionable", "--poll-interval", "500ms"]);
        let config = args.driver_config();
        assert_eq!((config.node_name.as_str(), config.plugin.driver_name.as_str()), ("n1", "npu.huawei.com"));
        assert!(config.partitionable);
        assert_eq!(config.monitor.poll_interval, Duration::from_millis(500));
        assert_eq!(args.listen.port(), 11253);
    }
}
