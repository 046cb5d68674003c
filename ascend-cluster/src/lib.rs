//! The whole cluster's Ascend NPUs at a glance: the library of `kubectl ascend`.
//!
//! `npu-smi` and `ascend-smi` show one node. This crate answers the cluster-wide questions from what our daemons
//! already publish through the Kubernetes API, with one list call per kind and never a request per node:
//!
//! - [`nodes_report`]: per node, the chip type and count, healthy / unhealthy / allocated / free, driver and CANN
//!   versions, the mode (device plugin, Volcano, DRA), when the node's NPUs were last reported and why a chip is
//!   unhealthy;
//! - [`pods_report`]: which pod holds which chips on which node (DRA claims, Volcano's annotations, the plain device
//!   plugin's requests);
//! - [`faults_report`]: the chips unhealthy now and the recent fault Events, newest first;
//! - [`capacity_report`]: the nodes where a job of N chips (in one HCCS group, if asked) fits now;
//! - [`doctor_report`]: runs `ascend-doctor` in a node's daemon pod through the exec subresource.
//!
//! Each takes a `kube::Client` and returns a report that serialises to JSON, so a test (or another tool) calls it
//! directly; feature `cli` adds the `kubectl-ascend` command line ([`program`]): flags as kubectl has them, tables,
//! `-o wide|json|yaml`, exit codes. What each report reads, and from whom, is in [`objects`] and [`node_npus`].
//!
//! # Why a crate of its own
//!
//! `ascend-kube` is the API layer the daemons share: each module there is one object a daemon writes or reads, and
//! the daemons link it. This crate is a consumer of all of those objects at once, for people and scripts: it reads
//! with the formats and constants `ascend-kube` defines (label keys, the device-info document, the condition
//! type, the pod annotations), so that one definition serves writer and reader, and it adds what no daemon needs
//! (cluster-wide accounting, the exec client, a command line). Putting it in `ascend-kube` would make every daemon
//! compile the exec client and the reports; building it on `ascend-deviceplugin` or `ascend-dra` would make a
//! reader depend on a daemon. So it sits beside the daemons, on `ascend-kube` only.
//!
//! ```no_run
//! # async fn example() -> Result<(), ascend_cluster::Error> {
//! let client = ascend_kube::connect().await?;
//! for node in ascend_cluster::nodes_report(&client).await?.nodes {
//!     println!("{}: {} of {} chips free", node.node, node.free, node.total);
//! }
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

mod capacity;
mod doctor;
mod error;
mod faults;
pub mod node_npus;
mod nodes;
pub mod objects;
mod pods;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;

pub use capacity::{capacity_report, CapacityQuery, CapacityReport, Fit, HccsGroupFree};
pub use doctor::{daemon_pod, doctor_report, DaemonPod, DoctorRun, DAEMON_CONTAINERS, DAEMON_NAMES, DOCTOR_COMMAND};
pub use error::{Error, Result};
pub use faults::{faults_report, CurrentFault, FaultEvent, FaultsReport, FAULT_EVENT_REASONS};
pub use node_npus::{Chip, Mode, NodeNpus};
pub use nodes::{nodes_report, NodesReport};
pub use objects::{ClusterObjects, Scope, Wanted};
pub use pods::{pods_report, PodChips, PodsReport};
