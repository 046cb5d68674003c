//! A Kubernetes Dynamic Resource Allocation (DRA) driver for Huawei Ascend NPUs, as a library.
//!
//! On each node the driver
//! - reads the chips from DCMI ([`inventory`]) and publishes them as `resource.k8s.io/v1` ResourceSlices in one
//!   pool named after the node ([`slices`]; the API side is `ascend_kube::PoolPublisher`): each chip a device `npu-<physical id>` with attributes
//!   to select on in CEL (type, model, ids, NUMA node, PCIe root and bus id, HCCS group, driver version) and
//!   capacities (AI cores, memory); with `partitionable`, also one device per vNPU template consuming the chip's
//!   shared counters;
//! - prepares claims for the kubelet through [`dra_kubelet_plugin`] ([`driver`]): it reads the ResourceClaim, takes
//!   its results for this driver ([`claim_plan`], opaque settings in [`opaque_config`]), creates vNPUs where asked,
//!   writes one CDI spec per claim ([`cdi_claim`]) and records everything in a [`checkpoint`] that survives driver
//!   restarts and notices reboots;
//! - watches health with the node layer's monitor (`ascend_node::HealthMonitor`) and turns faults into device taints
//!   and health-stream entries ([`health`]).
//!
//! [`run`] is all of it. The `ascend-dra-driver` program (flags, `/healthz`, `/metrics`) is the module `daemon`
//! (feature `cli`); the bundled binary is a thin main over it. All Kubernetes API access goes through kube-rs
//! in `ascend-kube`.
#![forbid(unsafe_code)]

pub mod cdi_claim;
pub mod checkpoint;
pub mod claim_plan;
#[cfg(feature = "cli")]
pub mod daemon;
pub mod driver;
mod driver_loop;
mod error;
pub mod health;
pub mod inventory;
pub mod opaque_config;
pub mod recovery;
pub mod slices;

pub use driver::AscendDriver;
pub use driver_loop::{run, DriverConfig, DEFAULT_DRIVER_NAME};
pub use error::{Error, Result};
