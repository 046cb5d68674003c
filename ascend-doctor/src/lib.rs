//! The Ascend NPU node checks of `ascend-doctor`, in the operator's troubleshooting order, as a library.
//!
//! A library and not only a binary because operators run these checks from their own tooling: a node-problem
//! agent, a provisioning pipeline that gates a node before it joins a pool, a CI job over a golden image. They get
//! the same checks, evidence and fixes as the bundled `ascend-doctor` binary, as typed results
//! ([`check::CheckResult`]) or as the JSON of `docs/ascend-doctor-json.md`, without parsing its text output.
//!
//! [`report::CHECKS`] lists every check in diagnosis order (driver, versions, container runtime, Kubernetes); each
//! is a function of the [`context::DoctorOptions`] and the [`context::Facts`] earlier checks found, and returns a
//! [`check::CheckResult`] with OK / WARN / FAIL / SKIP, the evidence and the fix. All files are read through
//! [`host::HostRoot`], so the same checks run on `/`, on `/host` in a container, and on fake hosts in tests.
//! The module `cli` (feature `cli`) is the whole command line of the binary. Library functions that can fail return [`Error`], which names
//! the file, socket, request, pod or library concerned; checks turn such errors into evidence.
//!
//! The version floors of the project's compatibility matrix (`docs/compatibility.md`) are checks too: the kubelet's
//! version ([`kubelet_version`]) and, for a 1.28 to 1.30 kubelet, the feature gate of CDI delivery in its
//! configuration files ([`kubelet_feature_gates`]), each container engine's CDI switch and the `cdiVersion` it reads
//! ([`cdi_engine_checks`], over [`container_engines`]), and whether the driver, the firmware and every CANN installation
//! (on the host, and in an image given with `--image-root`) fit each other by what their own `version.info` files
//! declare ([`package_compatibility`]); a site may add its own table of pairings ([`compatibility`]). Versions are read
//! from files, never by running a program under the host root ([`installed_version`] says why).
//!
//! # Features
//!
//! - `kube`: the checks that need the cluster's view, through kube-rs (crate `ascend-kube`, module `node_api`), when an
//!   API server is configured (in a pod its service account, else `KUBECONFIG` or `~/.kube/config`): the kubelet's
//!   version from the Node object, the NPUs the Node advertises, the pods that still hold NPUs, the RuntimeClasses
//!   and the API server's DRA version from its discovery ([`dra_api`]). It is the doctor's only way to the API
//!   server: it runs no `kubectl`. Without the feature, or without a configured cluster, those checks SKIP with
//!   the reason and the kubelet's version comes from the host's files. A binary that enables it selects
//!   k8s-openapi's Kubernetes version, as `ascend-kube` documents.
//!
//! - `cli`: the module `cli`, the whole command line of the bundled binary (clap).
//!
//! ```no_run
//! use std::path::Path;
//! use std::time::Duration;
//! use ascend_doctor::check::Section;
//! use ascend_doctor::context::DoctorOptions;
//! use ascend_doctor::report;
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // What `ascend-doctor --section driver` runs; set fields to taste.
//! let mut options = DoctorOptions::for_root(Path::new("/"), Duration::from_secs(10))?;
//! options.sections = vec![Section::Driver];
//! let found = report::run(&options);
//! println!("{}", report::render_json(&found)?);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod cdi_engine_checks;
pub mod check;
pub mod chip_firmware;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
mod cluster_api;
pub mod compatibility;
pub mod container_engines;
pub mod context;
pub mod dra_api;
pub mod driver_checks;
mod error;
pub mod host;
pub mod installed_version;
pub mod kubelet_feature_gates;
pub mod kubelet_version;
pub mod kubernetes_checks;
pub mod library_safety;
#[cfg(feature = "kube")]
#[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
pub mod node_api;
pub mod package_compatibility;
pub mod pod_container;
pub mod pod_resources;
pub mod report;
pub mod runtime_checks;
pub mod version_checks;

pub use error::{Error, Result};
