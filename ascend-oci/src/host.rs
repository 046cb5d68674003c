//! The host side: which chips exist and the device nodes that give access to them.

use std::collections::BTreeSet;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use rustix::fs::FileType;

use crate::error::{Error, Result};
use crate::request::{format_id_runs, DeviceSelection, RuntimeOptions, VISIBLE_DEVICES_ENV};
use crate::secure_path::{directory_entries, HostRoot};

/// One chip of the host.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct HostChip {
    /// The `N` of its `/dev/davinciN`, the id `ASCEND_VISIBLE_DEVICES` and CDI device names carry: the physical
    /// id, on Ascend950 the logic id (`ascend_dcmi::ChipIds::device_node_number`).
    pub node_id: u32,
}

/// The products that have no `devmm_svm` and `hisi_hdc` nodes (`Atlas200ISoc` and `Atlas200`, for which
/// `addManagerDevice` of Huawei's Ascend Docker Runtime leaves them out: `Ascend/mind-cluster`,
/// `component/ascend-docker-runtime/runtime/process/process.go`).
pub const PRODUCTS_WITHOUT_SVM_AND_HDC: [&str; 2] = ["Atlas 200I SoC A1", "Atlas 200 Model 3000"];

/// The chips of a host and their type.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostChips {
    /// The chip type (`910B`, `310P`, `310B`, `950` ..., or DCMI's `Ascend310P` ...) when known;
    /// it selects the shared device nodes. `None` means the common 910/310P layout.
    pub chip_type: Option<String>,
    /// The product type DCMI reports (`dcmi_get_product_type`, 310 family only), when known;
    /// [`PRODUCTS_WITHOUT_SVM_AND_HDC`] lack two shared nodes.
    pub product_type: Option<String>,
    /// The chips, sorted by node number.
    pub chips: Vec<HostChip>,
}

impl HostChips {
    /// Finds the chips by listing `<host root>/dev/davinci<N>` character devices. This works on
    /// real hosts (the driver creates one node per chip) and on fake hosts.
    ///
    /// # Errors
    /// [`Error::Io`] if `<host root>/dev` cannot be read.
    pub fn scan(root: &HostRoot, chip_type: Option<String>) -> Result<Self> {
        let ids: BTreeSet<u32> = chip_node_entries(root)?
            .into_iter()
            .filter(|entry| entry.file_type == FileType::CharacterDevice)
            .map(|entry| entry.node_id)
            .collect();
        Ok(HostChips {
            chip_type,
            product_type: None,
            chips: ids.into_iter().map(|node_id| HostChip { node_id }).collect(),
        })
    }

    /// Checks that every chip has its `/dev/davinci<N>` character device, so that a chip the
    /// driver reports but whose node was never created fails loudly instead of silently
    /// shrinking "all". `reported_by` names the source of the chip list (`"DCMI"`).
    ///
    /// # Errors
    /// [`Error::DeviceNodeMissing`] naming the first absent node; the other errors of
    /// [`DeviceNode::from_host`] (a node that is a symlink or not a character device).
    pub fn check_device_nodes(&self, root: &HostRoot, reported_by: &'static str) -> Result<()> {
        for chip in &self.chips {
            match chip_device_node(root, chip.node_id, RuntimeOptions::default()) {
                Ok(_) => {}
                Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
                    return Err(Error::DeviceNodeMissing {
                        reported_by,
                        node_id: chip.node_id,
                        path: root.host_path(&chip_device_path(chip.node_id)),
                    });
                }
                Err(other) => return Err(other),
            }
        }
        Ok(())
    }

    /// The node numbers (the `N` of each `/dev/davinciN`).
    pub fn node_ids(&self) -> BTreeSet<u32> {
        self.chips.iter().map(|chip| chip.node_id).collect()
    }

    /// The chips a selection stands for, checked against this host.
    ///
    /// # Errors
    /// [`Error::ChipAbsent`] for the first requested id the host does not have (not checked with
    /// `VIRTUAL`, where ids are vNPU ids; the device-node lookup fails instead).
    pub fn select(&self, selection: &DeviceSelection, options: RuntimeOptions, root: &HostRoot) -> Result<Vec<u32>> {
        let present = self.node_ids();
        match selection {
            DeviceSelection::Nothing => Ok(Vec::new()),
            DeviceSelection::All => Ok(present.into_iter().collect()),
            DeviceSelection::Chips(ids) => {
                if !options.contains(RuntimeOptions::VIRTUAL) {
                    if let Some(&missing) = ids.iter().find(|id| !present.contains(id)) {
                        return Err(Error::ChipAbsent {
                            variable: VISIBLE_DEVICES_ENV,
                            node_id: missing,
                            path: root.host_path(&chip_device_path(missing)),
                            available: if present.is_empty() { "none".to_owned() } else { format_id_runs(&present) },
                        });
                    }
                }
                Ok(ids.iter().copied().collect())
            }
        }
    }
}

/// One `davinci<N>` entry of `<host root>/dev`, as the directory listing gives it.
pub(crate) struct ChipNodeEntry {
    /// The `N`.
    pub node_id: u32,
    /// The entry's name (`davinci<N>`).
    pub name: String,
    /// Its host path.
    pub host_path: PathBuf,
    /// The type the listing reports (no `stat`).
    pub file_type: FileType,
}

/// Every `davinci<N>` entry of `<host root>/dev` (opened without following symlinks), in listing order.
///
/// # Errors
/// [`Error::Io`] if `<host root>/dev` cannot be opened or read.
pub(crate) fn chip_node_entries(root: &HostRoot) -> Result<Vec<ChipNodeEntry>> {
    let dev_path = root.host_path(Path::new("/dev"));
    let dev = root.open_no_symlinks(Path::new("/dev"))?;
    let entries = directory_entries(dev.as_fd(), &dev_path)?;
    let mut found = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| Error::errno("read directory", &dev_path, e))?;
        let name = OsStr::from_bytes(entry.file_name().to_bytes());
        let Some((name, node_id)) = name.to_str().and_then(|name| Some((name, parse_davinci_name(name)?))) else {
            continue;
        };
        found.push(ChipNodeEntry {
            node_id,
            name: name.to_owned(),
            host_path: dev_path.join(name),
            file_type: entry.file_type(),
        });
    }
    Ok(found)
}

fn parse_davinci_name(name: &str) -> Option<u32> {
    let digits = name.strip_prefix("davinci")?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// `/dev/davinci<node_id>`.
pub fn chip_device_path(node_id: u32) -> PathBuf {
    PathBuf::from(format!("/dev/davinci{node_id}"))
}

/// A character device to create in the container, with the host's numbers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceNode {
    /// Path inside the container (`/dev/davinci0`).
    pub container_path: PathBuf,
    /// Path on the host, including the host root.
    pub host_path: PathBuf,
    /// Major number.
    pub major: u32,
    /// Minor number.
    pub minor: u32,
    /// Permission bits of the host node.
    pub file_mode: u32,
    /// Owner of the host node.
    pub uid: u32,
    /// Group of the host node.
    pub gid: u32,
}

impl DeviceNode {
    /// Reads the host node `host_path` (an absolute path under the host root, no symlinks) to
    /// be shown as `container_path`.
    ///
    /// # Errors
    /// [`Error::Io`] (kind `NotFound` when absent), [`Error::UnsafePath`] for symlinks,
    /// [`Error::WrongFileType`] if it is not a character device.
    pub fn from_host(root: &HostRoot, host_path: &Path, container_path: &Path) -> Result<Self> {
        let stat = root.stat_no_symlinks(host_path)?;
        let full_host_path = root.host_path(host_path);
        if FileType::from_raw_mode(stat.st_mode) != FileType::CharacterDevice {
            return Err(Error::WrongFileType {
                path: full_host_path,
                reason: "expected a character device".to_owned(),
            });
        }
        Ok(DeviceNode {
            container_path: container_path.to_path_buf(),
            host_path: full_host_path,
            major: rustix::fs::major(stat.st_rdev),
            minor: rustix::fs::minor(stat.st_rdev),
            file_mode: stat.st_mode & 0o7777,
            uid: stat.st_uid,
            gid: stat.st_gid,
        })
    }
}

/// A shared node: (host name under `/dev`, container name under `/dev`, required).
type SharedNode = (&'static str, &'static str, bool);

/// The shared (manager) nodes every container with a chip needs, by chip type and product type (as `addManagerDevice`
/// of Huawei's Ascend Docker Runtime chooses them: `Ascend/mind-cluster`,
/// `component/ascend-docker-runtime/runtime/process/process.go`).
fn shared_node_names(chip_type: Option<&str>, product_type: Option<&str>) -> Vec<SharedNode> {
    const ATLAS_310B: [&str; 14] = [
        "svm0", "ts_aisle", "upgrade", "sys", "vdec", "vpc", "pngd", "venc", "log_drv", "acodec", "ai", "ao", "vo",
        "hdmi",
    ];
    match chip_type {
        Some(t) if t.contains("310B") => {
            let mut nodes: Vec<SharedNode> = vec![("dvpp_cmdlist", "dvpp_cmdlist", false)];
            nodes.extend(ATLAS_310B.iter().map(|name| (*name, *name, false)));
            nodes.push(("davinci_manager_docker", "davinci_manager", true));
            nodes
        }
        Some(t) if t.contains("950") => {
            vec![("davinci_manager", "davinci_manager", true), ("hisi_hdc", "hisi_hdc", true)]
        }
        _ => {
            let mut nodes: Vec<SharedNode> =
                vec![("dvpp_cmdlist", "dvpp_cmdlist", false), ("davinci_manager", "davinci_manager", true)];
            if !product_type.is_some_and(|product| PRODUCTS_WITHOUT_SVM_AND_HDC.contains(&product.trim())) {
                nodes.push(("devmm_svm", "devmm_svm", true));
                nodes.push(("hisi_hdc", "hisi_hdc", true));
            }
            nodes
        }
    }
}

/// The shared device nodes for the host's chip and product type, read from the host. Optional
/// ones that are absent are left out.
///
/// # Errors
/// As [`DeviceNode::from_host`] for a required node, or an optional one that exists but is bad.
pub fn shared_device_nodes(root: &HostRoot, host: &HostChips) -> Result<Vec<DeviceNode>> {
    let mut nodes = Vec::new();
    for (host_name, container_name, required) in
        shared_node_names(host.chip_type.as_deref(), host.product_type.as_deref())
    {
        let host_path = Path::new("/dev").join(host_name);
        match DeviceNode::from_host(root, &host_path, &Path::new("/dev").join(container_name)) {
            Ok(node) => nodes.push(node),
            Err(Error::Io { source, .. }) if !required && source.kind() == std::io::ErrorKind::NotFound => {}
            Err(other) => return Err(other),
        }
    }
    nodes.extend(unified_bus_nodes(root)?);
    Ok(nodes)
}

/// Directories whose every node a container with a chip gets when they exist: the unified-bus (URMA) and UB MMU
/// nodes of Ascend950 hosts (`addUBDevice` of Huawei's Ascend Docker Runtime: `Ascend/mind-cluster`,
/// `component/ascend-docker-runtime/runtime/process/process.go`). Other hosts have neither.
pub const UNIFIED_BUS_NODE_DIRECTORIES: [&str; 2] = ["/dev/uburma", "/dev/ummu"];

/// The device nodes in [`UNIFIED_BUS_NODE_DIRECTORIES`], in name order; absent directories give none.
///
/// # Errors
/// [`Error::Io`] when a present directory cannot be listed; as [`DeviceNode::from_host`] for an entry that is not
/// a character device or is a symlink.
fn unified_bus_nodes(root: &HostRoot) -> Result<Vec<DeviceNode>> {
    let mut nodes = Vec::new();
    for directory in UNIFIED_BUS_NODE_DIRECTORIES {
        let listing = root.host_path(Path::new(directory));
        let entries = match std::fs::read_dir(&listing) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::Io { operation: "list", path: listing, source }),
        };
        let mut names: Vec<std::ffi::OsString> = Vec::new();
        for entry in entries {
            names.push(
                entry.map_err(|source| Error::Io { operation: "list", path: listing.clone(), source })?.file_name(),
            );
        }
        names.sort();
        for name in names {
            let path = Path::new(directory).join(name);
            nodes.push(DeviceNode::from_host(root, &path, &path)?);
        }
    }
    Ok(nodes)
}

/// The device node of one chip: `/dev/davinciN`, or with `VIRTUAL` the host's `/dev/vdavinciN`
/// shown as `/dev/davinciN`.
///
/// # Errors
/// As [`DeviceNode::from_host`].
pub fn chip_device_node(root: &HostRoot, node_id: u32, options: RuntimeOptions) -> Result<DeviceNode> {
    let container_path = chip_device_path(node_id);
    let host_path = if options.contains(RuntimeOptions::VIRTUAL) {
        PathBuf::from(format!("/dev/vdavinci{node_id}"))
    } else {
        container_path.clone()
    };
    DeviceNode::from_host(root, &host_path, &container_path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn davinci_names() {
        assert_eq!(parse_davinci_name("davinci12"), Some(12));
        assert_eq!(parse_davinci_name("davinci_manager"), None);
        assert_eq!(parse_davinci_name("davinci"), None);
    }

    #[test]
    fn shared_nodes_by_type() {
        let names = |chip: Option<&str>, product: Option<&str>| -> Vec<&str> {
            shared_node_names(chip, product).iter().map(|n| n.1).collect()
        };
        assert_eq!(names(None, None), ["dvpp_cmdlist", "davinci_manager", "devmm_svm", "hisi_hdc"]);
        assert_eq!(names(Some("Ascend310P"), Some("Atlas 300I Duo")), names(None, None));
        let soc = shared_node_names(Some("310B"), None);
        assert!(soc.contains(&("davinci_manager_docker", "davinci_manager", true)));
        assert!(!soc.iter().any(|n| n.0 == "devmm_svm"));
        assert_eq!(names(Some("Ascend950"), None), ["davinci_manager", "hisi_hdc"]);
    }

    #[test]
    fn products_without_svm_and_hdc() {
        for product in PRODUCTS_WITHOUT_SVM_AND_HDC {
            let nodes: Vec<&str> = shared_node_names(Some("Ascend310"), Some(product)).iter().map(|n| n.1).collect();
            assert_eq!(nodes, ["dvpp_cmdlist", "davinci_manager"], "{product}");
        }
    }
}
