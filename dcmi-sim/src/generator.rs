//! Seeded telemetry over time: a value is a constant or a wave plus bounded noise.
//!
//! Time is quantised into ticks of `simulation.sample_period_ms`, counted from the Unix epoch, so a
//! test holding the topology can compute exactly what the library returns for any instant: the value
//! only depends on (seed, chip logic id, quantity, tick). No allocation, no locks.

use serde::{Deserialize, Serialize};

/// A telemetry quantity in the unit of the DCMI call that returns it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Signal {
    /// Always this value.
    Constant(i64),
    /// `base + amplitude * sin(2π t / period_s) + noise`, clamped to `[min, max]`.
    Wave(Wave),
}

/// The time-varying form of a [`Signal`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Wave {
    /// Centre value.
    pub base: i64,
    /// Peak deviation of the sine (0 = none).
    #[serde(default)]
    pub amplitude: i64,
    /// Period of the sine in seconds (default 60).
    #[serde(default = "default_period_s")]
    pub period_s: f64,
    /// Uniform noise in `[-noise, +noise]`, drawn per tick from the seed (0 = none).
    #[serde(default)]
    pub noise: i64,
    /// Lower clamp (default: none).
    #[serde(default = "i64_min")]
    pub min: i64,
    /// Upper clamp (default: none).
    #[serde(default = "i64_max")]
    pub max: i64,
}

fn default_period_s() -> f64 {
    60.0
}
fn i64_min() -> i64 {
    i64::MIN
}
fn i64_max() -> i64 {
    i64::MAX
}

/// Identifies the quantity a signal feeds, so that two quantities of one chip get independent noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SignalKey {
    /// The chip's logic id (card index for card-level quantities, offset by 1000).
    pub owner: u32,
    /// A small number naming the quantity (see the constants in [`quantity`]).
    pub quantity: u32,
}

/// Quantity numbers used in [`SignalKey::quantity`].
#[allow(missing_docs)]
pub mod quantity {
    pub const TEMPERATURE: u32 = 1;
    pub const POWER: u32 = 2;
    pub const VOLTAGE: u32 = 3;
    pub const MCU_POWER: u32 = 4;
    pub const DDR_USED: u32 = 5;
    pub const HBM_USED: u32 = 6;
    pub const HBM_TEMPERATURE: u32 = 7;
    pub const HBM_BANDWIDTH: u32 = 8;
    /// Frequencies: `FREQUENCY_BASE + freq_type`.
    pub const FREQUENCY_BASE: u32 = 100;
    /// Utilizations: `UTILIZATION_BASE + input_type`.
    pub const UTILIZATION_BASE: u32 = 200;
    /// vNPU AI-core utilization: `VNPU_BASE + vdev_id`.
    pub const VNPU_BASE: u32 = 10_000;
}

impl Signal {
    /// The value at `tick` (ticks are `sample_period_ms` long, counted from the Unix epoch).
    pub(crate) fn sample(&self, seed: u64, key: SignalKey, tick: u64, sample_period_ms: u64) -> i64 {
        match *self {
            Signal::Constant(value) => value,
            Signal::Wave(wave) => wave.sample(seed, key, tick, sample_period_ms),
        }
    }
}

impl Wave {
    fn sample(&self, seed: u64, key: SignalKey, tick: u64, sample_period_ms: u64) -> i64 {
        let mut value = self.base;
        if self.amplitude != 0 && self.period_s > 0.0 {
            // Phase from the tick's start time; only the fractional part of the period matters, and
            // taking the remainder in integer milliseconds keeps the float small and exact.
            let period_ms = (self.period_s * 1000.0).max(1.0) as u64;
            let phase_ms = tick.wrapping_mul(sample_period_ms) % period_ms;
            let angle = std::f64::consts::TAU * phase_ms as f64 / period_ms as f64;
            value = value.saturating_add((self.amplitude as f64 * angle.sin()).round() as i64);
        }
        if self.noise > 0 {
            let span = (self.noise as u64).saturating_mul(2).saturating_add(1);
            let draw = (mix(seed, key, tick) % span) as i64;
            value = value.saturating_add(draw - self.noise);
        }
        value.clamp(self.min, self.max)
    }
}

/// SplitMix64 over (seed, key, tick): a cheap, well-distributed, allocation-free hash.
fn mix(seed: u64, key: SignalKey, tick: u64) -> u64 {
    let mut z = seed
        ^ (u64::from(key.owner) << 32 | u64::from(key.quantity)).wrapping_mul(0x9E37_79B9_7F4A_7C15)
        ^ tick.wrapping_mul(0xD6E8_FEB8_6659_FD93);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The tick that contains Unix time `unix_ms`.
pub fn tick_at(unix_ms: u64, sample_period_ms: u64) -> u64 {
    unix_ms / sample_period_ms.max(1)
}

/// Milliseconds since the Unix epoch now (0 if the clock is before 1970).
pub fn unix_now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: SignalKey = SignalKey { owner: 3, quantity: quantity::TEMPERATURE };

    #[test]
    fn constant_ignores_time() {
        let signal = Signal::Constant(42);
        assert_eq!(signal.sample(1, KEY, 0, 1000), 42);
        assert_eq!(signal.sample(9, KEY, 123_456, 1000), 42);
    }

    #[test]
    fn wave_is_deterministic_bounded_and_varies() {
        let wave = Signal::Wave(Wave { base: 50, amplitude: 10, period_s: 20.0, noise: 3, min: 0, max: 100 });
        let values: Vec<i64> = (0..200).map(|tick| wave.sample(7, KEY, tick, 1000)).collect();
        let again: Vec<i64> = (0..200).map(|tick| wave.sample(7, KEY, tick, 1000)).collect();
        assert_eq!(values, again);
        assert!(values.iter().all(|value| (37..=63).contains(value)), "{values:?}");
        assert!(values.iter().any(|value| *value > 55) && values.iter().any(|value| *value < 45));
        let other_seed: Vec<i64> = (0..200).map(|tick| wave.sample(8, KEY, tick, 1000)).collect();
        assert_ne!(values, other_seed);
    }

    #[test]
    fn clamps_apply() {
        let wave = Signal::Wave(Wave { base: 98, amplitude: 0, period_s: 1.0, noise: 10, min: 0, max: 100 });
        assert!((0..500).all(|tick| wave.sample(1, KEY, tick, 100) <= 100));
    }
}
