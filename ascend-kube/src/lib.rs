//! The Kubernetes API side of the Ascend NPU stack, through kube-rs: what the device plugin, the node labeller and
//! the DRA driver read from and write to the API server.
//!
//! - [`NodeLabeller`] and [`node_labels`]: the NPU labels of a node (chip type, count, driver version, product,
//!   and Huawei's `accelerator` / `node.kubernetes.io/npu.chip.name`), computed from the driver and kept current
//!   with merge patches that touch only those keys. The `ascend-node-labeller` program around them (its flags and
//!   modes) lives with the other programs, in the workspace's `programs/` (package `ascend-programs`).
//! - [`device_info`]: the device-info ConfigMap Volcano's Ascend plugin schedules from
//!   (`kube-system/mindx-dl-deviceinfo-<node>`), in Huawei's exact JSON, written at Huawei's cadence
//!   ([`device_info::DeviceInfoPublisher`]).
//! - [`pod_assignment`]: the pod side of Volcano's allocation contract (`predicate-time`, `huawei.com/AscendReal`).
//! - [`NodeEvents`]: Events on the Node object (NPU faults in `kubectl describe node`), rate-limited, aggregated
//!   and never blocking the caller; [`RecoveryEvents`]: recovery's resets and held-out chips as such Events.
//! - [`NodeConditionWriter`]: the Node condition `AscendNPUUnhealthy` ([`NpuCondition`]), patched into the Node's
//!   status beside the kubelet's conditions.
//! - [`PoolPublisher`] and [`get_claim`]: a DRA driver's node-local pool of ResourceSlices (names, owner,
//!   generation, server-side apply, removal of stale slices) and the claims it prepares.
//! - [`served_versions`]: which versions of an API group the server serves (is `resource.k8s.io/v1` there?).
//! - [`kubelet_version`] and [`node_resources`]: what a Node object reports of its node (the kubelet's version, the
//!   resources it advertises).
//! - [`runtime_class_handlers`]: the cluster's RuntimeClasses and their runtime handlers.
//! - The connection ([`connect_as`]: a `User-Agent` naming the component and its version) and the one request path
//!   ([`request`]): a deadline on every call and errors that name the verb, the object and what to check
//!   ([`Error`]).
//! - [`Watched`]: what a daemon reads, kept current by a node-scoped watch (kube-runtime's watcher and reflector),
//!   never by polling; [`Backoff`]: the one retry policy of the daemons' writes (exponential, jitter,
//!   `Retry-After`), from `ascend_node`, whose `ReconcileLoop` runs the labeller's and the daemons' loops on it.
//!   docs/scale.md has each daemon's request budget.
//!
//! # Kubernetes versions
//!
//! All access goes through [kube-rs](https://kube.rs) (`kube` 5) with the typed objects of `k8s-openapi` 0.29. The
//! workspace's binaries select k8s-openapi's `v1_34` feature, the oldest that has `resource.k8s.io/v1` (DRA went GA
//! in Kubernetes 1.34), and this crate, as k8s-openapi asks of libraries, selects none itself. The objects used
//! here (Nodes, Pods, ConfigMaps, `events.k8s.io/v1` Events; `node.k8s.io/v1` RuntimeClasses from 1.20) have been
//! stable since Kubernetes 1.19, so the node labeller, the device plugin and the doctor work with every cluster
//! still supported upstream; the DRA objects (ResourceSlices, ResourceClaims) need Kubernetes 1.34 or newer.
//! kube-rs talks to newer API servers too: the served versions of these kinds do not change.
//!
//! In-cluster configuration, TLS with the service account's CA, and the rotation of projected tokens come from
//! kube-rs ([`connect`]). Tests run real kube-rs clients against the workspace's fake API server (crate
//! `fake-apiserver`), which speaks the same HTTP/JSON protocol.
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_kube::{LabellerConfig, NodeLabeller, Reconciled};
//!
//! # async fn example(manager: Arc<dyn ascend_dcmi::DeviceManager>) -> ascend_kube::Result<()> {
//! let labeller = NodeLabeller::new(manager, ascend_kube::connect().await?, LabellerConfig::new("worker-1"))?;
//! if let Reconciled::Patched(changes) = labeller.reconcile().await? {
//!     println!("labels changed: {changes}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! # The crate's top level
//!
//! | for | items |
//! |---|---|
//! | connecting and requesting | [`connect`], [`connect_as`], [`client_for`], [`configuration`], [`in_cluster`], [`user_agent`], [`request`], [`check_node_name`], [`DEFAULT_REQUEST_TIMEOUT`]; the field managers [`NODE_LABELLER_FIELD_MANAGER`], [`DEVICE_PLUGIN_FIELD_MANAGER`], [`DRA_DRIVER_FIELD_MANAGER`] |
//! | watching and retrying | [`Watched`], [`Backoff`], [`BackoffPolicy`] |
//! | the node labels | [`NodeLabeller`], [`LabellerConfig`], [`Reconciled`], [`ReconcileTrigger`], [`DEFAULT_RECONCILE_INTERVAL`], [`DEFAULT_DRIVER_DEADLINE`], [`NodeLabels`], [`LabelPatch`]; the keys and values in [`node_labels`] |
//! | Events and the condition on the Node | [`NodeEvents`], [`NodeEvent`], [`NodeEventsConfig`], [`EventStats`]; recovery's resets as Events, [`RecoveryEvents`], [`RECOVERY_EVENT_REASONS`]; [`NodeConditionWriter`], [`NpuCondition`], [`ConditionWrite`], [`NPU_CONDITION_TYPE`], [`ALL_HEALTHY_REASON`], [`UNHEALTHY_REASON`] |
//! | what the cluster says | [`served_versions`], [`kubelet_version`], [`node_resources`], [`NodeResources`], [`runtime_class_handlers`] |
//! | DRA | [`PoolPublisher`], [`SliceContent`], [`ASCEND_DRA_DRIVER_NAME`], [`UNHEALTHY_TAINT_KEY`], [`SLICE_NODE_LABEL`], [`get_claim`] |
//! | Volcano | [`device_info`], [`pod_assignment`] |
//! | errors | [`Error`], [`Result`] |
//!
//! The public modules are the ones that hold a contract with another program, read best with the module's name in
//! front: [`device_info`] (Huawei's device-info ConfigMap: its names, keys, JSON and writer,
//! `device_info::DeviceList`, `device_info::PublisherConfig`), [`pod_assignment`] (Volcano's annotations on a pod,
//! `pod_assignment::served_for`, `pod_assignment::REAL_DEVICES_ANNOTATION`), [`node_labels`] (the label keys and
//! values, `node_labels::CHIP_TYPE_LABEL`, `node_labels::MIXED`; [`NodeLabels`] and [`LabelPatch`] also at the root).
//! The rest of the crate's modules are private; no program's code is here.
#![forbid(unsafe_code)]

mod api_discovery;
mod client;
pub mod device_info;
mod error;
mod node_condition;
mod node_events;
mod node_info;
mod node_labeller;
pub mod node_labels;
pub mod pod_assignment;
mod recovery_events;
mod resource_claims;
mod resource_slices;
mod runtime_classes;
mod watched;

pub use api_discovery::served_versions;
/// The one retry policy, at home in `ascend_node` and here because [`LabellerConfig::backoff`] and the daemons' API
/// writes use it: [`Error`] carries the server's `Retry-After` ([`ascend_node::RetryAfter`]).
pub use ascend_node::{Backoff, BackoffPolicy};
pub use client::{
    check_node_name, client_for, configuration, connect, connect_as, in_cluster, request, user_agent,
    DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER, DRA_DRIVER_FIELD_MANAGER, NODE_LABELLER_FIELD_MANAGER,
};
pub use error::{Error, Result};
pub use node_condition::{
    ConditionWrite, NodeConditionWriter, NpuCondition, ALL_HEALTHY_REASON, NPU_CONDITION_TYPE, UNHEALTHY_REASON,
};
pub use node_events::{EventStats, NodeEvent, NodeEvents, NodeEventsConfig};
pub use node_info::{kubelet_version, resources as node_resources, NodeResources};
pub use node_labeller::{
    LabellerConfig, NodeLabeller, ReconcileTrigger, Reconciled, DEFAULT_DRIVER_DEADLINE, DEFAULT_RECONCILE_INTERVAL,
};
pub use node_labels::{LabelPatch, NodeLabels};
pub use recovery_events::{held_out_note, RecoveryEvents, RECOVERY_EVENT_REASONS};
pub use resource_claims::get_claim;
pub use resource_slices::{
    PoolPublisher, SliceContent, ASCEND_DRA_DRIVER_NAME, NODE_LABEL as SLICE_NODE_LABEL, UNHEALTHY_TAINT_KEY,
};
pub use runtime_classes::runtime_class_handlers;
pub use watched::Watched;
