//! Everything the sampler knows about one chip: the values of every group, and how fresh each group is.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::metric::{ecc_index, frequency_index, utilization_index, GroupSet, MetricGroup};
use super::sampled::Sampled;
use crate::health::HealthReport;
use crate::identity::ChipIdentity;
use crate::ids::ChipIds;
use crate::links::{HccsStatistics, SioCrcErrors};
use crate::telemetry::{
    DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth, NetworkHealth, PcieBandwidth, Power,
    ProcessList, UtilizationKind,
};
use crate::ub_port::UbPortCounters;
use crate::units::{Celsius, MegaHertz, Percent, Volts};
use crate::vnpu::VnpuInventory;

/// The utilisation group: one value per [`UtilizationKind`].
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct UtilizationSample {
    by_kind: [Sampled<Percent>; 11],
}

impl UtilizationSample {
    /// One kind.
    pub fn get(&self, kind: UtilizationKind) -> &Sampled<Percent> {
        &self.by_kind[utilization_index(kind)]
    }

    pub(crate) fn get_mut(&mut self, kind: UtilizationKind) -> &mut Sampled<Percent> {
        &mut self.by_kind[utilization_index(kind)]
    }

    fn mark_timed_out(&mut self) {
        self.by_kind.iter_mut().for_each(Sampled::mark_timed_out);
    }
}

/// The chip-state group.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ChipStateSample {
    /// Chip temperature.
    pub temperature: Sampled<Celsius>,
    /// Power draw.
    pub power: Sampled<Power>,
    /// Chip voltage.
    pub voltage: Sampled<Volts>,
    frequencies: [Sampled<MegaHertz>; 6],
    /// Health word and fault codes.
    pub health: Sampled<HealthReport>,
    /// RoCE network health.
    pub network_health: Sampled<NetworkHealth>,
}

impl ChipStateSample {
    /// One clock.
    pub fn frequency(&self, kind: FrequencyKind) -> &Sampled<MegaHertz> {
        &self.frequencies[frequency_index(kind)]
    }

    pub(crate) fn frequency_mut(&mut self, kind: FrequencyKind) -> &mut Sampled<MegaHertz> {
        &mut self.frequencies[frequency_index(kind)]
    }

    fn mark_timed_out(&mut self) {
        self.temperature.mark_timed_out();
        self.power.mark_timed_out();
        self.voltage.mark_timed_out();
        self.frequencies.iter_mut().for_each(Sampled::mark_timed_out);
        self.health.mark_timed_out();
        self.network_health.mark_timed_out();
    }
}

/// The memory group.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct MemorySample {
    /// DDR memory.
    pub ddr: Sampled<DdrMemory>,
    /// HBM.
    pub hbm: Sampled<HbmMemory>,
    ecc: [Sampled<EccCounters>; 4],
    /// Processes using the chip.
    pub processes: Sampled<ProcessList>,
}

impl MemorySample {
    /// The ECC counters of one component.
    pub fn ecc(&self, component: EccComponent) -> &Sampled<EccCounters> {
        &self.ecc[ecc_index(component)]
    }

    pub(crate) fn ecc_mut(&mut self, component: EccComponent) -> &mut Sampled<EccCounters> {
        &mut self.ecc[ecc_index(component)]
    }

    fn mark_timed_out(&mut self) {
        self.ddr.mark_timed_out();
        self.hbm.mark_timed_out();
        self.ecc.iter_mut().for_each(Sampled::mark_timed_out);
        self.processes.mark_timed_out();
    }
}

/// The link group: HCCS, SIO and UB port counters.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct LinkSample {
    /// HCCS message and CRC-error counters per link.
    pub hccs: Sampled<HccsStatistics>,
    /// SIO CRC errors.
    pub sio: Sampled<SioCrcErrors>,
    /// The counters of every UB port (Ascend950). Behind an `Arc`: up to 30 ports of 48 counters would make every
    /// copy of the sample 12 KiB; a read allocates once per interval (60 s) on chips that have UB ports.
    pub ub: Sampled<Arc<[UbPortCounters]>>,
}

impl LinkSample {
    fn mark_timed_out(&mut self) {
        self.hccs.mark_timed_out();
        self.sio.mark_timed_out();
        self.ub.mark_timed_out();
    }
}

/// The bandwidth group, read over profiling windows.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BandwidthSample {
    /// HCCS bandwidth per link and in total.
    pub hccs: Sampled<HccsBandwidth>,
    /// PCIe bandwidth.
    pub pcie: Sampled<PcieBandwidth>,
}

impl BandwidthSample {
    fn mark_timed_out(&mut self) {
        self.hccs.mark_timed_out();
        self.pcie.mark_timed_out();
    }
}

/// How the latest rounds of one group went for one chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct GroupStatus {
    last_attempt: Option<Instant>,
    last_completed: Option<Instant>,
    timed_out: bool,
}

impl GroupStatus {
    /// When a round last tried this group on this chip.
    pub fn last_attempt(&self) -> Option<Instant> {
        self.last_attempt
    }

    /// When a round last completed this group's chain on this chip (each value in it is fresh or says why not).
    pub fn last_completed(&self) -> Option<Instant> {
        self.last_completed
    }

    /// Whether the latest attempt missed its deadline (or was skipped because an earlier call still hangs).
    pub fn timed_out(&self) -> bool {
        self.timed_out
    }

    /// The sample age: time since the chain last completed, `None` before the first completion.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.last_completed.map(|completed| now.saturating_duration_since(completed))
    }
}

/// One chip's sampled values.
/// `Clone` copies inline data and `Arc`s (the identity, the UB port counters, the vNPUs), so a snapshot never allocates.
/// `Clone` copies inline data and `Arc`s (the identity and the UB port counters), so a snapshot never allocates.
#[derive(Debug, Clone)]
pub struct ChipSample {
    ids: ChipIds,
    utilization: UtilizationSample,
    state: ChipStateSample,
    memory: MemorySample,
    identity: Sampled<Arc<ChipIdentity>>,
    links: LinkSample,
    bandwidth: BandwidthSample,
    vnpus: Sampled<Arc<VnpuInventory>>,
    groups: [GroupStatus; MetricGroup::ALL.len()],
    up: bool,
}

impl ChipSample {
    pub(crate) fn new(ids: ChipIds) -> Self {
        Self {
            ids,
            utilization: UtilizationSample::default(),
            state: ChipStateSample::default(),
            memory: MemorySample::default(),
            identity: Sampled::default(),
            links: LinkSample::default(),
            bandwidth: BandwidthSample::default(),
            vnpus: Sampled::default(),
            groups: [GroupStatus::default(); MetricGroup::ALL.len()],
            up: true,
        }
    }

    /// The chip's ids.
    pub fn ids(&self) -> &ChipIds {
        &self.ids
    }

    /// The utilisation group.
    pub fn utilization(&self) -> &UtilizationSample {
        &self.utilization
    }

    /// The chip-state group.
    pub fn state(&self) -> &ChipStateSample {
        &self.state
    }

    /// The memory group.
    pub fn memory(&self) -> &MemorySample {
        &self.memory
    }

    /// The identity group.
    pub fn identity(&self) -> &Sampled<Arc<ChipIdentity>> {
        &self.identity
    }

    /// The link group.
    pub fn links(&self) -> &LinkSample {
        &self.links
    }

    /// The bandwidth group.
    pub fn bandwidth(&self) -> &BandwidthSample {
        &self.bandwidth
    }

    /// The vNPU group: the chip's vNPUs with their activity.
    pub fn vnpus(&self) -> &Sampled<Arc<VnpuInventory>> {
        &self.vnpus
    }

    /// How the latest rounds of `group` went.
    pub fn group(&self, group: MetricGroup) -> &GroupStatus {
        &self.groups[group.index()]
    }

    /// Whether the chip answered its latest chain within the deadline (the exporter's `up` flag). `false` while a
    /// call to it hangs; values then keep their last reading, see [`GroupStatus::age`].
    pub fn is_up(&self) -> bool {
        self.up
    }

    pub(crate) fn utilization_mut(&mut self) -> &mut UtilizationSample {
        &mut self.utilization
    }

    pub(crate) fn state_mut(&mut self) -> &mut ChipStateSample {
        &mut self.state
    }

    pub(crate) fn memory_mut(&mut self) -> &mut MemorySample {
        &mut self.memory
    }

    pub(crate) fn identity_mut(&mut self) -> &mut Sampled<Arc<ChipIdentity>> {
        &mut self.identity
    }

    pub(crate) fn links_mut(&mut self) -> &mut LinkSample {
        &mut self.links
    }

    pub(crate) fn bandwidth_mut(&mut self) -> &mut BandwidthSample {
        &mut self.bandwidth
    }

    pub(crate) fn vnpus_mut(&mut self) -> &mut Sampled<Arc<VnpuInventory>> {
        &mut self.vnpus
    }

    /// Copies the values of `groups` from `source` (a worker's scratch copy). Only inline data and an `Arc` are
    /// copied.
    pub(crate) fn copy_groups_from(&mut self, source: &ChipSample, groups: GroupSet) {
        for group in groups.iter() {
            match group {
                MetricGroup::Utilization => self.utilization = source.utilization,
                MetricGroup::ChipState => self.state = source.state,
                MetricGroup::Memory => self.memory = source.memory,
                MetricGroup::Identity => self.identity.clone_from(&source.identity),
                MetricGroup::Links => self.links.clone_from(&source.links),
                MetricGroup::Bandwidth => self.bandwidth = source.bandwidth,
                MetricGroup::Vnpu => self.vnpus.clone_from(&source.vnpus),
            }
        }
    }

    /// Records that the chain for `groups`, started at `started`, completed.
    pub(crate) fn complete(&mut self, groups: GroupSet, started: Instant, completed: Instant) {
        for group in groups.iter() {
            self.groups[group.index()] =
                GroupStatus { last_attempt: Some(started), last_completed: Some(completed), timed_out: false };
        }
        self.up = true;
    }

    /// Records that the chain for `groups` missed its deadline (or was not started because the chip still hangs).
    pub(crate) fn time_out(&mut self, groups: GroupSet, attempted: Instant) {
        for group in groups.iter() {
            match group {
                MetricGroup::Utilization => self.utilization.mark_timed_out(),
                MetricGroup::ChipState => self.state.mark_timed_out(),
                MetricGroup::Memory => self.memory.mark_timed_out(),
                MetricGroup::Identity => self.identity.mark_timed_out(),
                MetricGroup::Links => self.links.mark_timed_out(),
                MetricGroup::Bandwidth => self.bandwidth.mark_timed_out(),
                MetricGroup::Vnpu => self.vnpus.mark_timed_out(),
            }
            let status = &mut self.groups[group.index()];
            status.last_attempt = Some(attempted);
            status.timed_out = true;
        }
        self.up = false;
    }
}
