//! Command-line flags (each also read from an environment variable) and their translation into a
//! [`PluginConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::allocate::{DEFAULT_CDI_KIND, DEFAULT_DRIVER_MOUNTS};
use crate::kubelet::DEFAULT_PLUGIN_DIR;
use crate::naming::DEFAULT_PREFIX;
use crate::{AllocateConfig, AllocateMode, CdiDelivery, InventoryOptions, MonitorConfig, PluginConfig, ResourceNaming};
use ascend_cli::duration::parse_positive_duration;
use ascend_cli::LogArgs;
use clap::{Parser, ValueEnum};

/// Kubernetes device plugin for Huawei Ascend NPUs.
#[derive(Debug, Parser)]
#[command(name = "ascend-device-plugin", version)]
#[command(mut_arg("log_format", |arg| arg.env("ASCEND_DP_LOG_FORMAT")))]
pub struct Args {
    /// The kubelet's device-plugin directory.
    #[arg(long, env = "ASCEND_DP_PLUGIN_DIR", default_value = DEFAULT_PLUGIN_DIR)]
    pub plugin_dir: PathBuf,

    /// How Allocate hands chips to containers.
    #[arg(long, env = "ASCEND_DP_ALLOCATE_MODE", value_enum, default_value_t = Mode::Cdi)]
    pub allocate_mode: Mode,

    /// CDI kind of the device names (cdi mode).
    #[arg(long, env = "ASCEND_DP_CDI_KIND", default_value = DEFAULT_CDI_KIND)]
    pub cdi_kind: String,

    /// Where CDI names go (cdi mode): the response's cdi_devices field, cdi.k8s.io annotations, or both.
    #[arg(long, env = "ASCEND_DP_CDI_DELIVERY", value_enum, default_value_t = Delivery::Field)]
    pub cdi_delivery: Delivery,

    /// Host paths mounted read-only when they exist (device-specs mode); repeat or separate with commas.
    #[arg(long = "driver-mount", env = "ASCEND_DP_DRIVER_MOUNTS", value_delimiter = ',', default_values_t = DEFAULT_DRIVER_MOUNTS.map(String::from))]
    pub driver_mounts: Vec<String>,

    /// Mount no driver paths (device-specs mode).
    #[arg(long, env = "ASCEND_DP_NO_DRIVER_MOUNTS")]
    pub no_driver_mounts: bool,

    /// Domain of the resource names.
    #[arg(long, env = "ASCEND_DP_RESOURCE_PREFIX", default_value = DEFAULT_PREFIX)]
    pub resource_prefix: String,

    /// Rename a resource, `Base=Public` (bases: Ascend310, Ascend310P, Ascend910, npu); repeatable.
    #[arg(long = "rename", env = "ASCEND_DP_RENAMES", value_delimiter = ',')]
    pub renames: Vec<String>,

    /// Time-sharing: advertise each whole chip this many times (ids `<Type>-<phy>-<n>`); 1 disables sharing.
    #[arg(long, env = "ASCEND_DP_REPLICAS", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=100))]
    pub replicas: u32,

    /// Advertise chips with static vNPUs as whole chips instead of as their vNPUs.
    #[arg(long, env = "ASCEND_DP_NO_VNPUS")]
    pub no_vnpus: bool,

    /// Time between health polls of every chip (500ms, 5s, 1m).
    #[arg(long, env = "ASCEND_DP_POLL_INTERVAL", default_value = "5s", value_parser = parse_positive_duration)]
    pub poll_interval: Duration,

    /// A chip whose health call takes longer than this is Unhealthy.
    #[arg(long, env = "ASCEND_DP_HEALTH_DEADLINE", default_value = "10s", value_parser = parse_positive_duration)]
    pub health_deadline: Duration,

    /// Do not subscribe to driver fault events (poll only).
    #[arg(long, env = "ASCEND_DP_NO_FAULT_EVENTS")]
    pub no_fault_events: bool,

    /// Where the host's `/` is mounted (for the driver library, sysfs and existence checks of device nodes).
    #[arg(long, env = "ASCEND_DP_HOST_ROOT", default_value = "/")]
    pub host_root: PathBuf,

    /// Load exactly this libdcmi.so instead of searching the standard places.
    #[arg(long, env = "ASCEND_DCMI_LIBRARY")]
    pub dcmi_library: Option<PathBuf>,

    /// Load a libdcmi.so that is not root-owned and read-only (test builds only).
    #[arg(long, env = "ASCEND_DP_SKIP_LIBRARY_OWNERSHIP_CHECK")]
    pub skip_library_ownership_check: bool,

    /// How long to wait before retrying when no driver can be loaded.
    #[arg(long, env = "ASCEND_DP_DRIVER_RETRY", default_value = "10s", value_parser = parse_positive_duration)]
    pub driver_retry: Duration,

    /// Address of the daemon's own /healthz and /metrics endpoint.
    #[arg(long, env = "ASCEND_DP_LISTEN", default_value = "0.0.0.0:11251")]
    pub listen: SocketAddr,

    /// `--log-format` (environment: ASCEND_DP_LOG_FORMAT).
    #[command(flatten)]
    pub log: LogArgs,
}

/// `--allocate-mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Mode {
    /// CDI device names (`huawei.com/npu=<phy>`), for CDI-enabled runtimes.
    Cdi,
    /// Device specs for `/dev/davinci<phy>` and the manager nodes, plus read-only driver mounts.
    DeviceSpecs,
    /// ASCEND_VISIBLE_DEVICES for the Ascend runtime hook.
    RuntimeEnv,
}

/// `--cdi-delivery`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Delivery {
    /// The cdi_devices field (Kubernetes 1.28+).
    Field,
    /// cdi.k8s.io annotations.
    Annotations,
    /// Both.
    Both,
}

impl Args {
    /// The plugin configuration these flags describe.
    ///
    /// # Errors
    /// A configuration error naming the bad prefix or rename.
    pub fn plugin_config(&self) -> anyhow::Result<PluginConfig> {
        let naming = ResourceNaming::with_renames(&self.resource_prefix, self.renames.iter().map(String::as_str))?;
        let mode = match self.allocate_mode {
            Mode::Cdi => AllocateMode::Cdi {
                kind: self.cdi_kind.clone(),
                delivery: match self.cdi_delivery {
                    Delivery::Field => CdiDelivery::Field,
                    Delivery::Annotations => CdiDelivery::Annotations,
                    Delivery::Both => CdiDelivery::Both,
                },
            },
            Mode::DeviceSpecs => AllocateMode::DeviceSpecs {
                driver_mounts: if self.no_driver_mounts {
                    Vec::new()
                } else {
                    self.driver_mounts.iter().map(PathBuf::from).collect()
                },
            },
            Mode::RuntimeEnv => AllocateMode::RuntimeEnv,
        };
        Ok(PluginConfig {
            plugin_dir: self.plugin_dir.clone(),
            monitor: MonitorConfig {
                inventory: InventoryOptions { naming, replicas: self.replicas, advertise_vnpus: !self.no_vnpus },
                poll_interval: self.poll_interval,
                health_deadline: self.health_deadline,
                fault_events: !self.no_fault_events,
            },
            allocate: AllocateConfig { mode, host_root: self.host_root.clone() },
            ..PluginConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_huaweis_names_cdi_and_the_kubelet_dir() {
        let args = Args::try_parse_from(["ascend-device-plugin"]).expect("defaults parse");
        let config = args.plugin_config().expect("valid");
        assert_eq!(config.plugin_dir, PathBuf::from("/var/lib/kubelet/device-plugins"));
        assert_eq!(
            config.allocate.mode,
            AllocateMode::Cdi { kind: "huawei.com/npu".into(), delivery: CdiDelivery::Field }
        );
        assert_eq!(config.monitor.poll_interval, Duration::from_secs(5));
        assert_eq!(config.monitor.inventory.naming.prefix, "huawei.com");
        assert_eq!(args.listen.port(), 11251);
    }

    #[test]
    fn flags_map_onto_the_config() {
        let args = Args::try_parse_from([
            "ascend-device-plugin",
            "--allocate-mode=device-specs",
            "--driver-mount=/a,/b",
            "--rename=Ascend910=train",
            "--replicas=4",
            "--poll-interval=250ms",
            "--log-format=json",
        ])
        .expect("parses");
        let config = args.plugin_config().expect("valid");
        assert_eq!(config.allocate.mode, AllocateMode::DeviceSpecs { driver_mounts: vec!["/a".into(), "/b".into()] });
        assert_eq!(config.monitor.inventory.replicas, 4);
        assert_eq!(config.monitor.poll_interval, Duration::from_millis(250));
        assert_eq!(config.monitor.inventory.naming.renames.get("Ascend910").map(String::as_str), Some("train"));
        assert_eq!(args.log.log_format, ascend_cli::LogFormat::Json);
        assert!(Args::try_parse_from(["x", "--poll-interval=0s"]).is_err());
        assert!(Args::try_parse_from(["x", "--replicas=0"]).is_err());
        let bad = Args::try_parse_from(["x", "--rename=Nope=x"]).expect("parses").plugin_config();
        assert!(bad.is_err());
    }
}
