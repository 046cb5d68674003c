//! [`Chip`]: an owned handle to one chip, with methods named after the quantities they read.

use std::time::Duration;

use crate::chip_type::ChipType;
use crate::chip_view::ChipView;
use crate::dcmi::Dcmi;
use crate::error::{CallContext, Error, Result};
use crate::ffi::Target;
use crate::health::{FaultCodes, HealthReport};
use crate::identity::{BoardInfo, ChipIdentity, ChipInfo, DieId, Elabel, PcieAddress};
use crate::ids::{ChipIds, ChipLocator, LogicId, PhyId};
use crate::limits::HCCS_LINKS;
use crate::numa;
use crate::telemetry::{
    BandwidthStats, DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth, NetworkHealth,
    PcieBandwidth, Power, ProcessList, UtilizationKind,
};
use crate::ub_port::{UbPort, UbPortCounters, UbPortStats};
use crate::units::{Celsius, MegaHertz, Percent, Volts};

/// Accepted PCIe profiling windows.
const PCIE_PROFILING_MS: std::ops::RangeInclusive<u64> = 1..=2000;
/// Accepted HCCS profiling windows.
const HCCS_PROFILING_MS: std::ops::RangeInclusive<u64> = 1..=1000;

/// One chip. Owns a [`Dcmi`] clone: no lifetimes, `Send + Sync`, cheap to clone.
///
/// Each method makes the DCMI call named in its `doc(alias)` (search the docs by C name) and returns the value in
/// its base unit. Every method may block on the driver: call it from a thread, not an async executor.
#[derive(Debug, Clone)]
pub struct Chip {
    dcmi: Dcmi,
    ids: ChipIds,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Chip>();
};

impl Dcmi {
    /// A handle to one chip by logic id.
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] when there is no such chip.
    pub fn chip(&self, logic: LogicId) -> Result<Chip> {
        Ok(Chip::new(self.clone(), self.ids(logic)?))
    }

    /// A handle to one chip by physical id (`/dev/davinci<phy>`).
    ///
    /// # Errors
    /// [`Error::NoSuchChip`] when there is no such chip.
    pub fn chip_by_phy(&self, phy: PhyId) -> Result<Chip> {
        self.chip(self.logic_id(phy)?)
    }
}

impl Chip {
    pub(crate) fn new(dcmi: Dcmi, ids: ChipIds) -> Chip {
        Chip { dcmi, ids }
    }

    pub(crate) fn dcmi(&self) -> &Dcmi {
        &self.dcmi
    }

    /// The borrowed view that holds the code of the telemetry and health methods (shared with the trait path).
    pub(crate) fn view(&self) -> ChipView<'_> {
        ChipView::new(&self.dcmi, self.ids)
    }

    pub(crate) fn target(&self) -> Target {
        self.view().target()
    }

    pub(crate) fn context(&self, call: &'static str) -> CallContext {
        self.view().context(call)
    }

    /// Every id of the chip.
    pub fn ids(&self) -> ChipIds {
        self.ids
    }

    /// The logic id.
    pub fn logic(&self) -> LogicId {
        self.ids.logic
    }

    /// The physical id (`/dev/davinci<phy>`).
    pub fn phy(&self) -> PhyId {
        self.ids.phy
    }

    /// The `(card, device)` pair on the V1 API; `None` on the V2 API, which has no cards.
    pub fn locator(&self) -> Option<ChipLocator> {
        self.ids.locator
    }

    /// Name strings and AI-core count (`_v2` first, the older call on old drivers).
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_chip_info_v2")]
    #[doc(alias = "dcmi_get_device_chip_info")]
    pub fn chip_info(&self) -> Result<ChipInfo> {
        self.view().chip_info()
    }

    /// Board ids; fields the driver marks invalid (0xFFFFFFFF) are `None`.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_board_info")]
    pub fn board(&self) -> Result<BoardInfo> {
        self.view().board()
    }

    /// The chip generation, classified from the chip name and board id as the vendor does (cached); `None` for
    /// chips this stack does not support.
    ///
    /// # Errors
    /// The DCMI error of the chip info call.
    pub fn chip_type(&self) -> Result<Option<ChipType>> {
        self.view().chip_type()
    }

    /// The mainboard id.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_mainboard_id")]
    pub fn mainboard_id(&self) -> Result<u32> {
        self.dcmi.library().mainboard_id(self.target())
    }

    /// The product type, for example `"Atlas 300I Duo"`.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_product_type")]
    pub fn product_type(&self) -> Result<String> {
        self.dcmi.library().product_type(self.target())
    }

    /// The firmware version the chip runs, for example `"7.5.0.1.129"`: what the driver's `compatible_version_fw`
    /// must hold. After a firmware upgrade that did not reach every chip (or before the reboot that activates it),
    /// it differs from the installed firmware package's `version.info`.
    ///
    /// # Errors
    /// [`Error::UnavailableOnApi`] on the V2 API (Ascend950), [`Error::FunctionMissing`] on drivers without the
    /// call, or any DCMI error.
    #[doc(alias = "dcmi_get_version")]
    pub fn firmware_version(&self) -> Result<String> {
        self.dcmi.library().firmware_version(self.target())
    }

    /// The PCIe address.
    ///
    /// # Errors
    /// Any DCMI error; [`Error::InvalidValue`] when a part does not fit its field.
    #[doc(alias = "dcmi_get_device_pcie_info_v2")]
    pub fn pcie_address(&self) -> Result<PcieAddress> {
        self.view().pcie_address()
    }

    /// The NUMA-affine CPUs as a Linux cpulist, for example `"0-23"`.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_affinity_cpu_info_by_device_id")]
    pub fn affinity_cpus(&self) -> Result<String> {
        self.dcmi.library().affinity_cpus(self.target())
    }

    /// The NUMA node: the node sharing most CPUs with [`Self::affinity_cpus`], else the PCIe device's `numa_node`
    /// (both read under the host root). `None` when neither says.
    pub fn numa_node(&self) -> Option<u32> {
        let affinity = self.affinity_cpus().ok();
        numa::numa_node(self.dcmi.host_root(), affinity.as_deref(), self.pcie_address().ok())
    }

    /// The VDIE id: the chip's stable UUID.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_die_v2")]
    pub fn die_id(&self) -> Result<DieId> {
        self.dcmi.library().die_id(self.target()).map(DieId)
    }

    /// The card's electronic label (serial number and so on).
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_card_elabel_v2")]
    pub fn elabel(&self) -> Result<Elabel> {
        self.dcmi.library().elabel(self.target())
    }

    /// Everything that identifies the chip. Only the chip info call must work; parts the chip cannot report are
    /// `None`.
    ///
    /// # Errors
    /// The DCMI error of the chip info call.
    pub fn identity(&self) -> Result<ChipIdentity> {
        let info = self.chip_info()?;
        let board = self.board().ok();
        let board_id = board.and_then(|b| b.board_id);
        let chip_type = ChipType::classify(&info.chip_name, board_id);
        self.dcmi.cache_chip_type(self.ids.logic, chip_type);
        let pcie_address = self.pcie_address().ok();
        let affinity_cpus = self.affinity_cpus().ok().filter(|cpus| !cpus.is_empty());
        let numa_node = numa::numa_node(self.dcmi.host_root(), affinity_cpus.as_deref(), pcie_address);
        Ok(ChipIdentity {
            ids: self.ids,
            chip_type,
            info,
            product_type: self.product_type().ok().filter(|p| !p.is_empty()),
            board,
            mainboard_id: self.mainboard_id().ok(),
            pcie_address,
            numa_node,
            affinity_cpus,
            die_id: self.die_id().ok(),
            elabel: self.elabel().ok(),
        })
    }

    /// The active fault codes (`dcmi_get_device_errorcode_v2`, zeros skipped).
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_errorcode_v2")]
    pub fn fault_codes(&self) -> Result<FaultCodes> {
        self.view().fault_codes()
    }

    /// Health word plus active fault codes, graded by the handle's [`crate::FaultPolicy`].
    ///
    /// A card that dropped off the bus (-8012) is not an error: the report says `card_dropped`, carries the
    /// synthetic [`crate::FaultCode::CARD_DROP`] and the level the policy gives it. The health word alone raises the level
    /// only when no fault code is active (see [`crate::FaultPolicy::grade_health_word`]).
    ///
    /// # Errors
    /// DCMI errors other than -8012.
    #[doc(alias = "dcmi_get_device_health")]
    pub fn health(&self) -> Result<HealthReport> {
        self.view().health()
    }

    /// Chip temperature.
    ///
    /// # Errors
    /// Any DCMI error; [`Error::InvalidValue`] below absolute zero.
    #[doc(alias = "dcmi_get_device_temperature")]
    pub fn temperature(&self) -> Result<Celsius> {
        self.view().temperature()
    }

    /// Power draw. On 310P, which has no chip sensor, this is the card's MCU power as [`Power::Card`]: the whole
    /// card's draw, not divided among its chips.
    ///
    /// # Errors
    /// Any DCMI error; [`Error::InvalidValue`] for a negative reading.
    #[doc(alias = "dcmi_get_device_power_info")]
    #[doc(alias = "dcmi_mcu_get_power_info")]
    pub fn power(&self) -> Result<Power> {
        self.view().power()
    }

    /// Chip voltage.
    ///
    /// # Errors
    /// Any DCMI error; [`Error::InvalidValue`] for readings of `i32::MAX` hundredths or more.
    #[doc(alias = "dcmi_get_device_voltage")]
    pub fn voltage(&self) -> Result<Volts> {
        self.view().voltage()
    }

    /// One clock.
    ///
    /// # Errors
    /// [`Error::NotSupported`] for kinds the chip lacks, or any DCMI error.
    #[doc(alias = "dcmi_get_device_frequency")]
    pub fn frequency(&self, kind: FrequencyKind) -> Result<MegaHertz> {
        self.view().frequency(kind)
    }

    /// One utilisation kind; see the crate guide for how the call is chosen and what is remembered.
    ///
    /// # Errors
    /// [`Error::NotSupported`] for kinds the chip lacks (remembered), [`Error::InvalidValue`] above 100 %, or any
    /// DCMI error.
    #[doc(alias = "dcmi_get_device_utilization_rate")]
    #[doc(alias = "dcmi_get_device_multi_utilization_rate")]
    #[doc(alias = "dcmi_get_device_multi_utilization_rate_period")]
    pub fn utilization(&self, kind: UtilizationKind) -> Result<Percent> {
        self.view().utilization(kind)
    }

    /// DDR memory. Chips with HBM instead (910B, A3, 950) answer [`Error::NotSupported`] without a call.
    ///
    /// # Errors
    /// [`Error::NotSupported`], any DCMI error, or [`Error::InvalidValue`] when more is available than exists.
    #[doc(alias = "dcmi_get_device_memory_info_v3")]
    pub fn ddr_memory(&self) -> Result<DdrMemory> {
        self.view().ddr_memory()
    }

    /// HBM. Chips without HBM (310 family) answer [`Error::NotSupported`] without a call.
    ///
    /// # Errors
    /// [`Error::NotSupported`], any DCMI error, or [`Error::InvalidValue`] for a negative temperature or a
    /// bandwidth utilisation above 100 %.
    #[doc(alias = "dcmi_get_device_hbm_info")]
    pub fn hbm_memory(&self) -> Result<HbmMemory> {
        self.view().hbm_memory()
    }

    /// ECC state and counters of one memory component.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_ecc_info")]
    pub fn ecc(&self, component: EccComponent) -> Result<EccCounters> {
        self.view().ecc(component)
    }

    /// Processes using the chip and the device memory each holds (at most [`crate::MAX_PROCESSES`]).
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_get_device_resource_info")]
    pub fn processes(&self) -> Result<ProcessList> {
        self.view().processes()
    }

    /// Packet counters of one unified-bus port (Ascend950).
    ///
    /// # Errors
    /// [`Error::UnavailableOnApi`] on the V1 API, which has no UB; [`Error::InvalidParameter`] for a port the chip
    /// does not have; any DCMI error.
    #[doc(alias = "dcmiv2_get_port_pkt_stats_info")]
    pub fn ub_port_stats(&self, port: UbPort) -> Result<UbPortStats> {
        let raw = self.dcmi.library().port_stats(self.target(), i32::from(port.die), i32::from(port.port))?;
        Ok(UbPortStats::from_raw(&raw))
    }

    /// Every counter of one unified-bus port (Ascend950), unsummed.
    ///
    /// # Errors
    /// As [`Chip::ub_port_stats`].
    #[doc(alias = "dcmiv2_get_port_pkt_stats_info")]
    pub fn ub_port_counters(&self, port: UbPort) -> Result<UbPortCounters> {
        let raw = self.dcmi.library().port_stats(self.target(), i32::from(port.die), i32::from(port.port))?;
        Ok(UbPortCounters::from_raw(port, &raw))
    }

    /// The counters of every UB port the chip has (Ascend950): each die and port up to [`crate::MAX_UB_DIE`] and
    /// [`crate::MAX_UB_PORT`] is asked, and those the driver calls invalid do not exist. A port whose read fails
    /// otherwise is left out, as Huawei's exporter leaves it out.
    ///
    /// # Errors
    /// [`Error::UnavailableOnApi`] on the V1 API; the first error when no port answered and not every port was
    /// invalid.
    #[doc(alias = "dcmiv2_get_port_pkt_stats_info")]
    pub fn ub_ports(&self) -> Result<Vec<UbPortCounters>> {
        let mut ports = Vec::new();
        let mut first_error = None;
        for die in 0..=crate::MAX_UB_DIE {
            for port in 0..=crate::MAX_UB_PORT {
                match self.ub_port_counters(UbPort { die, port }) {
                    Ok(counters) => ports.push(counters),
                    Err(Error::InvalidParameter(_)) => {}
                    Err(error) if error.is_unsupported() => return Err(error),
                    Err(error) => {
                        first_error.get_or_insert(error);
                    }
                }
            }
        }
        match first_error {
            Some(error) if ports.is_empty() => Err(error),
            _ => Ok(ports),
        }
    }

    /// PCIe bandwidth averaged over `profiling` (1..=2000 ms), in the driver's MB/ms.
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a window outside the range, or any DCMI error.
    #[doc(alias = "dcmi_get_pcie_link_bandwidth_info")]
    pub fn pcie_bandwidth(&self, profiling: Duration) -> Result<PcieBandwidth> {
        let window = self.window("dcmi_get_pcie_link_bandwidth_info", profiling, PCIE_PROFILING_MS)?;
        let raw = self.dcmi.library().pcie_bandwidth(self.target(), window)?;
        let stats = |values: [u32; 3]| BandwidthStats { min: values[0], max: values[1], avg: values[2] };
        Ok(PcieBandwidth {
            profiling,
            tx_posted: stats(raw.tx_p_bw),
            tx_non_posted: stats(raw.tx_np_bw),
            tx_completion: stats(raw.tx_cpl_bw),
            tx_non_posted_latency: stats(raw.tx_np_lantency),
            rx_posted: stats(raw.rx_p_bw),
            rx_non_posted: stats(raw.rx_np_bw),
            rx_completion: stats(raw.rx_cpl_bw),
        })
    }

    /// HCCS bandwidth averaged over `profiling` (1..=1000 ms).
    ///
    /// # Errors
    /// [`Error::InvalidArgument`] for a window outside the range, or any DCMI error.
    #[doc(alias = "dcmi_get_hccs_link_bandwidth_info")]
    pub fn hccs_bandwidth(&self, profiling: Duration) -> Result<HccsBandwidth> {
        let window = self.window("dcmi_get_hccs_link_bandwidth_info", profiling, HCCS_PROFILING_MS)?;
        let raw = self.dcmi.library().hccs_bandwidth(self.target(), window)?;
        let mut tx_per_link = [0.0; HCCS_LINKS];
        let mut rx_per_link = [0.0; HCCS_LINKS];
        tx_per_link.copy_from_slice(&raw.tx_bandwidth[..HCCS_LINKS]);
        rx_per_link.copy_from_slice(&raw.rx_bandwidth[..HCCS_LINKS]);
        Ok(HccsBandwidth { profiling, total_tx: raw.total_txbw, total_rx: raw.total_rxbw, tx_per_link, rx_per_link })
    }

    /// RoCE network health. The call can block for a long time after a card drop, so it always runs on a worker
    /// thread with the handle's deadline.
    ///
    /// # Errors
    /// [`Error::Timeout`] when the driver does not answer in time, or any DCMI error.
    #[doc(alias = "dcmi_get_device_network_health")]
    pub fn network_health(&self) -> Result<NetworkHealth> {
        let ids = self.ids;
        let context = self.context("dcmi_get_device_network_health");
        self.dcmi.call_with_deadline(context, move |dcmi| ChipView::new(dcmi, ids).network_health())
    }

    fn window(&self, call: &'static str, profiling: Duration, range: std::ops::RangeInclusive<u64>) -> Result<i32> {
        let millis = u64::try_from(profiling.as_millis()).unwrap_or(u64::MAX);
        let invalid = || Error::InvalidArgument {
            context: self.context(call),
            detail: format!("profiling window {profiling:?} outside {}..={} ms", range.start(), range.end()),
        };
        if !range.contains(&millis) {
            return Err(invalid());
        }
        i32::try_from(millis).map_err(|_| invalid())
    }
}
