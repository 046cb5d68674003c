//! A Kubernetes device plugin (API `v1beta1`) for Huawei Ascend NPUs, as a library.
//!
//! It builds on the node layer, [`ascend_node`]: its health monitor publishes a [`Snapshot`] of every resource's
//! devices (`huawei.com/Ascend910`, vNPU resources such as `huawei.com/Ascend310P-2c`, time-sharing replicas, device
//! ids `Ascend910-<phy>`) through a `tokio::sync::watch` channel. The plugin's own domain core knows nothing of gRPC:
//! [`plan_container`] decides what a container gets, in CDI, device-spec or runtime-environment mode, and
//! [`preferred_allocation`] makes the topology-aware preferred allocation (cards, NUMA nodes, HCCS groups).
//!
//! A thin tonic adapter ([`DevicePluginService`]) serves the `DevicePlugin` service of each resource on its own unix
//! socket ([`ResourceServer`]); [`register`] registers it with the kubelet, and [`run`] supervises all of it,
//! re-serving and re-registering when the kubelet restarts. The gRPC code generated from the kubelet protos is
//! committed under `src/generated/` (regenerate with `scripts/gen_protos.sh`) and exposed as [`api`].
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_deviceplugin::{NoopObserver, PluginConfig};
//!
//! # async fn example(manager: Arc<dyn ascend_dcmi::DeviceManager>) -> ascend_deviceplugin::Result<()> {
//! let shutdown = async { let _ = tokio::signal::ctrl_c().await; };
//! ascend_deviceplugin::run(manager, PluginConfig::default(), Arc::new(NoopObserver), shutdown).await
//! # }
//! ```
//!
//! # The crate's top level
//!
//! | for | items |
//! |---|---|
//! | running the plugin | [`run`], [`serve`] (with a monitor of the caller's and a [`DeviceAssigner`]), [`PluginConfig`], [`PluginObserver`] |
//! | the health monitor and its snapshot (from `ascend-node`) | [`HealthMonitor`], [`MonitorConfig`], [`Snapshot`], [`Resource`], [`Device`], [`DeviceKind`], [`DeviceName`], [`Health`], [`ChipCondition`], [`ResourceNaming`], [`InventoryOptions`], [`Separations`], [`NoopObserver`] |
//! | what a container gets | [`plan_container`], [`AllocateConfig`] (with [`hccl_topo_file`]), [`AllocateMode`], [`CdiDelivery`], [`ContainerAllocation`], [`DeviceNodeSpec`], [`MountSpec`], [`cdi_annotation_key`]; the names and paths it uses: [`DEFAULT_CDI_KIND`], [`CDI_ANNOTATION_PREFIX`], [`PHYSICAL_CHIPS_ANNOTATION`], [`VISIBLE_DEVICES_ENV`], [`RUNTIME_OPTIONS_ENV`], [`RT_VISIBLE_DEVICES_ENV`], [`HCCL_TOPO_FILE_ENV`], [`MANAGER_DEVICE_NODES`], [`MANAGER_DEVICE_NODES_ASCEND950`], [`UNIFIED_BUS_NODE_DIRECTORIES`], [`OPTIONAL_DEVICE_NODES`], [`DEFAULT_DRIVER_MOUNTS`] |
//! | preferred allocation | [`preferred_allocation`], [`hccs_group`] |
//! | chips running pods hold under ids the kubelet does not count (a node taken over from another plugin) | [`Holdings`], [`HoldingsTracker`] |
//! | one resource's gRPC service and server | [`DevicePluginService`], [`list_response`], [`container_response`], [`PLUGIN_OPTIONS`], [`ResourceServer`], [`ServerContext`] |
//! | the kubelet | [`register`], [`API_VERSION`], [`DEFAULT_PLUGIN_DIR`], [`KUBELET_SOCKET`]; the generated gRPC API in [`api`] |
//! | errors | [`Error`], [`Result`] |
//!
//! The public modules are the ones whose names read as part of what they hold: [`api`] (the generated code,
//! `api::v1beta1::AllocateRequest`), and one module per optional part, each behind its feature: `volcano` (Volcano
//! mode: `volcano::start`, `volcano::VolcanoConfig`), `node_events` and `node_condition` (what the plugin writes on
//! the Node: `node_events::report`, `node_condition::report`), `program` (the `ascend-device-plugin` program:
//! `program::Args`, `program::run`) and `fake_kubelet` (the kubelet peer of tests, `fake_kubelet::FakeKubelet`, a test
//! double outside the semver promise). The rest of the crate's modules are private.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod allocate;
pub mod api;
mod assigner;
mod directory_changes;
mod error;
#[cfg(feature = "fake-kubelet")]
#[cfg_attr(docsrs, doc(cfg(feature = "fake-kubelet")))]
pub mod fake_kubelet;
mod held;
mod kubelet;
#[cfg(feature = "node-events")]
#[cfg_attr(docsrs, doc(cfg(feature = "node-events")))]
pub mod node_condition;
#[cfg(feature = "node-events")]
#[cfg_attr(docsrs, doc(cfg(feature = "node-events")))]
pub mod node_events;
mod observer;
mod plugin;
mod preferred;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;
pub mod recovery;
mod server;
mod service;
#[cfg(feature = "volcano")]
#[cfg_attr(docsrs, doc(cfg(feature = "volcano")))]
pub mod volcano;

pub use allocate::{
    cdi_annotation_key, hccl_topo_file, plan_container, AllocateConfig, AllocateMode, CdiDelivery, ContainerAllocation,
    DeviceNodeSpec, MountSpec, CDI_ANNOTATION_PREFIX, DEFAULT_CDI_KIND, DEFAULT_DRIVER_MOUNTS, HCCL_TOPO_FILE_ENV,
    MANAGER_DEVICE_NODES, MANAGER_DEVICE_NODES_ASCEND950, OPTIONAL_DEVICE_NODES, PHYSICAL_CHIPS_ANNOTATION,
    RT_VISIBLE_DEVICES_ENV, RUNTIME_OPTIONS_ENV, UNIFIED_BUS_NODE_DIRECTORIES, VISIBLE_DEVICES_ENV,
};
pub use ascend_node::{
    naming::{DeviceName, ResourceNaming},
    ChipCondition, Device, DeviceKind, Health, HealthMonitor, InventoryOptions, MonitorConfig, NoopObserver, Resource,
    Separations, Snapshot,
};
pub use assigner::DeviceAssigner;
pub use error::{Error, Result};
pub use held::{Holdings, HoldingsTracker};
pub use kubelet::{register, API_VERSION, DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};
pub use observer::PluginObserver;
pub use plugin::{run, serve, PluginConfig};
pub use preferred::{hccs_group, preferred_allocation};
pub use server::{ResourceServer, ServerContext};
pub use service::{container_response, list_response, DevicePluginService, PLUGIN_OPTIONS};
