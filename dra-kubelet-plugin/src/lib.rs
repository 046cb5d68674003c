//! The kubelet side of a Kubernetes [Dynamic Resource Allocation] (DRA) driver, for drivers written in Rust.
//!
//! A DRA driver has two halves. Its cluster half publishes the node's devices as `ResourceSlice`s and reads the
//! `ResourceClaim`s the scheduler allocated (that is kube-rs work and not in this crate). Its node half talks to
//! the kubelet over unix sockets, and that is this crate:
//!
//! - the plugin-registration service in the kubelet's `plugins_registry` directory (`GetInfo`,
//!   `NotifyRegistrationStatus`), offering `v1.DRAPlugin` first and `v1beta1.DRAPlugin` second, so kubelets
//!   1.34 and newer use `v1` and kubelets 1.32 and 1.33 fall back to `v1beta1`;
//! - the `DRAPlugin` services `v1` and `v1beta1` (`NodePrepareResources`, `NodeUnprepareResources`) on
//!   `<plugins dir>/<driver>/dra.sock`, calling your [`Driver`] once per claim and answering every claim;
//! - the `v1alpha1.DRAResourceHealth` stream when your driver reports health, sent on every change and repeated
//!   every 10 s because the kubelet forgets a device's health after 30 s;
//! - the life cycle: stale sockets removed, the DRA socket served (and checked) before the registration socket
//!   appears, either socket served again if it disappears, and a [`RegistrationState`] that ticks whenever a
//!   (restarted) kubelet registers the driver, which is the moment to republish the node's slices;
//! - with feature `fake-kubelet`, [`fake_kubelet::FakeKubelet`], a kubelet peer for your integration tests (a test
//!   double, outside the semver promise).
//!
//! The gRPC code is generated from our own copies of the kubelet protos and committed (`scripts/gen_protos.sh`; builds
//! need no protoc); it is public as [`api`] for peers and tests.
//!
//! # A minimal driver
//!
//! A driver that hands out the node's serial ports: the device name the scheduler chose is the port, and the
//! container gets it through a CDI spec that the driver wrote when it started (`example.com/serial=ttyS0`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use dra_kubelet_plugin::{ClaimError, ClaimRef, Driver, KubeletPlugin, PluginConfig, PreparedDevice};
//!
//! struct SerialPorts;
//!
//! impl SerialPorts {
//!     /// A real driver reads the claim's `status.allocation` from the API server here and checks its UID.
//!     async fn allocated_ports(&self, _claim: &ClaimRef) -> Result<Vec<String>, ClaimError> {
//!         Ok(vec!["ttyS0".to_owned()])
//!     }
//! }
//!
//! impl Driver for SerialPorts {
//!     async fn prepare(&self, claim: &ClaimRef) -> Result<Vec<PreparedDevice>, ClaimError> {
//!         let ports = self.allocated_ports(claim).await?;
//!         Ok(ports
//!             .into_iter()
//!             .map(|port| PreparedDevice {
//!                 pool: "node-1".to_owned(),
//!                 cdi_device_ids: vec![format!("example.com/serial={port}")],
//!                 device: port,
//!                 ..PreparedDevice::default()
//!             })
//!             .collect())
//!     }
//!
//!     async fn unprepare(&self, _claim: &ClaimRef) -> Result<(), ClaimError> {
//!         Ok(()) // nothing was set up per claim
//!     }
//! }
//!
//! # async fn run() -> dra_kubelet_plugin::Result<()> {
//! let plugin = KubeletPlugin::start(PluginConfig::new("serial.example.com"), Arc::new(SerialPorts)).await?;
//! let mut registration = plugin.registration();
//! while registration.changed().await.is_ok() {
//!     // publish (again) this node's ResourceSlices here
//! }
//! plugin.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! [Dynamic Resource Allocation]: https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod api;
mod driver;
mod error;
#[cfg(feature = "fake-kubelet")]
pub mod fake_kubelet;
mod health;
mod plugin;
mod registration;
mod service;

pub use driver::{ClaimError, ClaimRef, DeviceHealth, Driver, HealthStatus, PreparedDevice};
pub use error::{Error, Result};
pub use plugin::{KubeletPlugin, PluginConfig, DEFAULT_PLUGINS_DIR, DEFAULT_REGISTRY_DIR, DRA_SOCKET};
pub use registration::{RegistrationState, DRA_PLUGIN_TYPE, DRA_V1, DRA_V1BETA1, HEALTH_V1ALPHA1};
