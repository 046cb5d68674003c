//! The NPUs of a host at a glance, like `npu-smi`, over any [`ascend_dcmi::DeviceManager`]: the library behind the
//! bundled `ascend-smi` binary.
//!
//! It is a library, not only a binary, because the same collection and rendering serve other tools: the doctor
//! reads chips through [`Collector`], and a node agent can print the table or the JSON report of
//! `docs/ascend-smi-json.md` without shelling out.
//!
//! [`Collector`] reads every chip with a deadline into a [`HostReport`] (its types: [`schema`]); [`table`],
//! [`details`] and [`health_view`] render it as text, `serde_json` as the JSON documented in
//! `docs/ascend-smi-json.md`; [`watch`] redraws it in place; [`follow`] follows fault events; [`SmiExit`] turns a
//! report into the exit status; [`InstalledSoftware`] reads the driver, firmware and CANN packages' `version.info`
//! files ([`version_info`]) for the report's `software`; the module `cli` (feature `cli`) is the whole command line.
//! [`sim`] runs on the simulated `libdcmi.so` (feature `sim`, off by default).
//!
//! ```no_run
//! use std::sync::Arc;
//! use ascend_dcmi::{Dcmi, DeviceManager};
//! use ascend_smi::{CollectOptions, Collector};
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
mod collect;
pub mod details;
mod events;
mod exit_code;
mod fault_meaning;
pub mod health_view;
mod installed_software;
pub mod schema;
pub mod sim;
pub mod table;
mod time;
pub mod version_info;
pub mod watch;

pub use collect::{
    parse_visible_devices, policy_grader, CollectError, CollectOptions, Collector, FaultGrader, ProcessNames,
    RT_VISIBLE_DEVICES_ENV,
};
pub use events::{event_line, event_report, follow, unlisted_code_level, EventReport, FollowError, FollowLimits};
pub use exit_code::SmiExit;
pub use fault_meaning::{code_meaning, level_meaning, synthesised_code_name};
pub use installed_software::{
    CannComponent, CannInstallation, InstalledSoftware, PackageFile, ASCEND_HOME, CANN_HOMES, DRIVER_VERSION_INFO,
    FIRMWARE_VERSION_INFO,
};
pub use schema::{ChipReport, ChipStatus, HostReport, SCHEMA_VERSION};
pub use version_info::VersionInfo;
