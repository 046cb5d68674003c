//! A simulated `libdcmi.so`: the DCMI C ABI of Huawei Ascend NPUs, driven by topology files.
//!
//! Built as a `cdylib` (`libdcmi_sim.so`) it exports every function of `dcmi_interface_api.h` with the
//! same signature, so consumers load it with `dlopen` exactly as they load the vendor's library. The
//! `rlib` holds the model for other crates' tests: [`Topology`] (the schema), [`samples`], [`locate`]
//! and the overlay writer.
//!
//! Environment: `DCMI_SIM_CONFIG` (topology file or `sample:<name>`, read by `dcmi_init`),
//! `DCMI_SIM_OVERLAY` (control file re-read when it changes), `DCMI_SIM_LIBRARY` (for [`locate`]).
//!
//! ```
//! let topology = dcmi_sim::samples::by_name("atlas-800t-a2").map(|sample| sample.topology());
//! let topology = topology.expect("sample exists").expect("sample is valid");
//! let first = topology.chip_by_logic_id(0).expect("logic id 0");
//! assert_eq!((first.card.card_id, first.chip.phy_id), (0, 4));
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
// The simulator exports libdcmi.so's C ABI: its `abi` functions take raw pointers from C callers.
#![allow(unsafe_code)]

mod abi;
mod chip_process;
pub mod chip_type;
mod ecc;
mod error;
pub mod events;
pub mod fake_host;
pub mod fake_software;
pub mod function;
pub mod generator;
pub mod hccn_tool;
pub mod injection;
pub mod instance;
mod library_file;
pub mod library_home;
pub mod locate;
mod network_port;
pub mod overlay;
pub mod samples;
pub mod state;
pub mod state_change;
pub mod support;
pub mod telemetry;
pub mod timeline;
mod toml_fields;
pub mod topology;
mod topology_file;
mod validation;
pub mod vnpu;
pub mod vnpu_device_node;

pub use chip_type::ChipType;
pub use error::{Error, Result};
pub use function::Function;
pub use generator::{Signal, SignalKey, Wave};
pub use instance::CONFIG_ENV;
pub use locate::{library_path, LIBRARY_ENV};
pub use overlay::{write_overlay, ChipOverlay, Overlay, OVERLAY_ENV, OVERLAY_SETTLE};
pub use samples::{Sample, SAMPLES};
pub use topology::{Card, Chip, Topology};
