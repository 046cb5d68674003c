//! Command-line flags of `ascend-node-labeller`, each also read from an environment variable.

use std::path::PathBuf;
use std::time::Duration;

use ascend_kube::LabellerConfig;
use ascend_node::{DriverArgs, DriverOptions};
use clap::Parser;

use ascend_cli::duration::parse_positive_duration;
use ascend_cli::LogArgs;

/// Labels this Kubernetes node with its Ascend NPUs: ascend.huawei.com/chip-type, chip-count, driver-version,
/// product, and Huawei's accelerator and node.kubernetes.io/npu.chip.name. Only these keys are ever changed.
#[derive(Debug, Parser)]
#[command(name = "ascend-node-labeller", version)]
#[command(mut_arg("log_format", |arg| arg.env("ASCEND_LABELLER_LOG_FORMAT")))]
pub struct Args {
    /// The node to label (in a pod: the downward API's spec.nodeName).
    #[arg(long, env = "NODE_NAME")]
    pub node_name: String,

    /// Time between reads of the chips when running as a daemon (500ms, 30s, 1m): the Node is watched and patched
    /// only when a label differs; SIGHUP reconciles at once.
    #[arg(long, env = "ASCEND_LABELLER_INTERVAL", default_value = "60s", value_parser = parse_positive_duration)]
    pub interval: Duration,

    /// Reconcile once and exit (for a Job or an init container); exit status 1 if it failed.
    #[arg(long, env = "ASCEND_LABELLER_ONCE")]
    pub once: bool,

    /// Print the JSON merge patch that would be sent, and send nothing. Outside a cluster (no
    /// KUBERNETES_SERVICE_HOST) the patch is computed against a node without any of the labels.
    #[arg(long)]
    pub dry_run: bool,

    /// Where the host's `/` is mounted (for finding the driver library).
    #[arg(long, env = "ASCEND_LABELLER_HOST_ROOT", default_value = "/")]
    pub host_root: PathBuf,

    /// The driver library.
    #[command(flatten)]
    pub driver: DriverArgs,

    /// How long reading the chips may take before a reconcile gives up.
    #[arg(long, env = "ASCEND_LABELLER_DRIVER_DEADLINE", default_value = "30s", value_parser = parse_positive_duration)]
    pub driver_deadline: Duration,

    /// `--log-format text|json` (also ASCEND_LABELLER_LOG_FORMAT), as every daemon of the project.
    #[command(flatten)]
    pub log: LogArgs,
}

impl Args {
    /// The labeller configuration these flags describe.
    pub fn labeller_config(&self) -> LabellerConfig {
        LabellerConfig {
            interval: self.interval,
            driver_deadline: self.driver_deadline,
            ..LabellerConfig::new(&self.node_name)
        }
    }

    /// Where the driver library is.
    pub fn driver_options(&self) -> DriverOptions {
        self.driver.options(&self.host_root)
    }
}

#[cfg(test)]
mod tests {
    use ascend_kube::DEFAULT_DRIVER_DEADLINE;

    use super::*;

    #[test]
    fn defaults_reconcile_every_minute() {
        let args = Args::try_parse_from(["ascend-node-labeller", "--node-name=worker-1"]).expect("parses");
        let config = args.labeller_config();
        assert_eq!(config.node_name, "worker-1");
        assert_eq!(config.interval, Duration::from_secs(60));
        assert_eq!(config.driver_deadline, DEFAULT_DRIVER_DEADLINE);
        assert!(!args.once && !args.dry_run);
        assert_eq!(args.host_root, PathBuf::from("/"));
    }

    #[test]
    fn flags_map_onto_the_config() {
        let args = Args::try_parse_from([
            "ascend-node-labeller",
            "--node-name=n",
            "--interval=5m",
            "--once",
            "--library=/opt/libdcmi.so",
            "--host-root=/host",
        ])
        .expect("parses");
        assert_eq!(args.labeller_config().interval, Duration::from_secs(300));
        assert!(args.once);
        assert_eq!(args.driver.dcmi_library.as_deref(), Some(std::path::Path::new("/opt/libdcmi.so")));
        assert!(Args::try_parse_from(["x", "--node-name=n", "--interval=0s"]).is_err());
    }
}
