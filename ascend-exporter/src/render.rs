//! Rendering a snapshot: the catalogue walked at scrape time, each metric's samples written by the
//! [`TextEncoder`] in the format the scraper asked for.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use crate::catalogue::{ChipView, ContainerView, Extract, MachineView, MetricDef, Naming, VnpuView, CATALOGUE};
use crate::exposition_format::ExpositionFormat;
use crate::pod_attribution::{PodAttribution, SharedAttribution};
use crate::sample::SampleSink;
use crate::selection::Selection;
use crate::series_labels::{
    container_labels, huawei_chip_labels, huawei_npu_name_labels, huawei_vnpu_labels, native_chip_labels,
    native_vnpu_labels, SeriesLabels, HUAWEI_NPU_NAME,
};
use crate::snapshot::{Snapshot, SnapshotSource};
use crate::text_encoder::{Family, SeriesText, TextEncoder};
use ascend_dcmi::ChipType;

/// Which naming schemes to serve (`--metrics.naming`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum NamingMode {
    /// Prometheus-conventional `ascend_npu_*` names only.
    Native,
    /// Huawei npu-exporter names and labels only.
    Huawei,
    /// Both sets.
    Both,
}

impl NamingMode {
    fn includes(self, naming: Naming) -> bool {
        matches!(
            (self, naming),
            (NamingMode::Both, _) | (NamingMode::Native, Naming::Native) | (NamingMode::Huawei, Naming::Huawei)
        )
    }
}

/// The metrics to serve, fixed at start-up.
#[derive(Debug, Clone)]
pub struct RenderPlan {
    metrics: Vec<&'static MetricDef>,
    uses_huawei_labels: bool,
}

impl RenderPlan {
    /// Every catalogue entry of the chosen naming schemes that the selection serves.
    pub fn new(naming: NamingMode, selection: &Selection) -> Self {
        let metrics: Vec<&'static MetricDef> =
            CATALOGUE.iter().filter(|m| naming.includes(m.naming) && selection.serves(m)).collect();
        let uses_huawei_labels = metrics.iter().any(|m| m.naming == Naming::Huawei);
        Self { metrics, uses_huawei_labels }
    }

    /// The metrics, in catalogue order.
    pub fn metrics(&self) -> &[&'static MetricDef] {
        &self.metrics
    }
}

/// What a render reads: the latest snapshot and pod attribution, and the plan.
pub struct SnapshotCollector {
    source: Arc<dyn SnapshotSource>,
    attribution: Arc<SharedAttribution>,
    plan: RenderPlan,
    exporter_version: &'static str,
}

impl std::fmt::Debug for SnapshotCollector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SnapshotCollector").field("metrics", &self.plan.metrics.len()).finish_non_exhaustive()
    }
}

/// Per-render data: the chips' series labels in both schemes (as text, written by every sample of the chip) and the
/// attribution.
struct RenderContext<'a> {
    snapshot: Option<&'a Snapshot>,
    attribution: &'a PodAttribution,
    native_labels: Vec<SeriesText>,
    /// Huawei's labels, from which `npu_chip_info_name`'s are made.
    huawei_labels: Vec<SeriesLabels>,
    huawei_text: Vec<SeriesText>,
    /// Whether the host's chips are Ascend950s, whose Huawei `network` metrics have HELP texts of their own.
    ascend950: bool,
    now: Instant,
    unix_now: f64,
}

impl SnapshotCollector {
    /// A collector serving `plan` from `source`.
    pub fn new(
        source: Arc<dyn SnapshotSource>,
        attribution: Arc<SharedAttribution>,
        plan: RenderPlan,
        exporter_version: &'static str,
    ) -> Self {
        Self { source, attribution, plan, exporter_version }
    }

    /// Writes `metric`'s family: nothing if it has no sample.
    fn write_metric(
        &self,
        encoder: &mut TextEncoder,
        metric: &MetricDef,
        context: &RenderContext<'_>,
        sink: &mut SampleSink,
    ) {
        let renamed: Vec<SeriesText>;
        let chip_labels = match metric.naming {
            Naming::Native => &context.native_labels,
            Naming::Huawei if metric.name == HUAWEI_NPU_NAME => {
                renamed = context
                    .huawei_labels
                    .iter()
                    .map(|labels| SeriesText::new(&huawei_npu_name_labels(labels)))
                    .collect();
                &renamed
            }
            Naming::Huawei => &context.huawei_text,
        };
        let chips = context.snapshot.map_or(&[][..], |s| s.chips.as_slice());
        let driver_version = context.snapshot.and_then(|s| s.driver_version.as_deref());
        let mut family = encoder.family(metric.name, help_of(metric, context.ascend950), metric.kind);
        match metric.extract {
            Extract::Chip(extract) => {
                for (chip, labels) in chips.iter().zip(chip_labels) {
                    let holders = context.attribution.holders_of(chip.ids.phy);
                    let view = ChipView { chip, holders, now: context.now, unix_now: context.unix_now, driver_version };
                    extract(&view, sink);
                    write_samples(&mut family, labels, sink);
                }
            }
            Extract::ChipInfo(extract) => {
                for (chip, labels) in chips.iter().zip(chip_labels) {
                    let holders = context.attribution.holders_of(chip.ids.phy);
                    let view = ChipView { chip, holders, now: context.now, unix_now: context.unix_now, driver_version };
                    if let Some(own) = extract(&view) {
                        family.sample(labels, &own, 1.0);
                    }
                }
            }
            Extract::Vnpu(extract) => {
                for chip in chips {
                    for vnpu in chip.vnpus.iter().flat_map(|inventory| inventory.vnpus.iter()) {
                        let holders = context.attribution.holders_of_vnpu(chip.ids.phy, vnpu.id);
                        let labels = match (metric.naming, holders) {
                            (Naming::Native, _) => native_vnpu_labels(chip.ids.phy, vnpu.id, holders),
                            (Naming::Huawei, [holder]) => huawei_vnpu_labels(chip, vnpu, holder),
                            (Naming::Huawei, _) => continue,
                        };
                        extract(&VnpuView { chip, vnpu }, sink);
                        write_samples(&mut family, &SeriesText::new(&labels), sink);
                    }
                }
            }
            Extract::Container(extract) => {
                for (container, phys) in context.attribution.containers() {
                    let held = chips.iter().filter(|chip| phys.contains(&chip.ids.phy)).collect();
                    extract(&ContainerView { container, chips: held }, sink);
                    write_samples(&mut family, &SeriesText::new(&container_labels(container)), sink);
                }
            }
            Extract::Machine(extract) => {
                let view = MachineView {
                    snapshot: context.snapshot,
                    exporter_version: self.exporter_version,
                    pod_resources_reachable: self.attribution.is_reachable(),
                };
                extract(&view, sink);
                write_samples(&mut family, &SeriesText::default(), sink);
            }
        }
    }

    /// The latest snapshot in `format`, written into a body of `capacity` bytes.
    fn render(&self, format: ExpositionFormat, capacity: usize) -> String {
        let snapshot = self.source.latest();
        let attribution = self.attribution.latest();
        let chips = snapshot.as_deref().map_or(&[][..], |s| s.chips.as_slice());
        let native_labels = chips
            .iter()
            .map(|chip| SeriesText::new(&native_chip_labels(chip.ids.phy, attribution.holders_of(chip.ids.phy))))
            .collect();
        let huawei_labels: Vec<SeriesLabels> = if self.plan.uses_huawei_labels {
            chips.iter().map(|chip| huawei_chip_labels(chip, attribution.holders_of(chip.ids.phy))).collect()
        } else {
            Vec::new()
        };
        let huawei_text = huawei_labels.iter().map(|labels| SeriesText::new(labels)).collect();
        let context = RenderContext {
            snapshot: snapshot.as_deref(),
            attribution: &attribution,
            native_labels,
            huawei_labels,
            huawei_text,
            ascend950: chips.iter().find_map(|chip| chip.identity.as_ref().and_then(|id| id.chip_type))
                == Some(ChipType::Ascend950),
            now: Instant::now(),
            unix_now: SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64(),
        };
        let mut encoder = TextEncoder::new(format, capacity);
        let mut sink = SampleSink::new();
        for metric in &self.plan.metrics {
            self.write_metric(&mut encoder, metric, &context, &mut sink);
        }
        encoder.finish()
    }
}

/// The samples an extractor left in `sink`, each a line of `family` on `series`; the sink is emptied.
fn write_samples(family: &mut Family<'_>, series: &SeriesText, sink: &mut SampleSink) {
    for sample in sink.samples() {
        family.sample(series, sample.labels(), sample.value);
    }
    sink.clear();
}

/// A metric's HELP: its own, except Huawei's `network` names on an Ascend950 host, which Huawei's exporter describes
/// per UB port ([`crate::network::catalogue::UB_PORT_HELP`]).
fn help_of(metric: &MetricDef, ascend950: bool) -> &'static str {
    let ub_port = crate::network::catalogue::UB_PORT_HELP.iter().find(|(name, _)| *name == metric.name);
    match ub_port {
        Some((_, help)) if metric.naming == Naming::Huawei && ascend950 => help,
        _ => metric.help,
    }
}

/// The renderer of both text formats over one collector.
#[derive(Debug)]
pub struct Exposition {
    collector: SnapshotCollector,
}

impl Exposition {
    /// Renders what `collector` reads.
    pub fn new(collector: SnapshotCollector) -> Self {
        Self { collector }
    }

    /// Renders the latest snapshot.
    pub fn render(&self, format: ExpositionFormat) -> String {
        self.render_with_capacity(format, 64 * 1024)
    }

    /// Renders the latest snapshot into a buffer of `capacity` bytes, so that a body of the expected size is written
    /// without the buffer growing (and copying) along the way.
    pub fn render_with_capacity(&self, format: ExpositionFormat, capacity: usize) -> String {
        self.collector.render(format, capacity)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use ascend_dcmi::{
        CardId, Celsius, ChipIds, ChipLocator, DeviceId, HbmMemory, HealthReport, LogicId, Percent, PhyId, Power,
        UtilizationKind, Watts,
    };

    use super::*;
    use crate::metric_group::MetricGroup;
    use crate::pod_attribution::{AssignedDevices, ContainerAssignment, ContainerRef};
    use crate::snapshot::{ChipSnapshot, GroupFreshness, SharedSnapshot};
    use ascend_node::naming::ResourceNaming;

    fn chip(logic: u32, phy: u32, temperature: i32, aicore: u32) -> ChipSnapshot {
        let ids = ChipIds {
            logic: LogicId(logic),
            phy: PhyId(phy),
            locator: Some(ChipLocator { card: CardId(logic as i32), device: DeviceId(0) }),
        };
        let mut chip = ChipSnapshot::new(ids);
        chip.temperature = Some(Celsius(temperature));
        chip.power = Some(Power::Chip(Watts(281.5)));
        chip.health = Some(HealthReport::healthy());
        chip.utilization = vec![(UtilizationKind::AiCore, Percent::new(aicore).expect("percent"))];
        chip.hbm = Some(HbmMemory { total_bytes: 64 << 30, used_bytes: 16 << 30, ..HbmMemory::default() });
        chip
    }

    fn exposition(naming: NamingMode, stale_second_chip: bool) -> Exposition {
        let shared = Arc::new(SharedSnapshot::new());
        let mut second = chip(1, 0, 91, 0);
        let now = Instant::now();
        for group in MetricGroup::ALL {
            second.freshness[group.index()] =
                GroupFreshness { last_success: Some(now - Duration::from_secs(7)), stale: false };
        }
        second.freshness[MetricGroup::Utilization.index()].stale = stale_second_chip;
        shared.publish(Snapshot {
            published_at: now,
            driver_version: Some("24.1.rc2".into()),
            cards: Some(2),
            chips: vec![chip(0, 4, 52, 55), second],
        });
        let attribution = Arc::new(SharedAttribution::new());
        attribution.publish(PodAttribution::from_assignments(
            &[ContainerAssignment {
                container: ContainerRef { namespace: "ml".into(), pod: "train-0".into(), container: "worker".into() },
                devices: vec![AssignedDevices {
                    resource_name: "huawei.com/Ascend910".into(),
                    device_ids: vec!["Ascend910-4".into()],
                }],
            }],
            &ResourceNaming::default(),
        ));
        let plan = RenderPlan::new(naming, &Selection::default());
        Exposition::new(SnapshotCollector::new(shared, attribution, plan, "0.1.0"))
    }

    fn render(naming: NamingMode, format: ExpositionFormat) -> String {
        exposition(naming, true).render(format)
    }

    #[test]
    fn native_series_carry_chip_and_pod_labels() {
        let text = render(NamingMode::Native, ExpositionFormat::OpenMetrics);
        let expected = [
            "ascend_npu_temperature_celsius{chip=\"4\",namespace=\"ml\",pod=\"train-0\",container=\"worker\"} 52",
            "ascend_npu_temperature_celsius{chip=\"0\",namespace=\"\",pod=\"\",container=\"\"} 91",
            "ascend_npu_utilization_ratio{chip=\"4\",namespace=\"ml\",pod=\"train-0\",container=\"worker\",unit=\"aicore\"} 0.55",
            "ascend_npu_power_watts{chip=\"4\",namespace=\"ml\",pod=\"train-0\",container=\"worker\",scope=\"chip\"} 281.5",
            "ascend_npu_memory_used_bytes{chip=\"4\",namespace=\"ml\",pod=\"train-0\",container=\"worker\",memory=\"hbm\"} 17179869184",
            "ascend_npu_up{chip=\"4\",namespace=\"ml\",pod=\"train-0\",container=\"worker\"} 1",
            "ascend_npu_up{chip=\"0\",namespace=\"\",pod=\"\",container=\"\"} 0",
            "ascend_npu_container_chips{namespace=\"ml\",pod=\"train-0\",container=\"worker\"} 1",
            "ascend_npu_exporter_build_info{version=\"0.1.0\"} 1",
            "ascend_npu_chips 2",
            "ascend_npu_pod_resources_up 1",
        ];
        for line in expected {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert!(text.ends_with("# EOF\n"));
        assert!(!text.contains("npu_chip_info_"), "native mode serves no Huawei names");
        let age_line = text
            .lines()
            .find(|l| l.starts_with("ascend_npu_sample_age_seconds{chip=\"0\"") && l.contains("group=\"memory\""))
            .expect("age of the stale chip");
        let age: f64 = age_line.rsplit(' ').next().and_then(|v| v.parse().ok()).expect("numeric age");
        assert!((7.0..8.0).contains(&age), "{age_line}");
    }

    #[test]
    fn huawei_names_and_labels_for_existing_dashboards() {
        let text = render(NamingMode::Huawei, ExpositionFormat::ClassicText);
        let expected = [
            "npu_chip_info_temperature{id=\"4\",model_name=\"\",vdie_id=\"\",pcie_bus_info=\"\",namespace=\"ml\",pod_name=\"train-0\",container_name=\"worker\"} 52",
            "npu_chip_info_utilization{id=\"0\",model_name=\"\",vdie_id=\"\",pcie_bus_info=\"\",namespace=\"\",pod_name=\"\",container_name=\"\"} 0",
            "npu_chip_info_hbm_used_memory{id=\"4\",model_name=\"\",vdie_id=\"\",pcie_bus_info=\"\",namespace=\"ml\",pod_name=\"train-0\",container_name=\"worker\"} 16384",
            "npu_chip_info_health_status{id=\"4\",model_name=\"\",vdie_id=\"\",pcie_bus_info=\"\",namespace=\"ml\",pod_name=\"train-0\",container_name=\"worker\"} 1",
            "machine_npu_nums 2",
            "# TYPE npu_chip_info_temperature gauge",
        ];
        for line in expected {
            assert!(text.lines().any(|l| l == line), "missing {line:?} in\n{text}");
        }
        assert!(!text.contains("# EOF"), "classic text has no EOF marker");
        assert!(!text.contains("ascend_npu_temperature"), "Huawei mode serves no native names");
    }

    #[test]
    fn counters_get_total_and_info_gets_info_in_both_formats() {
        for format in [ExpositionFormat::OpenMetrics, ExpositionFormat::ClassicText] {
            let text = render(NamingMode::Both, format);
            assert!(text.contains("# TYPE ascend_npu_exporter_build"), "{format:?}");
            assert!(text.contains("ascend_npu_exporter_build_info{version=\"0.1.0\"} 1"), "{format:?}");
            assert!(text.contains("npu_chip_info_temperature{") && text.contains("ascend_npu_temperature_celsius{"));
        }
    }

    #[test]
    fn no_snapshot_yet_serves_only_exporter_metrics() {
        let plan = RenderPlan::new(NamingMode::Native, &Selection::default());
        let exposition = Exposition::new(SnapshotCollector::new(
            Arc::new(SharedSnapshot::new()),
            Arc::new(SharedAttribution::new()),
            plan,
            "0.1.0",
        ));
        let text = exposition.render(ExpositionFormat::OpenMetrics);
        assert!(text.contains("ascend_npu_chips 0"));
        assert!(text.contains("ascend_npu_pod_resources_up 0"));
        assert!(!text.contains("ascend_npu_temperature_celsius"));
    }
}
