//! Safe, mockable Rust API over Huawei Ascend NPU management (DCMI, `libdcmi.so`).
//!
//! `libdcmi.so` is loaded at run time, as the vendor's own tools load it: nothing links against the driver, and a
//! binary built here runs on any Atlas server whose driver is new enough for the calls it makes. There is no NPU in
//! CI: the tests load `dcmi-sim`, a simulated `libdcmi.so` with the same ABI.
//!
//! # Loading
//!
//! [`Dcmi::init`] finds, checks and loads the library and calls `dcmi_init`; [`Dcmi::builder`] sets the rest:
//!
//! ```no_run
//! use std::time::Duration;
//! use ascend_dcmi::{Dcmi, FaultPolicy};
//!
//! let dcmi = Dcmi::builder()
//!     .host_root("/host")                       // the host's / inside a container
//!     .call_deadline(Duration::from_secs(1))    // for calls run on worker threads
//!     .worker_concurrency(4)
//!     .fault_policy(FaultPolicy::from_file("/usr/local/faultCode.json")?)
//!     .init()?;
//! println!("driver {} from {}", dcmi.driver_version()?, dcmi.library_path().display());
//! # Ok::<(), ascend_dcmi::Error>(())
//! ```
//!
//! The library is searched in this order: [`DcmiBuilder::library_path`]; the file named by `ASCEND_DCMI_LIBRARY`
//! (either of these is then the only candidate); `libdcmi.so` in each directory of `LD_LIBRARY_PATH`; the `ldconfig`
//! cache; [`STANDARD_DIRECTORIES`]. The host root is put in front of the cache and the standard directories.
//!
//! Before loading, the file, the symlink naming it and every directory above it must be owned by root and not
//! writable by group or others, as the vendor's tools require; [`Error::UnsafeLibrary`] names the offending path,
//! its owner and mode, and the fix. [`DcmiBuilder::verify_library_ownership`]`(false)` turns the check off.
//!
//! A load failure ([`Error::LibraryLoad`]), a failing `dcmi_init` ([`Error::InitFailed`]) and each DCMI return code
//! ([`Error::NotReady`] for -8012, [`Error::NotSupported`] for -8255, ... [`Error::Unknown`] for others) are distinct
//! variants, and DCMI errors carry a [`CallContext`]: the C function and the chip. A function missing from an older
//! driver fails only the calls that need it, with [`Error::FunctionMissing`].
//!
//! [`Dcmi`] is `Send + Sync` and cheap to clone; [`Chip`] handles own a clone and have no lifetimes.
//! [`Dcmi::shutdown`] unloads the library once the last handle goes and reports `dlclose` errors; dropping never
//! panics.
//!
//! # Chips and API families
//!
//! The driver of Ascend 310, 310B, 310P, 910, 910B and 910 A3 serves the DCMI **V1** API (`dcmi_*`, chips addressed
//! by `(card, device)`); the driver of Ascend950 ("A5") serves **V2** (`dcmiv2_*`, chips addressed by logic id, and
//! `dcmi_init` fails). [`Dcmi`] detects the family at initialisation as the vendor's tools do (`dcmi_init`, then
//! `dcmiv2_init`) and reports it ([`Dcmi::api_family`], [`ApiFamily`]); [`Dcmi`], [`Chip`] and [`DeviceManager`] are
//! the same on both. A call the family has no counterpart for fails with [`Error::UnavailableOnApi`] (vNPUs, HCCS,
//! card power and product type on V2; unified-bus port counters, [`Chip::ub_port_stats`], on V1), which
//! [`Error::is_unsupported`] counts as unsupported.
//!
//! # Ids
//!
//! A chip has four ids, each its own type: [`CardId`] and [`DeviceId`] (the `(card, device)` pair every V1 C call
//! takes, a [`ChipLocator`]; `None` in [`ChipIds::locator`] on V2, which has no cards rather than invented ones),
//! [`LogicId`] (the driver's enumeration order, the id every V2 call takes, also the id in fault events) and
//! [`PhyId`] (`/dev/davinci<phy>`, Kubernetes device names). [`Dcmi::chips`] enumerates them all; conversions are cached.
//!
//! ```no_run
//! use ascend_dcmi::{Dcmi, PhyId};
//!
//! let dcmi = Dcmi::init()?;
//! for ids in dcmi.chips()? {
//!     println!("{ids}"); // chip phy 4 (logic 0, card 0 device 0)
//! }
//! let chip = dcmi.chip_by_phy(PhyId(4))?;
//! let identity = chip.identity()?;
//! println!("{:?} {} die {:?} NUMA {:?}", identity.chip_type, identity.info.model_name(), identity.die_id,
//!     identity.numa_node);
//! # Ok::<(), ascend_dcmi::Error>(())
//! ```
//!
//! # Telemetry
//!
//! [`Chip`] methods are named after the quantity (`temperature()`, `power()`, `hbm_memory()` ...; search the docs by
//! C name, every method has a `doc(alias)`) and return base units with the unit in the type: [`Celsius`],
//! [`Watts`], [`Volts`], [`MegaHertz`], [`Percent`], bytes. On 310P, power is the card's MCU reading,
//! [`Power::Card`], not divided among the chips. Utilisation probes `dcmi_get_device_multi_utilization_rate_period`,
//! then the multi call, then single calls, remembers what works ([`Dcmi::utilization_method`]), and never asks a
//! chip again for a kind it answered -8255 for.
//!
//! # Health and fault events
//!
//! [`Chip::health`] reads the health word and the active fault codes and grades them with the handle's
//! [`FaultPolicy`] into a [`FaultLevel`]: the built-in policy, or a file in the vendor's `faultCode.json` format. A
//! dropped card (-8012) is a [`HealthReport`] with `card_dropped` and [`FaultCode::CARD_DROP`], not an error; health
//! recovers by itself when the faults clear.
//!
//! [`Dcmi::fault_events`] returns a [`FaultEventStream`]: the driver's subscription on the 910 family (the C callback
//! copies each event and never lets a panic cross into C), and on the 310 family, or whenever subscribing fails,
//! polling that diffs fault codes into the same [`FaultEvent`]s.
//!
//! ```no_run
//! use std::time::Duration;
//! use ascend_dcmi::{Assertion, Dcmi};
//!
//! let dcmi = Dcmi::init()?;
//! let events = dcmi.fault_events(Duration::from_secs(5))?;
//! std::thread::spawn(move || {
//!     while let Some(event) = events.recv() {
//!         if event.assertion == Assertion::Occur {
//!             eprintln!("chip {} raised {} ({:?})", event.logic, event.code, event.source);
//!         }
//!     }
//! });
//! # Ok::<(), ascend_dcmi::Error>(())
//! ```
//!
//! # vNPU and reset
//!
//! [`Chip::vnpus`], [`Chip::create_vnpu`] (checked against the chip type's [`VnpuTemplate`]s:
//! [`Error::VnpuTemplateNotAllowed`]) and [`Chip::destroy_vnpu`]; [`Chip::reset`] resets in-band, falls back to
//! out-of-band, and waits for boot status "finished" (16, or the header's 3).
//!
//! # Blocking calls and deadlines
//!
//! DCMI calls block, for seconds on a dropped card, and cannot be cancelled. Call them from threads, never from an
//! async executor. [`Dcmi::call_with_deadline`] runs one call on a worker thread and gives up after
//! [`Dcmi::call_deadline`] ([`Error::Timeout`]); at most [`Dcmi::worker_concurrency`] such calls are in flight. The
//! workers behind it are the crate's one deadline mechanism, [`deadline::DriverCalls`], which downstream event loops
//! (a device plugin's health monitor, a CLI reading every chip) use directly: a call per chip, at most one at a time,
//! a hung one given up at its deadline while its chip stays busy.
//! [`Chip::network_health`], which the vendor documents as blocking after a card drop, always runs that way. For
//! polling many chips, [`Sampler`] runs the calls on worker threads with deadlines and serves the last values; it
//! calls through [`DeviceManager`], whose methods on [`Dcmi`] (`network_health` included) run on the calling thread.
//!
//! # Testing downstream code
//!
//! Everything above is also the [`DeviceManager`] trait (owned return values), which [`Dcmi`] implements. Take an
//! `Arc<dyn DeviceManager>` and, in tests, pass `MockDeviceManager` (a mockall mock, feature `mock`):
//!
//! ```
//! use ascend_dcmi::{DeviceManager, Result};
//!
//! /// Downstream code: how many chips may take work.
//! fn healthy_chips(manager: &dyn DeviceManager) -> Result<usize> {
//!     let mut healthy = 0;
//!     for ids in manager.chips()? {
//!         healthy += usize::from(manager.health(ids.logic)?.is_healthy());
//!     }
//!     Ok(healthy)
//! }
//!
//! # #[cfg(feature = "mock")]
//! # {
//! use ascend_dcmi::{CardId, ChipIds, ChipLocator, DeviceId, HealthReport, LogicId, MockDeviceManager, PhyId};
//!
//! let mut mock = MockDeviceManager::new();
//! mock.expect_chips().returning(|| {
//!     let locator = Some(ChipLocator { card: CardId(0), device: DeviceId(0) });
//!     Ok(vec![ChipIds { logic: LogicId(0), phy: PhyId(4), locator }])
//! });
//! mock.expect_health().returning(|_| Ok(HealthReport::healthy()));
//! assert_eq!(healthy_chips(&mock)?, 1);
//! # }
//! # Ok::<(), ascend_dcmi::Error>(())
//! ```
//!
//! In `Cargo.toml`: `[dev-dependencies] ascend-dcmi = { version = "0.1", features = ["mock"] }`.
//!
//! The test doubles, `MockDeviceManager` (feature `mock`) and the module `fake` (feature `fake`), are outside the
//! semver promise: they follow what this workspace's tests need and may change in any release, patch releases
//! included. Pin the exact version (`=0.1.x`) if your tests depend on their details.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]

mod api_family;
mod builder;
mod chip;
mod chip_table;
mod chip_type;
mod chip_view;
mod dcmi;
pub mod deadline;
mod device_manager;
mod discovery;
mod error;
#[cfg(feature = "fake")]
#[cfg_attr(docsrs, doc(cfg(feature = "fake")))]
pub mod fake;
mod fault_events;
mod fault_meaning;
mod fault_policy;
mod ffi;
#[cfg(feature = "fuzzing")]
#[doc(hidden)]
pub mod fuzzing;
mod health;
mod identity;
mod ids;
mod library_check;
mod limits;
mod links;
mod numa;
mod placement;
mod reset;
pub mod sampler;
mod telemetry;
mod ub_port;
mod units;
mod utilization;
mod vnpu;
mod vnpu_template;

pub use api_family::ApiFamily;
pub use builder::{DcmiBuilder, DEFAULT_CALL_DEADLINE, DEFAULT_WORKER_CONCURRENCY};
pub use chip::Chip;
pub use chip_type::{ChipType, ParseChipTypeError};
pub use dcmi::Dcmi;
pub use device_manager::DeviceManager;
#[cfg(feature = "mock")]
/// **Outside the semver promise.** A test double (feature `mock`, mockall's mock of [`DeviceManager`]): it changes
/// whenever the trait does, and may change in any release, patch releases included.
pub use device_manager::MockDeviceManager;
pub use discovery::{parse_ldconfig_cache, LIBRARY_ENV, LIBRARY_FILE_NAME, STANDARD_DIRECTORIES};
pub use error::{code_meaning, CallContext, Error, Result};
pub use fault_events::{Assertion, EventSource, FaultEvent, FaultEventStream, Severity, EVENT_QUEUE_CAPACITY};
pub use fault_policy::{FaultPolicy, FAULT_CODE_KEYS};
pub use health::{DcmiHealth, FaultCode, FaultCodes, FaultLevel, HealthReport, ParseFaultCodeError};
pub use identity::{BoardInfo, ChipIdentity, ChipInfo, DieId, Elabel, ParsePcieAddressError, PcieAddress};
pub use ids::{CardId, ChipIds, ChipLocator, DeviceId, LogicId, PhyId};
pub use library_check::{check_library, ownership_violations, OwnershipProblem, OwnershipViolation};
pub use limits::{HCCS_LINKS, MAX_FAULT_CODES, MAX_PROCESSES};
pub use links::{HccsStatistics, SioCrcErrors};
pub use placement::SuperPodInfo;
pub use reset::BootStatus;
pub use sampler::{
    BandwidthSample, ChipSample, ChipStateSample, GroupSet, GroupStatus, LinkSample, MemorySample, Metric, MetricGroup,
    MetricSet, ParseMetricError, PollSummary, SampleState, Sampled, Sampler, SamplerConfig, UtilizationSample,
};
pub use telemetry::{
    BandwidthStats, ChipProcess, DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth,
    NetworkHealth, PcieBandwidth, Power, ProcessList, UtilizationKind,
};
pub use ub_port::{
    UbPort, UbPortCounters, UbPortStats, MAX_UB_DIE, MAX_UB_PORT, UBOE_COUNTERS_FROM, UB_COUNTERS, UB_COUNTER_NAMES,
};
pub use units::{Celsius, MegaHertz, Percent, Volts, Watts, BYTES_PER_MB};
pub use utilization::UtilizationMethod;
pub use vnpu::{Vnpu, VnpuId, VnpuInventory};
pub use vnpu_template::{VnpuTemplate, TEMPLATES as VNPU_TEMPLATES};
