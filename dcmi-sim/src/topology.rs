//! The topology file: cards, chips, telemetry, faults, injections and timeline (serde schema).
//!
//! Loading ([`Topology::load`], [`Topology::from_toml_str`]) parses and then validates; every problem
//! becomes a [`crate::Error`] naming the file, the field path and what is wrong. See README.md for the
//! schema with units and defaults.

use serde::{Deserialize, Serialize};

pub use crate::chip_process::Process;
use crate::chip_type::ChipType;
pub use crate::ecc::Ecc;
use crate::generator::Signal;
use crate::injection::InjectionRule;
use crate::timeline::TimelineEntry;

/// A whole simulated host.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Topology {
    /// Library-wide settings.
    #[serde(default)]
    pub simulation: Simulation,
    /// Cards (`[[card]]`), in the order `dcmi_get_card_list` reports them.
    #[serde(default, rename = "card")]
    pub cards: Vec<Card>,
    /// Failure injection rules (`[[inject]]`).
    #[serde(default, rename = "inject")]
    pub injections: Vec<InjectionRule>,
    /// Scripted state changes (`[[timeline]]`).
    #[serde(default)]
    pub timeline: Vec<TimelineEntry>,
}

/// `[simulation]`: settings of the whole library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Simulation {
    /// Free-form name of the topology (shown in messages).
    #[serde(default)]
    pub name: String,
    /// Seed of every telemetry generator.
    #[serde(default)]
    pub seed: u64,
    /// Length of one telemetry tick in ms: values change at most once per tick (default 1000).
    #[serde(default = "default_sample_period_ms")]
    pub sample_period_ms: u64,
    /// String returned by `dcmi_get_dcmi_version` (the driver version; at most 32 bytes).
    #[serde(default = "default_driver_version")]
    pub driver_version: String,
    /// Time from `dcmi_set_device_reset` until boot status 16 (default 500 ms).
    #[serde(default = "default_reset_duration_ms")]
    pub reset_duration_ms: u64,
    /// How long an injected hang blocks the call (default 3 600 000 ms).
    #[serde(default = "default_hang_ms")]
    pub hang_ms: u64,
    /// Initial `dcmi_get_multi_die_policy` value (0 union, 1 independent).
    #[serde(default)]
    pub multi_die_policy: u32,
}

fn default_sample_period_ms() -> u64 {
    1000
}
fn default_driver_version() -> String {
    "24.1.rc2".to_owned()
}
fn default_reset_duration_ms() -> u64 {
    500
}
fn default_hang_ms() -> u64 {
    3_600_000
}

impl Default for Simulation {
    fn default() -> Self {
        Self {
            name: String::new(),
            seed: 0,
            sample_period_ms: default_sample_period_ms(),
            driver_version: default_driver_version(),
            reset_duration_ms: default_reset_duration_ms(),
            hang_ms: default_hang_ms(),
            multi_die_policy: 0,
        }
    }
}

/// `[[card]]`: one NPU management unit (a PCIe card or module).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Card {
    /// Card id reported by `dcmi_get_card_list` (0..63, need not be contiguous).
    pub card_id: i32,
    /// `dcmi_get_product_type` string, e.g. "Atlas 300I Duo" (at most 64 bytes; 310 family only).
    #[serde(default)]
    pub product_type: String,
    /// Card power from the MCU (`dcmi_mcu_get_power_info`, 310P only), in 0.1 W.
    #[serde(default = "default_mcu_power")]
    pub mcu_power: Signal,
    /// Electronic label (`dcmi_get_card_elabel_v2`).
    #[serde(default)]
    pub elabel: Elabel,
    /// `dcmi_get_netdev_brother_device` answer (default: the card itself).
    #[serde(default)]
    pub brother_card_id: Option<i32>,
    /// MCU unit id of `dcmi_get_device_id_in_card` (-1 = none).
    #[serde(default = "minus_one")]
    pub mcu_id: i32,
    /// CPU unit id of `dcmi_get_device_id_in_card` (-1 = none).
    #[serde(default = "minus_one")]
    pub cpu_id: i32,
    /// The chips on the card (`[[card.chip]]`, 1..4).
    #[serde(default, rename = "chip")]
    pub chips: Vec<Chip>,
}

/// The product type of the Atlas 300I Duo card (`dcmi_get_product_type`).
const ATLAS_300I_DUO: &str = "Atlas 300I Duo";

impl Card {
    /// Whether a hot reset of one chip resets every chip of the card: an Atlas 300I Duo card resets as one. Its
    /// driver takes the reset on the card's first chip (mind-cluster `component/ascend-common/devmanager/
    /// devmanager.go`, `SetDeviceReset`, which passes device 0 for any chip of a Duo card) and Huawei's device plugin
    /// then waits for both chips' boot (`component/ascend-device-plugin/pkg/server/hot_reset_manager.go`,
    /// `getDuoCardDevices`, `execDriverReset`): resetting device 0 restarts its card-mate too.
    pub fn resets_as_one(&self) -> bool {
        self.product_type == ATLAS_300I_DUO
    }
}

fn default_mcu_power() -> Signal {
    Signal::Constant(720)
}
fn minus_one() -> i32 {
    -1
}

/// Electronic label of a card; each string at most 255 bytes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Elabel {
    /// Product name.
    pub product_name: String,
    /// Model.
    pub model: String,
    /// Manufacturer.
    pub manufacturer: String,
    /// Manufacturing date.
    pub manufacturer_date: String,
    /// Serial number.
    pub serial_number: String,
}

/// `[[card.chip]]`: one chip (die) of a card.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Chip {
    /// Chip index on the card (0..3).
    pub device_id: i32,
    /// Driver enumeration index (0..255, unique on the host); the `deviceid` of fault events.
    pub logic_id: u32,
    /// Physical id (0..255, unique): `/dev/davinci<phy_id>` and Kubernetes device names.
    pub phy_id: u32,
    /// Chip family.
    pub chip_type: ChipType,
    /// `chip_name` of `dcmi_get_device_chip_info`, e.g. "910B3" or "310P3" (at most 31 bytes).
    pub chip_name: String,
    /// `chip_ver` (default "V1").
    #[serde(default = "default_chip_version")]
    pub chip_version: String,
    /// `npu_name` of `dcmi_get_device_chip_info_v2` (default empty).
    #[serde(default)]
    pub npu_name: String,
    /// AI cores of the chip (also `computing.aic` of the vNPU total resource).
    pub aicore_count: u32,
    /// `dcmi_get_device_board_info`.
    #[serde(default)]
    pub board: Board,
    /// `dcmi_get_mainboard_id`.
    #[serde(default)]
    pub mainboard_id: u32,
    /// PCIe identity.
    pub pcie: Pcie,
    /// NUMA node of the chip's PCIe device.
    #[serde(default)]
    pub numa_node: i32,
    /// CPU list of NUMA-affine cores, e.g. "0-23" (at most 32 bytes).
    #[serde(default)]
    pub affinity_cpus: String,
    /// Die ids (`dcmi_get_device_die_v2`).
    #[serde(default)]
    pub die_id: DieIds,
    /// Initial health: 0 OK, 1 minor, 2 major, 3 critical.
    #[serde(default)]
    pub health: u32,
    /// Initially raised fault codes.
    #[serde(default)]
    pub faults: Vec<FaultSpec>,
    /// `dcmi_get_device_network_health` result (0 OK, 6 init; others unhealthy).
    #[serde(default)]
    pub network_health: u32,
    /// RoCE IPv4 address of `dcmi_get_device_ip` (910 family), e.g. "192.168.100.10".
    #[serde(default)]
    pub roce_ip: Option<String>,
    /// RoCE netmask (default "255.255.255.0").
    #[serde(default = "default_netmask")]
    pub roce_netmask: String,
    /// The firmware version the chip runs (`dcmi_get_version`, at most 63 bytes); unset:
    /// [`crate::fake_host::DEFAULT_FIRMWARE_VERSION`], the firmware a default fake host installs. A fake host
    /// sets it from its firmware package unless the topology does, so one chip set here is a chip a partial
    /// firmware upgrade left behind.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub firmware_version: Option<String>,
    /// `dcmi_get_npu_work_mode` (910A only): 0 AMP, 1 SMP.
    #[serde(default)]
    pub work_mode: u8,
    /// Function names answered although the family default says -8255.
    #[serde(default)]
    pub supported: Vec<String>,
    /// Function names answered with -8255 although the family default supports them.
    #[serde(default)]
    pub unsupported: Vec<String>,
    /// Temperature, power, voltage, frequencies, utilizations.
    #[serde(default)]
    pub telemetry: Telemetry,
    /// DDR memory (`dcmi_get_device_memory_info_v3`).
    #[serde(default)]
    pub ddr: Ddr,
    /// HBM memory (`dcmi_get_device_hbm_info`).
    #[serde(default)]
    pub hbm: Hbm,
    /// ECC counters (`dcmi_get_device_ecc_info`), the same for DDR and HBM.
    #[serde(default)]
    pub ecc: Ecc,
    /// Processes using the chip (`[[card.chip.process]]`, at most 32).
    #[serde(default, rename = "process")]
    pub processes: Vec<Process>,
    /// Super-pod information (main_cmd 12, A3 and Ascend950).
    #[serde(default)]
    pub spod: Spod,
    /// vNPUs created at `dcmi_init` (`[[card.chip.vnpu]]`).
    #[serde(default, rename = "vnpu")]
    pub vnpus: Vec<PresetVnpu>,
    /// Unified-bus ports (Ascend950, `dcmiv2_get_port_pkt_stats_info`).
    #[serde(default)]
    pub ub: UbPorts,
    /// The network port as the simulated `hccn_tool` reports it (`[card.chip.network]`); unset, the chip family's
    /// defaults ([`crate::hccn_tool::PortSettings::for_chip`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::network_port::Network>,
    /// Error counters of the chip-to-chip links (HCCS statistics, SIO), `dcmi_get_device_info` main_cmd 16 and 56.
    #[serde(default)]
    pub links: LinkErrors,
}

/// `[card.chip.links]`: CRC errors of the HCCS links (910B, A3) and of the SIO between the dies of a card (A3,
/// Ascend950). The message counters of the HCCS links grow on their own; errors are constant, so a test knows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct LinkErrors {
    /// CRC errors on each HCCS link.
    pub hccs_crc_errors: u32,
    /// SIO CRC errors in transmitted data.
    pub sio_tx_crc_errors: u16,
    /// SIO CRC errors in received data.
    pub sio_rx_crc_errors: u16,
}

/// `[card.chip.ub]`: the unified-bus ports of an Ascend950 chip. Packet counters grow at a constant
/// rate from `dcmiv2_init`, so they are monotonic as the driver's are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct UbPorts {
    /// Dies with UB ports (`udie_id` 0..dies-1; at most 3).
    pub dies: u32,
    /// Ports per die (`port_id` 0..ports-1; at most 10). 0: the chip has no UB port.
    pub ports: u32,
    /// Packets received per second on each port.
    pub rx_packets_per_s: u64,
    /// Packets sent per second on each port.
    pub tx_packets_per_s: u64,
    /// CRC errors per hour on each port.
    pub crc_errors_per_hour: u64,
}

impl Default for UbPorts {
    fn default() -> Self {
        Self { dies: 1, ports: 0, rx_packets_per_s: 0, tx_packets_per_s: 0, crc_errors_per_hour: 0 }
    }
}

fn default_chip_version() -> String {
    "V1".to_owned()
}
fn default_netmask() -> String {
    "255.255.255.0".to_owned()
}

/// `dcmi_board_info` (0xFFFFFFFF = invalid).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Board {
    /// Board id (detects A3 and A300I A2).
    pub board_id: u32,
    /// PCB id.
    pub pcb_id: u32,
    /// BOM id.
    pub bom_id: u32,
    /// PCIe slot.
    pub slot_id: u32,
}

/// PCIe identity of a chip.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Pcie {
    /// Bus address `DDDD:BB:DD.F` (hex).
    pub bdf: String,
    /// Vendor id (default 0x19e5, Huawei).
    #[serde(default = "default_vendor_id")]
    pub vendor_id: u32,
    /// Subsystem vendor id (default 0x0200).
    #[serde(default = "default_subvendor_id")]
    pub subvendor_id: u32,
    /// Device id (default 0xd802).
    #[serde(default = "default_pci_device_id")]
    pub device_id: u32,
    /// Subsystem device id (default 0x0100).
    #[serde(default = "default_subdevice_id")]
    pub subdevice_id: u32,
}

fn default_vendor_id() -> u32 {
    0x19e5
}
fn default_subvendor_id() -> u32 {
    0x0200
}
fn default_pci_device_id() -> u32 {
    0xd802
}
fn default_subdevice_id() -> u32 {
    0x0100
}

/// A parsed PCIe bus address.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bdf {
    /// PCI domain.
    pub domain: u32,
    /// Bus.
    pub bus: u32,
    /// Device.
    pub device: u32,
    /// Function.
    pub function: u32,
}

impl std::str::FromStr for Bdf {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || format!("`{text}` is not a PCIe address of the form DDDD:BB:DD.F (hex)");
        let (domain, rest) = text.split_once(':').ok_or_else(bad)?;
        let (bus, rest) = rest.split_once(':').ok_or_else(bad)?;
        let (device, function) = rest.split_once('.').ok_or_else(bad)?;
        let hex = |part: &str, max: u32| {
            u32::from_str_radix(part, 16).ok().filter(|value| *value <= max && !part.is_empty()).ok_or_else(bad)
        };
        Ok(Bdf {
            domain: hex(domain, 0xffff)?,
            bus: hex(bus, 0xff)?,
            device: hex(device, 0x1f)?,
            function: hex(function, 7)?,
        })
    }
}

impl std::fmt::Display for Bdf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:04x}:{:02x}:{:02x}.{:x}", self.domain, self.bus, self.device, self.function)
    }
}

impl Pcie {
    /// The parsed bus address.
    ///
    /// # Errors
    /// A message saying why `bdf` is not a `DDDD:BB:DD.F` address.
    pub fn parsed_bdf(&self) -> Result<Bdf, String> {
        self.bdf.parse()
    }
}

/// Die ids: five 32-bit words each.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct DieIds {
    /// VDIE id (the chip's UUID; all chips).
    pub vdie: [u32; 5],
    /// NDIE id (910 family).
    pub ndie: [u32; 5],
}

/// A fault code, bare (`0x80E01801`, severity 2) or with a severity (`{ code = .., severity = .. }`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum FaultSpec {
    /// Just the code; severity 2 (major).
    Code(u32),
    /// Code and severity (0 warning, 1 minor, 2 major, 3 critical).
    Detailed {
        /// Fault event id.
        code: u32,
        /// Severity 0..3.
        severity: u8,
    },
}

impl FaultSpec {
    /// The fault code.
    pub fn code(self) -> u32 {
        match self {
            FaultSpec::Code(code) | FaultSpec::Detailed { code, .. } => code,
        }
    }

    /// The severity (2 for bare codes).
    pub fn severity(self) -> u8 {
        match self {
            FaultSpec::Code(_) => 2,
            FaultSpec::Detailed { severity, .. } => severity,
        }
    }
}

/// `[card.chip.telemetry]`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Telemetry {
    /// Chip temperature in °C (default 45).
    pub temperature: Signal,
    /// Chip power in 0.1 W (default 950 = 95.0 W; not on 310P).
    pub power: Signal,
    /// Voltage in 0.01 V (default 85 = 0.85 V).
    pub voltage: Signal,
    /// Clocks in MHz.
    pub frequency: Frequencies,
    /// Utilizations in percent (clamped to 0..100).
    pub utilization: Utilization,
    /// AI-core utilization of each vNPU in percent (main_cmd 52 / sub_cmd 5).
    pub vnpu_aicore_utilization: Signal,
}

impl Default for Telemetry {
    fn default() -> Self {
        Self {
            temperature: Signal::Constant(45),
            power: Signal::Constant(950),
            voltage: Signal::Constant(85),
            frequency: Frequencies::default(),
            utilization: Utilization::default(),
            vnpu_aicore_utilization: Signal::Constant(0),
        }
    }
}

/// Clocks in MHz, one per `dcmi_freq_type` (answered only for the family's supported types).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Frequencies {
    /// Type 1 (default 3200).
    pub ddr: Signal,
    /// Type 2 (default 1900).
    pub ctrlcpu: Signal,
    /// Type 6 (default 1600).
    pub hbm: Signal,
    /// Type 7 (default 1300).
    pub aicore_current: Signal,
    /// Type 9 (default 1800).
    pub aicore_max: Signal,
    /// Type 12 (default 1300).
    pub vectorcore_current: Signal,
}

impl Default for Frequencies {
    fn default() -> Self {
        Self {
            ddr: Signal::Constant(3200),
            ctrlcpu: Signal::Constant(1900),
            hbm: Signal::Constant(1600),
            aicore_current: Signal::Constant(1300),
            aicore_max: Signal::Constant(1800),
            vectorcore_current: Signal::Constant(1300),
        }
    }
}

impl Frequencies {
    /// The signal of `dcmi_freq_type` value `freq_type`, if it is a defined type.
    pub fn by_type(&self, freq_type: i32) -> Option<&Signal> {
        match freq_type {
            1 => Some(&self.ddr),
            2 => Some(&self.ctrlcpu),
            6 => Some(&self.hbm),
            7 => Some(&self.aicore_current),
            9 => Some(&self.aicore_max),
            12 => Some(&self.vectorcore_current),
            _ => None,
        }
    }
}

/// Utilizations in percent, one per input type of `dcmi_get_device_utilization_rate` (default 0).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Utilization {
    /// Type 1.
    pub memory: Signal,
    /// Type 2.
    pub aicore: Signal,
    /// Type 3.
    pub aicpu: Signal,
    /// Type 4.
    pub ctrlcpu: Signal,
    /// Type 5.
    pub memory_bandwidth: Signal,
    /// Type 6.
    pub hbm: Signal,
    /// Type 8.
    pub ddr: Signal,
    /// Type 10.
    pub hbm_bandwidth: Signal,
    /// Type 12 (also `aiv_util` of the multi-utilization call).
    pub vectorcore: Signal,
    /// Type 13 (also `npu_util`).
    pub npu: Signal,
    /// Type 14 (also `aic_util`).
    pub aicube: Signal,
}

impl Default for Utilization {
    fn default() -> Self {
        let zero = Signal::Constant(0);
        Self {
            memory: zero,
            aicore: zero,
            aicpu: zero,
            ctrlcpu: zero,
            memory_bandwidth: zero,
            hbm: zero,
            ddr: zero,
            hbm_bandwidth: zero,
            vectorcore: zero,
            npu: zero,
            aicube: zero,
        }
    }
}

impl Utilization {
    /// The signal of utilization input type `input_type`, if it is a defined type.
    pub fn by_type(&self, input_type: i32) -> Option<&Signal> {
        match input_type {
            1 => Some(&self.memory),
            2 => Some(&self.aicore),
            3 => Some(&self.aicpu),
            4 => Some(&self.ctrlcpu),
            5 => Some(&self.memory_bandwidth),
            6 => Some(&self.hbm),
            8 => Some(&self.ddr),
            10 => Some(&self.hbm_bandwidth),
            12 => Some(&self.vectorcore),
            13 => Some(&self.npu),
            14 => Some(&self.aicube),
            _ => None,
        }
    }
}

/// `[card.chip.ddr]`: DDR memory in MB.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Ddr {
    /// Total MB (default 24576).
    pub size_mb: u64,
    /// Used MB (clamped to `size_mb`; available = size − used). Default 1024.
    pub used_mb: Signal,
    /// Clock in MHz (default 3200).
    pub freq_mhz: u32,
    /// Huge page size in KB (default 2048).
    pub hugepage_size_kb: u64,
    /// Huge pages in total (default 0).
    pub hugepages_total: u64,
    /// Free huge pages (default 0).
    pub hugepages_free: u64,
}

impl Default for Ddr {
    fn default() -> Self {
        Self {
            size_mb: 24_576,
            used_mb: Signal::Constant(1024),
            freq_mhz: 3200,
            hugepage_size_kb: 2048,
            hugepages_total: 0,
            hugepages_free: 0,
        }
    }
}

/// `[card.chip.hbm]`: HBM memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Hbm {
    /// Total MB (default 65536).
    pub size_mb: u64,
    /// Used MB (clamped to `size_mb`). Default 2048.
    pub used_mb: Signal,
    /// Clock in MHz (default 1600).
    pub freq_mhz: u32,
    /// HBM temperature in °C (default 40).
    pub temperature: Signal,
    /// Bandwidth utilization in percent (default 0).
    pub bandwidth_util: Signal,
}

impl Default for Hbm {
    fn default() -> Self {
        Self {
            size_mb: 65_536,
            used_mb: Signal::Constant(2048),
            freq_mhz: 1600,
            temperature: Signal::Constant(40),
            bandwidth_util: Signal::Constant(0),
        }
    }
}

/// `[card.chip.spod]`: `struct dcmi_spod_info` (A3 and Ascend950; on Ascend950 `chassis_id` is the rack and
/// `super_pod_type` the product: 0 8-NPU server, 1 and 2 super-pod (1D, 2D), 3 16-NPU and 4 32-NPU server, 5 and 6
/// standard cards, as `ProductType*` in mind-cluster `component/ascend-device-plugin/pkg/common/constants_v2.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
#[allow(missing_docs)]
pub struct Spod {
    pub sdid: u32,
    pub scale_type: u32,
    pub super_pod_id: u32,
    pub server_id: u32,
    pub chassis_id: u32,
    pub super_pod_type: u32,
}

/// `[[card.chip.vnpu]]`: a vNPU that exists from `dcmi_init` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PresetVnpu {
    /// Template name, e.g. "vir02" (one of the chip family's templates, [`crate::vnpu_templates`]).
    pub template: String,
    /// vNPU id (100..1123; default: the lowest free one).
    #[serde(default)]
    pub vdev_id: Option<u32>,
}

/// A chip with its card, as found by the id lookups.
#[derive(Debug, Clone, Copy)]
pub struct ChipRef<'a> {
    /// The card.
    pub card: &'a Card,
    /// The chip.
    pub chip: &'a Chip,
}

impl Topology {
    /// The DCMI API family the host serves: that of its chips (validation keeps it to one).
    pub fn api(&self) -> crate::chip_type::Api {
        self.chips().next().map_or(crate::chip_type::Api::V1, |found| found.chip.chip_type.api())
    }

    /// Every chip with its card, in enumeration order.
    pub fn chips(&self) -> impl Iterator<Item = ChipRef<'_>> {
        self.cards.iter().flat_map(|card| card.chips.iter().map(move |chip| ChipRef { card, chip }))
    }

    /// The chip with logic id `logic_id`.
    pub fn chip_by_logic_id(&self, logic_id: u32) -> Option<ChipRef<'_>> {
        self.chips().find(|found| found.chip.logic_id == logic_id)
    }

    /// The firmware version chip `chip` reports: its own, else the default fake host's firmware.
    pub fn firmware_version_of(chip: &Chip) -> &str {
        chip.firmware_version.as_deref().unwrap_or(crate::fake_software::DEFAULT_FIRMWARE_VERSION)
    }

    /// The chip with physical id `phy_id`.
    pub fn chip_by_phy_id(&self, phy_id: u32) -> Option<ChipRef<'_>> {
        self.chips().find(|found| found.chip.phy_id == phy_id)
    }

    /// The chip at (`card_id`, `device_id`).
    pub fn chip_at(&self, card_id: i32, device_id: i32) -> Option<ChipRef<'_>> {
        self.chips().find(|found| found.card.card_id == card_id && found.chip.device_id == device_id)
    }

    /// Serialises the topology back to TOML (for tools that generate topologies).
    ///
    /// # Errors
    /// A message if a value cannot be represented in TOML.
    pub fn to_toml_string(&self) -> Result<String, String> {
        toml::to_string(self).map_err(|error| error.to_string())
    }
}
