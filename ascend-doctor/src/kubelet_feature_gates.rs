//! Section 4: the kubelet's feature gates as its configuration sets them, and the check of the one the device plugin
//! depends on: `DevicePluginCDIDevices`, which lets the kubelet pass the plugin's `cdi_devices` answer to the
//! container runtime (`--cdi-delivery field`). Alpha and off by default in 1.28, beta and on in 1.29 and 1.30, GA
//! from 1.31 (KEP-4009).
//!
//! The gates come from the files a kubelet is started with, read under the host root like every other input:
//! the KubeletConfiguration file (`featureGates`; `--config`, default `/var/lib/kubelet/config.yaml`) and the flags
//! files kubeadm and the packages use (`/var/lib/kubelet/kubeadm-flags.env`, `/etc/default/kubelet`,
//! `/etc/sysconfig/kubelet`, the `kubelet.service.d` drop-ins). A `--feature-gates` flag overrides the file, as in
//! the kubelet, and a later flag overrides an earlier one for the same gate (kubeadm's unit puts
//! `$KUBELET_KUBEADM_ARGS` before `$KUBELET_EXTRA_ARGS`). The running kubelet's command line
//! (`/proc/<pid>/cmdline`) is not read: the doctor reads no host processes, and under `--root` pointing at a
//! mounted disk or an image there are none; a kubelet started by other means (k3s, a custom unit) shows as "not set
//! in the files read", which the evidence says.

use std::collections::BTreeMap;

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};
use super::error::{Error, Result};
use super::host::HostRoot;
use super::installed_version::major_minor;

/// The kubelet's configuration file when no `--config` flag names another (kubeadm's and the packages' default).
pub const DEFAULT_KUBELET_CONFIG: &str = "/var/lib/kubelet/config.yaml";

/// Flags files, in the order their arguments reach the kubelet's command line.
pub const KUBELET_FLAGS_FILES: [&str; 3] =
    ["/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/etc/sysconfig/kubelet"];

/// Directories of the kubelet unit's systemd drop-ins (`*.conf`), read before the flags files.
pub const KUBELET_DROP_IN_DIRS: [&str; 3] = [
    "/etc/systemd/system/kubelet.service.d",
    "/usr/lib/systemd/system/kubelet.service.d",
    "/lib/systemd/system/kubelet.service.d",
];

/// The feature gate of CDI device delivery by the device plugin API.
pub const CDI_DEVICES_GATE: &str = "DevicePluginCDIDevices";

/// One gate's value and the file that set it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateSetting {
    /// On or off.
    pub enabled: bool,
    /// Where: `/var/lib/kubelet/config.yaml (featureGates)` or `/etc/default/kubelet (--feature-gates)`.
    pub source: String,
}

/// What the kubelet's files set.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct KubeletGates {
    /// Each gate set somewhere, with its effective value.
    pub gates: BTreeMap<String, GateSetting>,
    /// The files read, as host paths.
    pub read: Vec<String>,
    /// Files that exist but could not be understood, with why.
    pub problems: Vec<String>,
}

/// The words of one line of a flags file or drop-in, with what precedes a `--` dropped, so that the flags inside
/// `VAR="--a=1 --b"` assignments stand alone; comments have none.
fn flag_words(line: &str) -> Vec<String> {
    let line = line.trim();
    if line.starts_with('#') || line.starts_with(';') {
        return Vec::new();
    }
    line.split_whitespace()
        .map(|word| word.replace(['"', '\''], ""))
        .map(|word| word.find("--").map_or(word.clone(), |at| word[at..].to_owned()))
        .collect()
}

/// The values of flag `name` (`--name=value` or `--name value`) in `words`, in order.
fn flag_values(words: &[String], name: &str) -> Vec<String> {
    let mut values = Vec::new();
    let mut words = words.iter();
    while let Some(word) = words.next() {
        if let Some(value) = word.strip_prefix(name).and_then(|rest| rest.strip_prefix('=')) {
            values.push(value.to_owned());
        } else if word == name {
            if let Some(value) = words.next() {
                values.push(value.clone());
            }
        }
    }
    values
}

/// Parses `A=true,B=false` as `--feature-gates` takes it.
///
/// # Errors
/// [`Error::FeatureGate`] for the first pair that is not `Name=true|false`.
pub fn parse_gate_list(list: &str) -> Result<Vec<(String, bool)>> {
    list.split(',')
        .map(str::trim)
        .filter(|pair| !pair.is_empty())
        .map(|pair| match pair.split_once('=') {
            Some((name, value)) if !name.trim().is_empty() => match value.trim().to_ascii_lowercase().as_str() {
                "true" => Ok((name.trim().to_owned(), true)),
                "false" => Ok((name.trim().to_owned(), false)),
                _ => Err(Error::FeatureGate { entry: pair.to_owned(), value: Some(value.to_owned()) }),
            },
            _ => Err(Error::FeatureGate { entry: pair.to_owned(), value: None }),
        })
        .collect()
}

/// The `featureGates` of a KubeletConfiguration (YAML or JSON).
///
/// # Errors
/// [`Error::KubeletConfiguration`] for text that is not YAML, or a `featureGates` that is not a map of booleans.
pub fn config_file_gates(text: &str) -> Result<Vec<(String, bool)>> {
    #[derive(serde::Deserialize)]
    struct KubeletConfiguration {
        #[serde(rename = "featureGates", default)]
        feature_gates: Option<BTreeMap<String, bool>>,
    }
    if text.trim().is_empty() {
        return Ok(Vec::new());
    }
    let config: KubeletConfiguration =
        serde_yaml_ng::from_str(text).map_err(|source| Error::KubeletConfiguration { source })?;
    Ok(config.feature_gates.unwrap_or_default().into_iter().collect())
}

/// The drop-in files of the kubelet unit, in systemd's order (by file name).
fn drop_ins(host: &HostRoot) -> Vec<String> {
    let mut files: Vec<(String, String)> = KUBELET_DROP_IN_DIRS
        .iter()
        .flat_map(|dir| {
            host.list(dir)
                .into_iter()
                .filter(|name| name.ends_with(".conf"))
                .map(move |name| (name.clone(), format!("{dir}/{name}")))
        })
        .collect();
    files.sort();
    files.into_iter().map(|(_, path)| path).collect()
}

/// Reads the kubelet's feature gates from the files under the host root.
pub fn read_kubelet_gates(host: &HostRoot) -> KubeletGates {
    let mut found = KubeletGates::default();
    let mut flag_gates: Vec<(String, bool, String)> = Vec::new();
    let mut config_path = None;
    for path in drop_ins(host).into_iter().chain(KUBELET_FLAGS_FILES.iter().map(|path| (*path).to_owned())) {
        let Ok(text) = host.read_to_string(&path) else { continue };
        found.read.push(path.clone());
        let words: Vec<String> = text.lines().flat_map(flag_words).collect();
        if let Some(config) = flag_values(&words, "--config").pop() {
            config_path = Some(config);
        }
        for list in flag_values(&words, "--feature-gates") {
            match parse_gate_list(&list) {
                Ok(gates) => flag_gates
                    .extend(gates.into_iter().map(|(name, on)| (name, on, format!("{path} (--feature-gates)")))),
                Err(error) => found.problems.push(format!("{path}: --feature-gates {error}")),
            }
        }
    }
    let config_path = config_path.unwrap_or_else(|| DEFAULT_KUBELET_CONFIG.to_owned());
    if let Ok(text) = host.read_to_string(&config_path) {
        found.read.push(config_path.clone());
        match config_file_gates(&text) {
            Ok(gates) => {
                for (name, enabled) in gates {
                    found.gates.insert(name, GateSetting { enabled, source: format!("{config_path} (featureGates)") });
                }
            }
            Err(error) => found.problems.push(format!("{config_path}: {error}")),
        }
    }
    for (name, enabled, source) in flag_gates {
        found.gates.insert(name, GateSetting { enabled, source });
    }
    found
}

/// kubernetes.cdi_devices_gate: whether the kubelet passes the device plugin's CDI device names to the runtime
/// (`--cdi-delivery field`). A miss matters only on a node set up for CDI (an Ascend CDI spec is there): then it is
/// a warning, since the plugin's other delivery works everywhere; elsewhere it is evidence.
pub fn cdi_devices_gate(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.cdi_devices_gate",
        Section::Kubernetes,
        "kubelet passes the device plugin's CDI devices on",
        Status::Ok,
    );
    let Some(version_text) = facts.kubelet_version.clone() else {
        return check
            .evidence("the kubelet's version is unknown (see kubernetes.kubelet_version)")
            .with_status(Status::Skip);
    };
    let Some(version) = major_minor(&version_text) else {
        return check.evidence(format!("{version_text:?} is not a version")).with_status(Status::Skip);
    };
    if version >= (1, 31) {
        return check.evidence(format!("kubelet {version_text}: {CDI_DEVICES_GATE} is GA and always on from 1.31"));
    }
    let gates = read_kubelet_gates(&options.host);
    let read = if gates.read.is_empty() { "none of the kubelet's files".to_owned() } else { gates.read.join(", ") };
    let check = check.evidence(format!("read: {read}")).evidence_lines(gates.problems.clone());
    let setting = gates.gates.get(CDI_DEVICES_GATE);
    let (enabled, why) = match (version, setting) {
        (v, _) if v < (1, 28) => (false, format!("kubelet {version_text} predates {CDI_DEVICES_GATE} (1.28)")),
        (_, Some(setting)) => {
            (setting.enabled, format!("{CDI_DEVICES_GATE}={} in {}", setting.enabled, setting.source))
        }
        (v, None) => {
            let default_on = v >= (1, 29);
            let phase = if default_on { "beta, on by default" } else { "alpha, off by default" };
            (default_on, format!("{CDI_DEVICES_GATE} not set in the files read; {phase} in kubelet {version_text}"))
        }
    };
    let check = check.evidence(why);
    if enabled {
        return check.evidence("`--cdi-delivery field` works on this node");
    }
    let cdi_node = !facts.cdi_specs.is_empty();
    let check = check.evidence(format!(
        "`--cdi-delivery field` does not work on this node: the kubelet drops the plugin's cdi_devices{}",
        if cdi_node { " (the node has an Ascend CDI spec, so CDI delivery is in use or planned)" } else { "" }
    ));
    let fix = if version < (1, 28) {
        Advice::KubeletPredatesCdiGate
    } else {
        Advice::CdiGateOff { gate: CDI_DEVICES_GATE.to_owned(), config: DEFAULT_KUBELET_CONFIG.to_owned() }
    };
    let check = check.advise(fix);
    if cdi_node {
        check.with_status(Status::Warn)
    } else {
        check
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_are_found_in_env_assignments_drop_ins_and_split_form() {
        let words = flag_words(
            r#"KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/c.sock --feature-gates=A=true,B=false""#,
        );
        assert_eq!(flag_values(&words, "--feature-gates"), ["A=true,B=false"]);
        let words = flag_words("Environment=\"KUBELET_CONFIG_ARGS=--config=/etc/kubelet.yaml\"");
        assert_eq!(flag_values(&words, "--config"), ["/etc/kubelet.yaml"]);
        let words = flag_words("ExecStart=/usr/bin/kubelet --feature-gates X=false");
        assert_eq!(flag_values(&words, "--feature-gates"), ["X=false"]);
        assert!(flag_words("# KUBELET_EXTRA_ARGS=--feature-gates=A=true").is_empty());
    }

    #[test]
    fn gate_lists_and_config_files_parse_and_bad_ones_are_named() {
        assert_eq!(parse_gate_list("A=true, B=False").expect("list"), [("A".into(), true), ("B".into(), false)]);
        assert!(parse_gate_list("A=yes").expect_err("bad value").to_string().contains("A=yes"));
        assert!(parse_gate_list("=true").is_err());
        let yaml = "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  \
                    DevicePluginCDIDevices: true\n";
        assert_eq!(config_file_gates(yaml).expect("yaml"), [("DevicePluginCDIDevices".into(), true)]);
        assert_eq!(config_file_gates("{\"kind\": \"KubeletConfiguration\"}").expect("json"), []);
        assert!(config_file_gates("featureGates: [1, 2]").is_err());
    }
}
