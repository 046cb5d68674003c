//! The test node's engine configuration and CDI spec, saved before a test lets the chart's node setup
//! (`nodeSetup.runtime`) rewrite them, and put back after it.

use std::path::{Path, PathBuf};

use crate::Cluster;

/// The test node's containerd configuration (scripts/cluster/node.sh).
pub const CONTAINERD_CONFIG: &str = "/etc/containerd/config.toml";
/// The CDI spec of the node's chips, as scripts/cluster/host_toolkit.sh installs it.
pub const HOST_CDI_SPEC: &str = "/var/run/cdi/huawei.com-npu.json";

/// The host as the test bed set it up, put back on drop (also when the test fails): the containerd configuration and
/// the CDI spec restored, containerd restarted when its configuration had changed, and the directories given to
/// [`HostBackup::remove_on_drop`] removed.
///
/// [`HostBackup::take`] removes the CDI spec, so that a pod given a chip by CDI afterwards proves the spec the node
/// setup wrote.
pub struct HostBackup {
    config: String,
    spec: Vec<u8>,
    scratch: Vec<PathBuf>,
    cluster: Cluster,
}

impl HostBackup {
    /// Saves the host's state and removes its CDI spec.
    pub fn take(cluster: &Cluster) -> HostBackup {
        let config = std::fs::read_to_string(CONTAINERD_CONFIG).expect("the test bed's containerd configuration");
        let spec = std::fs::read(HOST_CDI_SPEC).expect("the test bed's CDI spec (scripts/cluster/host_toolkit.sh)");
        std::fs::remove_file(HOST_CDI_SPEC).expect("remove the CDI spec");
        HostBackup { config, spec, scratch: Vec::new(), cluster: cluster.clone() }
    }

    /// Also removes `directory` (a scratch install directory of the node setup) on drop.
    pub fn remove_on_drop(mut self, directory: &Path) -> HostBackup {
        self.scratch.push(directory.to_owned());
        self
    }
}

impl Drop for HostBackup {
    fn drop(&mut self) {
        std::fs::write(HOST_CDI_SPEC, &self.spec).expect("restore the CDI spec");
        for directory in &self.scratch {
            let _ = std::fs::remove_dir_all(directory);
        }
        if std::fs::read_to_string(CONTAINERD_CONFIG).ok().as_deref() != Some(self.config.as_str()) {
            std::fs::write(CONTAINERD_CONFIG, &self.config).expect("restore the containerd configuration");
            self.cluster.script("node.sh", &["restart-containerd"]);
        }
    }
}
