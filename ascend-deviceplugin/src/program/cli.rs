//! Command-line flags (each also read from an environment variable) and their translation into a
//! [`PluginConfig`].

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use crate::allocate::{DEFAULT_CDI_KIND, DEFAULT_DRIVER_MOUNTS};
use crate::kubelet::DEFAULT_PLUGIN_DIR;
use crate::{AllocateConfig, AllocateMode, CdiDelivery, InventoryOptions, MonitorConfig, PluginConfig, ResourceNaming};
use ascend_cli::duration::parse_positive_duration;
use ascend_cli::LogArgs;
use ascend_node::naming::DEFAULT_PREFIX;
use ascend_node::recovery::{RecoveryConfig, RecoveryMode};
use ascend_node::{DriverArgs, DriverOptions};
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

    /// The kubelet's PodResources socket, read before every registration and every 5 s for chips running pods
    /// hold under ids the kubelet does not count (a node taken over from another device plugin).
    #[arg(long, env = "ASCEND_DP_POD_RESOURCES_SOCKET", default_value = ascend_node::pod_resources::DEFAULT_SOCKET)]
    pub pod_resources_socket: PathBuf,

    /// Do not read the kubelet's PodResources (chips held under other ids are then offered).
    #[arg(long, env = "ASCEND_DP_NO_POD_RESOURCES")]
    pub no_pod_resources: bool,

    /// The driver library.
    #[command(flatten)]
    pub driver: DriverArgs,

    /// How long to wait before retrying when no driver can be loaded.
    #[arg(long, env = "ASCEND_DP_DRIVER_RETRY", default_value = "10s", value_parser = parse_positive_duration)]
    pub driver_retry: Duration,

    /// Address of the daemon's own /healthz and /metrics endpoint.
    #[arg(long, env = "ASCEND_DP_LISTEN", default_value = "0.0.0.0:11251")]
    pub listen: SocketAddr,

    /// Volcano mode: write the device-info ConfigMap Volcano's Ascend plugin schedules from, and give containers
    /// the chips Volcano wrote on their pod (needs --node-name and RBAC for ConfigMaps in kube-system and pods).
    #[arg(long, env = "ASCEND_DP_VOLCANO")]
    pub volcano: bool,

    /// Record chip faults and recoveries as Kubernetes Events on this node (`kubectl describe node`); needs
    /// --node-name and RBAC to create events.k8s.io Events.
    #[arg(long, env = "ASCEND_DP_NODE_EVENTS")]
    pub node_events: bool,

    /// With --node-events: also keep the Node condition `AscendNPUUnhealthy` (True while some NPU is unhealthy)
    /// current; needs RBAC to patch nodes/status. `--node-condition=false` keeps the Events only.
    #[arg(long, env = "ASCEND_DP_NODE_CONDITION", default_value_t = true, action = clap::ArgAction::Set)]
    pub node_condition: bool,

    /// This node's name, from the downward API (`spec.nodeName`); needed by --volcano and --node-events.
    #[arg(long, env = "NODE_NAME")]
    pub node_name: Option<String>,

    /// Volcano mode: the node's super-pod id (`SuperPodID` of the device info; -1 outside a super-pod).
    #[arg(long, env = "ASCEND_DP_SUPER_POD_ID", default_value_t = -1, allow_hyphen_values = true)]
    pub super_pod_id: i32,

    /// Volcano mode: the node's index in its super-pod (`ServerIndex`; -1 outside a super-pod).
    #[arg(long, env = "ASCEND_DP_SERVER_INDEX", default_value_t = -1, allow_hyphen_values = true)]
    pub server_index: i32,

    /// Chips that heal: hot-reset a chip whose fault asks for a restart once nothing holds it. `off` (the default,
    /// as Huawei's); `inference`: once its reset group has been free for --recovery-idle; `offline-training`: once no
    /// chip of the node is held. Huawei's -hotReset values -1, 0 and 2 are accepted. Not with --volcano.
    #[arg(long, env = "ASCEND_DP_RECOVERY_MODE", default_value = "off")]
    pub recovery_mode: RecoveryMode,

    /// How long a faulty chip's reset group must have been free before recovery resets it.
    #[arg(long, env = "ASCEND_DP_RECOVERY_IDLE", default_value = "60s", value_parser = parse_positive_duration)]
    pub recovery_idle: Duration,

    /// How long the boot after a recovery reset may take before the reset counts as failed.
    #[arg(long, env = "ASCEND_DP_RECOVERY_BOOT_TIMEOUT", default_value = "180s", value_parser = parse_positive_duration)]
    pub recovery_boot_timeout: Duration,

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
    /// What recovery does (`--recovery-*`).
    ///
    /// # Errors
    /// Recovery on with `--volcano` or `--no-pod-resources`.
    pub fn recovery_config(&self) -> anyhow::Result<RecoveryConfig> {
        let config = RecoveryConfig {
            mode: self.recovery_mode,
            idle: self.recovery_idle,
            boot_timeout: self.recovery_boot_timeout,
            ..RecoveryConfig::default()
        };
        if config.mode == RecoveryMode::Off {
            return Ok(config);
        }
        if self.volcano {
            anyhow::bail!(
                "--recovery-mode={} does not work with --volcano yet: in Volcano mode the pods' annotations say which \
                 chips they hold, and recovery reads only the kubelet's PodResources; use --recovery-mode=off",
                config.mode
            );
        }
        if self.no_pod_resources {
            anyhow::bail!(
                "--recovery-mode={} needs the kubelet's PodResources to know which chips pods hold; drop \
                 --no-pod-resources",
                config.mode
            );
        }
        Ok(config)
    }

    /// The node whose Events `--node-events` records, when it is on.
    ///
    /// # Errors
    /// `--node-events` without `--node-name`.
    pub fn node_events_node(&self) -> anyhow::Result<Option<String>> {
        if !self.node_events {
            return Ok(None);
        }
        match self.node_name.as_deref().filter(|node| !node.is_empty()) {
            Some(node) => Ok(Some(node.to_owned())),
            None => anyhow::bail!("--node-events needs --node-name (NODE_NAME from the downward API's spec.nodeName)"),
        }
    }

    /// The Volcano-mode settings, when `--volcano` is on.
    ///
    /// # Errors
    /// `--volcano` without `--node-name`, or with time-sharing replicas (Volcano assigns whole chips).
    pub fn volcano_config(&self) -> anyhow::Result<Option<crate::volcano::VolcanoConfig>> {
        if !self.volcano {
            return Ok(None);
        }
        let Some(node) = self.node_name.as_deref().filter(|node| !node.is_empty()) else {
            anyhow::bail!("--volcano needs --node-name (NODE_NAME from the downward API's spec.nodeName)");
        };
        if self.replicas > 1 {
            anyhow::bail!("--volcano assigns whole chips; it cannot be combined with --replicas {}", self.replicas);
        }
        let mut config = crate::volcano::VolcanoConfig::new(node);
        config.publisher.placement.super_pod_id = self.super_pod_id;
        config.publisher.placement.server_index = self.server_index;
        Ok(Some(config))
    }

    /// Where the driver library is, how far to trust it, and how long its calls may take.
    pub fn driver_options(&self) -> DriverOptions {
        DriverOptions { call_deadline: Some(self.health_deadline), ..self.driver.options(&self.host_root) }
    }

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
            allocate: AllocateConfig { mode, host_root: self.host_root.clone(), hccl_topo_file: None },
            pod_resources_socket: Some(self.pod_resources_socket.clone()).filter(|_| !self.no_pod_resources),
            ..PluginConfig::default()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recovery_is_off_by_default_takes_huaweis_numbers_and_refuses_what_it_cannot_do_safely() {
        let parse = |extra: &[&str]| {
            Args::try_parse_from(["ascend-device-plugin"].iter().chain(extra)).expect("flags parse").recovery_config()
        };
        assert_eq!(parse(&[]).expect("valid").mode, RecoveryMode::Off);
        let config = parse(&["--recovery-mode=0", "--recovery-idle=90s"]).expect("valid");
        assert_eq!((config.mode, config.idle), (RecoveryMode::Inference, Duration::from_secs(90)));
        let volcano = parse(&["--recovery-mode=inference", "--volcano"]).expect_err("refused").to_string();
        assert!(volcano.contains("--volcano") && volcano.contains("--recovery-mode=off"), "{volcano}");
        let blind =
            parse(&["--recovery-mode=offline-training", "--no-pod-resources"]).expect_err("refused").to_string();
        assert!(blind.contains("PodResources"), "{blind}");
        let unknown =
            Args::try_parse_from(["ascend-device-plugin", "--recovery-mode=1"]).expect_err("refused").to_string();
        assert!(unknown.contains("offline-training"), "{unknown}");
    }

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
        assert_eq!(config.pod_resources_socket, Some(PathBuf::from("/var/lib/kubelet/pod-resources/kubelet.sock")));
        let off = Args::try_parse_from(["ascend-device-plugin", "--no-pod-resources"]).expect("parses");
        assert_eq!(off.plugin_config().expect("valid").pod_resources_socket, None);
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

    #[test]
    fn volcano_mode_needs_a_node_name_and_whole_chips() {
        let off = Args::try_parse_from(["x"]).expect("parses");
        assert!(off.volcano_config().expect("valid").is_none());
        let no_node = Args::try_parse_from(["x", "--volcano"]).expect("parses");
        assert!(no_node.volcano_config().expect_err("needs a node").to_string().contains("--node-name"));
        let shared = Args::try_parse_from(["x", "--volcano", "--node-name=n1", "--replicas=2"]).expect("parses");
        assert!(shared.volcano_config().is_err());
        let on = Args::try_parse_from(["x", "--volcano", "--node-name=n1", "--super-pod-id=4", "--server-index", "-1"])
            .expect("parses");
        let config = on.volcano_config().expect("valid").expect("on");
        assert_eq!(config.node_name, "n1");
        assert_eq!(config.publisher.placement.super_pod_id, 4);
        assert_eq!(config.publisher.placement.server_index, -1);
        assert!(Args::try_parse_from(["x", "--node-events"]).expect("parses").node_events_node().is_err());
        let events = Args::try_parse_from(["x", "--node-events", "--node-name=n1"]).expect("parses");
        assert_eq!(events.node_events_node().expect("valid").as_deref(), Some("n1"));
        assert!(events.node_condition, "the node condition is on by default");
        let no_condition = Args::try_parse_from(["x", "--node-events", "--node-condition=false"]).expect("parses");
        assert!(!no_condition.node_condition);
    }
}
