//! Telemetry values as the library reports them, computed from the topology for a given tick ([`Sampler`]).

use crate::capabilities;
use crate::generator::{quantity, tick_at, Signal, SignalKey};
use crate::topology::{Card, Chip, Topology};

/// Samples one topology's signals at one tick: telemetry values as the library reports them.
///
/// The exported functions use these same functions, so a test can compute what a call returned at a known time: take
/// the ticks before and after the call ([`Sampler::at_unix_ms`]) and compare.
#[derive(Debug, Clone, Copy)]
pub struct Sampler {
    seed: u64,
    sample_period_ms: u64,
    /// The tick sampled.
    pub tick: u64,
}

/// DDR memory as `dcmi_get_device_memory_info_v3` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DdrReading {
    /// Total MB.
    pub size_mb: u64,
    /// Available MB (size − used).
    pub available_mb: u64,
    /// MHz.
    pub freq_mhz: u32,
    /// Utilization percent (used / size).
    pub utilization: u32,
}

/// HBM as `dcmi_get_device_hbm_info` reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HbmReading {
    /// Total MB.
    pub size_mb: u64,
    /// Used MB.
    pub usage_mb: u64,
    /// MHz.
    pub freq_mhz: u32,
    /// °C.
    pub temperature: i32,
    /// Bandwidth utilization percent.
    pub bandwidth_util: u32,
}

impl Sampler {
    /// A sampler for `topology` at Unix time `unix_ms`.
    pub fn at_unix_ms(topology: &Topology, unix_ms: u64) -> Sampler {
        let simulation = &topology.simulation;
        Sampler {
            seed: simulation.seed,
            sample_period_ms: simulation.sample_period_ms,
            tick: tick_at(unix_ms, simulation.sample_period_ms),
        }
    }

    /// A sampler for `topology` at tick `tick`.
    pub fn at_tick(topology: &Topology, tick: u64) -> Sampler {
        Sampler { seed: topology.simulation.seed, sample_period_ms: topology.simulation.sample_period_ms, tick }
    }

    /// The value of `signal` for (owner, quantity) at this tick.
    pub(crate) fn value(&self, signal: &Signal, owner: u32, quantity: u32) -> i64 {
        signal.sample(self.seed, SignalKey { owner, quantity }, self.tick, self.sample_period_ms)
    }

    fn percent(&self, signal: &Signal, owner: u32, quantity: u32) -> u32 {
        self.value(signal, owner, quantity).clamp(0, 100) as u32
    }

    /// Chip temperature in °C (`overriding` replaces the topology's signal).
    pub fn temperature(&self, chip: &Chip, overriding: Option<&Signal>) -> i32 {
        let signal = overriding.unwrap_or(&chip.telemetry.temperature);
        self.value(signal, chip.logic_id, quantity::TEMPERATURE).clamp(-275, i64::from(i32::MAX)) as i32
    }

    /// Chip power in 0.1 W.
    pub fn power(&self, chip: &Chip, overriding: Option<&Signal>) -> i32 {
        let signal = overriding.unwrap_or(&chip.telemetry.power);
        self.value(signal, chip.logic_id, quantity::POWER).clamp(0, i64::from(i32::MAX)) as i32
    }

    /// Voltage in 0.01 V.
    pub fn voltage(&self, chip: &Chip) -> u32 {
        self.value(&chip.telemetry.voltage, chip.logic_id, quantity::VOLTAGE).clamp(0, i64::from(i32::MAX - 1)) as u32
    }

    /// Card power from the MCU in 0.1 W.
    pub fn mcu_power(&self, card: &Card) -> i32 {
        let owner = 1000 + card.card_id.unsigned_abs();
        self.value(&card.mcu_power, owner, quantity::MCU_POWER).clamp(0, i64::from(i32::MAX)) as i32
    }

    /// Clock of `freq_type` in MHz, `None` when the family does not report that type.
    pub fn frequency(&self, chip: &Chip, freq_type: i32) -> Option<u32> {
        if !capabilities::supported_frequency_types(chip.chip_type).contains(&freq_type) {
            return None;
        }
        let signal = chip.telemetry.frequency.by_type(freq_type)?;
        let owner = chip.logic_id;
        Some(self.value(signal, owner, quantity::FREQUENCY_BASE + freq_type as u32).clamp(0, i64::from(u32::MAX)) as u32)
    }

    /// Utilization of `input_type` in percent, `None` when the family does not report it.
    pub fn utilization(&self, chip: &Chip, input_type: i32, aicore_override: Option<&Signal>) -> Option<u32> {
        if !capabilities::supports_utilization(chip.chip_type, input_type) {
            return None;
        }
        let mut signal = chip.telemetry.utilization.by_type(input_type)?;
        if input_type == capabilities::util_type::AICORE {
            signal = aicore_override.unwrap_or(signal);
        }
        Some(self.percent(signal, chip.logic_id, quantity::UTILIZATION_BASE + input_type as u32))
    }

    /// `(aic_util, aiv_util, aicore_util, npu_util)` of the multi-utilization calls: AI Cube, vector
    /// core, AI Core and NPU overall (0 for a type the family lacks).
    pub fn multi_utilization(&self, chip: &Chip, aicore_override: Option<&Signal>) -> [u32; 4] {
        use capabilities::util_type::*;
        [AICUBE, VECTORCORE, AICORE, NPU]
            .map(|input_type| self.utilization(chip, input_type, aicore_override).unwrap_or(0))
    }

    /// DDR memory.
    pub fn ddr(&self, chip: &Chip) -> DdrReading {
        let ddr = &chip.ddr;
        let size = ddr.size_mb;
        let used = self.value(&ddr.used_mb, chip.logic_id, quantity::DDR_USED).clamp(0, size as i64) as u64;
        let utilization = (used * 100).checked_div(size).unwrap_or(0) as u32;
        DdrReading { size_mb: size, available_mb: size - used, freq_mhz: ddr.freq_mhz, utilization }
    }

    /// HBM.
    pub fn hbm(&self, chip: &Chip) -> HbmReading {
        let hbm = &chip.hbm;
        let usage = self.value(&hbm.used_mb, chip.logic_id, quantity::HBM_USED).clamp(0, hbm.size_mb as i64) as u64;
        HbmReading {
            size_mb: hbm.size_mb,
            usage_mb: usage,
            freq_mhz: hbm.freq_mhz,
            temperature: self.value(&hbm.temperature, chip.logic_id, quantity::HBM_TEMPERATURE).clamp(-275, 1000)
                as i32,
            bandwidth_util: self.percent(&hbm.bandwidth_util, chip.logic_id, quantity::HBM_BANDWIDTH),
        }
    }

    /// AI-core utilization of vNPU `vdev_id` in percent.
    pub fn vnpu_aicore_utilization(&self, chip: &Chip, vdev_id: u32) -> u32 {
        self.percent(&chip.telemetry.vnpu_aicore_utilization, chip.logic_id, quantity::VNPU_BASE + vdev_id)
    }
}
