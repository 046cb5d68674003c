//! Allocation planning: what a container gets for a list of device ids, in one of three modes.
//!
//! Every mode also sets `ASCEND_RT_VISIBLE_DEVICES=0,..,n-1` (inside the container the chips are renumbered from 0,
//! and frameworks that read this variable must use those numbers, not the host's physical ids) and the annotation
//! [`PHYSICAL_CHIPS_ANNOTATION`] naming the physical chips, so that "which chip is my device 0" has an answer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use ascend_dcmi::{ChipType, VnpuId};

use crate::error::{Error, Result};
use ascend_node::{Device, DeviceKind, Resource};

/// The CDI kind of the `ascend-oci` CDI spec.
pub const DEFAULT_CDI_KIND: &str = "huawei.com/npu";

/// Prefix of CDI annotations (CDI spec); the key's name part is `ascend-device-plugin_<resource>`.
pub const CDI_ANNOTATION_PREFIX: &str = "cdi.k8s.io/";

/// Annotation naming the physical chips given to the container, in container order (Huawei's key).
pub const PHYSICAL_CHIPS_ANNOTATION: &str = "huawei.com/AscendReal";

/// The chips' node numbers (the `N` of `/dev/davinciN`: the physical id, on Ascend950 the logic id) or vNPU ids for
/// the runtime hook, comma-separated.
pub const VISIBLE_DEVICES_ENV: &str = "ASCEND_VISIBLE_DEVICES";
/// Runtime hook options: empty, or `VIRTUAL` for vNPU ids.
pub const RUNTIME_OPTIONS_ENV: &str = "ASCEND_RUNTIME_OPTIONS";
/// The CANN runtime's device selection, in container numbering.
pub const RT_VISIBLE_DEVICES_ENV: &str = "ASCEND_RT_VISIBLE_DEVICES";

/// Shared device nodes every container with a chip needs.
pub const MANAGER_DEVICE_NODES: [&str; 3] = ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"];
/// The shared device nodes of an Ascend950 (DCMI V2) host, which has no `devmm_svm` (Huawei's runtime passes
/// `hisi_hdc` only beside the manager there).
pub const MANAGER_DEVICE_NODES_ASCEND950: [&str; 2] = ["/dev/davinci_manager", "/dev/hisi_hdc"];
/// Directories whose every node a container with a chip gets when they exist: the unified-bus (URMA) and UB MMU
/// nodes of Ascend950 hosts, shared by the node's NPUs as Huawei's plugin and runtime pass them. Other hosts have
/// neither.
pub const UNIFIED_BUS_NODE_DIRECTORIES: [&str; 2] = ["/dev/uburma", "/dev/ummu"];
/// A shared node passed only where the host has it.
pub const OPTIONAL_DEVICE_NODES: [&str; 1] = ["/dev/dvpp_cmdlist"];

/// Driver paths mounted read-only in device-spec mode when they exist on the host (Huawei's `base.list`).
pub const DEFAULT_DRIVER_MOUNTS: [&str; 5] = [
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/include",
    "/usr/local/Ascend/driver/version.info",
    "/usr/local/dcmi",
    "/usr/local/bin/npu-smi",
];

/// How CDI device names reach the container runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CdiDelivery {
    /// The `cdi_devices` field of the response (needs Kubernetes 1.28+ with DevicePluginCDIDevices).
    #[default]
    Field,
    /// `cdi.k8s.io/` annotations only, for runtimes that read those but kubelets without the field.
    Annotations,
    /// Both.
    Both,
}

/// How Allocate hands chips to a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AllocateMode {
    /// CDI names of the `ascend-oci` spec, `<kind>=<N>` for the chip's `/dev/davinci<N>`. vNPUs have no CDI names and get device specs instead.
    Cdi {
        /// The CDI kind, `huawei.com/npu` by default.
        kind: String,
        /// Field, annotations or both.
        delivery: CdiDelivery,
    },
    /// Device specs for the chip nodes and shared manager nodes, plus read-only mounts of the listed driver paths
    /// that exist on the host (an empty list mounts nothing).
    DeviceSpecs {
        /// Host paths to mount read-only at the same place.
        driver_mounts: Vec<PathBuf>,
    },
    /// Only environment for a runtime hook (`ASCEND_VISIBLE_DEVICES`, `ASCEND_RUNTIME_OPTIONS`).
    RuntimeEnv,
}

impl Default for AllocateMode {
    fn default() -> Self {
        AllocateMode::Cdi { kind: DEFAULT_CDI_KIND.to_owned(), delivery: CdiDelivery::Field }
    }
}

/// Allocation settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllocateConfig {
    /// The mode.
    pub mode: AllocateMode,
    /// Where the host's `/` is visible to the plugin (`/` outside a container); existence checks look there, the
    /// paths in the response are the host's own.
    pub host_root: PathBuf,
    /// The driver's HCCL topology file of this Ascend950 server, given to every container as [`HCCL_TOPO_FILE_ENV`]
    /// ([`hccl_topo_file`]); `None` elsewhere.
    pub hccl_topo_file: Option<String>,
}

impl Default for AllocateConfig {
    fn default() -> Self {
        Self { mode: AllocateMode::default(), host_root: PathBuf::from("/"), hccl_topo_file: None }
    }
}

/// The environment variable naming the driver's HCCL topology file on Ascend950 (mind-cluster
/// `component/ascend-device-plugin/pkg/server/plugin_v2.go`, `setHcclTopoFilePathEnv`).
pub const HCCL_TOPO_FILE_ENV: &str = "HCCL_TOPO_FILE_PATH";

/// The driver's topology file of an Ascend950 server by its super-pod type (`dcmi_get_device_info` 12/1): the
/// 8-NPU server, 1D and 2D super-pods, the 16- and 32-NPU servers, as Huawei's plugin maps them
/// (`pkg/server/npu_base_v2.go`, `hcclTopoFilePathMap`; `pkg/common/constants_v2.go`). Huawei's two Atlas 350
/// card types, which it recognises by card name, are not told apart here.
const HCCL_TOPO_FILES: [(u32, &str); 5] = [
    (0, "/usr/local/Ascend/driver/topo/950/atlas_850_1.json"),
    (1, "/usr/local/Ascend/driver/topo/950/atlas_950_1.json"),
    (2, "/usr/local/Ascend/driver/topo/950/atlas_950_2.json"),
    (3, "/usr/local/Ascend/driver/topo/950/atlas_850_2.json"),
    (4, "/usr/local/Ascend/driver/topo/950/atlas_850_3.json"),
];

/// The [`AllocateConfig::hccl_topo_file`] of this host: on Ascend950 the file of the first chip's super-pod type,
/// `None` on other chips or when the driver does not say. Blocks on the driver.
pub fn hccl_topo_file(manager: &dyn ascend_dcmi::DeviceManager) -> Option<String> {
    let first = manager.chips().ok()?.into_iter().next()?;
    if manager.identity(first.logic).ok()?.chip_type != Some(ChipType::Ascend950) {
        return None;
    }
    let super_pod_type = manager.super_pod_info(first.logic).ok()?.super_pod_type;
    HCCL_TOPO_FILES.iter().find(|(kind, _)| *kind == super_pod_type).map(|(_, path)| (*path).to_owned())
}

/// A device node for the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceNodeSpec {
    /// Path inside the container.
    pub container_path: String,
    /// Path on the host.
    pub host_path: String,
    /// Cgroup permissions, `rw`.
    pub permissions: String,
}

/// A bind mount for the container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountSpec {
    /// Path inside the container.
    pub container_path: String,
    /// Path on the host.
    pub host_path: String,
    /// Read-only.
    pub read_only: bool,
}

/// What one container gets; the gRPC adapter turns it into a `ContainerAllocateResponse`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ContainerAllocation {
    /// Environment variables.
    pub envs: BTreeMap<String, String>,
    /// Bind mounts.
    pub mounts: Vec<MountSpec>,
    /// Device nodes.
    pub devices: Vec<DeviceNodeSpec>,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// Fully qualified CDI device names.
    pub cdi_devices: Vec<String>,
}

/// What the requested ids stand for, after validation.
enum Targets {
    /// `nodes`: the `N` of each chip's `/dev/davinci<N>` ([`ascend_dcmi::ChipIds::device_node_number`]), ascending,
    /// which is the order the container sees them in.
    Chips {
        chip_type: ChipType,
        nodes: Vec<u32>,
        names: Vec<String>,
    },
    Vnpu {
        vnpu: VnpuId,
        name: String,
    },
}

/// Plans one container's allocation.
///
/// # Errors
/// [`Error::InvalidRequest`] for an empty list or more than one vNPU, [`Error::UnknownDevices`] naming every id the
/// resource does not advertise, [`Error::UnhealthyDevices`] naming every unhealthy one with its reason, [`Error::Io`]
/// when a present [`UNIFIED_BUS_NODE_DIRECTORIES`] entry cannot be listed.
pub fn plan_container(resource: &Resource, ids: &[String], config: &AllocateConfig) -> Result<ContainerAllocation> {
    let devices = resolve(resource, ids, "Allocate")?;
    let targets = targets(resource, &devices)?;
    let mut allocation = ContainerAllocation::default();
    let (count, names) = match &targets {
        Targets::Chips { nodes, names, .. } => (nodes.len(), names.join(",")),
        Targets::Vnpu { name, .. } => (1, name.clone()),
    };
    let ordinals: Vec<String> = (0..count).map(|i| i.to_string()).collect();
    allocation.envs.insert(RT_VISIBLE_DEVICES_ENV.to_owned(), ordinals.join(","));
    allocation.annotations.insert(PHYSICAL_CHIPS_ANNOTATION.to_owned(), names);
    if let Some(path) = &config.hccl_topo_file {
        allocation.envs.insert(HCCL_TOPO_FILE_ENV.to_owned(), path.clone());
    }

    match (&config.mode, &targets) {
        (AllocateMode::Cdi { kind, delivery }, Targets::Chips { nodes, .. }) => {
            let names: Vec<String> = nodes.iter().map(|node| format!("{kind}={node}")).collect();
            if matches!(delivery, CdiDelivery::Annotations | CdiDelivery::Both) {
                allocation.annotations.insert(cdi_annotation_key(&resource.name), names.join(","));
            }
            if matches!(delivery, CdiDelivery::Field | CdiDelivery::Both) {
                allocation.cdi_devices = names;
            }
        }
        (AllocateMode::Cdi { .. }, Targets::Vnpu { .. }) => {
            add_device_specs(&mut allocation, &targets, &config.host_root)?;
        }
        (AllocateMode::DeviceSpecs { driver_mounts }, _) => {
            add_device_specs(&mut allocation, &targets, &config.host_root)?;
            allocation.mounts = driver_mounts
                .iter()
                .filter(|path| exists_on_host(&config.host_root, path))
                .map(|path| MountSpec {
                    container_path: path.display().to_string(),
                    host_path: path.display().to_string(),
                    read_only: true,
                })
                .collect();
        }
        (AllocateMode::RuntimeEnv, _) => add_runtime_env(&mut allocation, &targets),
    }
    Ok(allocation)
}

/// Looks every id up and checks it is healthy; duplicates are ignored. Shared with preferred allocation.
///
/// # Errors
/// As [`plan_container`].
pub(crate) fn resolve<'a>(resource: &'a Resource, ids: &[String], rpc: &'static str) -> Result<Vec<&'a Device>> {
    if ids.is_empty() {
        return Err(Error::InvalidRequest {
            resource: resource.name.clone(),
            rpc,
            detail: "the request names no devices".to_owned(),
        });
    }
    let mut seen = BTreeSet::new();
    let mut devices = Vec::new();
    let mut unknown = Vec::new();
    for id in ids {
        if !seen.insert(id.as_str()) {
            continue;
        }
        match resource.device(id) {
            Some(device) => devices.push(device),
            None => unknown.push(id.clone()),
        }
    }
    if !unknown.is_empty() {
        let example = resource.devices.keys().next().cloned().unwrap_or_else(|| "none".to_owned());
        return Err(Error::UnknownDevices { resource: resource.name.clone(), ids: unknown, example });
    }
    let unhealthy: Vec<&Device> = devices.iter().copied().filter(|d| !d.health.is_healthy()).collect();
    if !unhealthy.is_empty() {
        let reasons = unhealthy.iter().map(|d| format!("{}: {}", d.id, d.health)).collect::<Vec<_>>().join("; ");
        return Err(Error::UnhealthyDevices {
            resource: resource.name.clone(),
            ids: unhealthy.iter().map(|d| d.id.clone()).collect(),
            reasons,
        });
    }
    Ok(devices)
}

fn targets(resource: &Resource, devices: &[&Device]) -> Result<Targets> {
    let vnpus: Vec<(VnpuId, &Device)> = devices
        .iter()
        .filter_map(|d| match d.kind {
            DeviceKind::Vnpu { id, .. } => Some((id, *d)),
            DeviceKind::Chip { .. } => None,
        })
        .collect();
    match vnpus.as_slice() {
        [] => {}
        [(vnpu, device)] if devices.len() == 1 => return Ok(Targets::Vnpu { vnpu: *vnpu, name: device.id.clone() }),
        _ => {
            return Err(Error::InvalidRequest {
                resource: resource.name.clone(),
                rpc: "Allocate",
                detail: format!("a container may hold at most one vNPU, got {}", devices.len()),
            })
        }
    }
    // `resolve` never returns an empty list; a resource holds one chip family, so the first device speaks for all.
    let Some(chip_type) = devices.first().map(|d| d.chip_type) else {
        return Err(Error::InvalidRequest {
            resource: resource.name.clone(),
            rpc: "Allocate",
            detail: "the request names no devices".to_owned(),
        });
    };
    // Replicas of one chip collapse to that chip; the container sees each chip once, in the order of its nodes. An
    // Ascend950's node is numbered by logic id, as Huawei's plugin numbers it (`getFinalVisibleDevices`): `npu-4` of
    // a host whose logic 0 is physical 4 is `/dev/davinci0` and `ASCEND_VISIBLE_DEVICES=0`.
    let mut chips: BTreeMap<u32, &Device> = BTreeMap::new();
    for device in devices {
        chips.entry(device.chip.device_node_number(device.chip_type)).or_insert(device);
    }
    Ok(Targets::Chips {
        chip_type,
        nodes: chips.keys().copied().collect(),
        names: chips.values().map(|d| d.chip_name.clone()).collect(),
    })
}

fn add_device_specs(allocation: &mut ContainerAllocation, targets: &Targets, host_root: &Path) -> Result<()> {
    let node = |container: String, host: String| DeviceNodeSpec {
        container_path: container,
        host_path: host,
        permissions: "rw".to_owned(),
    };
    let chip_type = match targets {
        Targets::Chips { chip_type, nodes, .. } => {
            for number in nodes {
                allocation.devices.push(node(format!("/dev/davinci{number}"), format!("/dev/davinci{number}")));
            }
            Some(*chip_type)
        }
        Targets::Vnpu { vnpu, .. } => {
            allocation.devices.push(node(format!("/dev/davinci{vnpu}"), format!("/dev/vdavinci{vnpu}")));
            None
        }
    };
    let managers: &[&str] =
        if chip_type == Some(ChipType::Ascend950) { &MANAGER_DEVICE_NODES_ASCEND950 } else { &MANAGER_DEVICE_NODES };
    for path in managers {
        // The 310B's manager node for containers has its own host name.
        let host = if chip_type == Some(ChipType::Ascend310B) && *path == "/dev/davinci_manager" {
            "/dev/davinci_manager_docker"
        } else {
            path
        };
        allocation.devices.push(node((*path).to_owned(), host.to_owned()));
    }
    for path in OPTIONAL_DEVICE_NODES {
        if exists_on_host(host_root, Path::new(path)) {
            allocation.devices.push(node(path.to_owned(), path.to_owned()));
        }
    }
    for path in unified_bus_nodes(host_root)? {
        allocation.devices.push(node(path.clone(), path));
    }
    Ok(())
}

/// The entries of the [`UNIFIED_BUS_NODE_DIRECTORIES`] present on the host, as host paths in name order.
fn unified_bus_nodes(host_root: &Path) -> Result<Vec<String>> {
    let mut nodes = Vec::new();
    for directory in UNIFIED_BUS_NODE_DIRECTORIES {
        let listing = host_root.join(directory.trim_start_matches('/'));
        let entries = match std::fs::read_dir(&listing) {
            Ok(entries) => entries,
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => continue,
            Err(source) => return Err(Error::Io { operation: "listing unified-bus nodes", path: listing, source }),
        };
        let mut names = entries
            .map(|entry| entry.map(|entry| entry.file_name().to_string_lossy().into_owned()))
            .collect::<std::io::Result<Vec<String>>>()
            .map_err(|source| Error::Io { operation: "listing unified-bus nodes", path: listing.clone(), source })?;
        names.sort();
        nodes.extend(names.into_iter().map(|name| format!("{directory}/{name}")));
    }
    Ok(nodes)
}

fn add_runtime_env(allocation: &mut ContainerAllocation, targets: &Targets) {
    let (visible, options) = match targets {
        Targets::Chips { nodes, chip_type, .. } => {
            if *chip_type == ChipType::Ascend310B {
                allocation.envs.insert("ASCEND_ALLOW_LINK".to_owned(), "True".to_owned());
            }
            (nodes.iter().map(ToString::to_string).collect::<Vec<_>>().join(","), "")
        }
        Targets::Vnpu { vnpu, .. } => (vnpu.to_string(), "VIRTUAL"),
    };
    allocation.envs.insert(VISIBLE_DEVICES_ENV.to_owned(), visible);
    allocation.envs.insert(RUNTIME_OPTIONS_ENV.to_owned(), options.to_owned());
}

/// The CDI annotation key for a resource: `cdi.k8s.io/ascend-device-plugin_<name part>`.
pub fn cdi_annotation_key(resource: &str) -> String {
    let part = resource.rsplit('/').next().unwrap_or(resource);
    format!("{CDI_ANNOTATION_PREFIX}ascend-device-plugin_{part}")
}

fn exists_on_host(host_root: &Path, path: &Path) -> bool {
    let relative = path.strip_prefix("/").unwrap_or(path);
    host_root.join(relative).exists()
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ascend_dcmi::{CardId, ChipIds, ChipLocator, DeviceId, LogicId, PhyId, VnpuTemplate};

    use super::*;
    use ascend_node::{ChipRecord, Health, InventoryOptions, Snapshot, UnhealthyCause};

    fn resource(chip_type: ChipType, unhealthy: &[u32], vnpu_on_0: bool) -> Resource {
        let chips: Vec<ChipRecord> = (0..4)
            .map(|phy| ChipRecord {
                ids: ChipIds {
                    logic: LogicId(phy),
                    phy: PhyId(phy),
                    locator: Some(ChipLocator { card: CardId(phy as i32), device: DeviceId(0) }),
                },
                chip_type,
                numa_node: None,
                vnpus: if vnpu_on_0 && phy == 0 {
                    VnpuTemplate::by_name("vir02").map(|t| vec![(VnpuId(100), t)]).unwrap_or_default()
                } else {
                    Vec::new()
                },
            })
            .collect();
        let health: BTreeMap<PhyId, Health> = (0..4)
            .map(|phy| {
                let health = if unhealthy.contains(&phy) {
                    Health::Unhealthy(UnhealthyCause::HealthCallFailed("test fault".into()))
                } else {
                    Health::Healthy
                };
                (PhyId(phy), health)
            })
            .collect();
        let snapshot = Snapshot::build(&chips, &health, &InventoryOptions::default());
        let name = if vnpu_on_0 { "huawei.com/Ascend310P-2c" } else { "huawei.com/Ascend910" };
        snapshot.resource(name).cloned().unwrap_or_else(|| panic!("{name} advertised"))
    }

    fn ids(names: &[&str]) -> Vec<String> {
        names.iter().map(|s| (*s).to_owned()).collect()
    }

    fn config(mode: AllocateMode) -> AllocateConfig {
        AllocateConfig { mode, host_root: PathBuf::from("/nonexistent-host-root"), hccl_topo_file: None }
    }

    #[test]
    fn duplicates_collapse_and_order_is_physical() {
        let resource = resource(ChipType::Ascend910B, &[], false);
        let plan = plan_container(
            &resource,
            &ids(&["Ascend910-3", "Ascend910-1", "Ascend910-3"]),
            &config(AllocateMode::RuntimeEnv),
        )
        .expect("plans");
        assert_eq!(plan.envs.get(VISIBLE_DEVICES_ENV).map(String::as_str), Some("1,3"));
        assert_eq!(plan.envs.get(RT_VISIBLE_DEVICES_ENV).map(String::as_str), Some("0,1"));
        assert_eq!(
            plan.annotations.get(PHYSICAL_CHIPS_ANNOTATION).map(String::as_str),
            Some("Ascend910-1,Ascend910-3")
        );
    }

    #[test]
    fn device_specs_skip_absent_optional_nodes_and_mounts() {
        let resource = resource(ChipType::Ascend910B, &[], false);
        let mode = AllocateMode::DeviceSpecs { driver_mounts: vec![PathBuf::from("/usr/local/dcmi")] };
        let plan = plan_container(&resource, &ids(&["Ascend910-2"]), &config(mode)).expect("plans");
        let paths: Vec<&str> = plan.devices.iter().map(|d| d.container_path.as_str()).collect();
        assert_eq!(paths, ["/dev/davinci2", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]);
        assert!(plan.mounts.is_empty(), "nothing exists under the host root");
    }

    #[test]
    fn the_310b_uses_its_container_manager_node_and_allows_links() {
        let mut resource = resource(ChipType::Ascend910B, &[], false);
        for device in resource.devices.values_mut() {
            device.chip_type = ChipType::Ascend310B;
        }
        let mode = AllocateMode::DeviceSpecs { driver_mounts: Vec::new() };
        let plan = plan_container(&resource, &ids(&["Ascend910-0"]), &config(mode)).expect("plans");
        assert_eq!(plan.devices[1].host_path, "/dev/davinci_manager_docker");
        assert_eq!(plan.devices[1].container_path, "/dev/davinci_manager");
        let env = plan_container(&resource, &ids(&["Ascend910-0"]), &config(AllocateMode::RuntimeEnv)).expect("plans");
        assert_eq!(env.envs.get("ASCEND_ALLOW_LINK").map(String::as_str), Some("True"));
    }

    #[test]
    fn errors_name_every_bad_id() {
        let resource = resource(ChipType::Ascend910B, &[1, 2], false);
        let mode = config(AllocateMode::default());
        let unknown =
            plan_container(&resource, &ids(&["Ascend910-0", "Ascend910-9", "x"]), &mode).expect_err("unknown");
        assert!(matches!(&unknown, Error::UnknownDevices { ids, .. } if ids == &["Ascend910-9", "x"]), "{unknown}");
        assert!(unknown.to_string().contains("look like Ascend910-0"), "{unknown}");
        let unhealthy = plan_container(&resource, &ids(&["Ascend910-1", "Ascend910-2", "Ascend910-3"]), &mode)
            .expect_err("unhealthy");
        assert!(matches!(&unhealthy, Error::UnhealthyDevices { ids, .. } if ids == &["Ascend910-1", "Ascend910-2"]));
        assert!(unhealthy.to_string().contains("test fault"), "{unhealthy}");
        assert!(matches!(plan_container(&resource, &[], &mode), Err(Error::InvalidRequest { .. })));
    }

    #[test]
    fn a_vnpu_gets_virtual_options_and_its_vdavinci_node() {
        let resource = resource(ChipType::Ascend310P, &[], true);
        let id = ids(&["Ascend310P-2c-100-0"]);
        let env = plan_container(&resource, &id, &config(AllocateMode::RuntimeEnv)).expect("plans");
        assert_eq!(env.envs.get(VISIBLE_DEVICES_ENV).map(String::as_str), Some("100"));
        assert_eq!(env.envs.get(RUNTIME_OPTIONS_ENV).map(String::as_str), Some("VIRTUAL"));
        let cdi = plan_container(&resource, &id, &config(AllocateMode::default())).expect("plans");
        assert!(cdi.cdi_devices.is_empty());
        assert_eq!(cdi.devices[0].host_path, "/dev/vdavinci100");
        assert_eq!(cdi.devices[0].container_path, "/dev/davinci100");
    }

    /// The `huawei.com/npu` resource of an `atlas-950-8` host as dcmi-sim lays it out (logic 0..7 are physical
    /// 4..7, 0..3), with the fake host's root.
    fn atlas_950_8() -> (tempfile::TempDir, Resource) {
        let dir = tempfile::tempdir().expect("temp dir");
        let library = dir.path().join("libdcmi.so");
        std::fs::write(&library, b"x").expect("library stand-in");
        let topology = dcmi_sim::samples::by_name("atlas-950-8").expect("sample").topology().expect("valid");
        let options = dcmi_sim::fake_host::FakeHostOptions {
            library: Some(library),
            plain_device_nodes: true,
            ..dcmi_sim::fake_host::FakeHostOptions::default()
        };
        dcmi_sim::fake_host::FakeHost::build(&topology, &dir.path().join("host"), &options).expect("fake host");
        let chips: Vec<ChipRecord> = topology
            .chips()
            .map(|found| ChipRecord {
                ids: ChipIds { logic: LogicId(found.chip.logic_id), phy: PhyId(found.chip.phy_id), locator: None },
                chip_type: ChipType::Ascend950,
                numa_node: None,
                vnpus: Vec::new(),
            })
            .collect();
        let health = chips.iter().map(|chip| (chip.ids.phy, Health::Healthy)).collect();
        let snapshot = Snapshot::build(&chips, &health, &InventoryOptions::default());
        let resource = snapshot.resource("huawei.com/npu").cloned().expect("huawei.com/npu advertised");
        (dir, resource)
    }

    #[test]
    fn an_ascend950_chip_is_its_logic_numbered_node_with_the_a5_device_set() {
        let (dir, resource) = atlas_950_8();
        let host_root = dir.path().join("host");
        let config = |mode| AllocateConfig { mode, host_root: host_root.clone(), hccl_topo_file: None };
        // Huawei's plugin gives `npu-4` (logic 0) /dev/davinci0 and ASCEND_VISIBLE_DEVICES=0.
        let specs =
            plan_container(&resource, &ids(&["npu-4"]), &config(AllocateMode::DeviceSpecs { driver_mounts: vec![] }))
                .expect("plans");
        let paths: Vec<&str> = specs.devices.iter().map(|d| d.host_path.as_str()).collect();
        let mut expected = vec!["/dev/davinci0", "/dev/davinci_manager", "/dev/hisi_hdc"];
        let unified_bus: Vec<String> = (0..8)
            .map(|n| format!("/dev/uburma/uburma{n}"))
            .chain((0..8).map(|n| format!("/dev/ummu/ummu{n}")))
            .collect();
        expected.extend(unified_bus.iter().map(String::as_str));
        assert_eq!(paths, expected, "no devmm_svm and no dvpp_cmdlist on an Ascend950");
        assert!(specs.devices.iter().all(|d| d.host_path == d.container_path));
        let env = plan_container(&resource, &ids(&["npu-4"]), &config(AllocateMode::RuntimeEnv)).expect("plans");
        assert_eq!(env.envs.get(VISIBLE_DEVICES_ENV).map(String::as_str), Some("0"));
        let cdi = plan_container(&resource, &ids(&["npu-4"]), &config(AllocateMode::default())).expect("plans");
        assert_eq!(cdi.cdi_devices, ["huawei.com/npu=0"]);
        // Two chips: in the order of their nodes, physical 0 (logic 4) after physical 5 (logic 1).
        let two =
            plan_container(&resource, &ids(&["npu-0", "npu-5"]), &config(AllocateMode::RuntimeEnv)).expect("plans");
        assert_eq!(two.envs.get(VISIBLE_DEVICES_ENV).map(String::as_str), Some("1,4"));
        assert_eq!(two.annotations.get(PHYSICAL_CHIPS_ANNOTATION).map(String::as_str), Some("npu-5,npu-0"));
        assert!(!two.envs.contains_key(HCCL_TOPO_FILE_ENV), "no topology file configured");
        // With the host's HCCL topology file, every mode gives it to the container.
        let topo = "/usr/local/Ascend/driver/topo/950/atlas_950_1.json";
        for mode in [AllocateMode::RuntimeEnv, AllocateMode::default()] {
            let config = AllocateConfig { hccl_topo_file: Some(topo.to_owned()), ..config(mode) };
            let plan = plan_container(&resource, &ids(&["npu-4"]), &config).expect("plans");
            assert_eq!(plan.envs.get(HCCL_TOPO_FILE_ENV).map(String::as_str), Some(topo));
        }
    }

    #[test]
    fn cdi_annotation_key_uses_the_resource_name_part() {
        assert_eq!(cdi_annotation_key("huawei.com/Ascend310P-2c"), "cdi.k8s.io/ascend-device-plugin_Ascend310P-2c");
    }
}
