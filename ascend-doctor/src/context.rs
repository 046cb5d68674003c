//! What the checks run against (the inputs), and what earlier checks found for later ones (the facts).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_cli::Lang;
use ascend_dcmi::{Dcmi, DeviceManager};

use super::check::Section;
use super::cluster_api::ClusterApi;
use super::compatibility::{CompatibilityTable, HOST_TABLE_PATH};
use super::error::{Error, Result};
use super::host::HostRoot;
use super::pod_container::PodRef;
use super::pod_resources::default_pod_resources_socket;
use ascend_node::InstalledSoftware;

/// Loads `libdcmi.so` and calls `dcmi_init`: the only way the doctor talks to the driver, so tests can replace it.
pub trait DriverConnector: Send + Sync {
    /// Loads the library at `library` (a real path) and initialises it.
    ///
    /// # Errors
    /// [`Error::Driver`]: the driver's error, naming the library and the call.
    fn connect(&self, library: &Path) -> Result<Arc<dyn DeviceManager>>;
}

/// The real connector: `ascend_dcmi::Dcmi` with the host root and a call deadline.
#[derive(Debug, Clone)]
pub struct DcmiConnector {
    /// Passed to the builder for `/sys` lookups.
    pub host_root: PathBuf,
    /// Deadline of each DCMI call.
    pub call_deadline: Duration,
}

impl DriverConnector for DcmiConnector {
    fn connect(&self, library: &Path) -> Result<Arc<dyn DeviceManager>> {
        // The doctor has already applied the ownership rule up to the host root (driver.libdcmi) and does not call
        // this for a library that failed it; the builder's own check would walk past the host root.
        let dcmi = Dcmi::builder()
            .library_path(library)
            .host_root(&self.host_root)
            .verify_library_ownership(false)
            .call_deadline(self.call_deadline)
            .init()
            .map_err(|source| Error::Driver { library: library.to_path_buf(), source })?;
        Ok(Arc::new(dcmi))
    }
}

/// The inputs of a doctor run.
pub struct DoctorOptions {
    /// The host root.
    pub host: HostRoot,
    /// The running kernel's release (`uname -r`): the host's kernel, also from inside a container.
    pub kernel_release: String,
    /// A site's compatibility table, whose rows add their verdicts to the installed packages' own (`None`: the
    /// verdicts come only from the packages' `version.info` files).
    pub compatibility: Option<CompatibilityTable>,
    /// A container image's unpacked root file system, whose CANN is checked against the host's driver too.
    pub image_root: Option<PathBuf>,
    /// A pod (and container) on this node whose running container's CANN is checked against the host's driver
    /// (found by [`crate::pod_container_root`]); used when `image_root` is `None`.
    pub pod: Option<PodRef>,
    /// A file with RuntimeClass manifests (YAML or `kubectl get -o json` output) to check instead of asking the API
    /// server.
    pub runtime_class_manifest: Option<PathBuf>,
    /// The Kubernetes node name (default: the host's hostname).
    pub node_name: Option<String>,
    /// How the driver is loaded.
    pub connector: Box<dyn DriverConnector>,
    /// How long chips may take to answer.
    pub chip_deadline: Duration,
    /// The sections to run (all by default).
    pub sections: Vec<Section>,
    /// The kubelet's PodResources socket, a host path.
    pub pod_resources_socket: PathBuf,
    /// The API server (`None`: only files on the host are read).
    pub cluster_api: Option<Box<dyn ClusterApi>>,
    /// The language of titles and fixes (default English; the binary's `--lang`, else the locale).
    pub lang: Lang,
}

impl std::fmt::Debug for DoctorOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DoctorOptions")
            .field("host", &self.host)
            .field("kernel_release", &self.kernel_release)
            .field("image_root", &self.image_root)
            .field("pod", &self.pod)
            .field("runtime_class_manifest", &self.runtime_class_manifest)
            .field("node_name", &self.node_name)
            .field("sections", &self.sections)
            .field("lang", &self.lang)
            .field("cluster_api", &self.cluster_api.is_some())
            .finish_non_exhaustive()
    }
}

impl DoctorOptions {
    /// What the binary runs without flags but `--root` and `--timeout`: every section on the host whose `/` is at
    /// `root`, through the real driver, with the site's compatibility table of the host when it has one
    /// ([`crate::compatibility::HOST_TABLE_PATH`]), the kubelet's default PodResources socket, and the API server when
    /// the crate's `kube` feature is on and a cluster is configured. Chips, and each API server request, may take
    /// `timeout`. Set fields afterwards to taste.
    ///
    /// # Errors
    /// [`Error::Root`] for a root that is not a directory, [`Error::CompatibilityTable`] for a host table that does
    /// not load.
    pub fn for_root(root: &Path, timeout: Duration) -> Result<DoctorOptions> {
        Self::for_root_with_table(root, timeout, None)
    }

    /// As [`Self::for_root`], with the compatibility table of the file `table` instead of the host's, when given.
    pub(crate) fn for_root_with_table(root: &Path, timeout: Duration, table: Option<&Path>) -> Result<DoctorOptions> {
        let root = std::fs::canonicalize(root).map_err(|source| Error::Root { path: root.to_path_buf(), source })?;
        if !root.is_dir() {
            return Err(Error::Root { path: root, source: std::io::ErrorKind::NotADirectory.into() });
        }
        let host = HostRoot::new(&root);
        Ok(DoctorOptions {
            compatibility: compatibility_table(&host, table)?,
            kernel_release: kernel_release(),
            image_root: None,
            pod: None,
            runtime_class_manifest: None,
            node_name: None,
            connector: Box::new(DcmiConnector {
                host_root: root.clone(),
                call_deadline: timeout.min(Duration::from_secs(5)),
            }),
            chip_deadline: timeout,
            sections: Section::ALL.to_vec(),
            pod_resources_socket: default_pod_resources_socket(),
            cluster_api: cluster_api(timeout),
            lang: Lang::En,
            host,
        })
    }

    /// The API server to ask, or why there is none: the doctor was built without its `kube` feature, or no cluster
    /// is configured.
    ///
    /// # Errors
    /// [`Error::NoCluster`] with the reason, for the evidence of a SKIP.
    pub fn cluster(&self) -> Result<&dyn ClusterApi> {
        let Some(api) = &self.cluster_api else {
            return Err(Error::NoCluster {
                reason: "no API client (cargo feature `kube` of ascend-doctor)".to_owned(),
            });
        };
        match api.unavailable() {
            Some(reason) => Err(Error::NoCluster { reason }),
            None => Ok(api.as_ref()),
        }
    }
}

/// The running kernel's release, which a container shares with its host.
fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease")
        .map_or_else(|_| "unknown".to_owned(), |text| text.trim().to_owned())
}

/// The compatibility table of the file `explicit`, else the host's when it has one.
fn compatibility_table(host: &HostRoot, explicit: Option<&Path>) -> Result<Option<CompatibilityTable>> {
    let on_host = host.path(HOST_TABLE_PATH);
    let path = match explicit {
        Some(path) => path.to_path_buf(),
        None if on_host.is_file() => on_host,
        None => return Ok(None),
    };
    Ok(Some(CompatibilityTable::from_file(&path)?))
}

#[cfg(feature = "kube")]
fn cluster_api(timeout: Duration) -> Option<Box<dyn ClusterApi>> {
    Some(Box::new(super::node_api::KubeClusterApi::new(timeout)))
}

#[cfg(not(feature = "kube"))]
fn cluster_api(_timeout: Duration) -> Option<Box<dyn ClusterApi>> {
    None
}

/// A container runtime registered with an engine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegisteredRuntime {
    /// `docker` or `containerd`.
    pub engine: &'static str,
    /// The runtime (handler) name.
    pub name: String,
    /// The binary it runs, when the configuration names one.
    pub binary: Option<String>,
}

/// What earlier checks found, for the later ones.
#[derive(Default)]
pub struct Facts {
    /// Huawei NPU PCI functions (`bdf`, device id).
    pub npu_functions: Vec<(String, u32)>,
    /// Whether a driver module is loaded.
    pub driver_loaded: Option<bool>,
    /// Physical ids of `/dev/davinci<N>`.
    pub davinci_ids: Vec<u32>,
    /// The library that passed the safety rule (a real path), ready to load.
    pub library: Option<PathBuf>,
    /// Why no library is ready, when none is.
    pub library_problem: Option<String>,
    /// The initialised driver.
    pub manager: Option<Arc<dyn DeviceManager>>,
    /// Chip types by physical id, from DCMI.
    pub chip_types: Vec<(u32, ascend_dcmi::ChipType)>,
    /// The driver version from `version.info`.
    pub driver_version: Option<String>,
    /// The driver, firmware and CANN packages installed below the host root, read once ([`Facts::software`]).
    pub software: Option<InstalledSoftware>,
    /// The runtimes Docker and containerd know that run an Ascend runtime.
    pub ascend_runtimes: Vec<RegisteredRuntime>,
    /// Whether any engine configuration was found.
    pub engine_configured: bool,
    /// The node's CDI specs of the Ascend kind: host path and declared `cdiVersion`.
    pub cdi_specs: Vec<(String, String)>,
    /// The container engines found, with their CDI state.
    pub engines: Vec<super::container_engines::Engine>,
    /// The kubelet's version as found (`v1.28.4`, or a package version).
    pub kubelet_version: Option<String>,
}

impl Facts {
    /// The packages installed below the host root, read on first use.
    pub fn software(&mut self, host: &HostRoot) -> &InstalledSoftware {
        self.software.get_or_insert_with(|| InstalledSoftware::read(host.root()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_for_a_root_run_every_section_with_the_hosts_own_table() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let options = DoctorOptions::for_root(dir.path(), Duration::from_secs(10)).expect("a directory is a root");
        assert_eq!(options.sections, Section::ALL);
        assert_eq!(options.host.root(), std::fs::canonicalize(dir.path()).expect("canonical"));
        assert!(options.compatibility.is_none(), "no table on the host, none built in");
        assert!(options.pod.is_none() && options.image_root.is_none() && options.node_name.is_none());

        let file = dir.path().join("file");
        std::fs::write(&file, "x").expect("write");
        let error = DoctorOptions::for_root(&file, Duration::from_secs(10)).expect_err("a file is no root");
        assert!(matches!(error, Error::Root { .. }), "{error}");

        let table = options.host.path(HOST_TABLE_PATH);
        std::fs::create_dir_all(table.parent().expect("parent")).expect("mkdir");
        std::fs::write(&table, "not = [a table").expect("write");
        let error = DoctorOptions::for_root(dir.path(), Duration::from_secs(10)).expect_err("the host's table is read");
        assert!(error.to_string().contains("compatibility.toml"), "{error}");
        let elsewhere = dir.path().join("site.toml");
        let error = DoctorOptions::for_root_with_table(dir.path(), Duration::from_secs(10), Some(&elsewhere))
            .expect_err("the given table is read instead");
        assert!(error.to_string().contains("site.toml"), "{error}");
    }
}
