//! One CDI spec per prepared claim (`/var/run/cdi/k8s.<driver>-npu_<claim uid>.json`): its chips' device nodes,
//! `ASCEND_RT_VISIBLE_DEVICES` numbered 0..n-1 as the container sees them, and the node's shared device nodes and
//! driver mounts, computed once at start with ascend-oci's CDI generator. The spec's `cdiVersion` is the lowest that
//! covers its content (0.5.0 at most for what we write), so podman 4.3 reads it too.
//!
//! A claim gets one CDI device named after its UID, never reused: runtimes cache specs by device name.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ascend_oci::cdi::{cdi_node, generate_spec, minimum_version, CdiDevice, CdiSpec, ContainerEdits, GenerateOptions};
use ascend_oci::HostRoot;
use ascend_oci::InjectionConfig;
use ascend_oci::RuntimeOptions;
use ascend_oci::WriteOptions;
use ascend_oci::{chip_device_node, HostChips};

use crate::error::{Error, Result};

/// The environment variable the Ascend runtime reads to number the visible chips.
pub const VISIBLE_DEVICES_ENV: &str = "ASCEND_RT_VISIBLE_DEVICES";

/// What the claim's container gets for one allocated device.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ClaimNode {
    /// A whole chip: `/dev/davinci<N>`, `N` its [`ascend_dcmi::ChipIds::device_node_number`] (the physical id, on
    /// Ascend950 the logic id).
    Chip(u32),
    /// A vNPU: host `/dev/vdavinci<id>` shown as `/dev/davinci<id>`.
    Vnpu(u32),
}

/// Writes and removes the claims' specs.
#[derive(Debug)]
pub struct ClaimSpecs {
    root: HostRoot,
    dir: PathBuf,
    kind: String,
    common: ContainerEdits,
}

impl ClaimSpecs {
    /// Reads the node's shared device nodes and driver mounts under `host_root` (`/` on a server) for specs of
    /// kind `k8s.<driver>/npu` in `dir`.
    ///
    /// # Errors
    /// The errors of ascend-oci's generator: no `/dev/davinci<N>`, a missing shared node, a bad mount list.
    pub fn new(host_root: &Path, dir: &Path, driver: &str, chip_type: Option<String>) -> Result<Self> {
        let root = HostRoot::open(host_root)?;
        let host = HostChips::scan(&root, chip_type)?;
        let kind = format!("k8s.{driver}/npu");
        let options = GenerateOptions {
            kind: kind.clone(),
            mount_lists: vec!["base".to_owned()],
            injection: InjectionConfig::default(),
            allow_link: false,
            no_driver: false,
        };
        let common = generate_spec(&root, &host, &options)?.container_edits;
        Ok(ClaimSpecs { root, dir: dir.to_owned(), kind, common })
    }

    /// The spec file of a claim.
    pub fn path(&self, claim_uid: &str) -> PathBuf {
        self.dir.join(format!("{}{claim_uid}.json", self.file_prefix()))
    }

    /// What every claim spec file name of this driver starts with: `<vendor>-<class>_`.
    fn file_prefix(&self) -> String {
        let (vendor, class) = self.kind.split_once('/').unwrap_or((&self.kind, "npu"));
        format!("{vendor}-{class}_")
    }

    /// Removes this driver's claim specs in the CDI directory whose claim `is_prepared` does not know, and returns
    /// their paths. The driver calls it at start, before it serves: a spec written by a prepare that never reached the
    /// checkpoint (the driver died in between, or the node lost power before the write reached the disk) is a leftover
    /// the checkpoint cannot list, and the runtimes would otherwise keep offering its device.
    ///
    /// # Errors
    /// [`Error::Io`] when the directory cannot be read or a leftover cannot be removed; a missing directory is empty.
    pub fn remove_unlisted(&self, is_prepared: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
        remove_unlisted_specs(&self.dir, &self.file_prefix(), is_prepared)
    }

    /// Writes the claim's spec and returns its path and the CDI id to hand to the kubelet.
    ///
    /// # Errors
    /// [`Error::Cdi`] when a device node is missing on the host or the file cannot be written.
    pub fn write(
        &self,
        claim_uid: &str,
        nodes: &[ClaimNode],
        env: &BTreeMap<String, String>,
    ) -> Result<(PathBuf, String)> {
        let mut device_nodes = Vec::with_capacity(nodes.len());
        for node in nodes {
            let (id, options) = match *node {
                ClaimNode::Chip(number) => (number, RuntimeOptions::empty()),
                ClaimNode::Vnpu(id) => (id, RuntimeOptions::VIRTUAL),
            };
            device_nodes.push(cdi_node(&self.root, &chip_device_node(&self.root, id, options)?));
        }
        // The runtime numbers the chips it sees 0..n-1 in device-node order.
        let visible: Vec<String> = (0..nodes.len()).map(|index| index.to_string()).collect();
        let mut device_env = vec![format!("{VISIBLE_DEVICES_ENV}={}", visible.join(","))];
        device_env.extend(env.iter().map(|(name, value)| format!("{name}={value}")));
        let mut spec = CdiSpec {
            cdi_version: String::new(),
            kind: self.kind.clone(),
            devices: vec![CdiDevice {
                name: claim_uid.to_owned(),
                container_edits: ContainerEdits { env: device_env, device_nodes, mounts: Vec::new() },
            }],
            container_edits: self.common.clone(),
        };
        spec.cdi_version = minimum_version(&spec).to_owned();
        let path = self.path(claim_uid);
        std::fs::create_dir_all(&self.dir).map_err(|source| Error::io("creating CDI directory", &self.dir, source))?;
        let mut bytes = serde_json::to_vec_pretty(&spec)
            .map_err(|e| Error::Corrupt { path: path.clone(), reason: format!("cannot serialise: {e}") })?;
        bytes.push(b'\n');
        // No fsync: the spec is state of this boot (the default directory, /var/run/cdi, is a tmpfs). A spec that a
        // power loss leaves short or empty in a persistent directory is removed at the next start, listed in the
        // checkpoint or not (`remove_unlisted`), before any pod can be given its device. Only the checkpoint, which
        // must parse after a power loss, is synced: one fsync per prepare instead of two.
        ascend_oci::write_atomically_with(&path, &bytes, WriteOptions::transient(0o644))?;
        Ok((path, format!("{}={claim_uid}", self.kind)))
    }

    /// Removes a spec file; one already gone is fine.
    ///
    /// # Errors
    /// [`Error::Io`] for another failure.
    pub fn remove(path: &Path) -> Result<()> {
        match std::fs::remove_file(path) {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok(()),
            Err(source) => Err(Error::io("removing CDI spec", path, source)),
        }
    }
}

/// The sweep of [`ClaimSpecs::remove_unlisted`]: files `<prefix><uid>.json` in `dir` whose uid `is_prepared` rejects.
fn remove_unlisted_specs(dir: &Path, prefix: &str, is_prepared: impl Fn(&str) -> bool) -> Result<Vec<PathBuf>> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => return Err(Error::io("reading CDI directory", dir, source)),
    };
    let mut removed = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|source| Error::io("reading CDI directory", dir, source))?;
        let name = entry.file_name();
        let Some(uid) = name.to_str().and_then(|name| name.strip_prefix(prefix)?.strip_suffix(".json")) else {
            continue;
        };
        if !is_prepared(uid) {
            let path = entry.path();
            ClaimSpecs::remove(&path)?;
            removed.push(path);
        }
    }
    removed.sort();
    Ok(removed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::devices::NpuChip;
    use ascend_dcmi::{ChipIds, ChipType, LogicId, PhyId};
    use dcmi_sim::fake_host::{DeviceNodeKind, FakeHost, FakeHostOptions};

    /// The device-node paths of a CDI edit list.
    fn node_paths(edits: &serde_json::Value) -> Vec<String> {
        let nodes = edits["deviceNodes"].as_array().cloned().unwrap_or_default();
        nodes.iter().filter_map(|node| node["path"].as_str().map(str::to_owned)).collect()
    }

    #[test]
    fn an_ascend950_claim_gets_its_logic_numbered_node_and_the_a5_device_set() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let library = dir.path().join("libdcmi.so");
        std::fs::write(&library, b"x").expect("library stand-in");
        let topology = dcmi_sim::samples::by_name("atlas-950-8").expect("sample").topology().expect("valid");
        let options = FakeHostOptions { library: Some(library), ..FakeHostOptions::default() };
        let host = FakeHost::build(&topology, &dir.path().join("host"), &options).expect("fake host");
        assert_eq!(host.device_nodes, DeviceNodeKind::CharacterDevices, "needs root to make device nodes");
        // atlas-950-8: physical 4 is logic 0.
        let logic = topology.chip_by_phy_id(4).expect("chip 4").chip.logic_id;
        let chip = NpuChip {
            ids: ChipIds { logic: LogicId(logic), phy: PhyId(4), locator: None },
            chip_type: ChipType::Ascend950,
            model: "Ascend950DT".to_owned(),
            numa_node: None,
            pcie_address: None,
            aicore: 32,
            memory_bytes: None,
            driver_version: None,
            vnpu_templates: Vec::new(),
        };
        let specs = ClaimSpecs::new(&host.root, &dir.path().join("cdi"), "npu.huawei.com", Some("Ascend950".into()))
            .expect("claim specs");
        let (path, _) =
            specs.write("uid-1", &[ClaimNode::Chip(chip.device_node_number())], &BTreeMap::new()).expect("write");
        let spec: serde_json::Value =
            serde_json::from_slice(&std::fs::read(&path).expect("read spec")).expect("spec is JSON");
        assert_eq!(node_paths(&spec["devices"][0]["containerEdits"]), ["/dev/davinci0"], "Huawei's node of npu-4");
        let shared = node_paths(&spec["containerEdits"]);
        let mut expected = vec!["/dev/davinci_manager".to_owned(), "/dev/hisi_hdc".to_owned()];
        expected.extend((0..8).map(|n| format!("/dev/uburma/uburma{n}")));
        expected.extend((0..8).map(|n| format!("/dev/ummu/ummu{n}")));
        assert_eq!(shared, expected, "the Ascend950 set: no devmm_svm, no dvpp_cmdlist");
    }

    #[test]
    fn only_this_drivers_unlisted_claim_specs_are_removed() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let prefix = "k8s.npu.example.com-npu_";
        for name in [
            "k8s.npu.example.com-npu_listed-uid.json",
            "k8s.npu.example.com-npu_leftover-uid.json",
            "k8s.gpu.example.com-gpu_other-driver.json",
            "ascend.json",
            "k8s.npu.example.com-npu_not-a-spec.yaml",
        ] {
            std::fs::write(dir.path().join(name), "{}").expect("write");
        }
        let removed = remove_unlisted_specs(dir.path(), prefix, |uid| uid == "listed-uid").expect("sweep");
        assert_eq!(removed, [dir.path().join("k8s.npu.example.com-npu_leftover-uid.json")]);
        let mut left: Vec<String> = std::fs::read_dir(dir.path())
            .expect("list")
            .map(|entry| entry.expect("entry").file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(
            left,
            [
                "ascend.json",
                "k8s.gpu.example.com-gpu_other-driver.json",
                "k8s.npu.example.com-npu_listed-uid.json",
                "k8s.npu.example.com-npu_not-a-spec.yaml"
            ]
        );
        let missing = dir.path().join("absent");
        assert_eq!(remove_unlisted_specs(&missing, prefix, |_| false).expect("no directory"), Vec::<PathBuf>::new());
    }
}
