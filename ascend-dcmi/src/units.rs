//! Units for telemetry values: every quantity leaves this crate in its base unit, with the unit in the type.

use std::fmt;

/// A temperature in degrees Celsius (DCMI reports whole degrees).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Celsius(pub i32);

/// A power draw in watts (DCMI reports tenths of a watt).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Watts(pub f64);

impl Watts {
    /// Converts DCMI's tenths of a watt.
    pub fn from_deciwatts(deciwatts: i32) -> Self {
        Watts(f64::from(deciwatts) / 10.0)
    }
}

/// A voltage in volts (DCMI reports hundredths of a volt).
#[derive(Debug, Clone, Copy, PartialEq, PartialOrd, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Volts(pub f64);

impl Volts {
    /// Converts DCMI's hundredths of a volt.
    pub fn from_centivolts(centivolts: u32) -> Self {
        Volts(f64::from(centivolts) / 100.0)
    }
}

/// A clock frequency in megahertz.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct MegaHertz(pub u32);

impl MegaHertz {
    /// The frequency in hertz, the Prometheus base unit.
    pub fn hertz(self) -> u64 {
        u64::from(self.0) * 1_000_000
    }
}

/// A utilisation percentage, always within 0..=100.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct Percent(u8);

impl Percent {
    /// Checks a raw value from the driver; anything above 100 is not a percentage.
    pub fn new(value: u32) -> Option<Self> {
        u8::try_from(value).ok().filter(|v| *v <= 100).map(Percent)
    }

    /// The value, 0..=100.
    pub const fn get(self) -> u8 {
        self.0
    }

    /// The value as a ratio, 0.0..=1.0.
    pub fn ratio(self) -> f64 {
        f64::from(self.0) / 100.0
    }
}

/// Bytes in one of DCMI's megabytes (the driver's MB are mebibytes).
pub const BYTES_PER_MB: u64 = 1024 * 1024;

macro_rules! display_with_unit {
    ($($name:ident => $unit:literal),* $(,)?) => {$(
        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{}{}", self.0, $unit)
            }
        }
    )*};
}

display_with_unit!(Celsius => "C", Watts => "W", Volts => "V", MegaHertz => "MHz", Percent => "%");

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_use_the_driver_scales() {
        assert_eq!(Watts::from_deciwatts(653), Watts(65.3));
        assert_eq!(Volts::from_centivolts(85), Volts(0.85));
        assert_eq!(MegaHertz(1000).hertz(), 1_000_000_000);
        assert_eq!(Percent::new(101), None);
        assert_eq!(Percent::new(42).map(Percent::ratio), Some(0.42));
        assert_eq!(Celsius(61).to_string(), "61C");
    }
}
