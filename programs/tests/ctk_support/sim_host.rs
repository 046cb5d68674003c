//! A `dcmi_sim` fake Atlas host for the `ascend-ctk` tests, with the simulator installed as its
//! `libdcmi.so`, and the environment that makes `ascend-ctk` find and initialise it.
//!
//! The host lives under the target directory, not `/tmp`: the library ownership check (as in the
//! vendor's tools) refuses a library below a world-writable directory. Device nodes and that check
//! need root; CI runs as root.

use std::path::{Path, PathBuf};
use std::process::Command;

use dcmi_sim::fake_host::{DeviceNodeKind, FakeHost, FakeHostOptions};
use dcmi_sim::Topology;

/// A `DCMI_SIM_CONFIG` naming a file that is not there: the simulator's `dcmi_init` then fails, as a broken driver
/// does. (Without the variable the simulator would read the topology the fake host put beside the library.)
pub const MISSING_TOPOLOGY: &str = "/nonexistent/dcmi-sim/topology.toml";

/// The mount points `base.list` (the built-in defaults) gives on a fake host.
pub const BASE_MOUNTS: [&str; 5] = [
    "/usr/local/Ascend/driver/include",
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/bin/npu-smi",
    "/usr/local/dcmi",
    "/var/queue_schedule",
];

/// A fake host; removed on drop.
pub struct SimHost {
    _dir: tempfile::TempDir,
    /// What was laid out.
    pub fake: FakeHost,
    /// The topology it was built from.
    pub topology: Topology,
}

impl SimHost {
    /// A host of a sample topology (`atlas-300i-pro`: phy 0,1; `atlas-800t-a2`: phy 0..7 ...).
    pub fn sample(name: &str) -> Self {
        let topology = dcmi_sim::samples::by_name(name)
            .unwrap_or_else(|| panic!("no sample {name}"))
            .topology()
            .expect("sample is valid");
        Self::with_topology(topology)
    }

    /// A host of any topology.
    pub fn with_topology(topology: Topology) -> Self {
        assert!(
            rustix::process::geteuid().is_root(),
            "this test builds device nodes with mknod and loads a root-owned libdcmi.so: it must run as root \
             (CI runs as root)"
        );
        let dir = tempfile::Builder::new()
            .prefix("ascend-ctk-host")
            .tempdir_in(env!("CARGO_TARGET_TMPDIR"))
            .expect("temporary directory under the target directory");
        let fake = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default())
            .expect("fake host builds (is dcmi-sim built?)");
        assert_eq!(fake.device_nodes, DeviceNodeKind::CharacterDevices, "device nodes need root");
        SimHost { _dir: dir, fake, topology }
    }

    /// The host root.
    pub fn root(&self) -> &Path {
        &self.fake.root
    }

    /// Host path of an absolute path on the fake host.
    pub fn path(&self, absolute: &str) -> PathBuf {
        self.fake.path(absolute)
    }

    /// Physical ids of the chips, ascending.
    pub fn phy_ids(&self) -> &[u32] {
        &self.fake.phy_ids
    }

    /// Lets `command` reach the simulator: its topology, and the library named explicitly (the
    /// tool would also find it under the host root). The runtime's chip cache is this host's own.
    pub fn with_driver<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env("ASCEND_DCMI_LIBRARY", &self.fake.library)
            .env("DCMI_SIM_CONFIG", &self.fake.topology)
            .env("ASCEND_CTK_CHIP_CACHE", self.chip_cache())
    }

    /// Leaves `command` without the simulator's settings, so that DCMI fails to initialise.
    pub fn without_driver<'c>(&self, command: &'c mut Command) -> &'c mut Command {
        command
            .env_remove("ASCEND_DCMI_LIBRARY")
            .env("DCMI_SIM_CONFIG", MISSING_TOPOLOGY)
            .env("ASCEND_CTK_CHIP_CACHE", self.chip_cache())
    }

    /// Where the runtime remembers this host's chips (next to the host root, in a root-owned
    /// directory, as `/run/ascend-ctk` is on a server).
    pub fn chip_cache(&self) -> PathBuf {
        self._dir.path().join("run").join("chips.json")
    }

    /// The content of the fake `npu-smi` as the probe script's `echo $(cat ...)` prints it.
    pub fn npu_smi_as_echoed(&self) -> String {
        let text = std::fs::read_to_string(self.path("/usr/local/bin/npu-smi")).expect("read npu-smi");
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }
}
