//! Ascend NPUs in OCI containers: device requests, spec injection, runtime hook, CDI specs,
//! runtime configuration.
//!
//! The pieces, in the order a container meets them:
//!
//! * [`request`]: what a container asks for (`ASCEND_VISIBLE_DEVICES` and friends, or CDI names).
//! * [`host`] and [`secure_path`]: the host's chips and device nodes, and descriptor-based
//!   resolution of every host path with ownership and mode checks.
//! * [`chip_discovery`]: where the chip list and chip type come from: an operator's chip type,
//!   DCMI (feature `dcmi`: `libdcmi.so` loaded at run time, chips cross-checked against their
//!   `/dev/davinci<phy>` nodes), or the `/dev` scan; [`chip_cache`] remembers DCMI's answer
//!   between container starts.
//! * [`mount_list`]: the vendor's `.list` files naming driver files to mount.
//! * [`inject`]: the plan for one container and its idempotent application to `config.json`.
//! * [`runtime_shim`] (edit the bundle, then run runc) and [`hook`] (mount inside the container's
//!   mount namespace at `createRuntime`); [`runtime_exec`] runs both as an engine and runc start them, on the
//!   shortest path (no argument parser).
//! * [`cdi`]: CDI specs for CDI-aware engines.
//! * [`runtime_config`]: registering the runtime with Docker, containerd and CRI-O.
//!
//! ```no_run
//! use ascend_oci::{chip_discovery::discover_chips, inject::{InjectionConfig, InjectionPlan},
//!                  request::DeviceRequest, secure_path::HostRoot};
//! # fn main() -> Result<(), ascend_oci::Error> {
//! let root = HostRoot::open("/")?;
//! let found = discover_chips(&root, None)?; // DCMI (feature `dcmi`), else the /dev scan
//! if let Some(warning) = found.source.fallback_warning() {
//!     eprintln!("warning: {warning}");
//! }
//! let chips = found.chips;
//! let request = DeviceRequest::from_env(["ASCEND_VISIBLE_DEVICES=0-1"])?;
//! let plan = InjectionPlan::build(&root, &chips, &request, &InjectionConfig::default())?;
//! println!("{} device nodes, {} mounts", plan.device_nodes.len(), plan.mounts.len());
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod atomic_file;
mod bounded_read;
pub mod bundle_config;
pub mod cdi;
pub mod chip_cache;
pub mod chip_discovery;
#[cfg(feature = "cli")]
pub mod ctk;
#[cfg(feature = "dcmi")]
mod dcmi_chips;
mod error;
pub mod hook;
pub mod host;
pub mod inject;
pub mod mount_list;
pub mod request;
pub mod runtime_config;
mod runtime_env;
pub mod runtime_exec;
pub mod runtime_shim;
pub mod secure_path;
mod start_error;

pub use error::{Error, Result};
