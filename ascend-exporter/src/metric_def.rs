//! What a metric of the catalogue is: its name, type, naming scheme, group, help, and how to read it from a
//! snapshot (the views a reading gets). The driver's entries ([`crate::catalogue`]) and the network's
//! ([`crate::network::catalogue`]) are both made of these.

use std::time::Instant;

use ascend_dcmi::Vnpu as VnpuData;

use crate::metric_group::SampledGroup;
use crate::pod_attribution::ContainerRef;
use crate::sample::{LabelText, SampleSink};
use crate::snapshot::{ChipSnapshot, Snapshot};

/// The Prometheus type of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up; exposed with `_total`.
    Counter,
    /// Constant 1 carrying metadata in labels; exposed with `_info`.
    Info,
}

impl MetricKind {
    /// What a sample's name adds to its metric's: `_total` for a counter, `_info` for an info metric.
    pub const fn sample_suffix(self) -> &'static str {
        match self {
            MetricKind::Gauge => "",
            MetricKind::Counter => "_total",
            MetricKind::Info => "_info",
        }
    }
}

/// Which naming scheme a metric belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Naming {
    /// This exporter's Prometheus-conventional names (`ascend_npu_*`).
    Native,
    /// Huawei npu-exporter's names and labels (`npu_chip_info_*`, `machine_*`, `container_npu_*`).
    Huawei,
}

/// What one chip's extractor sees.
#[derive(Debug)]
pub struct ChipView<'a> {
    /// The chip.
    pub chip: &'a ChipSnapshot,
    /// Containers holding it.
    pub holders: &'a [ContainerRef],
    /// The render time, for sample ages.
    pub now: Instant,
    /// The render time as seconds since the Unix epoch, for sample timestamps.
    pub unix_now: f64,
    /// The driver version, once read.
    pub driver_version: Option<&'a str>,
}

/// What one container's extractor sees.
#[derive(Debug)]
pub struct ContainerView<'a> {
    /// The container.
    pub container: &'a ContainerRef,
    /// The chips it holds that the snapshot knows.
    pub chips: Vec<&'a ChipSnapshot>,
}

/// What one vNPU's extractor sees.
#[derive(Debug)]
pub struct VnpuView<'a> {
    /// The chip it is carved from.
    pub chip: &'a ChipSnapshot,
    /// The vNPU.
    pub vnpu: &'a VnpuData,
}

/// What a machine-wide extractor sees.
#[derive(Debug)]
pub struct MachineView<'a> {
    /// The latest snapshot, `None` before the first one.
    pub snapshot: Option<&'a Snapshot>,
    /// This exporter's version.
    pub exporter_version: &'static str,
    /// Whether the last PodResources `List` worked.
    pub pod_resources_reachable: bool,
}

/// How a metric's samples are read, and for which series.
#[derive(Debug, Clone, Copy)]
pub enum Extract {
    /// One set of samples per chip, on the chip's series labels.
    Chip(fn(&ChipView<'_>, &mut SampleSink)),
    /// One set of samples per container holding chips, on `namespace`, `pod`, `container`.
    Container(fn(&ContainerView<'_>, &mut SampleSink)),
    /// Machine-wide samples without series labels.
    Machine(fn(&MachineView<'_>, &mut SampleSink)),
    /// An info metric per chip: the labels of its one series beyond the chip's series labels, `None` to skip it.
    ChipInfo(fn(&ChipView<'_>) -> Option<InfoLabels>),
    /// One set of samples per vNPU, on the vNPU's series labels: in native naming every vNPU (holders as on chips),
    /// in Huawei naming only a vNPU that exactly one container holds, as Huawei's exporter does.
    Vnpu(fn(&VnpuView<'_>, &mut SampleSink)),
}

/// The labels of an info metric's series beyond the chip's series labels.
pub type InfoLabels = Vec<(&'static str, LabelText)>;

/// One metric of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    /// The name without the `_total`/`_info` suffix that the exposition format adds for counters and info metrics.
    pub name: &'static str,
    /// Prometheus type.
    pub kind: MetricKind,
    /// Naming scheme.
    pub naming: Naming,
    /// The sampling group whose values it shows; `None` for the exporter's own metrics, which are always served.
    pub group: Option<SampledGroup>,
    /// HELP text, with the unit where the name does not carry it.
    pub help: &'static str,
    /// Labels the metric adds to the series labels, for the docs.
    pub own_labels: &'static str,
    /// How to read it.
    pub extract: Extract,
}

impl MetricDef {
    /// The name as it appears in the exposition (with `_total` or `_info`).
    pub fn exposed_name(&self) -> String {
        format!("{}{}", self.name, self.kind.sample_suffix())
    }
}
