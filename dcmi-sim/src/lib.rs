//! A simulated `libdcmi.so`: the DCMI C ABI of Huawei Ascend NPUs, driven by topology files.
//!
//! Built as a `cdylib` (`libdcmi_sim.so`) it exports every function of `dcmi_interface_api.h` with the
//! same signature, so consumers load it with `dlopen` exactly as they load the vendor's library. The
//! `rlib` holds the model for other crates' tests.
//!
//! Environment: `DCMI_SIM_CONFIG` (topology file or `sample:<name>`, read by `dcmi_init`),
//! `DCMI_SIM_OVERLAY` (control file re-read when it changes), `DCMI_SIM_LIBRARY` (for [`library_path`]).
//!
//! ```
//! let topology = dcmi_sim::samples::by_name("atlas-800t-a2").map(|sample| sample.topology());
//! let topology = topology.expect("sample exists").expect("sample is valid");
//! let first = topology.chip_by_logic_id(0).expect("logic id 0");
//! assert_eq!((first.card.card_id, first.chip.phy_id), (0, 4));
//! ```
//!
//! # The crate's top level
//!
//! | for | items |
//! |---|---|
//! | the topology file (the schema) | [`Topology`], [`Card`], [`Chip`], [`Signal`], [`Wave`], [`ChipType`], [`Api`]; the rest of the schema (faults, ECC, PCIe, links, vNPUs, ...) in [`topology`] |
//! | the sample topologies | [`samples`] ([`samples::by_name`], [`samples::load_file_or_sample`]), [`Sample`], [`SAMPLES`] |
//! | finding and configuring the built library | [`library_path`], [`library_near`], [`LIBRARY_ENV`], [`LIBRARY_FILE`], [`CONFIG_ENV`]; beside the library: [`CONFIG_FILE_NAME`], [`OVERLAY_FILE_NAME`] |
//! | changing a running simulator | [`Overlay`], [`ChipOverlay`], [`write_overlay`], [`OVERLAY_ENV`], [`OVERLAY_SETTLE`] |
//! | failures and scripted changes (topology and overlay) | [`InjectionRule`], [`Latency`], [`TimelineEntry`], [`TimelineAction`], [`StateChange`] |
//! | what a call returned at a given time | [`Sampler`], [`DdrReading`], [`HbmReading`], [`unix_now_ms`] |
//! | what each chip family answers | [`Function`], [`capabilities`], [`vnpu_templates`], [`VnpuTemplate`] |
//! | a fake Atlas host under a directory | [`fake_host`] |
//! | the simulated `hccn_tool` | [`hccn_tool`] |
//! | errors | [`Error`], [`Result`] |
//!
//! The public modules are the ones whose names read as part of what they hold: [`samples`] (`samples::by_name`),
//! [`topology`] (about twenty schema types; the three every test uses are also at the root), [`fake_host`] (a host's
//! layout: its paths, device nodes, package version files and vNPU nodes, all relative to one root), [`hccn_tool`] (a
//! second program, with its own arguments, exit codes and network types) and [`capabilities`] (the per-family tables,
//! `capabilities::supports`, `capabilities::freq_type::HBM`). The simulator's own machinery (its state, event delivery,
//! injector, timeline and the Rust side of the C functions) is private; the C functions are exported from the
//! `cdylib` all the same.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The simulator exports libdcmi.so's C ABI: its `abi` functions take raw pointers from C callers.
#![allow(unsafe_code)]

mod abi;
pub mod capabilities;
mod chip_process;
mod chip_type;
mod ecc;
mod error;
mod events;
pub mod fake_host;
mod fake_software;
mod function;
mod generator;
pub mod hccn_tool;
mod injection;
mod instance;
mod library_file;
mod library_home;
mod locate;
mod network_port;
mod overlay;
pub mod samples;
mod state;
mod state_change;
mod telemetry;
mod timeline;
mod toml_fields;
pub mod topology;
mod topology_file;
mod validation;
mod vnpu;
mod vnpu_device_node;

pub use chip_type::{Api, ChipType};
pub use error::{Error, Result};
pub use function::Function;
pub use generator::{unix_now_ms, Signal, Wave};
pub use injection::{InjectionRule, Latency};
pub use instance::CONFIG_ENV;
pub use library_home::{CONFIG_FILE_NAME, OVERLAY_FILE_NAME};
pub use locate::{library_near, library_path, LIBRARY_ENV, LIBRARY_FILE};
pub use overlay::{write_overlay, ChipOverlay, Overlay, OVERLAY_ENV, OVERLAY_SETTLE};
pub use samples::{Sample, SAMPLES};
pub use state_change::StateChange;
pub use telemetry::{DdrReading, HbmReading, Sampler};
pub use timeline::{TimelineAction, TimelineEntry};
pub use topology::{Card, Chip, Topology};
pub use vnpu::{templates as vnpu_templates, VnpuTemplate};
