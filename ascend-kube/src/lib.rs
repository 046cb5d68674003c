//! The Kubernetes API side of the Ascend NPU stack, through kube-rs: what the device plugin, the node labeller and
//! the DRA driver read from and write to the API server.
//!
//! - [`node_labels`] and [`node_labeller`]: the NPU labels of a node (chip type, count, driver version, product,
//!   and Huawei's `accelerator` / `node.kubernetes.io/npu.chip.name`), computed from the driver and kept current
//!   with merge patches that touch only those keys; [`labeller_tool`] is the `ascend-node-labeller` tool's modes.
//! - [`device_info`] and [`device_info_publisher`]: the device-info ConfigMap Volcano's Ascend plugin schedules
//!   from (`kube-system/mindx-dl-deviceinfo-<node>`), in Huawei's exact JSON, written at Huawei's cadence.
//! - [`pod_assignment`]: the pod side of Volcano's allocation contract (`predicate-time`, `huawei.com/AscendReal`).
//! - [`node_events`]: Events on the Node object (NPU faults in `kubectl describe node`), rate-limited, aggregated
//!   and never blocking the caller.
//! - [`node_condition`]: the Node condition `AscendNPUUnhealthy`, patched into the Node's status beside the
//!   kubelet's conditions.
//! - [`resource_slices`] and [`resource_claims`]: a DRA driver's node-local pool of ResourceSlices (names, owner,
//!   generation, server-side apply, removal of stale slices) and the claims it prepares.
//! - [`api_discovery`]: which versions of an API group the server serves (is `resource.k8s.io/v1` there?).
//! - [`node_info`]: what a Node object reports of its node (the kubelet's version, the resources it advertises).
//! - [`runtime_classes`]: the cluster's RuntimeClasses and their runtime handlers.
//! - [`client`]: the connection ([`connect_as`]: a `User-Agent` naming the component and its version) and the one
//!   request path ([`client::request`]): a deadline on every call and errors that name the verb, the object and what
//!   to check ([`Error`]).
//! - [`watched`]: what a daemon reads, kept current by a node-scoped watch (kube-runtime's watcher and reflector),
//!   never by polling; [`backoff`]: the one retry policy of the daemons' writes (exponential, jitter,
//!   `Retry-After`). docs/scale.md has each daemon's request budget.
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
//! use ascend_kube::node_labeller::{LabellerConfig, NodeLabeller, Reconciled};
//!
//! # async fn example(manager: Arc<dyn ascend_dcmi::DeviceManager>) -> ascend_kube::Result<()> {
//! let labeller = NodeLabeller::new(manager, ascend_kube::connect().await?, LabellerConfig::new("worker-1"))?;
//! if let Reconciled::Patched(changes) = labeller.reconcile().await? {
//!     println!("labels changed: {changes}");
//! }
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

pub mod api_discovery;
pub mod backoff;
pub mod client;
pub mod device_info;
pub mod device_info_publisher;
mod error;
pub mod labeller_tool;
pub mod node_condition;
pub mod node_events;
pub mod node_info;
pub mod node_labeller;
pub mod node_labels;
pub mod pod_assignment;
pub mod resource_claims;
pub mod resource_slices;
pub mod runtime_classes;
pub mod watched;

pub use client::{connect, connect_as};
pub use error::{Error, Result};
pub use node_labeller::{LabellerConfig, NodeLabeller, Reconciled};
pub use node_labels::NodeLabels;
