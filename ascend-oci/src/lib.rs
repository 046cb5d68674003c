//! Ascend NPUs in OCI containers: device requests, spec injection, runtime hook, CDI specs,
//! runtime configuration.
//!
//! The pieces, in the order a container meets them:
//!
//! * [`DeviceRequest`]: what a container asks for (`ASCEND_VISIBLE_DEVICES` and friends, or CDI names).
//! * [`HostChips`] and [`HostRoot`]: the host's chips and device nodes, and descriptor-based
//!   resolution of every host path with ownership and mode checks.
//! * [`discover_chips`]: where the chip list and chip type come from ([`ChipSource`]): an operator's chip type,
//!   DCMI (feature `dcmi`: `libdcmi.so` loaded at run time, chips cross-checked against their
//!   `/dev/davinci<N>` nodes), or the `/dev` scan; [`ChipCache`] remembers DCMI's answer
//!   between container starts.
//! * [`MountList`]: the vendor's `.list` files naming driver files to mount.
//! * [`InjectionPlan`]: the plan for one container, and [`apply_plan`], its idempotent application to
//!   `config.json`.
//! * [`prepare_bundle`] (edit the bundle, then run runc) and [`run_hook`] (mount inside the container's
//!   mount namespace at `createRuntime`); [`runtime_main`] and [`hook_program_main`] run both as an engine and runc
//!   start them, on the shortest path (no argument parser).
//! * [`cdi`]: CDI specs for CDI-aware engines.
//! * [`runtime_config`]: registering the runtime with Docker, containerd and CRI-O.
//!
//! ```no_run
//! use ascend_oci::{discover_chips, DeviceRequest, HostRoot, InjectionConfig, InjectionPlan};
//! # fn main() -> Result<(), ascend_oci::Error> {
//! let root = HostRoot::open("/")?;
//! let found = discover_chips(&root, None)?; // DCMI (feature `dcmi`), else the /dev scan
//! if let Some(warning) = found.source.fallback_warning() {
//!     eprintln!("warning: {warning}");
//! }
//! let chips = found.chips;
//! let request = DeviceRequest::from_env(["ASCEND_VISIBLE_DEVICES=0-1"])?;
//! let plan = InjectionPlan::build(&root, &chips, &request, &InjectionConfig::default())?;
//! println!("{} device nodes, {} mounts", plan.device_nodes.len(), plan.mounts.len());
//! # Ok(())
//! # }
//! ```
//!
//! # The crate's top level
//!
//! | for | items |
//! |---|---|
//! | what a container asks for | [`DeviceRequest`], [`DeviceSelection`], [`RuntimeOptions`], [`parse_mount_list_names`], [`parse_allow_link`], [`VISIBLE_DEVICES_ENV`], [`RUNTIME_OPTIONS_ENV`], [`RUNTIME_MOUNTS_ENV`], [`ALLOW_LINK_ENV`], [`MAX_PHY_ID`] |
//! | host paths, checked | [`HostRoot`], [`TrustedSource`], [`resolve_trusted`], [`checked_relative`], [`check_owner_and_mode`], [`check_trusted_file`] |
//! | the host's chips and device nodes | [`HostChips`], [`HostChip`], [`DeviceNode`], [`chip_device_path`], [`chip_device_node`], [`shared_device_nodes`], [`PRODUCTS_WITHOUT_SVM_AND_HDC`], [`UNIFIED_BUS_NODE_DIRECTORIES`] |
//! | where the chips come from | [`discover_chips`], [`DiscoveredChips`], [`ChipSource`], [`ChipCache`], [`CachedDiscovery`], [`DEFAULT_CHIP_CACHE`] |
//! | driver files to mount | [`MountList`], [`MountEntry`], [`resolve_mounts`], [`resolve_sources`], [`resolve_given_sources`], [`wildcard_match`], [`DEFAULT_MOUNT_LIST_DIR`], [`BASE_LIST_DEFAULTS`], [`MAX_LIST_ENTRIES`] |
//! | one container's plan and its application | [`InjectionPlan`], [`InjectionConfig`], [`MountDelivery`], [`apply_plan`], [`apply_plan_to_json`], [`bind_mount`], [`request_from_spec`], [`driver_library_dirs`], [`DEFAULT_CDI_KIND`], [`DRIVER_LIBRARY_DIRS`], [`BIND_MOUNT_OPTIONS`] |
//! | the bundle's `config.json` | [`BundleConfig`], [`load_bundle_config`], [`load_spec`], [`load_root_path`], [`save_spec`], [`save_json`]; [`write_atomically`], [`write_atomically_with`], [`WriteOptions`] |
//! | the runtime shim (before runc) | [`prepare_bundle`], [`PrepareOptions`], [`PrepareOutcome`], [`RuncInvocation`], [`report_to_runc_log`], [`MAX_ARGV_CHARS`] |
//! | the hook (in the container's mount namespace) | [`run_hook`], [`run_from_stdin`], [`read_state`], [`HookConfig`], [`HookOutcome`], [`MOUNT_ARGUMENT`], [`ALLOW_LINK_ARGUMENT`], [`MAX_STATE_BYTES`] |
//! | the start path's entry points | [`runtime_main`], [`hook_program_main`], [`hook_main`], [`hook_entry`], [`exec_runc`], [`RuntimeSettings`], [`DeliveryChoice`], [`StartError`], [`error_chain`], [`parse_chip_cache`], [`CHIP_CACHE_OFF`], [`HOOK_BINARY_NAME`]; their variables [`HOST_ROOT_ENV`], [`MOUNT_LIST_DIR_ENV`], [`CHIP_TYPE_ENV`], [`CDI_KIND_ENV`], [`RUNC_ENV`], [`MOUNT_DELIVERY_ENV`], [`CHIP_CACHE_ENV`] |
//! | CDI specs | [`cdi`] |
//! | container engines' configuration | [`runtime_config`] |
//! | errors | [`Error`], [`Result`] |
//!
//! The public modules are the ones whose names read as part of what they hold: [`cdi`] (the CDI spec format and
//! its files: `cdi::CdiSpec`, `cdi::generate_spec`, `cdi::DYNAMIC_SPEC_DIR`, beside the container's own
//! [`DeviceNode`] and mounts), [`runtime_config`] (one engine's configuration file each: `runtime_config::configure`,
//! `runtime_config::RuntimeKind`) and `program` (feature `cli`, the `ascend-ctk` command line, `program::Args`, `program::main`). The rest of
//! the crate's modules are private.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod atomic_file;
mod bounded_read;
mod bundle_config;
pub mod cdi;
mod chip_cache;
mod chip_discovery;
#[cfg(feature = "dcmi")]
mod dcmi_chips;
mod error;
mod hook;
mod hook_arguments;
mod host;
mod inject;
mod mount_list;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;
mod request;
pub mod runtime_config;
mod runtime_env;
mod runtime_exec;
mod runtime_shim;
mod secure_path;
mod start_error;

pub use atomic_file::{write_atomically, write_atomically_with, WriteOptions};
pub use bundle_config::{load_bundle_config, load_root_path, load_spec, save_json, save_spec, BundleConfig};
pub use chip_cache::{CachedDiscovery, ChipCache, DEFAULT_CHIP_CACHE};
pub use chip_discovery::{discover_chips, ChipSource, DiscoveredChips};
pub use error::{Error, Result};
pub use hook::{read_state, run_from_stdin, run_hook, HookConfig, HookOutcome, MAX_STATE_BYTES};
pub use hook_arguments::{ALLOW_LINK_ARGUMENT, MOUNT_ARGUMENT};
pub use host::{
    chip_device_node, chip_device_path, shared_device_nodes, DeviceNode, HostChip, HostChips,
    PRODUCTS_WITHOUT_SVM_AND_HDC, UNIFIED_BUS_NODE_DIRECTORIES,
};
pub use inject::{
    apply_plan, apply_plan_to_json, bind_mount, driver_library_dirs, request_from_spec, InjectionConfig, InjectionPlan,
    MountDelivery, BIND_MOUNT_OPTIONS, DEFAULT_CDI_KIND, DRIVER_LIBRARY_DIRS,
};
pub use mount_list::{
    resolve_given_sources, resolve_mounts, resolve_sources, wildcard_match, MountEntry, MountList, BASE_LIST_DEFAULTS,
    DEFAULT_MOUNT_LIST_DIR, MAX_LIST_ENTRIES,
};
pub use request::{
    parse_allow_link, parse_mount_list_names, DeviceRequest, DeviceSelection, RuntimeOptions, ALLOW_LINK_ENV,
    MAX_PHY_ID, RUNTIME_MOUNTS_ENV, RUNTIME_OPTIONS_ENV, VISIBLE_DEVICES_ENV,
};
pub use runtime_env::{
    CDI_KIND_ENV, CHIP_CACHE_ENV, CHIP_TYPE_ENV, HOST_ROOT_ENV, MOUNT_DELIVERY_ENV, MOUNT_LIST_DIR_ENV, RUNC_ENV,
};
pub use runtime_exec::{
    error_chain, exec_runc, hook_entry, hook_main, hook_program_main, parse_chip_cache, runtime_main, DeliveryChoice,
    RuntimeSettings, CHIP_CACHE_OFF, HOOK_BINARY_NAME,
};
pub use runtime_shim::{
    prepare_bundle, report_to_runc_log, PrepareOptions, PrepareOutcome, RuncInvocation, MAX_ARGV_CHARS,
};
pub use secure_path::{
    check_owner_and_mode, check_trusted_file, checked_relative, resolve_trusted, HostRoot, TrustedSource,
};
pub use start_error::StartError;
