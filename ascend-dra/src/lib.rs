//! A Kubernetes Dynamic Resource Allocation (DRA) driver for Huawei Ascend NPUs, as a library.
//!
//! On each node the driver
//! - reads the chips from the node layer's health monitor and publishes them as `resource.k8s.io/v1` ResourceSlices
//!   in one pool named after the node (the API side is `ascend_kube::PoolPublisher`): each chip a device
//!   `npu-<physical id>` ([`NpuChip`]) with attributes to select on in CEL (type, model, ids, NUMA node, PCIe root and
//!   bus id, HCCS group, driver version) and capacities (AI cores, memory); with `partitionable`, also one device per
//!   vNPU template consuming the chip's shared counters;
//! - prepares claims for the kubelet through [`dra_kubelet_plugin`]: it reads the ResourceClaim, takes its results
//!   for this driver ([`plan_claim`], opaque settings in [`opaque_config`]), creates vNPUs where asked, writes one CDI
//!   spec per claim and records everything in a checkpoint that survives driver restarts and notices reboots;
//! - watches health with the node layer's monitor (`ascend_node::HealthMonitor`) and turns faults into device taints
//!   (key `ascend_kube::UNHEALTHY_TAINT_KEY`) and health-stream entries.
//!
//! [`run`] is all of it, configured by [`DriverConfig`]. The `ascend-dra-driver` program (flags, `/healthz`,
//! `/metrics`) is the module `program` (feature `cli`: `program::Args`, `program::run`); the bundled binary is a thin main over it. All Kubernetes API
//! access goes through kube-rs in `ascend-kube`.
//!
//! The public modules are namespaces: `program` (the program) and [`opaque_config`] (the `NpuConfig` format a claim
//! or DeviceClass carries, `opaque_config::{parse, API_VERSION, KIND}`). Everything else is the driver's own
//! machinery; what a caller needs of it is at the root.
#![forbid(unsafe_code)]

mod cdi_claim;
mod checkpoint;
mod claim_plan;
mod devices;
mod driver;
mod driver_loop;
mod error;
mod health;
pub mod opaque_config;
#[cfg(feature = "cli")]
pub mod program;
mod recovery;
mod slices;

pub use claim_plan::{plan_claim, ClaimPlan, PlannedDevice};
pub use devices::NpuChip;
pub use driver_loop::{run, run_observed, DriverConfig, DEFAULT_DRIVER_NAME};
pub use error::{Error, Result};
