//! What a chip's network port is in a topology (`[card.chip.network]`) and what an overlay does to it
//! (`[chip.network]`): the schema and its checks. Public as `hccn_tool::{Link, Network, NetworkOverlay}`; the
//! defaults each chip family gets are `hccn_tool::PortSettings`.
//!
//! Every key is optional, so topology files written before the simulated `hccn_tool` existed describe the same host:
//! a training chip (910, 910B, A3) gets one RoCE port whose speed follows its family, an Ascend950 chip one port per
//! UB port of `[card.chip.ub]`, and a 310-family chip none.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::chip_type::ChipType;
use crate::error::Error;

/// A link state as topology and overlay files spell it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Link {
    /// Up.
    Up,
    /// Down.
    Down,
}

/// `[card.chip.network]`: the chip's network port (each UB port of an Ascend950 chip alike). Unset keys take the
/// defaults of [`crate::hccn_tool::PortSettings::for_chip`].
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Network {
    /// Link state (default up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// RoCE link speed in Mb/s (training chips; default 100 000 on the 910, 200 000 on the 910B and A3).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub speed_mbps: Option<u64>,
    /// UB port speed in G (Ascend950; default 400).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ub_speed_gbps: Option<u64>,
    /// Link-up count of `-link_stat` (default 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link_up_count: Option<u64>,
    /// Packets received per second (default: `ub.rx_packets_per_s` on Ascend950, else 200 000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_packets_per_s: Option<u64>,
    /// Packets sent per second (default: `ub.tx_packets_per_s` on Ascend950, else 200 000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_packets_per_s: Option<u64>,
    /// An optical module sits in the port (default true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optical_present: Option<bool>,
    /// The module's temperature in °C (default 45).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optical_temperature_c: Option<f64>,
    /// The module's supply voltage in mV (default 3300).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub optical_vcc_mv: Option<f64>,
    /// Transmit power of every lane in mW (default 1.5, +1.8 dBm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tx_power_mw: Option<f64>,
    /// Receive power of every lane in mW (default 1.2, +0.8 dBm).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_power_mw: Option<f64>,
}

/// `[chip.network]` of an overlay: faults of the chip's port (every UB port of an Ascend950 chip) and of the tool
/// itself. Times count from the overlay file's modification time.
#[derive(Debug, Clone, Copy, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct NetworkOverlay {
    /// Link state replacing the topology's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub link: Option<Link>,
    /// A flapping link: down for this many ms, then up as long, and so on (each return counts as a link-up).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub flap_period_ms: Option<u64>,
    /// Receive power falling by this many mW per second on every lane, down to nothing.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rx_power_fall_mw_per_s: Option<f64>,
    /// A slow tool: every answer about the chip comes this many ms late.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_delay_ms: Option<u64>,
    /// A hung tool: a call about the chip never exits (it sleeps `simulation.hang_ms`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_hangs: Option<bool>,
}

/// Checks `[card.chip.network]` (`network`) of the chip at `at` (a field path such as `card[0].chip[1]`), a chip of
/// family `chip_type`.
pub(crate) fn validate_network(network: &Network, chip_type: ChipType, at: &str, file: &Path) -> Result<(), Error> {
    let fail = |field: &str, problem: String| Err(Error::config(file, format!("{at}.network.{field}"), problem));
    if !chip_type.is_910_family() && chip_type != ChipType::Ascend950 {
        return fail("(table)", format!("{chip_type} chips have no network port for hccn_tool"));
    }
    for (field, value) in [("speed_mbps", network.speed_mbps), ("ub_speed_gbps", network.ub_speed_gbps)] {
        if value == Some(0) {
            return fail(field, "must be at least 1".into());
        }
    }
    let readings = [
        ("optical_temperature_c", network.optical_temperature_c, -60.0, 200.0),
        ("optical_vcc_mv", network.optical_vcc_mv, 0.0, 10_000.0),
        ("tx_power_mw", network.tx_power_mw, 0.0, 100.0),
        ("rx_power_mw", network.rx_power_mw, 0.0, 100.0),
    ];
    for (field, value, low, high) in readings {
        if let Some(value) = value.filter(|value| !(low..=high).contains(value)) {
            return fail(field, format!("{value} is outside {low}..={high}"));
        }
    }
    Ok(())
}

/// Checks `[chip.network]` of the overlay entry at `at` (such as `chip[0]`).
pub(crate) fn validate_network_overlay(overlay: &NetworkOverlay, at: &str, file: &Path) -> Result<(), Error> {
    let fail = |field: &str, problem: &str| Err(Error::config(file, format!("{at}.network.{field}"), problem));
    if overlay.flap_period_ms == Some(0) {
        return fail("flap_period_ms", "must be at least 1");
    }
    if overlay.rx_power_fall_mw_per_s.is_some_and(|rate| !(0.0..=1000.0).contains(&rate)) {
        return fail("rx_power_fall_mw_per_s", "must be 0..=1000");
    }
    Ok(())
}
