//! A Kubernetes device plugin (API `v1beta1`) for Huawei Ascend NPUs, as a library.
//!
//! It builds on the node layer, [`ascend_node`]: its health monitor publishes a [`Snapshot`] of every resource's
//! devices (`huawei.com/Ascend910`, vNPU resources such as `huawei.com/Ascend310P-2c`, time-sharing replicas, device
//! ids `Ascend910-<phy>`) through a `tokio::sync::watch` channel. The plugin's own domain core knows nothing of gRPC:
//! - [`allocate`]: what a container gets, in CDI, device-spec or runtime-environment mode;
//! - [`preferred`]: topology-aware preferred allocation (cards, NUMA nodes, HCCS groups).
//!
//! A thin tonic adapter ([`service`]) serves the `DevicePlugin` service of each resource on its own unix socket
//! ([`server`]); [`kubelet`] registers it, and [`plugin::run`] supervises all of it, re-serving and re-registering
//! when the kubelet restarts. The gRPC code generated from the kubelet protos is committed under `src/generated/`
//! (regenerate with `scripts/gen_protos.sh`) and exposed as [`api`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_deviceplugin::{plugin, NoopObserver, PluginConfig};
//!
//! # async fn example(manager: Arc<dyn ascend_dcmi::DeviceManager>) -> ascend_deviceplugin::Result<()> {
//! let shutdown = async { let _ = tokio::signal::ctrl_c().await; };
//! plugin::run(manager, PluginConfig::default(), Arc::new(NoopObserver), shutdown).await
//! # }
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod allocate;
pub mod api;
pub mod assigner;
#[cfg(feature = "cli")]
pub mod daemon;
mod error;
#[cfg(feature = "fake-kubelet")]
pub mod fake_kubelet;
pub mod kubelet;
#[cfg(feature = "node-events")]
pub mod node_condition;
#[cfg(feature = "node-events")]
pub mod node_events;
mod observer;
pub mod plugin;
pub mod preferred;
pub mod server;
pub mod service;
#[cfg(feature = "volcano")]
pub mod volcano;

pub use allocate::{AllocateConfig, AllocateMode, CdiDelivery, ContainerAllocation};
pub use ascend_node::{
    ChipCondition, Device, DeviceKind, DeviceName, Health, HealthMonitor, InventoryOptions, MonitorConfig,
    NoopObserver, Resource, ResourceNaming, Separations, Snapshot,
};
pub use assigner::DeviceAssigner;
pub use error::{Error, Result};
pub use observer::PluginObserver;
pub use plugin::PluginConfig;
