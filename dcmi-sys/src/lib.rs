//! Raw FFI bindings to Huawei's DCMI management library (`libdcmi.so`), loaded at run time.
//!
//! This crate is the raw ABI only: the C headers we author from the documented ABI
//! (`include/dcmi_interface_api.h` and `include/dcmi_interface_api_v2.h`, using the
//! vendor's names), and bindings generated from them by bindgen in dynamic-loading mode.
//! It has no safety logic; the safe API lives in `ascend-dcmi`.
//!
//! # The two API families
//!
//! One `libdcmi.so` carries two APIs. **V1** (`dcmi_*`, 67 functions) addresses a chip
//! by `(card_id, device_id)` and is the API of every chip up to the 910 family (910,
//! 910B, 910_93/A3) and the 310 family. **V2** (`dcmiv2_*`, 42 functions) is the API of
//! Ascend950 ("A5") servers: `dcmi_init` fails there, `dcmiv2_init` succeeds, and every
//! call takes one `dev_id`, the chip's logic id. V2 has no cards, no vNPU, no HCCS, no
//! MCU power; it adds unified-bus port counters (`dcmiv2_get_port_pkt_stats_info`) and a
//! per-chip electronic label. Drivers older than Ascend950 do not export the `dcmiv2_*`
//! symbols: their fields are `Err`. Both families share the structs and enums.
//!
//! # Loading the library
//!
//! [`DcmiLib`] owns the [`libloading::Library`] and has one field per DCMI function,
//! named after the C symbol. Each field is a
//! `Result<unsafe extern "C" fn(..) -> c_int, libloading::Error>`: every symbol is
//! resolved on its own when the library is loaded, and a symbol missing from an older
//! driver shows up as an `Err` in that one field, so only the calls that need it fail.
//! (The error displays as `dlsym failed`; its [`source`](std::error::Error::source) is
//! the loader's message, which names the symbol.)
//!
//! * [`DcmiLib::new`]`(path)` opens the library at `path` (an absolute path, or a bare
//!   file name searched by the dynamic loader) and resolves every symbol.
//! * [`DcmiLib::from_library`]`(library)` resolves the symbols from an already opened
//!   [`libloading::Library`], for callers that choose their own `dlopen` flags (the
//!   vendor's tools use `RTLD_LAZY | RTLD_GLOBAL`) or check the file before opening it.
//!
//! Both constructors are `unsafe`: opening a library runs its initialisers, and the
//! resolved pointers are trusted to have the signatures declared here. They only fail
//! when the library itself cannot be opened.
//!
//! Call functions through the fields, never through the generated convenience methods
//! of the same names (`DcmiLib::dcmi_init(&self)` and so on): those panic when the
//! symbol is missing.
//!
//! ```no_run
//! use dcmi_sys::DcmiLib;
//!
//! // SAFETY: libdcmi.so is the vendor's library, whose exported functions have the
//! // signatures of the header these bindings were generated from.
//! let dcmi = unsafe { DcmiLib::new("libdcmi.so") }?;
//! let init = dcmi.dcmi_init.as_ref().map_err(|error| format!("dcmi_init: {error}"))?;
//! // SAFETY: dcmi_init takes no arguments and may be called at any time.
//! let status = unsafe { init() };
//! assert_eq!(status, 0, "dcmi_init failed with DCMI error {status}");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Naming and types
//!
//! Structs, unions, fields, enums, enumerators and constants keep the C names
//! (`dcmi_chip_info`, `MAX_CHIP_NAME_LEN`, ...). A field named `type` in C is `type_`.
//! C enums are `#[repr(transparent)]` newtypes over `c_uint` with the enumerators as
//! associated constants (`dcmi_boot_status::DCMI_BOOT_STATUS_FINISH`), because the
//! driver returns values outside the enumerators (boot status 16 after a hot reset)
//! and a Rust `enum` holding such a value would be undefined behaviour.
//!
//! The fault-event callback type is [`dcmi_fault_event_callback`]; the vendor headers
//! omit this last parameter of `dcmi_subscribe_fault_event` (4th) and
//! `dcmiv2_subscribe_fault_event` (3rd), the library requires it.
//!
//! Layouts are those of LP64 Linux (x86_64 and aarch64): `c_long`/`c_ulong` fields
//! are 8 bytes. `tests/layout.rs` checks every size, alignment and key offset against
//! the documented ABI.
//!
//! # Regenerating
//!
//! `src/bindings.rs` is generated and committed; normal builds need no libclang.
//! After editing a header run `bash dcmi-sys/gen_bindings.sh`; CI runs
//! `bash dcmi-sys/gen_bindings.sh --check` to detect drift.
// Raw FFI: every function of the library is an `unsafe` C call, and the bindings are generated (the workspace denies
// `unsafe_code` elsewhere; see Cargo.toml).
#![allow(unsafe_code)]
#![cfg_attr(docsrs, feature(doc_cfg))]

/// The generated bindings; see the crate documentation.
// The C names are kept (`dcmi_chip_info`), bindgen writes no docs for most items,
// and its generated `unsafe fn`s and `unsafe {}` blocks carry no safety comments.
#[allow(non_camel_case_types, missing_docs, clippy::missing_safety_doc, clippy::undocumented_unsafe_blocks)]
mod bindings;

pub use bindings::*;
