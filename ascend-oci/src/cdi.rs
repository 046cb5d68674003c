//! CDI (Container Device Interface) specs: one device per physical chip plus `all`, the shared
//! nodes and driver mounts as spec-wide edits, written with the lowest `cdiVersion` that covers
//! the fields used so that older consumers (podman 4.3 reads 0.3.0 to 0.5.0) still load it.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::write_atomically;
use crate::error::{Error, Result};
use crate::host::{chip_device_node, shared_device_nodes, DeviceNode, HostChips};
use crate::inject::{driver_library_dirs, InjectionConfig, ASCEND_DOCKER_RUNTIME};
use crate::mount_list::{resolve_mounts, MountEntry, MountList};
use crate::request::RuntimeOptions;
use crate::secure_path::HostRoot;

/// The directory of generated (dynamic) specs.
pub const DYNAMIC_SPEC_DIR: &str = "/var/run/cdi";
/// The directory of static specs.
pub const STATIC_SPEC_DIR: &str = "/etc/cdi";
/// Mount options of driver mounts in CDI specs.
pub const CDI_MOUNT_OPTIONS: [&str; 5] = ["ro", "nosuid", "nodev", "rbind", "rprivate"];

/// A CDI spec (the subset of fields this crate writes; unknown fields are refused on reading,
/// as CDI loaders do).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CdiSpec {
    /// The spec version.
    pub cdi_version: String,
    /// `vendor/class`.
    pub kind: String,
    /// The devices.
    pub devices: Vec<CdiDevice>,
    /// Edits applied when any device of the spec is used.
    #[serde(default, skip_serializing_if = "ContainerEdits::is_empty")]
    pub container_edits: ContainerEdits,
}

/// One named device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CdiDevice {
    /// The name after `kind=`.
    pub name: String,
    /// Edits applied when this device is used.
    pub container_edits: ContainerEdits,
}

/// Container edits.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct ContainerEdits {
    /// `KEY=VALUE` entries.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub env: Vec<String>,
    /// Device nodes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub device_nodes: Vec<CdiDeviceNode>,
    /// Mounts.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mounts: Vec<CdiMount>,
}

impl ContainerEdits {
    /// Whether there is no edit.
    pub fn is_empty(&self) -> bool {
        self.env.is_empty() && self.device_nodes.is_empty() && self.mounts.is_empty()
    }
}

/// A device node.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CdiDeviceNode {
    /// Path in the container.
    pub path: String,
    /// Path on the host when it differs (CDI 0.5.0).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub host_path: Option<String>,
    /// `c` for our nodes.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub node_type: Option<String>,
    /// Major number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub major: Option<i64>,
    /// Minor number.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub minor: Option<i64>,
}

/// A mount.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct CdiMount {
    /// Source on the host.
    pub host_path: String,
    /// Destination in the container.
    pub container_path: String,
    /// Mount type (CDI 0.4.0); we leave it out and say `rbind` in the options instead.
    #[serde(default, rename = "type", skip_serializing_if = "Option::is_none")]
    pub mount_type: Option<String>,
    /// Options.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
}

/// Splits and checks a kind `vendor.example/class`.
///
/// # Errors
/// [`Error::InvalidRequest`] quoting the kind.
pub fn parse_kind(kind: &str) -> Result<(&str, &str)> {
    let invalid = |reason: &str| Error::InvalidRequest {
        variable: "CDI kind",
        token: kind.to_owned(),
        reason: reason.to_owned(),
    };
    let (vendor, class) = kind.split_once('/').ok_or_else(|| invalid("expected vendor/class"))?;
    let vendor_ok = !vendor.is_empty()
        && vendor.len() <= 253
        && vendor.split('.').all(|label| {
            !label.is_empty()
                && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
                && !label.starts_with('-')
                && !label.ends_with('-')
        });
    let class_ok = !class.is_empty()
        && class.len() <= 63
        && class.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'_' | b'.'))
        && class.bytes().next().is_some_and(|b| b.is_ascii_alphanumeric())
        && class.bytes().last().is_some_and(|b| b.is_ascii_alphanumeric());
    if !vendor_ok {
        return Err(invalid("the vendor must be a DNS name"));
    }
    if !class_ok {
        return Err(invalid("the class must be letters, digits, '-', '_' or '.'"));
    }
    Ok((vendor, class))
}

/// The lowest `cdiVersion` whose schema covers everything the spec uses.
pub fn minimum_version(spec: &CdiSpec) -> &'static str {
    let all_edits = std::iter::once(&spec.container_edits).chain(spec.devices.iter().map(|d| &d.container_edits));
    let mut version = (0, 3, 0);
    let mut need = |v: (u32, u32, u32)| version = version.max(v);
    for edits in all_edits {
        if edits.mounts.iter().any(|m| m.mount_type.is_some()) {
            need((0, 4, 0));
        }
        if edits.device_nodes.iter().any(|n| n.host_path.is_some()) {
            need((0, 5, 0));
        }
    }
    if spec.devices.iter().any(|d| d.name.bytes().next().is_some_and(|b| b.is_ascii_digit())) {
        need((0, 5, 0));
    }
    if spec.kind.split_once('/').is_some_and(|(_, class)| class.contains('.')) {
        need((0, 6, 0));
    }
    match version {
        (0, 3, 0) => "0.3.0",
        (0, 4, 0) => "0.4.0",
        (0, 5, 0) => "0.5.0",
        _ => "0.6.0",
    }
}

/// Inputs of [`generate_spec`].
#[derive(Debug, Clone)]
pub struct GenerateOptions {
    /// `vendor/class`, [`crate::DEFAULT_CDI_KIND`] by default.
    pub kind: String,
    /// Mount lists to apply to every device (`["base"]` by default).
    pub mount_lists: Vec<String>,
    /// Where the lists live.
    pub injection: InjectionConfig,
    /// Allow symlinks in mount sources (confined to the host root).
    pub allow_link: bool,
    /// `NODRV` for every device: nodes only.
    pub no_driver: bool,
}

/// A device node as a CDI spec spells it: the host path only when it differs from the container path (a host root
/// other than `/`, or a vNPU's `/dev/vdavinciN` shown as `/dev/davinciN`), which needs `cdiVersion` 0.5.0.
pub fn cdi_node(root: &HostRoot, node: &DeviceNode) -> CdiDeviceNode {
    let host_path = node.host_path.to_string_lossy().into_owned();
    let container_path = node.container_path.to_string_lossy().into_owned();
    CdiDeviceNode {
        host_path: (root.path() != Path::new("/") || host_path != container_path).then_some(host_path),
        path: container_path,
        node_type: Some("c".to_owned()),
        major: Some(i64::from(node.major)),
        minor: Some(i64::from(node.minor)),
    }
}

fn cdi_mount(entry: &MountEntry) -> CdiMount {
    CdiMount {
        host_path: entry.host_path.to_string_lossy().into_owned(),
        container_path: entry.container_path.to_string_lossy().into_owned(),
        mount_type: None,
        options: CDI_MOUNT_OPTIONS.iter().map(|s| (*s).to_owned()).collect(),
    }
}

/// Builds the spec for all chips of the host.
///
/// # Errors
/// [`Error::InvalidRequest`] for a bad kind, [`Error::InvalidConfig`] for a host without chips,
/// and the errors of reading device nodes, mount lists and checking sources.
pub fn generate_spec(root: &HostRoot, host: &HostChips, options: &GenerateOptions) -> Result<CdiSpec> {
    parse_kind(&options.kind)?;
    if host.chips.is_empty() {
        return Err(Error::InvalidConfig {
            path: root.host_path(Path::new("/dev")),
            reason: "no davinci<N> character devices: no chip to describe".to_owned(),
        });
    }
    let mut devices = Vec::new();
    let mut all_nodes = Vec::new();
    for chip in &host.chips {
        let node = cdi_node(root, &chip_device_node(root, chip.node_id, RuntimeOptions::default())?);
        all_nodes.push(node.clone());
        devices.push(CdiDevice {
            name: chip.node_id.to_string(),
            container_edits: ContainerEdits { device_nodes: vec![node], ..ContainerEdits::default() },
        });
    }
    devices.push(CdiDevice {
        name: "all".to_owned(),
        container_edits: ContainerEdits { device_nodes: all_nodes, ..ContainerEdits::default() },
    });
    let mut common = ContainerEdits {
        device_nodes: shared_device_nodes(root, host)?.iter().map(|node| cdi_node(root, node)).collect(),
        env: vec![format!("{}={}", ASCEND_DOCKER_RUNTIME.0, ASCEND_DOCKER_RUNTIME.1)],
        ..ContainerEdits::default()
    };
    if !options.no_driver {
        let mut lists = Vec::new();
        for name in &options.mount_lists {
            lists.push(MountList::load(root, &options.injection.mount_list_dir, name)?);
        }
        let mounts = resolve_mounts(root, &lists, options.allow_link)?;
        let library_dirs = driver_library_dirs(root, &mounts);
        if !library_dirs.is_empty() {
            common.env.push(format!("LD_LIBRARY_PATH={}", library_dirs.join(":")));
        }
        common.mounts = mounts.iter().map(cdi_mount).collect();
    }
    let mut spec = CdiSpec { cdi_version: String::new(), kind: options.kind.clone(), devices, container_edits: common };
    spec.cdi_version = minimum_version(&spec).to_owned();
    Ok(spec)
}

/// The file name of a kind's spec: `huawei.com/npu` → `huawei.com-npu.json`.
///
/// # Errors
/// As [`parse_kind`].
pub fn spec_file_name(kind: &str) -> Result<String> {
    let (vendor, class) = parse_kind(kind)?;
    Ok(format!("{vendor}-{class}.json"))
}

/// Writes the spec as pretty JSON to `<dir>/<vendor>-<class>.json` atomically (mode 0644),
/// creating `dir` if needed. Returns the path.
///
/// # Errors
/// [`Error::Io`] naming the directory or file, [`Error::Json`].
pub fn write_spec(dir: &Path, spec: &CdiSpec) -> Result<PathBuf> {
    std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
    let path = dir.join(spec_file_name(&spec.kind)?);
    let mut bytes = serde_json::to_vec_pretty(spec)
        .map_err(|source| Error::Json { what: format!("serialise {}", path.display()), source })?;
    bytes.push(b'\n');
    write_atomically(&path, &bytes, 0o644)?;
    Ok(path)
}

/// Reads one spec file (JSON, at most 4 MiB).
///
/// # Errors
/// [`Error::Io`], [`Error::TooLarge`], [`Error::Json`] naming the file.
pub fn read_spec(path: &Path) -> Result<CdiSpec> {
    let bytes = crate::bounded_read::read_limited_file(path, 4 * 1024 * 1024, "CDI spec")?;
    serde_json::from_slice(&bytes).map_err(|source| Error::Json { what: format!("parse {}", path.display()), source })
}

/// The fully qualified device names (`huawei.com/npu=0`) of every `*.json` spec in `dirs`,
/// sorted; missing directories are skipped.
///
/// # Errors
/// [`Error::Io`] for an unreadable directory, and the errors of [`read_spec`].
pub fn list_device_names(dirs: &[PathBuf]) -> Result<Vec<String>> {
    let mut names = Vec::new();
    for dir in dirs {
        let entries = match std::fs::read_dir(dir) {
            Ok(entries) => entries,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => return Err(Error::io("read directory", dir, e)),
        };
        let mut paths: Vec<PathBuf> = entries
            .filter_map(|entry| entry.ok().map(|e| e.path()))
            .filter(|path| path.extension().is_some_and(|ext| ext == "json"))
            .collect();
        paths.sort();
        for path in paths {
            let spec = read_spec(&path)?;
            names.extend(spec.devices.iter().map(|d| format!("{}={}", spec.kind, d.name)));
        }
    }
    names.sort();
    names.dedup();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spec(names: &[&str], host_path: bool) -> CdiSpec {
        CdiSpec {
            cdi_version: String::new(),
            kind: "huawei.com/npu".to_owned(),
            devices: names
                .iter()
                .map(|n| CdiDevice {
                    name: (*n).to_owned(),
                    container_edits: ContainerEdits {
                        device_nodes: vec![CdiDeviceNode {
                            path: "/dev/davinci0".to_owned(),
                            host_path: host_path.then(|| "/h/dev/davinci0".to_owned()),
                            node_type: None,
                            major: None,
                            minor: None,
                        }],
                        ..ContainerEdits::default()
                    },
                })
                .collect(),
            container_edits: ContainerEdits::default(),
        }
    }

    #[test]
    fn version_is_the_lowest_that_covers_the_fields() {
        assert_eq!(minimum_version(&spec(&["npu0"], false)), "0.3.0");
        assert_eq!(minimum_version(&spec(&["0"], false)), "0.5.0");
        assert_eq!(minimum_version(&spec(&["npu0"], true)), "0.5.0");
        let mut typed = spec(&["npu0"], false);
        typed.container_edits.mounts.push(CdiMount {
            host_path: "/a".to_owned(),
            container_path: "/a".to_owned(),
            mount_type: Some("bind".to_owned()),
            options: Vec::new(),
        });
        assert_eq!(minimum_version(&typed), "0.4.0");
        typed.kind = "huawei.com/npu.v2".to_owned();
        assert_eq!(minimum_version(&typed), "0.6.0");
    }

    #[test]
    fn kinds() {
        assert_eq!(parse_kind("huawei.com/npu").ok(), Some(("huawei.com", "npu")));
        for bad in ["npu", "huawei.com/", "/npu", "huawei..com/npu", "huawei.com/n/p"] {
            assert!(parse_kind(bad).is_err(), "{bad}");
        }
    }
}
