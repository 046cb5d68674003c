//! What the checks run against (the inputs), and what earlier checks found for later ones (the facts).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{Dcmi, DeviceManager};

use super::check::Section;
pub use super::cluster_api::{ClusterApi, ClusterPod, NodeResources};
use super::compatibility::CompatibilityTable;
use super::error::{Error, Result};
use super::host::HostRoot;
use super::pod_container::PodRef;
use ascend_smi::installed_software::InstalledSoftware;

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
    /// ([`crate::pod_container`]); used when `image_root` is `None`.
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
            .field("cluster_api", &self.cluster_api.is_some())
            .finish_non_exhaustive()
    }
}

impl DoctorOptions {
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
