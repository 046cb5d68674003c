//! Shared pieces of the `ascend-ctk` container tests: the `dcmi_sim` fake host, a busybox
//! rootfs, and running commands with clear failures.

#![allow(dead_code)]

pub mod bundle;
pub mod podman;
pub mod sim_host;

use std::os::unix::fs::symlink;
use std::path::Path;
use std::process::{Command, Output};

/// The `ascend-ctk` binary under test.
pub fn ctk() -> Command {
    Command::new(env!("CARGO_BIN_EXE_ascend-ctk"))
}

/// Fails (never skips) when a required tool is missing.
pub fn require_tool(name: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|path| std::env::split_paths(&path).any(|dir| dir.join(name).is_file()))
        .unwrap_or(false);
    assert!(
        found,
        "{name} not found in PATH: install the Debian package {package} (listed in scripts/deps/debian.txt)"
    );
}

/// A rootfs holding a static busybox and the applets the tests use.
pub fn busybox_rootfs(rootfs: &Path) {
    let busybox = Path::new("/bin/busybox");
    assert!(busybox.is_file(), "/bin/busybox is missing: install the Debian package busybox-static");
    std::fs::create_dir_all(rootfs.join("bin")).expect("mkdir rootfs/bin");
    std::fs::copy(busybox, rootfs.join("bin/busybox")).expect("copy busybox");
    for applet in ["sh", "ls", "cat", "touch", "grep", "echo"] {
        symlink("busybox", rootfs.join("bin").join(applet)).expect("applet link");
    }
}

/// Runs a command, returning its output; panics with the command line if it cannot start.
pub fn run(command: &mut Command) -> Output {
    command.output().unwrap_or_else(|e| panic!("cannot run {command:?}: {e}"))
}

/// Stdout and stderr as text, for assertion messages.
pub fn describe(output: &Output) -> String {
    format!(
        "status {}\n--- stdout\n{}\n--- stderr\n{}",
        output.status,
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// The script every test container runs: device names, what opening each NPU node gives, mounts,
/// a write probe, a driver file and the environment, each on lines with a fixed prefix. The unified-bus nodes of
/// Ascend950 hosts are listed as `uburma/<name>` and `ummu/<name>`. The fake
/// nodes have no driver behind them, so an open that the device cgroup allows fails with ENXIO
/// ("No such device or address", or ENODEV "No such device" where the kernel registered the fake major for
/// another driver, as the unified-bus nodes' 245 and 246 often are) and one it denies with EPERM.
pub const PROBE_SCRIPT: &str = "cd /dev; for d in $(ls /dev) uburma/* ummu/*; do [ -e $d ] && echo DEV=$d; done; \
    for d in $(ls /dev | grep -E '^(davinci|devmm|hisi)') uburma/* ummu/*; do [ -e $d ] && echo OPEN=$d=$(cat /dev/$d 2>&1 | grep -o -E 'No such device or address|No such device|Operation not permitted'); done; \
    grep -E ' /(usr|var)/' /proc/mounts | while read src dst fs opts rest; do echo MOUNT=$dst=$opts; done; \
    touch /usr/local/Ascend/driver/lib64/probe 2>/dev/null && echo WRITE=allowed || echo WRITE=denied; \
    echo SMI=$(cat /usr/local/bin/npu-smi); \
    echo LD=$LD_LIBRARY_PATH; echo RT=$ASCEND_RT_VISIBLE_DEVICES";

/// The shared nodes a container with any chip of a DCMI V1 host of the 910 and 310P families gets.
pub const V1_SHARED_NODES: [&str; 3] = ["davinci_manager", "devmm_svm", "hisi_hdc"];

/// The shared nodes a container with any NPU of an Atlas 950 node (DCMI V2) of `npus` NPUs gets, named as the probe
/// lists them: no `devmm_svm`, and every unified-bus node.
pub fn atlas_950_shared_nodes(npus: u32) -> Vec<String> {
    let unified_bus = ["uburma", "ummu"].map(|kind| (0..npus).map(move |phy| format!("{kind}/{kind}{phy}")));
    ["davinci_manager", "hisi_hdc"].map(str::to_owned).into_iter().chain(unified_bus.into_iter().flatten()).collect()
}

/// The NPU nodes the probe of a container given the chips `phys` should list: `davinci<phy>` and `shared`, sorted.
pub fn expected_npu_nodes(phys: &[u32], shared: &[String]) -> Vec<String> {
    let mut nodes: Vec<String> = phys.iter().map(|phy| format!("davinci{phy}")).chain(shared.iter().cloned()).collect();
    nodes.sort();
    nodes
}

/// The `/dev` entries the probe counts as NPU nodes.
const NPU_NODE_PREFIXES: [&str; 5] = ["davinci", "devmm", "hisi", "uburma/", "ummu/"];

/// What the probe script saw.
#[derive(Debug, Default)]
pub struct Probe {
    /// `/dev` entries whose name starts with davinci, devmm or hisi, and the nodes under `/dev/uburma` and
    /// `/dev/ummu` (as `uburma/uburma0` ...).
    pub npu_devices: Vec<String>,
    /// (node, error of opening it) for the NPU nodes.
    pub opens: Vec<(String, String)>,
    /// (mount point, options) of mounts under /usr and /var.
    pub mounts: Vec<(String, String)>,
    /// Whether writing into the driver directory worked.
    pub write_allowed: bool,
    /// Content of npu-smi.
    pub smi: String,
    /// LD_LIBRARY_PATH.
    pub ld_library_path: String,
    /// ASCEND_RT_VISIBLE_DEVICES.
    pub rt_visible: String,
}

impl Probe {
    /// Parses the probe output.
    pub fn parse(stdout: &[u8]) -> Self {
        let mut probe = Probe::default();
        for line in String::from_utf8_lossy(stdout).lines() {
            if let Some(dev) = line.strip_prefix("DEV=") {
                if NPU_NODE_PREFIXES.iter().any(|p| dev.starts_with(p)) {
                    probe.npu_devices.push(dev.to_owned());
                }
            } else if let Some(open) = line.strip_prefix("OPEN=") {
                if let Some((dev, error)) = open.split_once('=') {
                    probe.opens.push((dev.to_owned(), error.to_owned()));
                }
            } else if let Some(mount) = line.strip_prefix("MOUNT=") {
                if let Some((dst, opts)) = mount.split_once('=') {
                    probe.mounts.push((dst.to_owned(), opts.to_owned()));
                }
            } else if let Some(write) = line.strip_prefix("WRITE=") {
                probe.write_allowed = write == "allowed";
            } else if let Some(smi) = line.strip_prefix("SMI=") {
                probe.smi = smi.to_owned();
            } else if let Some(ld) = line.strip_prefix("LD=") {
                probe.ld_library_path = ld.to_owned();
            } else if let Some(rt) = line.strip_prefix("RT=") {
                probe.rt_visible = rt.to_owned();
            }
        }
        probe.npu_devices.sort();
        probe.mounts.sort();
        probe
    }

    /// Asserts the device cgroup lets the container open every NPU node it was given.
    pub fn assert_devices_allowed(&self, context: &str) {
        assert_eq!(self.opens.len(), self.npu_devices.len(), "{context}");
        for (dev, error) in &self.opens {
            assert!(
                ["No such device or address", "No such device"].contains(&error.as_str()),
                "/dev/{dev} is not allowed by the device cgroup ({error:?})\n{context}"
            );
        }
    }

    /// Asserts the driver mounts of `base.list` are all present and read-only, with the host's
    /// files behind them.
    pub fn assert_driver_mounted_read_only(&self, host: &sim_host::SimHost, context: &str) {
        for wanted in sim_host::BASE_MOUNTS {
            let found = self.mounts.iter().find(|(dst, _)| dst == wanted);
            let options =
                found.map(|(_, opts)| opts.as_str()).unwrap_or_else(|| panic!("{wanted} not mounted\n{context}"));
            assert!(options.split(',').any(|o| o == "ro"), "{wanted} is not read-only ({options})\n{context}");
        }
        assert!(!self.write_allowed, "the driver directory was writable\n{context}");
        assert_eq!(self.smi, host.npu_smi_as_echoed(), "{context}");
    }
}
