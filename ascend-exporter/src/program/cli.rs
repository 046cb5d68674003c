//! Command-line flags of `npu-exporter`, in the Prometheus exporters' dotted style, as a library type so that the
//! binary stays a thin main and other front ends can build the same configuration.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use ascend_cli::duration::{parse_duration, parse_positive_duration};
use ascend_cli::LogArgs;
use ascend_node::naming::DEFAULT_PREFIX;
use ascend_node::pod_resources::DEFAULT_SOCKET as DEFAULT_POD_RESOURCES_SOCKET;
use ascend_node::{naming::ResourceNaming, DriverArgs};

use crate::error::{Error, Result};
use crate::render::NamingMode;

/// Default listen address: every interface, port 8082 (the port of Huawei's npu-exporter, so existing scrape
/// configurations and NetworkPolicies keep working).
pub const DEFAULT_LISTEN_ADDRESS: &str = "0.0.0.0:8082";

/// Prometheus exporter for Huawei Ascend NPUs.
///
/// Durations take the grammar of every bundled tool ([`ascend_cli::duration`]: `500ms`, `1.5s`, `2m`, plain seconds).
/// The log format is the tools' one `--log-format` flag, spelled `--log.format` first here as the Prometheus
/// exporters spell their flags (both are accepted).
#[derive(Debug, Clone, clap::Parser)]
#[command(name = "npu-exporter", version, about)]
#[command(mut_arg("log_format", |arg| arg.long("log.format").visible_alias("log-format").env("NPU_EXPORTER_LOG_FORMAT")))]
pub struct Args {
    /// Address and port to serve /metrics, /healthz and / on.
    #[arg(long = "web.listen-address", default_value = DEFAULT_LISTEN_ADDRESS, env = "NPU_EXPORTER_LISTEN_ADDRESS")]
    pub listen_address: SocketAddr,
    /// Prometheus exporter-toolkit web config (TLS, basic auth); plain HTTP without it.
    #[arg(long = "web.config.file")]
    pub web_config_file: Option<PathBuf>,
    /// How long a client may take to finish its TLS handshake, and then to send its request headers, before the
    /// connection is closed. It bounds what a slow-loris client (one that trickles its bytes) can hold; Prometheus
    /// sends a whole request in one packet, so the default only leaves room for slow links.
    #[arg(long = "web.header-read-timeout", default_value = "10s", value_parser = parse_positive_duration)]
    pub header_read_timeout: Duration,
    /// Metric-selection file (TOML): groups, intervals, driver reads to skip, metrics to serve.
    #[arg(long = "metrics.selection-file")]
    pub selection_file: Option<PathBuf>,
    /// Metric names to serve: this exporter's, Huawei npu-exporter's (for existing dashboards), or both.
    #[arg(long = "metrics.naming", value_enum, default_value = "native")]
    pub naming: NamingMode,
    /// The driver library (`--dcmi.library` and `--dcmi.skip-ownership-check` are accepted too).
    #[command(flatten)]
    pub driver: DriverArgs,
    /// How long one chip's round of driver calls may take before the chip is reported stale.
    #[arg(long = "dcmi.deadline", default_value = "2s", value_parser = parse_positive_duration)]
    pub deadline: Duration,
    /// How many chips are read at once (the driver fails bursts of concurrent calls).
    #[arg(long = "dcmi.concurrency", default_value_t = 4)]
    pub concurrency: usize,
    /// The window the driver averages HCCS bandwidth over (1ms..1s; Huawei's `--hccsBWProfilingTime`). Read in the
    /// slow `bandwidth` group, off the other groups' schedule.
    #[arg(long = "dcmi.hccs-profiling", default_value = "200ms", value_parser = parse_positive_duration)]
    pub hccs_profiling: Duration,
    /// The window the driver averages PCIe bandwidth over (1ms..2s; Huawei's `--profilingTime`).
    #[arg(long = "dcmi.pcie-profiling", default_value = "200ms", value_parser = parse_positive_duration)]
    pub pcie_profiling: Duration,
    /// How long one chip's bandwidth reads may take (default: `--dcmi.deadline` plus both profiling windows).
    #[arg(long = "dcmi.bandwidth-deadline", value_parser = parse_positive_duration)]
    pub bandwidth_deadline: Option<Duration>,
    /// The driver's network tool; the `network`, `roce` and `optical` groups are read through it when it exists.
    #[arg(long = "hccn-tool.path", default_value = ascend_hccn::DEFAULT_PATH)]
    pub hccn_tool_path: PathBuf,
    /// How long one hccn_tool call may take before it is killed (that chip's readings of that group are left out
    /// for the round).
    #[arg(long = "hccn-tool.timeout", default_value = "5s", value_parser = parse_positive_duration)]
    pub hccn_tool_timeout: Duration,
    /// Kubelet PodResources socket (mount its directory, not the socket).
    #[arg(long = "pod-resources.socket", default_value = DEFAULT_POD_RESOURCES_SOCKET)]
    pub pod_resources_socket: PathBuf,
    /// Time between PodResources List calls.
    #[arg(long = "pod-resources.interval", default_value = "5s", value_parser = parse_positive_duration)]
    pub pod_resources_interval: Duration,
    /// Do not ask the kubelet for pod attribution (pod labels stay empty).
    #[arg(long = "pod-resources.disable")]
    pub pod_resources_disable: bool,
    /// The device plugin's `--resource-prefix`: domain of the resources whose device ids map to chips. Read from the
    /// plugin's own variable, so one ConfigMap configures both.
    #[arg(long = "device-plugin.resource-prefix", env = "ASCEND_DP_RESOURCE_PREFIX", default_value = DEFAULT_PREFIX)]
    pub resource_prefix: String,
    /// The device plugin's `--rename` entries, `Base=Public` (repeatable or comma-separated), from the plugin's own
    /// variable.
    #[arg(long = "device-plugin.rename", env = "ASCEND_DP_RENAMES", value_delimiter = ',')]
    pub renames: Vec<String>,
    /// How long a rendered /metrics body is served again while no new sampler round has ended; `0s` renders every
    /// scrape, so that `ascend_npu_sample_age_seconds` is exact at scrape time (it may otherwise read up to this
    /// much short).
    #[arg(long = "metrics.cache-max-age", default_value = "1s", value_parser = parse_duration)]
    pub cache_max_age: Duration,
    /// /healthz fails when the sampler has not completed a round for this long.
    #[arg(long = "healthz.max-snapshot-age", default_value = "30s", value_parser = parse_positive_duration)]
    pub max_snapshot_age: Duration,
    /// `--log.format` (alias `--log-format`; environment: NPU_EXPORTER_LOG_FORMAT).
    #[command(flatten)]
    pub log: LogArgs,
}

impl Args {
    /// The device plugin's naming, from `--device-plugin.resource-prefix` and `--device-plugin.rename`.
    ///
    /// # Errors
    /// [`Error::Naming`] naming the prefix or rename entry that the plugin would reject too.
    pub fn resource_naming(&self) -> Result<ResourceNaming> {
        ResourceNaming::with_renames(&self.resource_prefix, self.renames.iter().map(String::as_str))
            .map_err(Error::Naming)
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[test]
    fn defaults_and_dotted_flags() {
        let args = Args::try_parse_from(["npu-exporter"]).expect("defaults parse");
        assert_eq!(args.listen_address, DEFAULT_LISTEN_ADDRESS.parse().expect("valid"));
        assert_eq!(args.naming, NamingMode::Native);
        assert_eq!(args.deadline, Duration::from_secs(2));
        assert_eq!(args.cache_max_age, crate::scrape_cache::DEFAULT_MAX_BODY_AGE);
        assert_eq!(args.header_read_timeout, Duration::from_secs(10));
        let args = Args::try_parse_from([
            "npu-exporter",
            "--web.listen-address=127.0.0.1:9999",
            "--metrics.naming=both",
            "--dcmi.deadline=250ms",
            "--metrics.cache-max-age=0s",
            "--web.header-read-timeout=1500ms",
        ])
        .expect("flags parse");
        assert_eq!(args.listen_address.port(), 9999);
        assert_eq!(args.naming, NamingMode::Both);
        assert_eq!(args.deadline, Duration::from_millis(250));
        assert_eq!(args.cache_max_age, Duration::ZERO);
        assert_eq!(args.header_read_timeout, Duration::from_millis(1500));
        assert_eq!(args.log.log_format, ascend_cli::LogFormat::Text);
        for (flag, seconds) in [("--dcmi.deadline=2", 2.0), ("--dcmi.deadline=1.5s", 1.5), ("--dcmi.deadline=1m", 60.0)]
        {
            let args = Args::try_parse_from(["npu-exporter", flag]).expect(flag);
            assert_eq!(args.deadline.as_secs_f64(), seconds, "{flag}");
        }
        for flag in [
            "--dcmi.deadline=0s",
            "--dcmi.deadline=fast",
            "--healthz.max-snapshot-age=0",
            "--web.header-read-timeout=0",
        ] {
            let error = Args::try_parse_from(["npu-exporter", flag]).expect_err(flag);
            assert!(error.to_string().contains(flag.split('=').nth(1).unwrap_or(flag)), "{error}");
        }
    }

    #[test]
    fn log_format_in_the_dotted_and_the_shared_spelling() {
        for flag in ["--log.format=json", "--log-format=json"] {
            let args = Args::try_parse_from(["npu-exporter", flag]).expect(flag);
            assert_eq!(args.log.log_format, ascend_cli::LogFormat::Json, "{flag}");
        }
        assert!(Args::try_parse_from(["npu-exporter", "--log.format=yaml"]).is_err());
    }

    #[test]
    fn device_plugin_naming_flags() {
        let args = Args::try_parse_from(["npu-exporter"]).expect("defaults parse");
        assert_eq!(args.resource_naming().expect("default naming"), ResourceNaming::default());
        let args = Args::try_parse_from([
            "npu-exporter",
            "--device-plugin.resource-prefix=example.org",
            "--device-plugin.rename=Ascend910=train,Ascend310P=infer",
        ])
        .expect("flags parse");
        let naming = args.resource_naming().expect("valid naming");
        assert_eq!(naming.public_name(ascend_dcmi::ChipType::Ascend910B), "train");
        assert_eq!(naming.public_name(ascend_dcmi::ChipType::Ascend310P), "infer");
        let args = Args::try_parse_from(["npu-exporter", "--device-plugin.rename=Ascend999=x"]).expect("parses");
        let error = args.resource_naming().expect_err("unknown base");
        assert!(error.to_string().contains("Ascend999"), "{error}");
    }
}
