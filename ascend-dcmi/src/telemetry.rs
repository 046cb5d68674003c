//! Telemetry values: power, frequencies, utilisation, memory, ECC, processes, bandwidth, network health.
//!
//! Every type here is plain data without heap allocation, so that the polling hot path can read them repeatedly
//! without allocating.

use std::time::Duration;

use crate::limits::{HCCS_LINKS, MAX_PROCESSES};
use crate::units::{Celsius, MegaHertz, Percent, Watts};

/// Power draw, and whether it is the chip's own or its whole card's.
///
/// 310P chips have no chip-level power sensor; DCMI reports the card's MCU power instead. It is exposed as card power
/// rather than divided among the card's chips, which would invent a number.
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub enum Power {
    /// `dcmi_get_device_power_info`: this chip.
    Chip(Watts),
    /// `dcmi_mcu_get_power_info`: the whole card the chip sits on.
    Card(Watts),
}

impl Power {
    /// The reading in watts, whichever scope it has.
    pub fn watts(self) -> Watts {
        match self {
            Power::Chip(w) | Power::Card(w) => w,
        }
    }
}

/// Which clock to read (`enum dcmi_freq_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum FrequencyKind {
    /// DDR memory clock (1).
    Ddr,
    /// Control CPU clock (2).
    ControlCpu,
    /// HBM clock (6).
    Hbm,
    /// Current AI-core clock (7).
    AiCoreCurrent,
    /// Maximum AI-core clock (9).
    AiCoreMax,
    /// Current vector-core clock (12).
    VectorCoreCurrent,
}

impl FrequencyKind {
    /// Every kind.
    pub const ALL: [FrequencyKind; 6] = [
        FrequencyKind::Ddr,
        FrequencyKind::ControlCpu,
        FrequencyKind::Hbm,
        FrequencyKind::AiCoreCurrent,
        FrequencyKind::AiCoreMax,
        FrequencyKind::VectorCoreCurrent,
    ];

    /// The `dcmi_freq_type` value.
    pub const fn raw(self) -> i32 {
        match self {
            FrequencyKind::Ddr => 1,
            FrequencyKind::ControlCpu => 2,
            FrequencyKind::Hbm => 6,
            FrequencyKind::AiCoreCurrent => 7,
            FrequencyKind::AiCoreMax => 9,
            FrequencyKind::VectorCoreCurrent => 12,
        }
    }

    /// A short snake_case name for metrics and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            FrequencyKind::Ddr => "ddr",
            FrequencyKind::ControlCpu => "ctrl_cpu",
            FrequencyKind::Hbm => "hbm",
            FrequencyKind::AiCoreCurrent => "aicore",
            FrequencyKind::AiCoreMax => "aicore_max",
            FrequencyKind::VectorCoreCurrent => "vector_core",
        }
    }
}

/// Which unit's utilisation to read (the `input_type` of `dcmi_get_device_utilization_rate`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum UtilizationKind {
    /// Memory (1).
    Memory,
    /// AI Core (2): the headline "NPU utilisation".
    AiCore,
    /// AI CPU (3).
    AiCpu,
    /// Control CPU (4).
    ControlCpu,
    /// Memory bandwidth (5).
    MemoryBandwidth,
    /// On-chip memory, HBM (6).
    Hbm,
    /// DDR (8).
    Ddr,
    /// HBM bandwidth (10).
    HbmBandwidth,
    /// Vector core (12).
    VectorCore,
    /// The NPU overall (13).
    Overall,
    /// AI Cube (14).
    AiCube,
}

impl UtilizationKind {
    /// Every kind.
    pub const ALL: [UtilizationKind; 11] = [
        UtilizationKind::Memory,
        UtilizationKind::AiCore,
        UtilizationKind::AiCpu,
        UtilizationKind::ControlCpu,
        UtilizationKind::MemoryBandwidth,
        UtilizationKind::Hbm,
        UtilizationKind::Ddr,
        UtilizationKind::HbmBandwidth,
        UtilizationKind::VectorCore,
        UtilizationKind::Overall,
        UtilizationKind::AiCube,
    ];

    /// The `input_type` value.
    pub const fn raw(self) -> i32 {
        match self {
            UtilizationKind::Memory => 1,
            UtilizationKind::AiCore => 2,
            UtilizationKind::AiCpu => 3,
            UtilizationKind::ControlCpu => 4,
            UtilizationKind::MemoryBandwidth => 5,
            UtilizationKind::Hbm => 6,
            UtilizationKind::Ddr => 8,
            UtilizationKind::HbmBandwidth => 10,
            UtilizationKind::VectorCore => 12,
            UtilizationKind::Overall => 13,
            UtilizationKind::AiCube => 14,
        }
    }

    /// A short snake_case name for metrics and JSON.
    pub const fn name(self) -> &'static str {
        match self {
            UtilizationKind::Memory => "memory",
            UtilizationKind::AiCore => "aicore",
            UtilizationKind::AiCpu => "aicpu",
            UtilizationKind::ControlCpu => "ctrl_cpu",
            UtilizationKind::MemoryBandwidth => "memory_bandwidth",
            UtilizationKind::Hbm => "hbm",
            UtilizationKind::Ddr => "ddr",
            UtilizationKind::HbmBandwidth => "hbm_bandwidth",
            UtilizationKind::VectorCore => "vector_core",
            UtilizationKind::Overall => "overall",
            UtilizationKind::AiCube => "aicube",
        }
    }
}

/// DDR memory of chips that have it (310 family, 910A): `dcmi_get_device_memory_info_v3`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct DdrMemory {
    /// Total size.
    pub total_bytes: u64,
    /// Available (free plus free huge pages).
    pub available_bytes: u64,
    /// Memory clock.
    pub frequency: MegaHertz,
    /// Size of one huge page.
    pub hugepage_size_bytes: u64,
    /// Huge pages in total.
    pub hugepages_total: u64,
    /// Free huge pages.
    pub hugepages_free: u64,
    /// Utilisation as the driver reports it.
    pub utilization: Percent,
}

impl DdrMemory {
    /// Used bytes: total minus available.
    pub fn used_bytes(&self) -> u64 {
        self.total_bytes.saturating_sub(self.available_bytes)
    }
}

/// HBM of the 910 family and 950: `dcmi_get_device_hbm_info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HbmMemory {
    /// Total size.
    pub total_bytes: u64,
    /// In use.
    pub used_bytes: u64,
    /// Memory clock.
    pub frequency: MegaHertz,
    /// HBM temperature.
    pub temperature: Celsius,
    /// Bandwidth utilisation.
    pub bandwidth_utilization: Percent,
}

/// The memory component whose ECC counters to read (`enum dcmi_device_type`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum EccComponent {
    /// DDR (0).
    Ddr,
    /// SRAM (1).
    Sram,
    /// HBM (2).
    Hbm,
    /// The NPU (3).
    Npu,
}

impl EccComponent {
    /// The `dcmi_device_type` value.
    pub const fn raw(self) -> i32 {
        match self {
            EccComponent::Ddr => 0,
            EccComponent::Sram => 1,
            EccComponent::Hbm => 2,
            EccComponent::Npu => 3,
        }
    }
}

/// ECC state and error counters of one memory component.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct EccCounters {
    /// Whether ECC is enabled.
    pub enabled: bool,
    /// Single-bit errors now.
    pub single_bit_errors: u32,
    /// Double-bit errors now.
    pub double_bit_errors: u32,
    /// Single-bit errors since manufacture.
    pub total_single_bit_errors: u32,
    /// Double-bit errors since manufacture.
    pub total_double_bit_errors: u32,
    /// Pages isolated for single-bit errors.
    pub single_bit_isolated_pages: u32,
    /// Pages isolated for double-bit errors.
    pub double_bit_isolated_pages: u32,
    /// Pages to be isolated for single-bit errors at next reboot.
    pub single_bit_next_isolated_pages: u32,
    /// Pages to be isolated for double-bit errors at next reboot.
    pub double_bit_next_isolated_pages: u32,
}

/// One host process using a chip, with its device memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct ChipProcess {
    /// The host pid.
    pub pid: i32,
    /// Device memory the process holds.
    pub memory_bytes: u64,
}

/// The processes using a chip, held inline (no heap allocation).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcessList {
    len: usize,
    entries: [ChipProcess; MAX_PROCESSES],
}

impl Default for ProcessList {
    fn default() -> Self {
        Self { len: 0, entries: [ChipProcess::default(); MAX_PROCESSES] }
    }
}

impl ProcessList {
    /// Builds a list from up to [`MAX_PROCESSES`] entries; extra entries are dropped.
    pub fn from_slice(processes: &[ChipProcess]) -> Self {
        let mut list = Self::default();
        let len = processes.len().min(MAX_PROCESSES);
        list.entries[..len].copy_from_slice(&processes[..len]);
        list.len = len;
        list
    }

    /// The processes.
    pub fn as_slice(&self) -> &[ChipProcess] {
        &self.entries[..self.len]
    }

    /// How many processes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether no process uses the chip.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

#[cfg(feature = "serde")]
impl serde::Serialize for ProcessList {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.as_slice())
    }
}

/// Minimum, maximum and average of a bandwidth over the profiling window, in the driver's MB/ms.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct BandwidthStats {
    /// Minimum.
    pub min: u32,
    /// Maximum.
    pub max: u32,
    /// Average.
    pub avg: u32,
}

/// PCIe link bandwidth by transaction category: `dcmi_get_pcie_link_bandwidth_info`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct PcieBandwidth {
    /// The profiling window the driver averaged over.
    pub profiling: Duration,
    /// Transmitted posted requests.
    pub tx_posted: BandwidthStats,
    /// Transmitted non-posted requests.
    pub tx_non_posted: BandwidthStats,
    /// Transmitted completions.
    pub tx_completion: BandwidthStats,
    /// Non-posted request latency as the driver reports it.
    pub tx_non_posted_latency: BandwidthStats,
    /// Received posted requests.
    pub rx_posted: BandwidthStats,
    /// Received non-posted requests.
    pub rx_non_posted: BandwidthStats,
    /// Received completions.
    pub rx_completion: BandwidthStats,
}

/// HCCS (chip-to-chip) bandwidth: `dcmi_get_hccs_link_bandwidth_info`, in the driver's unit.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct HccsBandwidth {
    /// The profiling window.
    pub profiling: Duration,
    /// Total transmit bandwidth.
    pub total_tx: f64,
    /// Total receive bandwidth.
    pub total_rx: f64,
    /// Transmit bandwidth per link.
    pub tx_per_link: [f64; HCCS_LINKS],
    /// Receive bandwidth per link.
    pub rx_per_link: [f64; HCCS_LINKS],
}

/// Result of the RoCE network health probe (`enum dcmi_rdfx_detect_result`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum NetworkHealth {
    /// 0: healthy.
    Ok,
    /// 1: socket creation failed.
    SocketFailed,
    /// 2: no reply in time.
    ReceiveTimeout,
    /// 3: destination unreachable.
    Unreachable,
    /// 4: time exceeded.
    TimeExceeded,
    /// 5: fault.
    Fault,
    /// 6: probe initialising (counted as healthy).
    Initializing,
    /// 7: probe thread error.
    ThreadError,
    /// 8: IP being set.
    IpSetting,
    /// Any other value.
    Other(u32),
}

impl NetworkHealth {
    /// Maps the raw `dcmi_rdfx_detect_result`.
    pub fn from_raw(raw: u32) -> Self {
        match raw {
            0 => NetworkHealth::Ok,
            1 => NetworkHealth::SocketFailed,
            2 => NetworkHealth::ReceiveTimeout,
            3 => NetworkHealth::Unreachable,
            4 => NetworkHealth::TimeExceeded,
            5 => NetworkHealth::Fault,
            6 => NetworkHealth::Initializing,
            7 => NetworkHealth::ThreadError,
            8 => NetworkHealth::IpSetting,
            other => NetworkHealth::Other(other),
        }
    }

    /// Whether the network counts as healthy (0 and 6, as Huawei's stack counts them).
    pub fn is_healthy(self) -> bool {
        matches!(self, NetworkHealth::Ok | NetworkHealth::Initializing)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn process_list_keeps_at_most_the_driver_limit() {
        let many: Vec<ChipProcess> = (0..40).map(|pid| ChipProcess { pid, memory_bytes: 1 }).collect();
        let list = ProcessList::from_slice(&many);
        assert_eq!(list.len(), MAX_PROCESSES);
        assert_eq!(list.as_slice()[31].pid, 31);
        assert!(ProcessList::default().is_empty());
    }

    #[test]
    fn raw_values_match_the_header() {
        let utilization: Vec<i32> = UtilizationKind::ALL.iter().map(|k| k.raw()).collect();
        assert_eq!(utilization, [1, 2, 3, 4, 5, 6, 8, 10, 12, 13, 14]);
        let frequency: Vec<i32> = FrequencyKind::ALL.iter().map(|k| k.raw()).collect();
        assert_eq!(frequency, [1, 2, 6, 7, 9, 12]);
        assert!(NetworkHealth::from_raw(6).is_healthy());
        assert!(!NetworkHealth::from_raw(3).is_healthy());
        assert_eq!(NetworkHealth::from_raw(99), NetworkHealth::Other(99));
    }

    #[test]
    fn ddr_used_is_total_minus_available() {
        let ddr = DdrMemory { total_bytes: 10, available_bytes: 4, ..DdrMemory::default() };
        assert_eq!(ddr.used_bytes(), 6);
    }
}
