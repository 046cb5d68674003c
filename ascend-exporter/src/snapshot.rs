//! The exporter's view of the NPUs: a snapshot that the background sampler publishes and every scrape renders.
//!
//! A scrape never calls the driver. It takes the latest [`Snapshot`] (an `Arc` clone) and renders it; how old each
//! group's values are is part of the snapshot, so a chip whose calls time out keeps its last values and shows up as
//! stale instead of stalling the scrape.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{
    Celsius, ChipIdentity, ChipIds, DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth,
    HccsStatistics, HealthReport, MegaHertz, NetworkHealth, PcieBandwidth, Percent, Power, ProcessList, SampleState,
    Sampled, SioCrcErrors, UbPortCounters, UtilizationKind, VnpuInventory, Volts,
};
use parking_lot::RwLock;

use crate::metric_group::MetricGroup;
use crate::network::ChipNetwork;

/// When a group of one chip was last read successfully, and whether the last attempt answered in time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupFreshness {
    /// The end of the last successful read, `None` if the group was never read.
    pub last_success: Option<Instant>,
    /// Whether the last attempt timed out or failed as a whole (the values kept are from `last_success`).
    pub stale: bool,
}

impl GroupFreshness {
    /// Age of the values at `now`, `None` if never read.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.last_success.map(|at| now.saturating_duration_since(at))
    }
}

/// A value with the outcome of its latest read: Huawei's exporter reports some values as -1 when the latest read
/// failed, where the native names keep the last good value (its age is in `ascend_npu_sample_age_seconds`).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Reading<T> {
    /// The last value read, however old.
    pub value: Option<T>,
    /// Whether the latest read failed (a DCMI error other than "not supported").
    pub failed: bool,
}

impl<T: Copy> Reading<T> {
    /// The reading of a sampled value; `None` when the chip does not offer it, it is switched off or not read yet.
    pub fn of(sampled: &Sampled<T>) -> Option<Self> {
        let failed = matches!(sampled.state(), SampleState::Failed { .. });
        let value = sampled.value().copied();
        (failed || value.is_some()).then_some(Reading { value, failed })
    }
}

/// Everything the exporter knows about one chip. `None` means "not read yet" or "the chip does not offer it".
#[derive(Debug, Clone)]
pub struct ChipSnapshot {
    /// The chip's ids; the physical id names it towards Kubernetes and in labels.
    pub ids: ChipIds,
    /// Identity data (slow group).
    pub identity: Option<Arc<ChipIdentity>>,
    /// Freshness per group, indexed by [`MetricGroup::index`].
    pub freshness: [GroupFreshness; MetricGroup::ALL.len()],
    /// Health word, fault codes and fault level.
    pub health: Option<HealthReport>,
    /// Chip temperature.
    pub temperature: Option<Celsius>,
    /// Chip (or, on 310P, card) power.
    pub power: Option<Power>,
    /// Chip voltage.
    pub voltage: Option<Volts>,
    /// Clocks that the chip reports.
    pub clocks: Vec<(FrequencyKind, MegaHertz)>,
    /// Utilisation kinds that the chip reports.
    pub utilization: Vec<(UtilizationKind, Percent)>,
    /// DDR memory (310 family, 910A).
    pub ddr: Option<DdrMemory>,
    /// HBM (910 family, 950).
    pub hbm: Option<HbmMemory>,
    /// ECC counters per memory component.
    pub ecc: Vec<(EccComponent, EccCounters)>,
    /// Processes on the chip.
    pub processes: Option<ProcessList>,
    /// RoCE network health.
    pub network: Option<NetworkHealth>,
    /// HCCS message and CRC-error counters per link (910B, A3).
    pub hccs_statistics: Option<Reading<HccsStatistics>>,
    /// SIO CRC errors between the dies of a card (A3, Ascend950).
    pub sio_crc_errors: Option<Reading<SioCrcErrors>>,
    /// HCCS bandwidth per link and in total (910B, A3).
    pub hccs_bandwidth: Option<Reading<HccsBandwidth>>,
    /// PCIe bandwidth (910B, Ascend950).
    pub pcie_bandwidth: Option<Reading<PcieBandwidth>>,
    /// Every counter of every UB port (Ascend950), from the last read that answered.
    pub ub_ports: Option<Arc<[UbPortCounters]>>,
    /// The chip's vNPUs with their activity.
    pub vnpus: Option<Arc<VnpuInventory>>,
    /// Readings through `hccn_tool` (link, counters, optical), when the network sampler runs.
    pub hccn: Option<Arc<ChipNetwork>>,
}

impl ChipSnapshot {
    /// A chip with ids only, nothing read yet.
    pub fn new(ids: ChipIds) -> Self {
        Self {
            ids,
            identity: None,
            freshness: [GroupFreshness::default(); MetricGroup::ALL.len()],
            health: None,
            temperature: None,
            power: None,
            voltage: None,
            clocks: Vec::new(),
            utilization: Vec::new(),
            ddr: None,
            hbm: None,
            ecc: Vec::new(),
            processes: None,
            network: None,
            hccs_statistics: None,
            sio_crc_errors: None,
            hccs_bandwidth: None,
            pcie_bandwidth: None,
            ub_ports: None,
            vnpus: None,
            hccn: None,
        }
    }

    /// Freshness of one group.
    pub fn freshness(&self, group: MetricGroup) -> GroupFreshness {
        self.freshness[group.index()]
    }

    /// Whether the chip answered the last attempt of every group it has been read for.
    pub fn is_up(&self) -> bool {
        self.freshness.iter().all(|group| !group.stale)
    }

    /// One utilisation kind, if the chip reports it.
    pub fn utilization_of(&self, kind: UtilizationKind) -> Option<Percent> {
        self.utilization.iter().find(|(k, _)| *k == kind).map(|(_, value)| *value)
    }

    /// One clock, if the chip reports it.
    pub fn clock_of(&self, kind: FrequencyKind) -> Option<MegaHertz> {
        self.clocks.iter().find(|(k, _)| *k == kind).map(|(_, value)| *value)
    }

    /// ECC counters of one component, if read.
    pub fn ecc_of(&self, component: EccComponent) -> Option<EccCounters> {
        self.ecc.iter().find(|(c, _)| *c == component).map(|(_, value)| *value)
    }
}

/// The state of every chip at one moment.
#[derive(Debug, Clone)]
pub struct Snapshot {
    /// When the sampler published it.
    pub published_at: Instant,
    /// The driver (DCMI) version, once read.
    pub driver_version: Option<String>,
    /// How many cards the driver lists (`dcmi_get_card_list`, read once); `None` where it has no cards (V2) or the
    /// read failed.
    pub cards: Option<usize>,
    /// Every chip, in logic-id order.
    pub chips: Vec<ChipSnapshot>,
}

impl Snapshot {
    /// A snapshot without chips, published now.
    pub fn empty() -> Self {
        Self { published_at: Instant::now(), driver_version: None, cards: None, chips: Vec::new() }
    }
}

/// Names one published state of a source's data: two equal revisions mean that [`SnapshotSource::latest`] would
/// render the same values, so a body rendered for the first can be served for the second.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SnapshotRevision {
    /// The sampler round that ended at this instant. Rounds run one at a time, so each ends at its own instant.
    RoundEnd(Instant),
    /// The n-th snapshot published into a [`SharedSnapshot`], counting from 1.
    Published(u64),
    /// A digest of a source's revision and the readings layered on it ([`crate::network::NetworkSource`]).
    Layered(u64),
}

/// Where a scrape gets the latest snapshot from.
pub trait SnapshotSource: Send + Sync + 'static {
    /// The latest snapshot, `None` before the sampler published its first one.
    fn latest(&self) -> Option<Arc<Snapshot>>;

    /// Which state [`latest`](Self::latest) would return, `None` before the first one; cheap (no copy of the chips),
    /// so that a scrape can tell whether its cached body is still current.
    fn revision(&self) -> Option<SnapshotRevision>;
}

/// A snapshot slot that a sampler thread writes and scrapes read; reads never wait on the driver.
#[derive(Debug, Default)]
pub struct SharedSnapshot {
    slot: RwLock<Option<(Arc<Snapshot>, u64)>>,
}

impl SharedSnapshot {
    /// An empty slot.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the latest snapshot.
    pub fn publish(&self, snapshot: Snapshot) {
        let mut slot = self.slot.write();
        let sequence = slot.as_ref().map_or(1, |(_, previous)| previous + 1);
        *slot = Some((Arc::new(snapshot), sequence));
    }
}

impl SnapshotSource for SharedSnapshot {
    fn latest(&self) -> Option<Arc<Snapshot>> {
        self.slot.read().as_ref().map(|(snapshot, _)| Arc::clone(snapshot))
    }

    fn revision(&self) -> Option<SnapshotRevision> {
        self.slot.read().as_ref().map(|(_, sequence)| SnapshotRevision::Published(*sequence))
    }
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{CardId, ChipLocator, DeviceId, LogicId, PhyId};

    use super::*;

    fn ids(phy: u32) -> ChipIds {
        ChipIds {
            logic: LogicId(phy),
            phy: PhyId(phy),
            locator: Some(ChipLocator { card: CardId(0), device: DeviceId(0) }),
        }
    }

    #[test]
    fn chip_is_down_when_any_group_is_stale() {
        let mut chip = ChipSnapshot::new(ids(0));
        assert!(chip.is_up());
        chip.freshness[MetricGroup::Memory.index()].stale = true;
        assert!(!chip.is_up());
    }

    #[test]
    fn age_counts_from_the_last_success() {
        let start = Instant::now();
        let freshness = GroupFreshness { last_success: Some(start), stale: false };
        assert_eq!(freshness.age(start + Duration::from_secs(3)), Some(Duration::from_secs(3)));
        assert_eq!(GroupFreshness::default().age(start), None);
    }

    #[test]
    fn shared_snapshot_hands_out_the_latest() {
        let shared = SharedSnapshot::new();
        assert!(shared.latest().is_none());
        let mut snapshot = Snapshot::empty();
        snapshot.chips.push(ChipSnapshot::new(ids(3)));
        shared.publish(snapshot);
        assert_eq!(shared.latest().map(|s| s.chips.len()), Some(1));
    }

    #[test]
    fn each_publish_is_a_new_revision() {
        let shared = SharedSnapshot::new();
        assert_eq!(shared.revision(), None);
        shared.publish(Snapshot::empty());
        let first = shared.revision();
        assert_eq!(shared.revision(), first, "reading does not change the revision");
        shared.publish(Snapshot::empty());
        assert_ne!(shared.revision(), first);
    }
}
