//! What the sampler can read: metric groups (polled together, on one interval) and the metrics in them.

use std::fmt;
use std::str::FromStr;
use std::time::Duration;

use crate::telemetry::{EccComponent, FrequencyKind, UtilizationKind};

/// Metrics that are polled together, on one interval, as one chain of calls per chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum MetricGroup {
    /// Every utilisation kind (Huawei's `utilization` group, 1 s).
    Utilization,
    /// Temperature, power, voltage, clocks, health and network health (Huawei's `npu` group, 5 s).
    ChipState,
    /// DDR, HBM, ECC counters and the processes using the chip (Huawei's `ddr` group, 10 s).
    Memory,
    /// What the chip is: names, board, PCIe address, serial number (Huawei's chip-list refresh, 60 s).
    ///
    /// The only group whose values own heap memory (behind an `Arc`). A refresh asks
    /// [`crate::DeviceManager::identity_unchanged`] first and keeps the `Arc` while the chip is unchanged, so only
    /// the first read and a real change allocate.
    Identity,
    /// Link counters: HCCS statistics per link, SIO CRC errors and the UB port counters of Ascend950 (Huawei's
    /// `hccs`, `sio` and `ub` groups, 60 s).
    Links,
    /// HCCS and PCIe bandwidth (Huawei's `hccs` and `pcie` groups, 60 s). Each call blocks for its profiling window
    /// (200 ms by default), so the group is [slow](MetricGroup::is_slow): it runs on its own schedule, workers and
    /// deadline and never delays the other groups.
    Bandwidth,
    /// The vNPUs of the chip with their activity: AI-core utilisation and memory per vNPU (310P; Huawei's `vnpu`
    /// group, 60 s).
    Vnpu,
}

impl MetricGroup {
    /// Every group, in index order.
    pub const ALL: [MetricGroup; 7] = [
        MetricGroup::Utilization,
        MetricGroup::ChipState,
        MetricGroup::Memory,
        MetricGroup::Identity,
        MetricGroup::Links,
        MetricGroup::Bandwidth,
        MetricGroup::Vnpu,
    ];

    /// Whether the group's calls block for a profiling window: such groups are polled apart from the others.
    pub const fn is_slow(self) -> bool {
        matches!(self, MetricGroup::Bandwidth)
    }

    /// Position in [`MetricGroup::ALL`].
    pub const fn index(self) -> usize {
        match self {
            MetricGroup::Utilization => 0,
            MetricGroup::ChipState => 1,
            MetricGroup::Memory => 2,
            MetricGroup::Identity => 3,
            MetricGroup::Links => 4,
            MetricGroup::Bandwidth => 5,
            MetricGroup::Vnpu => 6,
        }
    }

    /// A short snake_case name for logs and metrics.
    pub const fn name(self) -> &'static str {
        match self {
            MetricGroup::Utilization => "utilization",
            MetricGroup::ChipState => "chip_state",
            MetricGroup::Memory => "memory",
            MetricGroup::Identity => "identity",
            MetricGroup::Links => "links",
            MetricGroup::Bandwidth => "bandwidth",
            MetricGroup::Vnpu => "vnpu",
        }
    }

    /// The polling interval Huawei's exporter uses for the equivalent group.
    pub const fn default_interval(self) -> Duration {
        match self {
            MetricGroup::Utilization => Duration::from_secs(1),
            MetricGroup::ChipState => Duration::from_secs(5),
            MetricGroup::Memory => Duration::from_secs(10),
            MetricGroup::Identity | MetricGroup::Links | MetricGroup::Bandwidth | MetricGroup::Vnpu => {
                Duration::from_secs(60)
            }
        }
    }

    const fn bit(self) -> u8 {
        1 << self.index()
    }
}

impl fmt::Display for MetricGroup {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A set of [`MetricGroup`]s: the groups one polling round covers.
///
/// Not a `bitflags` type, on purpose: its members are [`MetricGroup`] values, which callers already name and pass
/// around; bitflags would add a second name for each group (`GroupSet::MEMORY` beside `MetricGroup::Memory`), and its
/// `contains` and `iter` take and yield sets, not groups. The representation is the one bitflags generates (one
/// byte, `Copy`, no heap, the same bit operations), so there is no speed to gain either.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GroupSet(u8);

impl GroupSet {
    /// No group.
    pub const EMPTY: GroupSet = GroupSet(0);
    /// Every group.
    pub const ALL: GroupSet = GroupSet(0b111_1111);
    /// The groups that are not [slow](MetricGroup::is_slow).
    pub const FAST: GroupSet = GroupSet(0b101_1111);
    /// The [slow](MetricGroup::is_slow) groups.
    pub const SLOW: GroupSet = GroupSet(0b10_0000);

    /// The set holding one group.
    pub const fn of(group: MetricGroup) -> Self {
        GroupSet(group.bit())
    }

    /// This set plus `group`.
    #[must_use]
    pub const fn with(self, group: MetricGroup) -> Self {
        GroupSet(self.0 | group.bit())
    }

    /// Whether `group` is in the set.
    pub const fn contains(self, group: MetricGroup) -> bool {
        self.0 & group.bit() != 0
    }

    /// Whether the set is empty.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The groups in either set.
    #[must_use]
    pub const fn union(self, other: GroupSet) -> Self {
        GroupSet(self.0 | other.0)
    }

    /// The groups in both sets.
    #[must_use]
    pub const fn intersection(self, other: GroupSet) -> Self {
        GroupSet(self.0 & other.0)
    }

    /// The groups in the set, in index order.
    pub fn iter(self) -> impl Iterator<Item = MetricGroup> {
        MetricGroup::ALL.into_iter().filter(move |group| self.contains(*group))
    }
}

impl From<MetricGroup> for GroupSet {
    fn from(group: MetricGroup) -> Self {
        GroupSet::of(group)
    }
}

impl FromIterator<MetricGroup> for GroupSet {
    fn from_iter<I: IntoIterator<Item = MetricGroup>>(groups: I) -> Self {
        groups.into_iter().fold(GroupSet::EMPTY, GroupSet::with)
    }
}

/// The ECC components the sampler reads, in the order of [`crate::MemorySample::ecc`].
pub const ECC_COMPONENTS: [EccComponent; 4] =
    [EccComponent::Ddr, EccComponent::Sram, EccComponent::Hbm, EccComponent::Npu];

/// One value the sampler can read for a chip. Selecting metrics ([`MetricSet`]) turns calls off, for example from the
/// exporter's metric-selection file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Metric {
    /// One utilisation kind.
    Utilization(UtilizationKind),
    /// Chip temperature.
    Temperature,
    /// Power draw.
    Power,
    /// Chip voltage.
    Voltage,
    /// One clock.
    Frequency(FrequencyKind),
    /// Health word and fault codes.
    Health,
    /// RoCE network health (training cards; -8255 elsewhere, remembered).
    NetworkHealth,
    /// DDR memory.
    DdrMemory,
    /// HBM.
    HbmMemory,
    /// ECC counters of one component.
    Ecc(EccComponent),
    /// Processes using the chip.
    Processes,
    /// Identity (slow, heap-owning data).
    Identity,
    /// HCCS message and CRC-error counters per link (910B, A3).
    HccsStatistics,
    /// SIO CRC errors between the dies of a card (A3, Ascend950).
    SioCrcErrors,
    /// HCCS bandwidth per link over a profiling window (910B, A3).
    HccsBandwidth,
    /// PCIe bandwidth over a profiling window (910B, Ascend950).
    PcieBandwidth,
    /// Every counter of every unified-bus port (Ascend950).
    UbPorts,
    /// The vNPUs with their activity (310P).
    Vnpus,
}

/// How many metrics exist; [`Metric::index`] is below it.
pub const METRIC_COUNT: usize = 36;

impl Metric {
    /// Every metric, in index order.
    pub const ALL: [Metric; METRIC_COUNT] = [
        Metric::Utilization(UtilizationKind::Memory),
        Metric::Utilization(UtilizationKind::AiCore),
        Metric::Utilization(UtilizationKind::AiCpu),
        Metric::Utilization(UtilizationKind::ControlCpu),
        Metric::Utilization(UtilizationKind::MemoryBandwidth),
        Metric::Utilization(UtilizationKind::Hbm),
        Metric::Utilization(UtilizationKind::Ddr),
        Metric::Utilization(UtilizationKind::HbmBandwidth),
        Metric::Utilization(UtilizationKind::VectorCore),
        Metric::Utilization(UtilizationKind::Overall),
        Metric::Utilization(UtilizationKind::AiCube),
        Metric::Temperature,
        Metric::Power,
        Metric::Voltage,
        Metric::Frequency(FrequencyKind::Ddr),
        Metric::Frequency(FrequencyKind::ControlCpu),
        Metric::Frequency(FrequencyKind::Hbm),
        Metric::Frequency(FrequencyKind::AiCoreCurrent),
        Metric::Frequency(FrequencyKind::AiCoreMax),
        Metric::Frequency(FrequencyKind::VectorCoreCurrent),
        Metric::Health,
        Metric::NetworkHealth,
        Metric::DdrMemory,
        Metric::HbmMemory,
        Metric::Ecc(EccComponent::Ddr),
        Metric::Ecc(EccComponent::Sram),
        Metric::Ecc(EccComponent::Hbm),
        Metric::Ecc(EccComponent::Npu),
        Metric::Processes,
        Metric::Identity,
        Metric::HccsStatistics,
        Metric::SioCrcErrors,
        Metric::HccsBandwidth,
        Metric::PcieBandwidth,
        Metric::UbPorts,
        Metric::Vnpus,
    ];

    /// Position in [`Metric::ALL`].
    pub const fn index(self) -> usize {
        match self {
            Metric::Utilization(kind) => utilization_index(kind),
            Metric::Temperature => 11,
            Metric::Power => 12,
            Metric::Voltage => 13,
            Metric::Frequency(kind) => 14 + frequency_index(kind),
            Metric::Health => 20,
            Metric::NetworkHealth => 21,
            Metric::DdrMemory => 22,
            Metric::HbmMemory => 23,
            Metric::Ecc(component) => 24 + ecc_index(component),
            Metric::Processes => 28,
            Metric::Identity => 29,
            Metric::HccsStatistics => 30,
            Metric::SioCrcErrors => 31,
            Metric::HccsBandwidth => 32,
            Metric::PcieBandwidth => 33,
            Metric::UbPorts => 34,
            Metric::Vnpus => 35,
        }
    }

    /// The group the metric is polled with.
    pub const fn group(self) -> MetricGroup {
        match self {
            Metric::Utilization(_) => MetricGroup::Utilization,
            Metric::Temperature
            | Metric::Power
            | Metric::Voltage
            | Metric::Frequency(_)
            | Metric::Health
            | Metric::NetworkHealth => MetricGroup::ChipState,
            Metric::DdrMemory | Metric::HbmMemory | Metric::Ecc(_) | Metric::Processes => MetricGroup::Memory,
            Metric::Identity => MetricGroup::Identity,
            Metric::HccsStatistics | Metric::SioCrcErrors | Metric::UbPorts => MetricGroup::Links,
            Metric::HccsBandwidth | Metric::PcieBandwidth => MetricGroup::Bandwidth,
            Metric::Vnpus => MetricGroup::Vnpu,
        }
    }

    /// The metric's name in selection files: `temperature`, `utilization.aicore`, `frequency.hbm`, `ecc.hbm` ...
    pub const fn name(self) -> &'static str {
        NAMES[self.index()]
    }

    const fn bit(self) -> u64 {
        1 << self.index()
    }
}

const NAMES: [&str; METRIC_COUNT] = [
    "utilization.memory",
    "utilization.aicore",
    "utilization.aicpu",
    "utilization.ctrl_cpu",
    "utilization.memory_bandwidth",
    "utilization.hbm",
    "utilization.ddr",
    "utilization.hbm_bandwidth",
    "utilization.vector_core",
    "utilization.overall",
    "utilization.aicube",
    "temperature",
    "power",
    "voltage",
    "frequency.ddr",
    "frequency.ctrl_cpu",
    "frequency.hbm",
    "frequency.aicore",
    "frequency.aicore_max",
    "frequency.vector_core",
    "health",
    "network_health",
    "ddr_memory",
    "hbm_memory",
    "ecc.ddr",
    "ecc.sram",
    "ecc.hbm",
    "ecc.npu",
    "processes",
    "identity",
    "hccs_statistics",
    "sio_crc_errors",
    "hccs_bandwidth",
    "pcie_bandwidth",
    "ub_ports",
    "vnpus",
];

/// Position of a utilisation kind in [`crate::UtilizationSample`] (and in [`UtilizationKind::ALL`]).
pub(crate) const fn utilization_index(kind: UtilizationKind) -> usize {
    match kind {
        UtilizationKind::Memory => 0,
        UtilizationKind::AiCore => 1,
        UtilizationKind::AiCpu => 2,
        UtilizationKind::ControlCpu => 3,
        UtilizationKind::MemoryBandwidth => 4,
        UtilizationKind::Hbm => 5,
        UtilizationKind::Ddr => 6,
        UtilizationKind::HbmBandwidth => 7,
        UtilizationKind::VectorCore => 8,
        UtilizationKind::Overall => 9,
        UtilizationKind::AiCube => 10,
    }
}

/// Position of a clock in [`crate::ChipStateSample`] (and in [`FrequencyKind::ALL`]).
pub(crate) const fn frequency_index(kind: FrequencyKind) -> usize {
    match kind {
        FrequencyKind::Ddr => 0,
        FrequencyKind::ControlCpu => 1,
        FrequencyKind::Hbm => 2,
        FrequencyKind::AiCoreCurrent => 3,
        FrequencyKind::AiCoreMax => 4,
        FrequencyKind::VectorCoreCurrent => 5,
    }
}

/// Position of an ECC component in [`ECC_COMPONENTS`].
pub(crate) const fn ecc_index(component: EccComponent) -> usize {
    match component {
        EccComponent::Ddr => 0,
        EccComponent::Sram => 1,
        EccComponent::Hbm => 2,
        EccComponent::Npu => 3,
    }
}

impl fmt::Display for Metric {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a [`Metric`] name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown metric {0:?}; known metrics: {names}", names = NAMES.join(", "))]
pub struct ParseMetricError(pub String);

impl FromStr for Metric {
    type Err = ParseMetricError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim();
        Metric::ALL.into_iter().find(|metric| metric.name() == wanted).ok_or_else(|| ParseMetricError(s.to_owned()))
    }
}

/// A selection of metrics, as a bit set (`Copy`, no heap).
///
/// Not a `bitflags` type, on purpose: its members are [`Metric`]s, most of which carry data
/// (`Metric::Utilization(kind)`, `Metric::Frequency(kind)`, `Metric::Ecc(component)`). bitflags needs a named constant
/// per bit, a second name for each metric that would have to follow the enum by hand, and its iteration yields flag
/// values rather than `Metric`s. The representation is the one bitflags generates (one `u64`, the same bit
/// operations), so there is no speed to gain either. bitflags is used where the members are named flags and nothing
/// else: `ascend_oci::RuntimeOptions`, the fault-event filter flags of `dcmi-sim`.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct MetricSet(u64);

impl MetricSet {
    /// No metric.
    pub const EMPTY: MetricSet = MetricSet(0);
    /// Every metric.
    pub const ALL: MetricSet = MetricSet((1 << METRIC_COUNT) - 1);

    /// Every metric of one group.
    pub fn group(group: MetricGroup) -> Self {
        Metric::ALL.into_iter().filter(|metric| metric.group() == group).collect()
    }

    /// This set plus `metric`.
    #[must_use]
    pub const fn with(self, metric: Metric) -> Self {
        MetricSet(self.0 | metric.bit())
    }

    /// This set without `metric`.
    #[must_use]
    pub const fn without(self, metric: Metric) -> Self {
        MetricSet(self.0 & !metric.bit())
    }

    /// Whether `metric` is selected.
    pub const fn contains(self, metric: Metric) -> bool {
        self.0 & metric.bit() != 0
    }

    /// Whether any metric of `group` is selected.
    pub fn selects_any_of(self, group: MetricGroup) -> bool {
        self.0 & MetricSet::group(group).0 != 0
    }

    /// How many metrics are selected.
    pub const fn len(self) -> usize {
        self.0.count_ones() as usize
    }

    /// Whether nothing is selected.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }

    /// The selected metrics, in index order.
    pub fn iter(self) -> impl Iterator<Item = Metric> {
        Metric::ALL.into_iter().filter(move |metric| self.contains(*metric))
    }

    pub(crate) const fn bits(self) -> u64 {
        self.0
    }

    pub(crate) const fn from_bits(bits: u64) -> Self {
        MetricSet(bits & MetricSet::ALL.0)
    }
}

impl Default for MetricSet {
    /// Every metric.
    fn default() -> Self {
        MetricSet::ALL
    }
}

impl fmt::Debug for MetricSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_set().entries(self.iter().map(Metric::name)).finish()
    }
}

impl FromIterator<Metric> for MetricSet {
    fn from_iter<I: IntoIterator<Item = Metric>>(metrics: I) -> Self {
        metrics.into_iter().fold(MetricSet::EMPTY, MetricSet::with)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_follow_the_table_order() {
        for (position, metric) in Metric::ALL.into_iter().enumerate() {
            assert_eq!(metric.index(), position, "{metric}");
            assert_eq!(metric.name().parse::<Metric>(), Ok(metric));
        }
        for kind in UtilizationKind::ALL {
            assert_eq!(UtilizationKind::ALL[utilization_index(kind)], kind);
            assert!(Metric::Utilization(kind).name().ends_with(kind.name()));
        }
        for kind in FrequencyKind::ALL {
            assert_eq!(FrequencyKind::ALL[frequency_index(kind)], kind);
            assert!(Metric::Frequency(kind).name().ends_with(kind.name()));
        }
        for component in ECC_COMPONENTS {
            assert_eq!(ECC_COMPONENTS[ecc_index(component)], component);
        }
    }

    #[test]
    fn sets_select_and_deselect() {
        let set = MetricSet::group(MetricGroup::ChipState).without(Metric::Voltage);
        assert!(set.contains(Metric::Temperature));
        assert!(!set.contains(Metric::Voltage));
        assert!(!set.contains(Metric::Utilization(UtilizationKind::AiCore)));
        assert!(set.selects_any_of(MetricGroup::ChipState));
        assert!(!set.selects_any_of(MetricGroup::Memory));
        assert_eq!(MetricSet::ALL.len(), METRIC_COUNT);
        let groups: usize = MetricGroup::ALL.iter().map(|group| MetricSet::group(*group).len()).sum();
        assert_eq!(groups, METRIC_COUNT);
        assert!(" nonsense ".parse::<Metric>().unwrap_err().to_string().contains("temperature"));
    }

    #[test]
    fn group_sets_iterate_in_order() {
        let set: GroupSet = [MetricGroup::Identity, MetricGroup::Utilization].into_iter().collect();
        assert_eq!(set.iter().collect::<Vec<_>>(), [MetricGroup::Utilization, MetricGroup::Identity]);
        assert!(GroupSet::EMPTY.is_empty());
        assert_eq!(GroupSet::ALL.iter().count(), MetricGroup::ALL.len());
    }
}
