//! A port's state at an instant: the topology's settings advanced by wall time, with the overlay's faults applied.
//!
//! Deterministic: the state is a function of the settings, the faults, the time the overlay was written and the
//! instant asked for (quantised to `simulation.sample_period_ms` by the caller), so every process answers the same
//! within one tick. Counters count from the Unix epoch, as the simulator's telemetry ticks do, so they only grow.

use super::port_settings::PortSettings;
use crate::network_port::{Link, NetworkOverlay};

/// Bytes per packet behind the bandwidth figures.
const BYTES_PER_PACKET: u64 = 1024;

/// The faults of an overlay entry and when they began (the overlay file's modification time).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Faults {
    /// The entry.
    pub overlay: NetworkOverlay,
    /// When it was written, in ms since the Unix epoch.
    pub since_ms: u64,
}

/// The readings of an optical module.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Optical {
    /// Temperature in °C.
    pub temperature_c: f64,
    /// Supply voltage in mV.
    pub vcc_mv: f64,
    /// Transmit power per lane in mW.
    pub tx_power_mw: f64,
    /// Receive power per lane in mW.
    pub rx_power_mw: f64,
}

/// What the tool reports about one port.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PortState {
    /// Link state.
    pub link: Link,
    /// How often the link came up.
    pub link_up_count: u64,
    /// Packets received since the epoch.
    pub rx_packets: u64,
    /// Packets sent since the epoch.
    pub tx_packets: u64,
    /// Receive rate in MB/s (0 while down).
    pub rx_megabytes_per_s: f64,
    /// Transmit rate in MB/s (0 while down).
    pub tx_megabytes_per_s: f64,
    /// The optical module, if one is present.
    pub optical: Option<Optical>,
}

impl PortState {
    /// The state at `now_ms` (ms since the Unix epoch).
    pub fn at(settings: &PortSettings, faults: Option<&Faults>, now_ms: u64) -> PortState {
        let overlay = faults.map(|faults| faults.overlay).unwrap_or_default();
        let since_ms = faults.map_or(now_ms, |faults| faults.since_ms.min(now_ms));
        let elapsed_ms = now_ms - since_ms;
        let mut link = overlay.link.unwrap_or(settings.link);
        let mut link_up_count = settings.link_up_count;
        if let Some(period) = overlay.flap_period_ms {
            // Down first, then up, each for one period; every return to up counts.
            let phase = elapsed_ms / period;
            link = if phase.is_multiple_of(2) { Link::Down } else { Link::Up };
            link_up_count += phase.div_ceil(2);
        }
        // A link an overlay took down stops counting when the overlay was written.
        let counting_until_ms = if overlay.link == Some(Link::Down) { since_ms } else { now_ms };
        let packets = |per_second: u64| per_second.saturating_mul(counting_until_ms / 1000);
        let rate = |per_second: u64| match link {
            Link::Up => (per_second * BYTES_PER_PACKET) as f64 / 1_000_000.0,
            Link::Down => 0.0,
        };
        let fall = overlay.rx_power_fall_mw_per_s.unwrap_or(0.0) * elapsed_ms as f64 / 1000.0;
        let optical = settings.optical_present.then(|| Optical {
            temperature_c: settings.optical_temperature_c,
            vcc_mv: settings.optical_vcc_mv,
            tx_power_mw: settings.tx_power_mw,
            rx_power_mw: (settings.rx_power_mw - fall).max(0.0),
        });
        PortState {
            link,
            link_up_count,
            rx_packets: packets(settings.rx_packets_per_s),
            tx_packets: packets(settings.tx_packets_per_s),
            rx_megabytes_per_s: rate(settings.rx_packets_per_s),
            tx_megabytes_per_s: rate(settings.tx_packets_per_s),
            optical,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn settings() -> PortSettings {
        PortSettings {
            link: Link::Up,
            speed_mbps: 200_000,
            ub_speed_gbps: 400,
            link_up_count: 1,
            rx_packets_per_s: 1000,
            tx_packets_per_s: 500,
            optical_present: true,
            optical_temperature_c: 45.0,
            optical_vcc_mv: 3300.0,
            tx_power_mw: 1.0,
            rx_power_mw: 0.8,
        }
    }

    #[test]
    fn counters_grow_with_time_and_stop_when_an_overlay_takes_the_link_down() {
        let early = PortState::at(&settings(), None, 10_000);
        let late = PortState::at(&settings(), None, 20_000);
        assert_eq!((early.rx_packets, late.rx_packets, late.tx_packets), (10_000, 20_000, 10_000));
        let down =
            Faults { overlay: NetworkOverlay { link: Some(Link::Down), ..Default::default() }, since_ms: 15_000 };
        let state = PortState::at(&settings(), Some(&down), 20_000);
        assert_eq!((state.link, state.rx_packets, state.rx_megabytes_per_s), (Link::Down, 15_000, 0.0));
    }

    #[test]
    fn a_flapping_link_alternates_and_counts_each_return() {
        let flap = Faults { overlay: NetworkOverlay { flap_period_ms: Some(100), ..Default::default() }, since_ms: 0 };
        let at = |ms| {
            let state = PortState::at(&settings(), Some(&flap), ms);
            (state.link, state.link_up_count)
        };
        assert_eq!(at(50), (Link::Down, 1));
        assert_eq!(at(150), (Link::Up, 2));
        assert_eq!(at(250), (Link::Down, 2));
        assert_eq!(at(350), (Link::Up, 3));
    }

    #[test]
    fn receive_power_falls_to_nothing() {
        let overlay = NetworkOverlay { rx_power_fall_mw_per_s: Some(0.1), ..Default::default() };
        let falling = Faults { overlay, since_ms: 1000 };
        let rx = |ms| PortState::at(&settings(), Some(&falling), ms).optical.map(|optical| optical.rx_power_mw);
        assert!((rx(3000).unwrap_or_default() - 0.6).abs() < 1e-9);
        assert_eq!(rx(60_000), Some(0.0));
    }
}
