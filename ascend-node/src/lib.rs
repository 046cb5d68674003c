//! What every Huawei Ascend NPU node program shares, under the device plugin, the DRA driver, the exporter,
//! `ascend-smi` and the doctor:
//!
//! - [`load_driver`] and [`load_driver_until`]: loading `libdcmi.so` once or until it works, with the options
//!   ([`DriverOptions`]) and, with the `cli` feature, the flags ([`DriverArgs`]) every program spells the same way;
//! - [`HealthMonitor`]: a thread that lists chips, polls their health with a deadline, reacts to fault events and
//!   publishes a [`Snapshot`] through a `tokio::sync::watch` channel: what a node offers ([`Resource`], [`Device`]:
//!   resources such as `huawei.com/Ascend910`, vNPU resources, time-sharing replicas) and each chip's [`Health`];
//! - [`naming`]: how resources and devices are named (`Ascend910-<phy>`, [`naming::ResourceNaming`]);
//! - [`hccs_group`]: HCCS groups;
//! - [`Collector`]: one complete read of every chip, on demand and with a deadline, into a [`host_report`] (the
//!   engine of `ascend-smi` and the doctor, which keeps what a hung chip answered before its deadline);
//! - [`InstalledSoftware`]: the driver, firmware and CANN packages installed on the host, from their `version.info`
//!   files ([`version_info`]);
//! - [`pod_resources`] (feature `pod-resources`), [`DEFAULT_PLUGIN_DIR`] and [`KUBELET_SOCKET`]: the kubelet's
//!   PodResources API and where its sockets are;
//! - [`recovery`]: chips that heal, hot-reset once free when their fault asks for a restart ([`recovery::RecoveryPlanner`]
//!   decides, [`recovery::RecoveryRunner`] withdraws, resets and hands back through the monitor);
//! - [`ReconcileLoop`] and [`Backoff`]: the one reconcile loop (wake-ups, resync, backoff, shutdown) and the one
//!   retry policy (exponential with jitter, `Retry-After` honoured) of every daemon that keeps an object current.
//!
//! The public modules are namespaces: [`naming`], [`pod_resources`] (with its generated `api`), [`recovery`],
//! [`host_report`] (the types of the JSON report) and [`version_info`]. Everything else is at the root, one path per
//! item.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_node::{load_driver, HealthMonitor, MonitorConfig, NoopObserver, DriverOptions};
//!
//! # async fn example() -> ascend_node::Result<()> {
//! let dcmi = load_driver(&DriverOptions::default()).await?;
//! let monitor = HealthMonitor::start(Arc::new(dcmi), MonitorConfig::default(), Arc::new(NoopObserver))?;
//! for resource in monitor.snapshot().resources() {
//!     println!("{}: {} devices", resource.name, resource.devices.len());
//! }
//! # Ok(())
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The crate page links items of the `cli` and `pod-resources` features; documented without them (a plain `cargo doc`),
// those links have no target. The pages with every feature (docs.rs, CI's `--all-features`) are checked as usual.
#![cfg_attr(not(all(feature = "cli", feature = "pod-resources")), allow(rustdoc::broken_intra_doc_links))]
#![forbid(unsafe_code)]

mod backoff;
mod collector;
mod driver;
#[cfg(feature = "cli")]
mod driver_args;
mod error;
mod hccs;
mod health_observer;
pub mod host_report;
mod installed_software;
mod inventory;
mod kubelet_paths;
mod monitor;
pub mod naming;
#[cfg(feature = "pod-resources")]
pub mod pod_resources;
mod reconcile;
pub mod recovery;
pub mod version_info;

pub use backoff::{Backoff, BackoffPolicy, RetryAfter};
pub use collector::{
    parse_visible_devices, policy_grader, CollectError, CollectOptions, Collector, FaultGrader, ProcessNames,
    RT_VISIBLE_DEVICES_ENV,
};
pub use driver::{load_driver, load_driver_until, DriverOptions};
#[cfg(feature = "cli")]
pub use driver_args::DriverArgs;
pub use error::{Error, Result};
pub use hccs::{hccs_group, HCCS_GROUP_SIZE};
pub use health_observer::{HealthObserver, NoopObserver};
pub use installed_software::{
    CannComponent, CannInstallation, InstalledSoftware, PackageFile, ASCEND_HOME, CANN_HOMES, DRIVER_VERSION_INFO,
    FIRMWARE_VERSION_INFO,
};
pub use inventory::{
    ChipCondition, ChipDetails, ChipRecord, Device, DeviceKind, Health, InventoryOptions, Resource, Snapshot,
    UnhealthyCause,
};
pub use kubelet_paths::{DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};
pub use monitor::{HealthMonitor, MonitorConfig, RecoveryWithdrawals, Separations};
pub use reconcile::{Reconcile, ReconcileLoop, Stopped};
