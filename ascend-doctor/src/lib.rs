//! The Ascend NPU node checks of `ascend-doctor`, in the operator's troubleshooting order, as a library.
//!
//! A library and not only a binary because operators run these checks from their own tooling: a node-problem
//! agent, a provisioning pipeline that gates a node before it joins a pool, a CI job over a golden image. They get
//! the same checks, evidence and fixes as the bundled `ascend-doctor` binary, as typed results
//! ([`check::CheckResult`]) or as the JSON of `docs/ascend-doctor-json.md`, without parsing its text output.
//!
//! [`report::CHECKS`] lists every check in diagnosis order (driver, versions, container runtime, Kubernetes); each
//! is a function of the [`context::DoctorOptions`] and the [`context::Facts`] earlier checks found, and returns a
//! [`check::CheckResult`] with OK / WARN / FAIL / SKIP, the evidence and the fix. All files are read through
//! [`host::HostRoot`], so the same checks run on `/`, on `/host` in a container, and on fake hosts in tests.
//! [`cli`] is the whole command line of the binary.
//!
//! ```no_run
//! use ascend_doctor::{cli, report};
//! use clap::Parser;
//!
//! # fn main() -> Result<(), String> {
//! // The options the binary would build from its flags; set fields to taste.
//! let options = cli::options(&cli::DoctorCli::parse_from(["ascend-doctor", "--section", "driver"]))?;
//! let found = report::run(&options);
//! println!("{}", report::render_json(&found).map_err(|error| error.to_string())?);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]

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
