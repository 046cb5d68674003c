//! Safe, mockable Rust API over Huawei Ascend NPU management (DCMI, `libdcmi.so`).
//!
//! The crate guide (loading, ids, health, telemetry, events, the sampler, mocking) is filled in as the
//! implementation lands.
#![deny(missing_docs)]
#![deny(unsafe_code)]

mod chip_type;
mod error;
mod event;
mod health;
mod identity;
mod ids;
mod manager;
mod reset;
mod telemetry;
mod units;
mod vnpu;

pub use chip_type::{ChipType, ParseChipTypeError};
pub use error::{code_meaning, CallContext, Error, Result};
pub use event::{Assertion, EventSource, FaultEvent, FaultEventStream, Severity};
pub use health::{DcmiHealth, FaultCode, FaultCodes, FaultLevel, HealthReport, ParseFaultCodeError, MAX_FAULT_CODES};
pub use identity::{BoardInfo, ChipIdentity, ChipInfo, DieId, Elabel, ParsePcieAddressError, PcieAddress};
pub use ids::{CardId, ChipIds, ChipLocator, DeviceId, LogicId, PhyId};
#[cfg(feature = "mock")]
pub use manager::MockDeviceManager;
pub use manager::DeviceManager;
pub use reset::BootStatus;
pub use telemetry::{
    BandwidthStats, ChipProcess, DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth,
    NetworkHealth, PcieBandwidth, Power, ProcessList, UtilizationKind, HCCS_LINKS, MAX_PROCESSES,
};
pub use units::{Celsius, MegaHertz, Percent, Volts, Watts, BYTES_PER_MB};
pub use vnpu::{Vnpu, VnpuId, VnpuInventory, VnpuTemplate, TEMPLATES as VNPU_TEMPLATES};
