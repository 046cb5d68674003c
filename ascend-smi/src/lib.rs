//! The NPUs of a host at a glance, like `npu-smi`, over any [`ascend_dcmi::DeviceManager`]: the library behind the
//! bundled `ascend-smi` binary.
//!
//! It is a library, not only a binary, because the same collection and rendering serve other tools: the doctor
//! reads chips through [`collect::Collector`], and a node agent can print the table or the JSON report of
//! `docs/ascend-smi-json.md` without shelling out.
//!
//! [`collect::Collector`] reads every chip with a deadline into a [`schema::HostReport`]; [`table`], [`details`] and
//! [`health_view`] render it as text, `serde_json` as the JSON documented in `docs/ascend-smi-json.md`;
//! [`watch`] redraws it in place; [`events`] follows fault events; [`exit_code`] turns a report into the exit status;
//! [`installed_software`] reads the driver, firmware and CANN packages' `version.info` files ([`version_info`]) for
//! the report's `software`; the module `cli` (feature `cli`) is the whole command line. [`sim`] runs on the simulated
//! `libdcmi.so` (feature `sim`, off by default).
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_dcmi::{Dcmi, DeviceManager};
//! use ascend_smi::collect::{CollectOptions, Collector};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let manager: Arc<dyn DeviceManager> = Arc::new(Dcmi::init()?);
//! let report = Collector::new(manager, CollectOptions::default()).collect()?;
//! println!("{}", serde_json::to_string_pretty(&report)?);
//! # Ok(())
//! # }
//! ```
#![forbid(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod cli;
pub mod collect;
pub mod details;
pub mod events;
pub mod exit_code;
pub mod fault_meaning;
pub mod health_view;
pub mod installed_software;
pub mod schema;
pub mod sim;
pub mod table;
pub mod time;
pub mod version_info;
pub mod watch;
