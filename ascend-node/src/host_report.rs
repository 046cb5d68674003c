//! One complete read of a host's chips, the [`crate::Collector`]'s report: the data `ascend-smi` shows and the
//! doctor checks, as one set of types that is both the in-memory model and the `--json` schema.
//!
//! The schema is documented in `docs/ascend-smi-json.md`; changing a field name or meaning here is a breaking change
//! and needs [`SCHEMA_VERSION`] bumped. Quantities are in base units with the unit in the field name.

use serde::{Deserialize, Serialize};

use crate::installed_software::InstalledSoftware;

/// The version of the JSON schema, carried in every document as `schema_version`.
pub const SCHEMA_VERSION: u32 = 1;

/// One `ascend-smi info` (or `health`, or one `watch` frame) document: the host and every chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct HostReport {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The version of the tool that wrote the document (`ascend-smi`'s; `CollectOptions::tool_version`).
    pub tool_version: String,
    /// The DCMI (driver) version string, `null` when the call failed.
    pub driver_version: Option<String>,
    /// The firmware version from `<host root>/usr/local/Ascend/firmware/version.info`, `null` when absent.
    pub firmware_version: Option<String>,
    /// The driver, firmware and CANN packages installed on the host, as their `version.info` files declare them,
    /// each with its source file; `null` when the host's files were not read (`--sim` without `--host-root`).
    pub software: Option<InstalledSoftware>,
    /// Every chip, in logic-id order.
    pub chips: Vec<ChipReport>,
    /// Errors that are not about one chip (the driver version call, for example).
    pub errors: Vec<FieldError>,
}

/// What `ascend-smi` concluded about a chip, in the order of precedence used for exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ChipStatus {
    /// Healthy: may be given to workloads.
    Ok,
    /// The health call answered and the chip must not be given to workloads (fault level, card drop, absent).
    Unhealthy,
    /// The chip did not answer within the deadline; the fields read before are kept.
    Timeout,
    /// The health call failed with a driver error.
    Error,
}

impl ChipStatus {
    /// The word shown in tables.
    pub const fn label(self) -> &'static str {
        match self {
            ChipStatus::Ok => "OK",
            ChipStatus::Unhealthy => "Unhealthy",
            ChipStatus::Timeout => "Timeout",
            ChipStatus::Error => "Error",
        }
    }
}

/// Every id of a chip, in the four id spaces of an Ascend host.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ChipIdsReport {
    /// The driver's enumeration index (DCMI logic id; the id in fault events).
    pub logic_id: u32,
    /// The physical id: Kubernetes device names; `/dev/davinci<phy_id>` and `ASCEND_VISIBLE_DEVICES` on every chip
    /// type but Ascend950, whose node is `/dev/davinci<logic_id>` (`ascend_dcmi::ChipIds::device_node_number`).
    pub phy_id: u32,
    /// The card (`dcmi_get_card_list`); `null` on the DCMI V2 API (Ascend950), which has no cards.
    pub card_id: Option<i32>,
    /// The chip's index on its card; `null` on the DCMI V2 API.
    pub device_id: Option<i32>,
    /// The id an application in this environment passes to `aclrtSetDevice`: the chip's position in
    /// `ASCEND_RT_VISIBLE_DEVICES` when that is set, else the logic id; `null` when the variable hides the chip.
    pub visible_id: Option<u32>,
}

/// A chip's power draw, and whether the driver measures it per chip or per card (310P cards share one value).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct PowerReport {
    /// Watts.
    pub watts: f64,
    /// `"chip"` or `"card"`.
    pub scope: PowerScope,
}

/// Where a power value was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PowerScope {
    /// The chip's own sensor.
    Chip,
    /// The card's MCU, shared by the chips of the card.
    Card,
}

/// Which on-chip memory a [`MemoryReport`] describes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MemoryKind {
    /// High-bandwidth memory (910 family, 950).
    Hbm,
    /// DDR memory (310 family).
    Ddr,
}

impl MemoryKind {
    /// The short upper-case name shown in tables.
    pub const fn label(self) -> &'static str {
        match self {
            MemoryKind::Hbm => "HBM",
            MemoryKind::Ddr => "DDR",
        }
    }
}

/// Device memory use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemoryReport {
    /// HBM or DDR.
    pub kind: MemoryKind,
    /// Bytes in use.
    pub used_bytes: u64,
    /// Bytes in total.
    pub total_bytes: u64,
}

/// A process holding the chip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProcessReport {
    /// The host process id.
    pub pid: i32,
    /// Its command name (`/proc/<pid>/comm`), `null` when unknown (another PID namespace, or the simulator).
    pub name: Option<String>,
    /// Device memory it holds, in bytes.
    pub memory_bytes: u64,
}

/// One active fault code, graded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FaultReport {
    /// The code in upper-case hex, as `faultCode.json` writes it (`"80E01801"`).
    pub code: String,
    /// The fault handling level (`"NormalNPU"` ... `"ManuallySeparateNPU"`).
    pub level: String,
    /// One line saying what the fault or its level means for the chip.
    pub meaning: String,
}

/// A chip's health as the driver and the fault policy see it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HealthDetails {
    /// DCMI's health word: `"ok"`, `"minor"`, `"major"`, `"critical"`, `"absent"`, `"other"`; `null` after a card
    /// drop.
    pub dcmi: Option<String>,
    /// The most serious fault level of the chip.
    pub level: String,
    /// One line saying what the level means.
    pub level_meaning: String,
    /// Whether the card dropped off the bus or is rebooting.
    pub card_dropped: bool,
    /// The active fault codes.
    pub faults: Vec<FaultReport>,
}

/// The identifying details `info -v` adds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct ChipDetails {
    /// `<chip_name>-<chip_type>-<chip_ver>`, Huawei's `model_name`.
    pub model_name: Option<String>,
    /// Product, for example `"Atlas 300I Duo"`.
    pub product_type: Option<String>,
    /// AI cores on the chip.
    pub aicore_count: Option<u32>,
    /// NUMA node.
    pub numa_node: Option<u32>,
    /// NUMA-affine CPUs as a Linux cpulist.
    pub affinity_cpus: Option<String>,
    /// VDIE id, the chip's stable UUID.
    pub die_id: Option<String>,
    /// The card's serial number.
    pub serial_number: Option<String>,
    /// Board id.
    pub board_id: Option<u32>,
    /// Chip voltage in volts.
    pub voltage_volts: Option<f64>,
    /// Current AI-core clock in MHz.
    pub aicore_frequency_mhz: Option<u32>,
    /// The firmware the chip runs (`dcmi_get_version`), which can differ from the installed firmware package's
    /// `version.info` after a partial upgrade or before the reboot that activates a new one.
    #[serde(default)]
    pub firmware_version: Option<String>,
}

/// A field that could not be read. Fields the chip does not support are `null` without an entry here.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FieldError {
    /// The JSON field (`"temperature_celsius"`, `"memory"` ...).
    pub field: String,
    /// The error, naming the DCMI call and the chip.
    pub message: String,
}

/// Everything about one chip.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChipReport {
    /// The chip's ids.
    pub ids: ChipIdsReport,
    /// The conclusion.
    pub status: ChipStatus,
    /// The chip name (`"910B3"`), `null` when the chip info call failed.
    pub name: Option<String>,
    /// The chip generation (`"Ascend910B"`), `null` when unknown.
    pub chip_type: Option<String>,
    /// PCIe address `DDDD:BB:DD.F` (the bus id `lspci` shows).
    pub pcie_address: Option<String>,
    /// Health and faults, `null` when the health call failed or timed out.
    pub health: Option<HealthDetails>,
    /// Power draw.
    pub power: Option<PowerReport>,
    /// Chip temperature in °C.
    pub temperature_celsius: Option<i32>,
    /// AI-core utilisation in percent.
    pub aicore_percent: Option<u8>,
    /// Device memory use.
    pub memory: Option<MemoryReport>,
    /// Processes holding the chip, `null` when the call failed.
    pub processes: Option<Vec<ProcessReport>>,
    /// Present only with `info -v`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<ChipDetails>,
    /// Fields that could not be read, and why.
    pub errors: Vec<FieldError>,
}

impl ChipReport {
    /// A report with only the ids and the given status, every reading empty.
    pub fn empty(ids: ChipIdsReport, status: ChipStatus) -> Self {
        Self {
            ids,
            status,
            name: None,
            chip_type: None,
            pcie_address: None,
            health: None,
            power: None,
            temperature_celsius: None,
            aicore_percent: None,
            memory: None,
            processes: None,
            details: None,
            errors: Vec::new(),
        }
    }
}
