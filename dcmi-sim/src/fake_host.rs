//! A fake Atlas host: the files, device nodes and `/sys` entries a real Ascend server has, laid out under a root
//! directory, with the simulator installed as the driver's `libdcmi.so`.
//!
//! The device plugin, the OCI hook and the doctor run against such a root exactly as they run against `/` on a real
//! server. [`FakeHost::build`] writes:
//!
//! | path under the root | what |
//! |---|---|
//! | `dev/davinci<N>` | one node per chip: major [`DAVINCI_MAJOR`], minor `N`, the chip's [`device_node_number`] (its physical id, on Ascend950 its logic id) |
//! | `dev/davinci_manager`, `dev/devmm_svm`, `dev/hisi_hdc`, `dev/dvpp_cmdlist` | the shared manager nodes ([`MANAGER_NODES`]); an Ascend950 (DCMI V2) host has only `davinci_manager` and `hisi_hdc` ([`MANAGER_NODES_V2`]) |
//! | `dev/uburma/uburma<N>`, `dev/ummu/ummu<N>` | Ascend950 only: one unified-bus (URMA) and one UB MMU node per chip, numbered as its `davinci<N>` ([`UB_NODE_DIRECTORIES`]) |
//! | `usr/local/Ascend/driver/version.info`, `usr/local/Ascend/firmware/version.info` | the driver (version of the topology) and firmware, as [`FakeSoftware`] writes them |
//! | `usr/local/Ascend/driver/lib64/driver/libdcmi.so` | the simulator library (also linked from `lib64/` and `/usr/local/dcmi`) |
//! | `usr/local/Ascend/driver/lib64/common/`, `.../include/`, `usr/local/dcmi/dcmi_interface_api.h`, `usr/local/bin/npu-smi`, `var/queue_schedule/` | the other driver files the vendor's `base.list` names |
//! | `usr/local/Ascend/driver/tools/hccn_tool` | the simulated `hccn_tool` ([`crate::hccn_tool`]), when it was built ([`FakeHostOptions::hccn_tool`]) |
//! | `usr/local/Ascend/ascend-toolkit/<version>/...`, `.../latest` | the CANN toolkit versions and their `version.info` files ([`FakeSoftware`]) |
//! | `etc/dcmi-sim/topology.toml` | the topology, to point `DCMI_SIM_CONFIG` at, with each chip's firmware version ([`FakeHostOptions::installed_topology`]) |
//! | `usr/local/Ascend/driver/lib64/driver/dcmi-sim.toml` | the same topology beside the library, read when `DCMI_SIM_CONFIG` is unset ([`crate::CONFIG_FILE_NAME`]) |
//! | `sys/devices/system/node/node<N>/cpulist` | NUMA nodes and their CPUs, from the chips' affinity |
//! | `sys/bus/pci/devices/<bdf>/{vendor,device,numa_node}` | the chips' PCIe functions |
//! | `sys/module/drv_davinci_intf_host`, `sys/module/drv_devmng_host` | "driver loaded" |
//! | `lib/modules/<release>/build/Makefile` | kernel headers matching the running kernel |
//! | `sys/firmware/efi/efivars/SecureBoot-…` | Secure Boot off |
//!
//! Device nodes are character devices when the builder runs as root and plain files otherwise; [`FakeHost::device_nodes`]
//! says which.

use std::fs;
use std::io;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

use crate::error::Error;
pub use crate::fake_software::{
    FakeSoftware, SoftwareEntry, DEFAULT_CANN_INNER_LINE, DEFAULT_CANN_VERSION, DEFAULT_FIRMWARE_VERSION,
    DEFAULT_REQUIRED_ASCENDHAL, DRIVER_COMPATIBLE_LINES, DRIVER_FIRMWARE_RANGE, DRIVER_INNER_VERSION,
    DRIVER_INTERFACES, TOOLKIT_HOME,
};
use crate::topology::Topology;

/// Major number of the fake `/dev/davinci<N>` nodes (in Linux's range for local use).
pub const DAVINCI_MAJOR: u32 = 240;

/// The shared manager nodes every container that uses a chip needs, with their fake major numbers (minor 0).
pub const MANAGER_NODES: [(&str, u32); 4] =
    [("davinci_manager", 241), ("devmm_svm", 242), ("hisi_hdc", 243), ("dvpp_cmdlist", 244)];

/// The shared manager nodes of an Ascend950 (DCMI V2) host: no `devmm_svm` and no `dvpp_cmdlist` there (what
/// `addManagerDevice` of Huawei's Ascend Docker Runtime gives an `Ascend910A5` container: `Ascend/mind-cluster`,
/// `component/ascend-docker-runtime/runtime/process/process.go`), same major numbers as [`MANAGER_NODES`].
pub const MANAGER_NODES_V2: [(&str, u32); 2] = [("davinci_manager", 241), ("hisi_hdc", 243)];

/// Ascend950 hosts' unified-bus node directories with the major of their nodes (name and minor: the chip's
/// [`device_node_number`]): every node in them goes into a container that uses a chip, as Huawei's plugin and runtime
/// pass them (mind-cluster `component/ascend-device-plugin/pkg/server/plugin.go`, `mountUBDevice`;
/// `component/ascend-docker-runtime/runtime/process/process.go`, `addUBDevice`). The names inside the directories are
/// not known from real hardware; nothing reads them but as a listing.
pub const UB_NODE_DIRECTORIES: [(&str, u32); 2] = [("uburma", 245), ("ummu", 246)];

/// The `N` of a chip's `/dev/davinci<N>`: its logic id on an Ascend950 (DCMI V2) host, its physical id elsewhere.
///
/// What the real Ascend950 driver does is not known from hardware; this follows what Huawei's code expects of it: its
/// device plugin converts the chip's physical id to its logic id before it names `/dev/davinci<N>` and
/// `ASCEND_VISIBLE_DEVICES` (mind-cluster `component/ascend-device-plugin/pkg/server/plugin.go`,
/// `getFinalVisibleDevices`, `convertToLogicIDs`), and its runtime opens `/dev/davinci<N>` of that number. The stack's
/// own answer is `ascend_dcmi::ChipIds::device_node_number`; tests hold the two together.
pub fn device_node_number(chip: &crate::topology::Chip) -> u32 {
    if chip.chip_type.api() == crate::chip_type::Api::V2 {
        chip.logic_id
    } else {
        chip.phy_id
    }
}

/// Where the driver's files live on an Atlas host, relative to the root.
pub const DRIVER_DIR: &str = "usr/local/Ascend/driver";

/// Where the simulator library is installed as `libdcmi.so`, relative to the root.
pub const LIBRARY_PATH: &str = "usr/local/Ascend/driver/lib64/driver/libdcmi.so";

/// Where the simulated `hccn_tool` is installed, relative to the root.
pub const HCCN_TOOL_PATH: &str = "usr/local/Ascend/driver/tools/hccn_tool";

/// Where the topology is copied, relative to the root.
pub const TOPOLOGY_PATH: &str = "etc/dcmi-sim/topology.toml";

/// A file in the directory of the installed library, relative to the root: the topology is copied there too
/// ([`crate::CONFIG_FILE_NAME`]), and there a test writes the overlay a daemon without `DCMI_SIM_OVERLAY` watches
/// ([`crate::OVERLAY_FILE_NAME`]).
pub fn beside_library(file_name: &str) -> String {
    let directory = LIBRARY_PATH.rsplit_once('/').map_or("", |(directory, _)| directory);
    format!("{directory}/{file_name}")
}

/// The EFI variable that holds the Secure Boot state.
const SECURE_BOOT_VARIABLE: &str = "SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

/// What kind of files the device nodes are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceNodeKind {
    /// Real character devices (the builder ran as root).
    CharacterDevices,
    /// Plain empty files (the builder could not create device nodes).
    PlainFiles,
}

/// Choices for [`FakeHost::build`].
#[derive(Debug, Clone, Default)]
pub struct FakeHostOptions {
    /// The simulator library to install; `None` finds the built one with [`crate::library_path`].
    pub library: Option<PathBuf>,
    /// Force plain files for device nodes even as root.
    pub plain_device_nodes: bool,
    /// The driver, firmware and CANN packages' version files (by default a set that fits together).
    pub software: FakeSoftware,
    /// Chips (by physical id) that run another firmware than the installed package's, as after a partial upgrade:
    /// each one's `firmware_version` in the installed topology. Every other chip without its own runs
    /// [`FakeSoftware::firmware_version`].
    pub chip_firmware: Vec<(u32, String)>,
    /// The simulated `hccn_tool` to install; `None` finds the built one with [`crate::hccn_tool::built_tool`] and
    /// installs none when there is none (cargo builds no binary of a dependency).
    pub hccn_tool: Option<PathBuf>,
    /// The chips (by physical id) that get a `/dev/davinci<phy>` node, as on a host whose other chips lost theirs
    /// (every id must be a chip of the topology); `None` gives every chip its node.
    pub chip_nodes: Option<Vec<u32>>,
}

impl FakeHostOptions {
    /// Options with the built simulator library ([`crate::library_path`]) and `hccn_tool` as the tool to install: what
    /// a test needs that is its own simulated tool (an executable that runs [`crate::hccn_tool::run`] when started
    /// under the name `hccn_tool`, since cargo builds no binary of a dev-dependency).
    ///
    /// # Errors
    /// [`Error::LibraryNotFound`] when the library was not built.
    pub fn with_built_library(hccn_tool: PathBuf) -> Result<Self, Error> {
        Ok(Self { library: Some(crate::library_path()?), hccn_tool: Some(hccn_tool), ..Self::default() })
    }

    /// The topology as this host runs it: each chip's firmware version set from [`Self::chip_firmware`], else from
    /// its own `firmware_version`, else from the installed firmware package, so that by default DCMI reports per
    /// chip what the firmware's `version.info` says.
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] for a physical id of [`Self::chip_firmware`] that no chip has.
    pub fn installed_topology(&self, topology: &Topology) -> Result<Topology, Error> {
        let mut installed = topology.clone();
        for (phy_id, _) in &self.chip_firmware {
            known_chip(topology, *phy_id)?;
        }
        for chip in installed.cards.iter_mut().flat_map(|card| card.chips.iter_mut()) {
            let chosen = self.chip_firmware.iter().rev().find(|(phy_id, _)| *phy_id == chip.phy_id);
            if let Some((_, version)) = chosen {
                chip.firmware_version = Some(version.clone());
            } else if chip.firmware_version.is_none() {
                chip.firmware_version.clone_from(&self.software.firmware_version);
            }
        }
        Ok(installed)
    }

    /// The physical ids that get a `/dev/davinci<phy>` node on a host of `topology`, ascending.
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] for a physical id of [`Self::chip_nodes`] that no chip has.
    fn node_phy_ids(&self, topology: &Topology) -> Result<Vec<u32>, Error> {
        let mut phy_ids: Vec<u32> = match &self.chip_nodes {
            Some(chosen) => {
                for phy_id in chosen {
                    known_chip(topology, *phy_id)?;
                }
                chosen.clone()
            }
            None => topology.chips().map(|found| found.chip.phy_id).collect(),
        };
        phy_ids.sort_unstable();
        phy_ids.dedup();
        Ok(phy_ids)
    }
}

/// Checks that `topology` has a chip with physical id `phy_id`.
fn known_chip(topology: &Topology, phy_id: u32) -> Result<(), Error> {
    if topology.chip_by_phy_id(phy_id).is_some() {
        return Ok(());
    }
    let mut known: Vec<u32> = topology.chips().map(|found| found.chip.phy_id).collect();
    known.sort_unstable();
    Err(Error::NoSuchChip { phy_id, known })
}

/// A fake host that was laid out.
#[derive(Debug, Clone)]
pub struct FakeHost {
    /// The root directory.
    pub root: PathBuf,
    /// The installed `libdcmi.so`.
    pub library: PathBuf,
    /// The copied topology file (set `DCMI_SIM_CONFIG` to it).
    pub topology: PathBuf,
    /// What the device nodes are.
    pub device_nodes: DeviceNodeKind,
    /// The physical ids of the chips that got a `/dev/davinci<N>` node, ascending.
    pub phy_ids: Vec<u32>,
    /// The chips that got a node, by physical id, each with the `N` of its `/dev/davinci<N>` ([`device_node_number`]):
    /// the same as the physical id but on Ascend950.
    pub chip_nodes: Vec<ChipNode>,
    /// The installed simulated `hccn_tool`, if one was.
    pub hccn_tool: Option<PathBuf>,
}

/// One chip's `/dev/davinci<N>` on a fake host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipNode {
    /// The chip's physical id.
    pub phy_id: u32,
    /// The `N` of its `/dev/davinci<N>`.
    pub number: u32,
}

impl FakeHost {
    /// Lays out a host for `topology` under `root` (created if missing; existing files are overwritten).
    ///
    /// # Errors
    /// [`Error`] naming the path that could not be written, or saying that the library was not found.
    pub fn build(topology: &Topology, root: &Path, options: &FakeHostOptions) -> Result<FakeHost, Error> {
        let topology = &options.installed_topology(topology)?;
        let library_source = match &options.library {
            Some(path) => path.clone(),
            None => crate::locate::library_path()?,
        };
        let writer = Writer { root: root.to_path_buf() };
        writer.dir("")?;

        let use_char_devices = !options.plain_device_nodes && rustix::process::geteuid().is_root();
        let phy_ids = options.node_phy_ids(topology)?;
        let chip_nodes: Vec<ChipNode> = phy_ids
            .iter()
            .filter_map(|&phy_id| topology.chip_by_phy_id(phy_id))
            .map(|found| ChipNode { phy_id: found.chip.phy_id, number: device_node_number(found.chip) })
            .collect();
        let mut device_nodes =
            if use_char_devices { DeviceNodeKind::CharacterDevices } else { DeviceNodeKind::PlainFiles };
        for node in &chip_nodes {
            let number = node.number;
            device_nodes = writer.device_node(&format!("dev/davinci{number}"), DAVINCI_MAJOR, number, device_nodes)?;
        }
        let is_v2 = topology.api() == crate::chip_type::Api::V2;
        let manager_nodes: &[(&str, u32)] = if is_v2 { &MANAGER_NODES_V2 } else { &MANAGER_NODES };
        for (name, major) in manager_nodes {
            device_nodes = writer.device_node(&format!("dev/{name}"), *major, 0, device_nodes)?;
        }
        if is_v2 {
            for (directory, major) in UB_NODE_DIRECTORIES {
                for node in &chip_nodes {
                    let path = format!("dev/{directory}/{directory}{}", node.number);
                    device_nodes = writer.device_node(&path, major, node.number, device_nodes)?;
                }
            }
        }

        writer.driver(&library_source)?;
        let hccn_tool = match options.hccn_tool.clone().or_else(crate::hccn_tool::built_tool) {
            Some(tool) => Some(writer.bytes(HCCN_TOOL_PATH, &writer.io(&tool, fs::read(&tool))?, 0o755)?),
            None => None,
        };
        for entry in options.software.entries(&topology.simulation.driver_version) {
            match entry {
                SoftwareEntry::File { path, text } => writer.file(&path, &text, 0o644).map(|_| ())?,
                SoftwareEntry::Link { path, target } => writer.symlink(&path, &target)?,
            }
        }
        writer.sys(topology)?;
        let topology_text = topology.to_toml_string().map_err(Error::TopologyNotSerialisable)?;
        writer.file(TOPOLOGY_PATH, &topology_text, 0o644)?;
        // Also beside the library, where dcmi_init finds it without DCMI_SIM_CONFIG (crate::library_home): daemons
        // deployed from the unchanged manifests, which mount only the driver directory, run on this host.
        writer.file(&beside_library(crate::library_home::CONFIG_FILE_NAME), &topology_text, 0o644)?;

        Ok(FakeHost {
            root: root.to_path_buf(),
            library: root.join(LIBRARY_PATH),
            topology: root.join(TOPOLOGY_PATH),
            device_nodes,
            phy_ids,
            chip_nodes,
            hccn_tool,
        })
    }

    /// The `N` of the `/dev/davinci<N>` of the chip with physical id `phy_id`, if it got one.
    pub fn node_number(&self, phy_id: u32) -> Option<u32> {
        self.chip_nodes.iter().find(|node| node.phy_id == phy_id).map(|node| node.number)
    }

    /// Every `N` of a `/dev/davinci<N>` made, ascending.
    pub fn node_numbers(&self) -> Vec<u32> {
        let mut numbers: Vec<u32> = self.chip_nodes.iter().map(|node| node.number).collect();
        numbers.sort_unstable();
        numbers
    }

    /// The path of a file under the root, for example `host.path("dev/davinci0")`.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative.trim_start_matches('/'))
    }

    /// Writes a file of the host (mode 0644), with its missing directories (0755), as the builder writes the host's
    /// own files: for a test that needs one more, for example a mount list.
    ///
    /// # Errors
    /// [`Error::Write`] naming the path that could not be written.
    pub fn write_file(&self, relative: &str, contents: &str) -> Result<PathBuf, Error> {
        Writer { root: self.root.clone() }.file(relative, contents, 0o644)
    }

    /// Creates a directory of the host with its missing parents, each 0755 as the builder makes them.
    ///
    /// # Errors
    /// [`Error::Write`] naming the path that could not be made.
    pub fn create_dir(&self, relative: &str) -> Result<PathBuf, Error> {
        Writer { root: self.root.clone() }.dir(relative)
    }

    /// Writes `overlay` beside the host's library, where its library and its `hccn_tool` read it without a variable.
    ///
    /// # Errors
    /// The error of writing the file.
    pub fn write_overlay(&self, overlay: &crate::Overlay) -> io::Result<()> {
        crate::write_overlay(&self.path(&beside_library(crate::library_home::OVERLAY_FILE_NAME)), overlay)
    }
}

/// Writes files below one root with explicit modes, so the result does not depend on the umask.
struct Writer {
    root: PathBuf,
}

impl Writer {
    fn target(&self, relative: &str) -> PathBuf {
        self.root.join(relative.trim_start_matches('/'))
    }

    fn io<T>(&self, path: &Path, result: io::Result<T>) -> Result<T, Error> {
        result.map_err(|source| Error::Write { path: path.to_path_buf(), source })
    }

    fn dir(&self, relative: &str) -> Result<PathBuf, Error> {
        let path = self.target(relative);
        self.io(&path, fs::create_dir_all(&path))?;
        // Every directory from the root down gets 0755, so the library ownership check accepts the tree.
        let mut current = self.root.clone();
        self.io(&current, fs::set_permissions(&current, fs::Permissions::from_mode(0o755)))?;
        for part in Path::new(relative.trim_start_matches('/')).components() {
            current.push(part);
            self.io(&current, fs::set_permissions(&current, fs::Permissions::from_mode(0o755)))?;
        }
        Ok(path)
    }

    fn parent_dir(&self, relative: &str) -> Result<(), Error> {
        match Path::new(relative.trim_start_matches('/')).parent() {
            Some(parent) if !parent.as_os_str().is_empty() => self.dir(&parent.to_string_lossy()).map(|_| ()),
            _ => Ok(()),
        }
    }

    fn file(&self, relative: &str, contents: &str, mode: u32) -> Result<PathBuf, Error> {
        self.bytes(relative, contents.as_bytes(), mode)
    }

    fn bytes(&self, relative: &str, contents: &[u8], mode: u32) -> Result<PathBuf, Error> {
        self.parent_dir(relative)?;
        let path = self.target(relative);
        // Replace rather than truncate: the old file may be a library a running process has mapped.
        if path.exists() || path.is_symlink() {
            self.io(&path, fs::remove_file(&path))?;
        }
        self.io(&path, fs::write(&path, contents))?;
        self.io(&path, fs::set_permissions(&path, fs::Permissions::from_mode(mode)))?;
        Ok(path)
    }

    fn symlink(&self, relative: &str, target: &str) -> Result<(), Error> {
        self.parent_dir(relative)?;
        let path = self.target(relative);
        if path.is_dir() && !path.is_symlink() {
            // An older layout's directory where the link goes now.
            self.io(&path, fs::remove_dir_all(&path))?;
        } else if path.exists() || path.is_symlink() {
            self.io(&path, fs::remove_file(&path))?;
        }
        self.io(&path, std::os::unix::fs::symlink(target, &path))
    }

    /// Creates a character device when `kind` allows it, falling back to a plain file (and saying so through the
    /// returned kind) when the kernel refuses.
    fn device_node(
        &self,
        relative: &str,
        major: u32,
        minor: u32,
        kind: DeviceNodeKind,
    ) -> Result<DeviceNodeKind, Error> {
        self.parent_dir(relative)?;
        let path = self.target(relative);
        if path.exists() || path.is_symlink() {
            self.io(&path, fs::remove_file(&path))?;
        }
        if kind == DeviceNodeKind::CharacterDevices && make_character_device(&path, major, minor) {
            self.io(&path, fs::set_permissions(&path, fs::Permissions::from_mode(0o666)))?;
            return Ok(DeviceNodeKind::CharacterDevices);
        }
        self.bytes(relative, b"", 0o666)?;
        Ok(DeviceNodeKind::PlainFiles)
    }

    fn driver(&self, library_source: &Path) -> Result<(), Error> {
        let library = self.io(library_source, fs::read(library_source))?;
        self.bytes(LIBRARY_PATH, &library, 0o755)?;
        self.symlink(&format!("{DRIVER_DIR}/lib64/libdcmi.so"), "driver/libdcmi.so")?;
        self.symlink("usr/local/dcmi/libdcmi.so", "../Ascend/driver/lib64/driver/libdcmi.so")?;
        self.dir(&format!("{DRIVER_DIR}/lib64/common"))?;
        self.file(&format!("{DRIVER_DIR}/lib64/common/libc_sec.so"), "placeholder library of the fake host\n", 0o644)?;
        self.file(&format!("{DRIVER_DIR}/include/dcmi_interface_api.h"), "/* see dcmi-sys/include */\n", 0o644)?;
        self.file("usr/local/dcmi/dcmi_interface_api.h", "/* see dcmi-sys/include */\n", 0o644)?;
        self.file(
            "usr/local/bin/npu-smi",
            "#!/bin/sh\necho \"npu-smi of a dcmi-sim fake host; use ascend-smi\"\n",
            0o755,
        )?;
        self.dir("var/queue_schedule")?;
        self.dir("sys/module/drv_davinci_intf_host")?;
        self.dir("sys/module/drv_devmng_host")?;
        Ok(())
    }

    fn sys(&self, topology: &Topology) -> Result<(), Error> {
        let mut nodes: Vec<(i32, String)> = Vec::new();
        for found in topology.chips() {
            let chip = found.chip;
            let bdf = chip.pcie.bdf.to_ascii_lowercase();
            let pci = format!("sys/bus/pci/devices/{bdf}");
            self.file(&format!("{pci}/vendor"), &format!("0x{:04x}\n", chip.pcie.vendor_id), 0o444)?;
            self.file(&format!("{pci}/device"), &format!("0x{:04x}\n", chip.pcie.device_id), 0o444)?;
            self.file(&format!("{pci}/numa_node"), &format!("{}\n", chip.numa_node), 0o444)?;
            if chip.numa_node >= 0 && !nodes.iter().any(|(node, _)| *node == chip.numa_node) {
                nodes.push((chip.numa_node, chip.affinity_cpus.clone()));
            }
        }
        nodes.sort();
        for (node, cpus) in nodes {
            self.file(&format!("sys/devices/system/node/node{node}/cpulist"), &format!("{cpus}\n"), 0o444)?;
        }
        let release = rustix::system::uname().release().to_string_lossy().into_owned();
        self.file(&format!("lib/modules/{release}/build/Makefile"), "# kernel headers of the fake host\n", 0o644)?;
        // Four attribute bytes, then the value: 0 = Secure Boot off.
        self.bytes(&format!("sys/firmware/efi/efivars/{SECURE_BOOT_VARIABLE}"), &[6, 0, 0, 0, 0], 0o644)?;
        Ok(())
    }
}

/// Makes a character device node (mode 0666 before the umask); false when the kernel refuses (no CAP_MKNOD).
pub fn make_character_device(path: &Path, major: u32, minor: u32) -> bool {
    rustix::fs::mknodat(
        rustix::fs::CWD,
        path,
        rustix::fs::FileType::CharacterDevice,
        rustix::fs::Mode::from_raw_mode(0o666),
        rustix::fs::makedev(major, minor),
    )
    .is_ok()
}

/// Where the node of vNPU `vdev_id` lies on the host below `root`: the driver makes `/dev/vdavinci<id>` when DCMI
/// creates a vNPU (the simulator does the same, `vnpu_device_node.rs`).
pub fn vnpu_node_path(root: &Path, vdev_id: u32) -> PathBuf {
    root.join(format!("dev/vdavinci{vdev_id}"))
}

/// The fake host's root when the loaded simulator is that host's `libdcmi.so` (at [`LIBRARY_PATH`] below it), else
/// `None` (loaded from a build directory).
pub fn loaded_host_root() -> Option<PathBuf> {
    let directory = crate::library_home::library_directory()?;
    let below = Path::new(LIBRARY_PATH).parent()?;
    let mut root = directory.as_path();
    for _ in below.components() {
        root = root.parent()?;
    }
    (root.join(below) == directory).then(|| root.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::FileTypeExt;

    fn two_chip_topology() -> Topology {
        let text = r#"
            [simulation]
            driver_version = "24.1.rc3"

            [[card]]
            card_id = 3
            [[card.chip]]
            device_id = 0
            logic_id = 0
            phy_id = 5
            chip_type = "Ascend310P"
            chip_name = "310P3"
            aicore_count = 8
            numa_node = 1
            affinity_cpus = "24-47"
            pcie = { bdf = "0000:81:00.0" }
            [[card.chip]]
            device_id = 1
            logic_id = 1
            phy_id = 4
            chip_type = "Ascend310P"
            chip_name = "310P3"
            aicore_count = 8
            numa_node = 1
            affinity_cpus = "24-47"
            pcie = { bdf = "0000:82:00.0" }
        "#;
        Topology::from_toml_str(text, Path::new("two-chips.toml")).expect("valid topology")
    }

    #[test]
    fn lays_out_devices_driver_and_sys() {
        let root = tempfile::tempdir().expect("temp dir");
        let library = root.path().join("built-libdcmi.so");
        fs::write(&library, b"not really a library").expect("write");
        let options = FakeHostOptions { library: Some(library), ..FakeHostOptions::default() };
        let host = FakeHost::build(&two_chip_topology(), &root.path().join("host"), &options).expect("built");

        assert_eq!(host.phy_ids, [4, 5]);
        for node in ["dev/davinci4", "dev/davinci5", "dev/davinci_manager", "dev/devmm_svm", "dev/hisi_hdc"] {
            let metadata = fs::symlink_metadata(host.path(node)).expect(node);
            match host.device_nodes {
                DeviceNodeKind::CharacterDevices => assert!(metadata.file_type().is_char_device(), "{node}"),
                DeviceNodeKind::PlainFiles => assert!(metadata.is_file(), "{node}"),
            }
        }
        assert!(!host.path("dev/davinci0").exists());
        let version = fs::read_to_string(host.path("usr/local/Ascend/driver/version.info")).expect("version.info");
        assert!(version.contains("Version=24.1.rc3"), "{version}");
        assert_eq!(fs::read(&host.library).expect("library"), b"not really a library");
        assert_eq!(fs::read(host.path("usr/local/dcmi/libdcmi.so")).expect("link"), b"not really a library");
        let cpulist = fs::read_to_string(host.path("sys/devices/system/node/node1/cpulist")).expect("cpulist");
        assert_eq!(cpulist.trim(), "24-47");
        let numa = fs::read_to_string(host.path("sys/bus/pci/devices/0000:82:00.0/numa_node")).expect("numa");
        assert_eq!(numa.trim(), "1");
        let copied = Topology::load(&host.topology).expect("copied topology loads");
        assert_eq!(copied.chips().count(), 2);
        let cfg = fs::read_to_string(host.path("usr/local/Ascend/ascend-toolkit/latest/version.cfg")).expect("cfg");
        assert!(cfg.contains(crate::fake_software::DEFAULT_CANN_VERSION));
        let firmware = fs::read_to_string(host.path("usr/local/Ascend/firmware/version.info")).expect("firmware");
        assert!(firmware.contains("compatible_version_drv=[24.1,24.1.]"), "{firmware}");
        // Laid out again over itself: the files are replaced, the link too.
        FakeHost::build(&two_chip_topology(), &root.path().join("host"), &options).expect("rebuilt");
        assert!(fs::symlink_metadata(host.path("usr/local/Ascend/ascend-toolkit/latest"))
            .expect("latest")
            .is_symlink());
    }

    #[test]
    fn plain_files_when_asked_and_no_toolkit_when_none() {
        let root = tempfile::tempdir().expect("temp dir");
        let library = root.path().join("lib.so");
        fs::write(&library, b"x").expect("write");
        let software = FakeSoftware { cann_version: None, ..FakeSoftware::default() };
        let options = FakeHostOptions {
            library: Some(library),
            plain_device_nodes: true,
            software,
            ..FakeHostOptions::default()
        };
        let host = FakeHost::build(&two_chip_topology(), root.path(), &options).expect("built");
        assert_eq!(host.device_nodes, DeviceNodeKind::PlainFiles);
        assert!(host.path("dev/davinci5").is_file());
        assert!(!host.path("usr/local/Ascend/ascend-toolkit").exists());
    }

    #[test]
    fn an_ascend950_host_has_its_own_manager_and_unified_bus_nodes() {
        let root = tempfile::tempdir().expect("temp dir");
        let library = root.path().join("lib.so");
        fs::write(&library, b"x").expect("write");
        let options = FakeHostOptions { library: Some(library), ..FakeHostOptions::default() };
        let topology = crate::samples::by_name("atlas-950-8").expect("sample").topology().expect("valid");
        let host = FakeHost::build(&topology, root.path(), &options).expect("built");
        assert_eq!(host.phy_ids, (0..8).collect::<Vec<u32>>());
        // Logic 0..7 are physical 4..7, 0..3: the chip of physical id 4 is /dev/davinci0, that of 0 /dev/davinci4.
        assert_eq!(host.node_number(4), Some(0));
        assert_eq!(host.node_number(0), Some(4));
        assert_eq!(host.node_number(3), Some(7));
        assert_eq!(host.node_numbers(), (0..8).collect::<Vec<u32>>());
        for node in ["dev/davinci0", "dev/davinci7", "dev/davinci_manager", "dev/hisi_hdc"] {
            assert!(host.path(node).exists(), "{node}");
        }
        for node in ["dev/uburma/uburma0", "dev/uburma/uburma7", "dev/ummu/ummu3"] {
            assert!(host.path(node).exists(), "{node}");
        }
        assert!(!host.path("dev/devmm_svm").exists(), "Ascend950 hosts have no devmm_svm");
        assert!(!host.path("dev/dvpp_cmdlist").exists(), "Ascend950 hosts have no dvpp_cmdlist");

        let only_4 = FakeHostOptions { chip_nodes: Some(vec![4]), ..options };
        let one = FakeHost::build(&topology, &root.path().join("one"), &only_4).expect("built");
        for node in ["dev/davinci0", "dev/uburma/uburma0", "dev/ummu/ummu0"] {
            assert!(one.path(node).exists(), "the chip of physical id 4 is logic 0: {node}");
        }
        assert!(!one.path("dev/davinci4").exists(), "physical 4 is not numbered by its physical id");
    }

    #[test]
    fn chips_run_the_installed_firmware_unless_one_was_left_behind() {
        let root = tempfile::tempdir().expect("temp dir");
        let library = root.path().join("lib.so");
        fs::write(&library, b"x").expect("write");
        let software = FakeSoftware { firmware_version: Some("7.6.0.1.200".to_owned()), ..FakeSoftware::default() };
        let chip_firmware = vec![(5, "7.1.0.5.220".to_owned())];
        let options = FakeHostOptions { library: Some(library), software, chip_firmware, ..FakeHostOptions::default() };
        let host = FakeHost::build(&two_chip_topology(), root.path(), &options).expect("built");
        let installed = Topology::load(&host.topology).expect("installed topology");
        let firmware_of = |phy| installed.chip_by_phy_id(phy).and_then(|found| found.chip.firmware_version.clone());
        assert_eq!(firmware_of(4).as_deref(), Some("7.6.0.1.200"));
        assert_eq!(firmware_of(5).as_deref(), Some("7.1.0.5.220"));

        let unknown = FakeHostOptions { chip_firmware: vec![(9, "7.0.0".to_owned())], ..options };
        let error = FakeHost::build(&two_chip_topology(), root.path(), &unknown).expect_err("no chip 9");
        assert!(error.to_string().contains("no chip with physical id 9 (physical ids: [4, 5])"), "{error}");
    }

    #[test]
    fn only_the_chosen_chips_get_nodes_and_tests_can_add_files() {
        let root = tempfile::tempdir().expect("temp dir");
        let library = root.path().join("lib.so");
        fs::write(&library, b"x").expect("write");
        let options =
            FakeHostOptions { library: Some(library), chip_nodes: Some(vec![5]), ..FakeHostOptions::default() };
        let host = FakeHost::build(&two_chip_topology(), &root.path().join("host"), &options).expect("built");
        assert_eq!(host.phy_ids, [5]);
        assert_eq!(host.node_number(5), Some(5), "a V1 chip's node is numbered by physical id");
        assert!(host.path("dev/davinci5").exists());
        assert!(!host.path("dev/davinci4").exists(), "chip 4 was not chosen");
        assert!(host.path("dev/davinci_manager").exists(), "the shared nodes stay");

        let none = FakeHostOptions { chip_nodes: Some(Vec::new()), ..options.clone() };
        let bare = FakeHost::build(&two_chip_topology(), &root.path().join("bare"), &none).expect("built");
        assert!(bare.phy_ids.is_empty());
        assert!(!bare.path("dev/davinci5").exists());

        let unknown = FakeHostOptions { chip_nodes: Some(vec![4, 9]), ..options };
        let error = FakeHost::build(&two_chip_topology(), root.path(), &unknown).expect_err("no chip 9");
        assert!(error.to_string().contains("no chip with physical id 9"), "{error}");

        let list = host.write_file("/etc/ascend-docker-runtime.d/extra.list", "/usr/local/dcmi\n").expect("write");
        assert_eq!(fs::read_to_string(&list).expect("read"), "/usr/local/dcmi\n");
        let directory = host.create_dir("usr/lib64/urma").expect("mkdir");
        for made in [list.as_path(), list.parent().expect("parent"), directory.as_path(), &host.path("usr/lib64")] {
            let mode = fs::metadata(made).expect("stat").permissions().mode() & 0o777;
            assert_eq!(mode, if made.is_dir() { 0o755 } else { 0o644 }, "{}", made.display());
        }
    }

    #[test]
    fn missing_library_is_named() {
        let root = tempfile::tempdir().expect("temp dir");
        let options = FakeHostOptions { library: Some(root.path().join("absent.so")), ..FakeHostOptions::default() };
        let error = FakeHost::build(&two_chip_topology(), root.path(), &options).expect_err("no library");
        assert!(error.to_string().contains("absent.so"), "{error}");
    }
}
