//! Test support for the cluster tier: the real one-node Kubernetes that `scripts/cluster/up.sh` starts (a real
//! kube-apiserver, scheduler, controller manager, kubelet and containerd on a host simulated by `dcmi-sim`), and the
//! steps the tests take on it as an operator would: apply our manifests with kubectl, label the node, start pods,
//! raise a chip fault in the simulator, restart a component.
//!
//! The tests in `tests/` run only in the cluster tier of `scripts/test.sh` (`cargo test -p ascend-cluster-tests`,
//! one test at a time), after `up.sh`; without a cluster they fail, naming what is missing. docs/testing.md
//! describes the tiers.

#![forbid(unsafe_code)]

mod cluster;
pub mod exposition;
mod failure_report;
mod host_backup;
mod port_forward;
pub mod prometheus;
pub mod stack;
mod wait;

pub use cluster::{Cluster, PodCommand, NODE_NAME};
pub use host_backup::{HostBackup, CONTAINERD_CONFIG, HOST_CDI_SPEC};
pub use port_forward::PortForward;
pub use wait::{wait_until, wait_until_empty, Timer};
