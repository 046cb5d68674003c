//! A chip's network port with the defaults its family gets applied to its `[card.chip.network]`
//! ([`crate::hccn_tool::Network`]).

use crate::chip_type::ChipType;
use crate::network_port::Link;
use crate::topology::Chip;

/// A port's settings with every default applied.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortSettings {
    /// Link state.
    pub link: Link,
    /// RoCE speed in Mb/s (training chips).
    pub speed_mbps: u64,
    /// UB speed in G (Ascend950).
    pub ub_speed_gbps: u64,
    /// Link-up count before any overlay flap.
    pub link_up_count: u64,
    /// Packets received per second.
    pub rx_packets_per_s: u64,
    /// Packets sent per second.
    pub tx_packets_per_s: u64,
    /// An optical module is present.
    pub optical_present: bool,
    /// Module temperature in °C.
    pub optical_temperature_c: f64,
    /// Module supply voltage in mV.
    pub optical_vcc_mv: f64,
    /// Transmit power per lane in mW.
    pub tx_power_mw: f64,
    /// Receive power per lane in mW.
    pub rx_power_mw: f64,
}

impl PortSettings {
    /// The settings of `chip`'s port; `None` for a family without a network port (310, 310B, 310P).
    pub fn for_chip(chip: &Chip) -> Option<PortSettings> {
        let speed_mbps = match chip.chip_type {
            ChipType::Ascend910 => 100_000,
            ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950 => 200_000,
            ChipType::Ascend310 | ChipType::Ascend310B | ChipType::Ascend310P => return None,
        };
        let (default_rx, default_tx) = if chip.chip_type == ChipType::Ascend950 {
            (chip.ub.rx_packets_per_s, chip.ub.tx_packets_per_s)
        } else {
            (200_000, 200_000)
        };
        let set = chip.network.unwrap_or_default();
        Some(PortSettings {
            link: set.link.unwrap_or(Link::Up),
            speed_mbps: set.speed_mbps.unwrap_or(speed_mbps),
            ub_speed_gbps: set.ub_speed_gbps.unwrap_or(400),
            link_up_count: set.link_up_count.unwrap_or(1),
            rx_packets_per_s: set.rx_packets_per_s.unwrap_or(default_rx),
            tx_packets_per_s: set.tx_packets_per_s.unwrap_or(default_tx),
            optical_present: set.optical_present.unwrap_or(true),
            optical_temperature_c: set.optical_temperature_c.unwrap_or(45.0),
            optical_vcc_mv: set.optical_vcc_mv.unwrap_or(3300.0),
            tx_power_mw: set.tx_power_mw.unwrap_or(1.5),
            rx_power_mw: set.rx_power_mw.unwrap_or(1.2),
        })
    }
}
