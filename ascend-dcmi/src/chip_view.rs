//! [`ChipView`]: one chip of a borrowed [`Dcmi`], the code behind the telemetry and health methods of both
//! [`crate::Chip`] and `impl DeviceManager for Dcmi`.
//!
//! The trait addresses chips by logic id on every call (the sampler calls it a dozen times per chip per round from
//! several worker threads). Building an owned [`crate::Chip`] per call would clone the `Arc` inside [`Dcmi`], whose
//! shared reference count every worker would then bounce between CPU cores; a view borrows the handle and copies
//! only the chip's ids, so the trait path costs what the owned handle's methods cost.

use std::ffi::c_char;

use dcmi_sys::dcmi_elabel_info;

use crate::chip_type::ChipType;
use crate::dcmi::Dcmi;
use crate::error::{CallContext, Error, Result};
use crate::ffi::{c_string_is, Target};
use crate::health::{DcmiHealth, FaultCode, FaultCodes, HealthReport};
use crate::identity::{BoardInfo, ChipIdentity, ChipInfo, DieId, Elabel, PcieAddress};
use crate::ids::{ChipIds, LogicId};
use crate::telemetry::{
    DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, NetworkHealth, Power, ProcessList, UtilizationKind,
};
use crate::units::{Celsius, MegaHertz, Percent, Volts, Watts, BYTES_PER_MB};

/// Temperatures below this are not readings (the vendor rejects them too).
const MIN_TEMPERATURE: i32 = -275;

/// Board ids of 0xFFFFFFFF mean "not available".
const INVALID_ID: u32 = u32::MAX;

/// One chip of a borrowed handle. `Copy`: two words of ids and a reference.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ChipView<'a> {
    pub(crate) dcmi: &'a Dcmi,
    ids: ChipIds,
}

impl Dcmi {
    /// A borrowed view of one chip by logic id: what the trait methods use, so that a call neither locks nor clones
    /// the shared handle.
    pub(crate) fn view(&self, logic: LogicId) -> Result<ChipView<'_>> {
        Ok(ChipView::new(self, self.ids(logic)?))
    }
}

impl<'a> ChipView<'a> {
    pub(crate) fn new(dcmi: &'a Dcmi, ids: ChipIds) -> Self {
        Self { dcmi, ids }
    }

    pub(crate) fn target(self) -> Target {
        self.dcmi.target(self.ids)
    }

    pub(crate) fn context(self, call: &'static str) -> CallContext {
        CallContext { call, chip: self.ids.locator, logic: Some(self.ids.logic) }
    }

    pub(crate) fn invalid(self, call: &'static str, detail: String) -> Error {
        Error::InvalidValue { context: self.context(call), detail }
    }

    pub(crate) fn chip_info(self) -> Result<ChipInfo> {
        self.dcmi.library().chip_info(self.target())
    }

    pub(crate) fn board(self) -> Result<BoardInfo> {
        let raw = self.dcmi.library().board_info(self.target())?;
        let valid = |id: u32| (id != INVALID_ID).then_some(id);
        Ok(BoardInfo {
            board_id: valid(raw.board_id),
            pcb_id: valid(raw.pcb_id),
            bom_id: valid(raw.bom_id),
            slot_id: valid(raw.slot_id),
        })
    }

    pub(crate) fn pcie_address(self) -> Result<PcieAddress> {
        let raw = self.dcmi.library().pcie_info(self.target())?;
        let invalid = || {
            let detail = format!(
                "domain {} bus {} device {} function {}",
                raw.domain, raw.bdf_busid, raw.bdf_deviceid, raw.bdf_funcid
            );
            self.invalid("dcmi_get_device_pcie_info_v2", detail)
        };
        Ok(PcieAddress {
            domain: u32::try_from(raw.domain).map_err(|_| invalid())?,
            bus: u8::try_from(raw.bdf_busid).map_err(|_| invalid())?,
            device: u8::try_from(raw.bdf_deviceid).map_err(|_| invalid())?,
            function: u8::try_from(raw.bdf_funcid).map_err(|_| invalid())?,
        })
    }

    /// Whether the chip still is what `known` (an earlier [`crate::Chip::identity`]) says. Reads what `identity`
    /// reads, with the same tolerance (only the chip info call must work), but compares the driver's buffers in
    /// place instead of decoding them, so nothing is allocated. Two fields are derived rather than read: the chip
    /// type (from the chip name and board id, both compared) and the NUMA node (from the affine CPUs and the PCIe
    /// address, both compared, plus the host's NUMA layout, which does not change while the system runs).
    ///
    /// The chip info call's error is returned, as `identity` returns it.
    pub(crate) fn identity_is(self, known: &ChipIdentity) -> Result<bool> {
        let library = self.dcmi.library();
        let target = self.target();
        let info = library.raw_chip_info(target)?;
        let same = known.ids == self.ids
            && info.is(&known.info)
            && self.board().ok() == known.board
            && self.pcie_address().ok() == known.pcie_address
            && library.mainboard_id(target).ok() == known.mainboard_id
            && library.die_id(target).ok().map(DieId) == known.die_id
            && optional_text_is(
                library.raw_product_type(target).ok().as_ref().map(|b| &b[..]),
                known.product_type.as_deref(),
            )
            && library
                .with_affinity_cpus(target, |list| optional_text_is(Some(list), known.affinity_cpus.as_deref()))
                .unwrap_or(known.affinity_cpus.is_none())
            && elabel_is(library.raw_elabel(target).ok(), known.elabel.as_ref());
        Ok(same)
    }

    pub(crate) fn chip_type(self) -> Result<Option<ChipType>> {
        if let Some(known) = self.dcmi.cached_chip_type(self.ids.logic) {
            return Ok(known);
        }
        let info = self.chip_info()?;
        let board_id = self.board().ok().and_then(|board| board.board_id);
        let chip_type = ChipType::classify(&info.chip_name, board_id);
        self.dcmi.cache_chip_type(self.ids.logic, chip_type);
        Ok(chip_type)
    }

    pub(crate) fn fault_codes(self) -> Result<FaultCodes> {
        self.dcmi.library().error_codes(self.target())
    }

    pub(crate) fn health(self) -> Result<HealthReport> {
        let policy = self.dcmi.fault_policy();
        let word = match self.dcmi.library().health(self.target()) {
            Ok(word) => DcmiHealth::from_raw(word),
            Err(error) if error.is_card_drop() => return Ok(card_dropped_report(policy)),
            Err(error) => return Err(error),
        };
        let faults = match self.fault_codes() {
            Ok(codes) => codes,
            Err(error) if error.is_card_drop() => return Ok(card_dropped_report(policy)),
            Err(error) if error.is_unsupported() => FaultCodes::default(),
            Err(error) => return Err(error),
        };
        let level = if faults.is_empty() || word == DcmiHealth::Absent {
            policy.grade_all(faults.as_slice()).max(policy.grade_health_word(word))
        } else {
            policy.grade_all(faults.as_slice())
        };
        Ok(HealthReport { dcmi: Some(word), faults, level, card_dropped: false })
    }

    pub(crate) fn temperature(self) -> Result<Celsius> {
        let value = self.dcmi.library().temperature(self.target())?;
        if value < MIN_TEMPERATURE {
            return Err(self.invalid("dcmi_get_device_temperature", format!("temperature {value} °C")));
        }
        Ok(Celsius(value))
    }

    pub(crate) fn power(self) -> Result<Power> {
        let card_level = self.chip_type()?.is_some_and(ChipType::has_card_level_power);
        let (call, value) = if card_level {
            ("dcmi_mcu_get_power_info", self.dcmi.library().card_power(self.target())?)
        } else {
            ("dcmi_get_device_power_info", self.dcmi.library().power(self.target())?)
        };
        if value < 0 {
            return Err(self.invalid(call, format!("negative power {value} (0.1 W)")));
        }
        let watts = Watts::from_deciwatts(value);
        Ok(if card_level { Power::Card(watts) } else { Power::Chip(watts) })
    }

    pub(crate) fn voltage(self) -> Result<Volts> {
        let value = self.dcmi.library().voltage(self.target())?;
        if value >= i32::MAX.unsigned_abs() {
            return Err(self.invalid("dcmi_get_device_voltage", format!("voltage {value} (0.01 V)")));
        }
        Ok(Volts::from_centivolts(value))
    }

    pub(crate) fn frequency(self, kind: FrequencyKind) -> Result<MegaHertz> {
        self.dcmi.library().frequency(self.target(), kind.raw()).map(MegaHertz)
    }

    pub(crate) fn utilization(self, kind: UtilizationKind) -> Result<Percent> {
        self.dcmi.inner.utilization.read(self.dcmi.library(), self.target(), self.ids.logic, kind)
    }

    pub(crate) fn ddr_memory(self) -> Result<DdrMemory> {
        const CALL: &str = "dcmi_get_device_memory_info_v3";
        let hbm_only =
            matches!(self.chip_type()?, Some(ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950));
        if hbm_only {
            return Err(Error::NotSupported(self.context(CALL)));
        }
        let raw = self.dcmi.library().memory_info(self.target())?;
        if raw.memory_size < raw.memory_available {
            return Err(self.invalid(CALL, format!("{} MB available of {} MB", raw.memory_available, raw.memory_size)));
        }
        let utilization = Percent::new(raw.utiliza)
            .ok_or_else(|| self.invalid(CALL, format!("utilisation {} is not a percentage", raw.utiliza)))?;
        Ok(DdrMemory {
            total_bytes: raw.memory_size.saturating_mul(BYTES_PER_MB),
            available_bytes: raw.memory_available.saturating_mul(BYTES_PER_MB),
            frequency: MegaHertz(raw.freq),
            hugepage_size_bytes: raw.hugepagesize.saturating_mul(1024),
            hugepages_total: raw.hugepages_total,
            hugepages_free: raw.hugepages_free,
            utilization,
        })
    }

    pub(crate) fn hbm_memory(self) -> Result<HbmMemory> {
        const CALL: &str = "dcmi_get_device_hbm_info";
        if !self.chip_type()?.is_some_and(ChipType::has_hbm) {
            return Err(Error::NotSupported(self.context(CALL)));
        }
        let raw = self.dcmi.library().hbm_info(self.target())?;
        if raw.temp < 0 {
            return Err(self.invalid(CALL, format!("HBM temperature {} °C", raw.temp)));
        }
        let bandwidth_utilization = Percent::new(raw.bandwith_util_rate).ok_or_else(|| {
            self.invalid(CALL, format!("bandwidth utilisation {} is not a percentage", raw.bandwith_util_rate))
        })?;
        Ok(HbmMemory {
            total_bytes: raw.memory_size.saturating_mul(BYTES_PER_MB),
            used_bytes: raw.memory_usage.saturating_mul(BYTES_PER_MB),
            frequency: MegaHertz(raw.freq),
            temperature: Celsius(raw.temp),
            bandwidth_utilization,
        })
    }

    pub(crate) fn ecc(self, component: EccComponent) -> Result<EccCounters> {
        let raw = self.dcmi.library().ecc_info(self.target(), component.raw())?;
        Ok(EccCounters {
            enabled: raw.enable_flag != 0,
            single_bit_errors: raw.single_bit_error_cnt,
            double_bit_errors: raw.double_bit_error_cnt,
            total_single_bit_errors: raw.total_single_bit_error_cnt,
            total_double_bit_errors: raw.total_double_bit_error_cnt,
            single_bit_isolated_pages: raw.single_bit_isolated_pages_cnt,
            double_bit_isolated_pages: raw.double_bit_isolated_pages_cnt,
            single_bit_next_isolated_pages: raw.single_bit_next_isolated_pages_cnt,
            double_bit_next_isolated_pages: raw.double_bit_next_isolated_pages_cnt,
        })
    }

    pub(crate) fn processes(self) -> Result<ProcessList> {
        self.dcmi.library().processes(self.target())
    }

    /// RoCE network health on the calling thread. The caller bounds the call's time: [`crate::Chip`] runs it on a
    /// worker thread with the handle's deadline, the sampler runs whole chains on its own deadline-bound workers.
    pub(crate) fn network_health(self) -> Result<NetworkHealth> {
        self.dcmi.library().network_health(self.target()).map(NetworkHealth::from_raw)
    }
}

/// A text field that `identity` keeps only when the call worked and the text is not empty.
fn optional_text_is(raw: Option<&[c_char]>, known: Option<&str>) -> bool {
    match (raw, known) {
        (None, None) => true,
        (None, Some(_)) => false,
        (Some(buffer), None) => c_string_is(buffer, ""),
        (Some(buffer), Some(text)) => !text.is_empty() && c_string_is(buffer, text),
    }
}

fn elabel_is(raw: Option<dcmi_elabel_info>, known: Option<&Elabel>) -> bool {
    match (raw, known) {
        (None, None) => true,
        (Some(raw), Some(known)) => {
            c_string_is(&raw.product_name, &known.product_name)
                && c_string_is(&raw.model, &known.model)
                && c_string_is(&raw.manufacturer, &known.manufacturer)
                && c_string_is(&raw.manufacturer_date, &known.manufacturer_date)
                && c_string_is(&raw.serial_number, &known.serial_number)
        }
        _ => false,
    }
}

fn card_dropped_report(policy: &crate::fault_policy::FaultPolicy) -> HealthReport {
    let faults = FaultCodes::from_codes([FaultCode::CARD_DROP]);
    let level = policy.grade_all(faults.as_slice());
    HealthReport { dcmi: None, faults, level, card_dropped: true }
}
