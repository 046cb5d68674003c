//! The NPUs of a host at a glance, like `npu-smi`, over any [`ascend_dcmi::DeviceManager`]: the library behind the
//! bundled `ascend-smi` binary.
//!
//! Reading the chips is the node layer's: `ascend_node::Collector` reads every chip with a deadline into an
//! `ascend_node::host_report::HostReport` (the doctor reads chips the same way), and `ascend_node::InstalledSoftware`
//! the host's driver, firmware and CANN packages. This crate shows what they read: [`table`], [`details`] and
//! [`health_view`] render a report as text (each has `render` and `render_lines`), `serde_json` as the JSON
//! documented in `docs/ascend-smi-json.md`; [`watch`] redraws it in place; [`follow`] follows fault events; [`SmiExit`]
//! turns a report into the exit status; the module `program` (feature `cli`) is the whole command line. [`sim`] runs on
//! the simulated `libdcmi.so` (feature `sim`, off by default).
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_dcmi::{Dcmi, DeviceManager};
//! use ascend_node::{CollectOptions, Collector};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let manager: Arc<dyn DeviceManager> = Arc::new(Dcmi::init()?);
//! let report = Collector::new(manager, CollectOptions::default()).collect()?;
//! println!("{}", ascend_smi::table::render(&report));
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

pub mod details;
mod events;
mod exit_code;
pub mod health_view;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;
pub mod sim;
pub mod table;
mod time;
pub mod watch;

pub use events::{event_line, event_report, follow, unlisted_code_level, EventReport, FollowError, FollowLimits};
pub use exit_code::SmiExit;
