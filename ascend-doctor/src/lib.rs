//! The Ascend NPU node checks of `ascend-doctor`, in the operator's troubleshooting order, as a library.
//!
//! A library and not only a binary because operators run these checks from their own tooling: a node-problem
//! agent, a provisioning pipeline that gates a node before it joins a pool, a CI job over a golden image. They get
//! the same checks, evidence and fixes as the bundled `ascend-doctor` binary, as typed results ([`CheckResult`]) or as
//! the JSON of `docs/ascend-doctor-json.md`, without parsing its text output.
//!
//! [`CHECKS`] lists every check in diagnosis order (driver, versions, container runtime, Kubernetes); each is a
//! function of the [`DoctorOptions`] and the [`Facts`] earlier checks found, and returns a [`CheckResult`] with OK /
//! WARN / FAIL / SKIP, the evidence and the fix; [`run`] runs them into a [`DoctorReport`]. All files are read through
//! [`HostRoot`], so the same checks run on `/`, on `/host` in a container, and on fake hosts in tests. The module
//! `program` (feature `cli`) is the whole command line of the binary. Library functions that can fail return [`Error`],
//! which names the file, socket, request, pod or library concerned; checks turn such errors into evidence.
//!
//! The version floors of the project's compatibility matrix (`docs/compatibility.md`) are checks too: the kubelet's
//! version and, for a 1.28 to 1.30 kubelet, the feature gate of CDI delivery in its configuration files, each
//! container engine's CDI switch and the `cdiVersion` it reads, and whether the driver, the firmware and every CANN
//! installation (on the host, and in an image given with `--image-root`) fit each other by what their own
//! `version.info` files declare ([`package_compatibility`]); a site may add its own table of pairings
//! ([`compatibility`]). Versions are read from files, never by running a program under the host root.
//!
//! # Features
//!
//! - `kube`: the checks that need the cluster's view, through kube-rs (crate `ascend-kube`, `KubeClusterApi`), when an
//!   API server is configured (in a pod its service account, else `KUBECONFIG` or `~/.kube/config`): the kubelet's
//!   version from the Node object, the NPUs the Node advertises, the pods that still hold NPUs, the chips the device
//!   plugin's recovery held out (its Node Events), the RuntimeClasses and the API server's DRA version from its
//!   discovery. It is the doctor's only way to the API
//!   server: it runs no `kubectl`. Without the feature, or without a configured cluster, those checks SKIP with
//!   the reason and the kubelet's version comes from the host's files. A binary that enables it selects
//!   k8s-openapi's Kubernetes version, as `ascend-kube` documents.
//!
//! - `cli`: the module `program`, the whole command line of the bundled binary (clap).
//!
//! The doctor speaks English, or Simplified Chinese when [`DoctorOptions::lang`] asks for it (the binary takes
//! `--lang`, else `LC_ALL`, `LC_MESSAGES` or `LANG`: `zh_CN.*` is Chinese): each check's title and each fix, in
//! `title_localized` and `fix_localized` beside the stable English `title` and `fix`, and the text report. Evidence,
//! ids, paths and commands stay as they are. Every fix carries the stable ids of its findings ([`CheckResult::findings`]).
//!
//! ```no_run
//! use std::path::Path;
//! use std::time::Duration;
//! use ascend_doctor::{DoctorOptions, Section};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What `ascend-doctor --section driver` runs; set fields to taste.
//! let mut options = DoctorOptions::for_root(Path::new("/"), Duration::from_secs(10))?;
//! options.sections = vec![Section::Driver];
//! let found = ascend_doctor::run(&options);
//! println!("{}", ascend_doctor::render_json(&found)?);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod advice;
mod cdi_engine_checks;
mod check;
mod chip_firmware;
mod cluster_api;
pub mod compatibility;
mod container_engines;
mod context;
mod dra_api;
mod driver_checks;
mod error;
mod host;
mod installed_version;
mod kubelet_feature_gates;
mod kubelet_version;
mod kubernetes_checks;
mod library_safety;
mod migration_checks;
#[cfg(feature = "kube")]
mod node_api;
pub mod package_compatibility;
mod pod_container;
mod pod_resources;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;
mod recovery_checks;
mod report;
mod runtime_checks;
mod version_checks;

pub use advice::Fix;
pub use ascend_cli::lang::Lang;
pub use check::{CheckResult, Section, Status};
pub use cluster_api::{ClusterApi, ClusterPod, ContainerStatus, NodeEventRecord, NodeResources, PodContainers};
pub use container_engines::{CdiState, Engine, EngineKind};
pub use context::{DcmiConnector, DoctorOptions, DriverConnector, Facts, RegisteredRuntime};
pub use dra_api::DRA_DRIVER_SOCKET;
pub use error::{Error, Result};
pub use host::{EntryKind, HostRoot, MAX_FILE_BYTES};
pub use installed_version::FoundVersion;
#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
pub use node_api::KubeClusterApi;
pub use pod_container::{
    container_root, pod_container_root, ContainerId, ContainerRoot, ContainerRuntime, PodContainerRoot, PodRef,
};
pub use pod_resources::default_pod_resources_socket;
pub use report::{render_json, render_text, run, CheckFn, DoctorReport, Summary, CHECKS, SCHEMA_VERSION};
