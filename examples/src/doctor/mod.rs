//! `ascend-doctor`: the operator's troubleshooting chain, in order, against a host root.
//!
//! [`report::CHECKS`] lists every check in diagnosis order (driver, versions, container runtime, Kubernetes); each
//! is a function of the [`context::DoctorOptions`] and the [`context::Facts`] earlier checks found, and returns a
//! [`check::CheckResult`] with OK / WARN / FAIL / SKIP, the evidence and the fix. All files are read through
//! [`host::HostRoot`], so the same checks run on `/`, on `/host` in a container, and on fake hosts in tests.

pub mod check;
pub mod cli;
pub mod compatibility;
pub mod context;
pub mod driver_checks;
pub mod host;
pub mod kubectl;
pub mod kubernetes_checks;
pub mod library_safety;
pub mod pod_resources;
pub mod report;
pub mod runtime_checks;
pub mod version_checks;
pub mod version_files;
