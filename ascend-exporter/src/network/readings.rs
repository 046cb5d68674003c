//! What the network sampler keeps of one chip: per group, the last round's readings of each port and when they were
//! read.
//!
//! A round's result replaces the previous one, as Huawei's exporter replaces its cache entry each collection
//! (Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_network.go, CollectToCache): a reading
//! that failed in the last round is shown as Huawei shows it (`npu_chip_info_link_status` -1, every other name
//! absent), never as an older value.

use std::time::{Duration, Instant};

use ascend_hccn::{Bandwidth, LinkState, OpticalInfo, StatCounters, UbOpticalInfo};

use super::group::NetworkGroup;

/// A UB port of an Ascend950 chip, as the `udie` and `port` labels name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PortName {
    /// The die (`UdieID`).
    pub udie: u32,
    /// The port on the die (`PortID`).
    pub port: u32,
}

/// One port's readings; `port` is `None` on a training card, whose chip has one RoCE port.
#[derive(Debug, Clone, PartialEq)]
pub struct PortReadings<T> {
    /// The UB port, on Ascend950.
    pub port: Option<PortName>,
    /// What was read.
    pub readings: T,
}

/// The `network` group of one port; each field is `None` when its call failed.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct LinkReadings {
    /// Link state.
    pub link: Option<LinkState>,
    /// Link speed in bits per second (`None` also when the tool reports it unknown or the port is down).
    pub speed_bits_per_second: Option<f64>,
    /// How often the link came up (training cards only).
    pub link_ups: Option<u64>,
    /// Transmit and receive rates.
    pub bandwidth: Option<Bandwidth>,
}

/// The `optical` group of one port: a training card's module or an Ascend950 port's modules.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum OpticalReadings {
    /// `-optical -g` of a training card (mW, mV, °C).
    Training(OpticalInfo),
    /// `-g -optical` of a UB port (dBm).
    Ub(UbOpticalInfo),
}

/// One group's last round on one chip.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupReadings<T> {
    /// Every port read, in the tool's order; empty when even the port list could not be read.
    pub ports: Vec<PortReadings<T>>,
    /// The end of the round that gave these readings.
    pub read_at: Instant,
    /// The end of the last round in which every call of the group answered; `None` before the first.
    pub last_success: Option<Instant>,
}

impl<T> GroupReadings<T> {
    /// Age of the last fully successful read at `now`, `None` if there was none.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.last_success.map(|at| now.saturating_duration_since(at))
    }
}

/// Everything the network sampler knows about one chip; a group is `None` before its first round.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ChipNetwork {
    /// Link, speed, link-ups, bandwidth.
    pub network: Option<GroupReadings<LinkReadings>>,
    /// MAC and RoCE counters; `None` inside a port when `-stat` failed.
    pub roce: Option<GroupReadings<Option<StatCounters>>>,
    /// Optical modules; `None` inside a port when `-optical` failed.
    pub optical: Option<GroupReadings<Option<OpticalReadings>>>,
}

impl ChipNetwork {
    /// The age of one group's last fully successful read at `now`.
    pub fn age(&self, group: NetworkGroup, now: Instant) -> Option<Duration> {
        match group {
            NetworkGroup::Network => self.network.as_ref().and_then(|g| g.age(now)),
            NetworkGroup::Roce => self.roce.as_ref().and_then(|g| g.age(now)),
            NetworkGroup::Optical => self.optical.as_ref().and_then(|g| g.age(now)),
        }
    }

    /// The UB ports the last rounds listed (Ascend950), in the tool's order; empty on a training card.
    pub fn known_ports(&self) -> Vec<PortName> {
        let network = self.network.iter().flat_map(|g| g.ports.iter().filter_map(|p| p.port));
        let optical = self.optical.iter().flat_map(|g| g.ports.iter().filter_map(|p| p.port));
        let mut ports: Vec<PortName> = network.chain(optical).collect();
        let mut seen = std::collections::BTreeSet::new();
        ports.retain(|port| seen.insert(*port));
        ports
    }

    /// Whether a group has been read at least once (whatever the outcome).
    pub fn was_read(&self, group: NetworkGroup) -> bool {
        match group {
            NetworkGroup::Network => self.network.is_some(),
            NetworkGroup::Roce => self.roce.is_some(),
            NetworkGroup::Optical => self.optical.is_some(),
        }
    }
}
