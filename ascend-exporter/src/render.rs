//! Rendering a snapshot through prometheus-client: a [`Collector`] that walks the catalogue at scrape time.
//!
//! Both text formats come from prometheus-client 0.26: OpenMetrics (`encoding::text`) and the classic 0.0.4 format
//! (`encoding::prometheus_text`), so no exposition code is hand-written here.

use std::sync::Arc;
use std::time::{Instant, SystemTime, UNIX_EPOCH};

use ascend_dcmi::ChipType;
use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, NoLabelSet};
use prometheus_client::metrics::exemplar::Exemplar;
use prometheus_client::metrics::MetricType;
use prometheus_client::registry::Registry;

use crate::catalogue::{
    ChipView, ContainerView, Extract, MachineView, MetricDef, MetricKind, Naming, VnpuView, CATALOGUE,
};
use crate::exposition_format::ExpositionFormat;
use crate::pod_attribution::{PodAttribution, SharedAttribution};
use crate::sample::{LabelText, Sample, SampleSink};
use crate::selection::Selection;
use crate::series_labels::{
    container_labels, huawei_chip_labels, huawei_npu_name_labels, huawei_vnpu_labels, native_chip_labels,
    native_vnpu_labels, LabelsWith, SeriesLabels, SeriesText, HUAWEI_NPU_NAME,
};
use crate::snapshot::{ChipSnapshot, Snapshot, SnapshotSource};

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

/// The prometheus-client collector over the latest snapshot and pod attribution.
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

    fn encode_metric(
        &self,
        encoder: &mut DescriptorEncoder<'_>,
        metric: &MetricDef,
        context: &RenderContext<'_>,
        sink: &mut SampleSink,
    ) -> Result<(), std::fmt::Error> {
        // Samples are gathered first so that a metric without any value gets no HELP/TYPE lines either.
        let mut rows: Vec<(&SeriesText, Sample)> = Vec::new();
        let mut info_rows: Vec<(&SeriesText, Vec<(&'static str, LabelText)>)> = Vec::new();
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
        let no_labels = SeriesText::default();
        let container_series: Vec<SeriesText>;
        let vnpu_series: Vec<SeriesText>;
        match metric.extract {
            Extract::Chip(extract) => {
                for (chip, labels) in chips.iter().zip(chip_labels) {
                    let holders = context.attribution.holders_of(chip.ids.phy);
                    let view = ChipView { chip, holders, now: context.now, unix_now: context.unix_now, driver_version };
                    extract(&view, sink);
                    rows.extend(sink.drain().map(|sample| (labels, sample)));
                }
            }
            Extract::ChipInfo(extract) => {
                for (chip, labels) in chips.iter().zip(chip_labels) {
                    let holders = context.attribution.holders_of(chip.ids.phy);
                    let view = ChipView { chip, holders, now: context.now, unix_now: context.unix_now, driver_version };
                    if let Some(own) = extract(&view) {
                        info_rows.push((labels, own));
                    }
                }
            }
            Extract::Vnpu(extract) => {
                let mut views = Vec::new();
                for chip in chips {
                    for vnpu in chip.vnpus.iter().flat_map(|inventory| inventory.vnpus.iter()) {
                        let holders = context.attribution.holders_of_vnpu(chip.ids.phy, vnpu.id);
                        let labels = match (metric.naming, holders) {
                            (Naming::Native, _) => native_vnpu_labels(chip.ids.phy, vnpu.id, holders),
                            (Naming::Huawei, [holder]) => huawei_vnpu_labels(chip, vnpu, holder),
                            (Naming::Huawei, _) => continue,
                        };
                        views.push((VnpuView { chip, vnpu }, SeriesText::new(&labels)));
                    }
                }
                let (views, labels): (Vec<VnpuView<'_>>, Vec<SeriesText>) = views.into_iter().unzip();
                vnpu_series = labels;
                for (view, labels) in views.iter().zip(&vnpu_series) {
                    extract(view, sink);
                    rows.extend(sink.drain().map(|sample| (labels, sample)));
                }
            }
            Extract::Container(extract) => {
                let containers = context.attribution.containers();
                container_series = containers.keys().map(|c| SeriesText::new(&container_labels(c))).collect();
                for ((container, phys), labels) in containers.iter().zip(&container_series) {
                    let held = chips.iter().filter(|chip| phys.contains(&chip.ids.phy)).collect();
                    extract(&ContainerView { container, chips: held }, sink);
                    rows.extend(sink.drain().map(|sample| (labels, sample)));
                }
            }
            Extract::Machine(extract) => {
                let view = MachineView {
                    snapshot: context.snapshot,
                    exporter_version: self.exporter_version,
                    pod_resources_reachable: self.attribution.is_reachable(),
                };
                extract(&view, sink);
                rows.extend(sink.drain().map(|sample| (&no_labels, sample)));
            }
        }
        if rows.is_empty() && info_rows.is_empty() {
            return Ok(());
        }
        let (name, metric_type) = match metric.kind {
            MetricKind::Gauge => (metric.name, MetricType::Gauge),
            MetricKind::Counter => (metric.name, MetricType::Counter),
            MetricKind::Info => (metric.name, MetricType::Info),
        };
        let mut metric_encoder = encoder.encode_descriptor(name, help_of(metric, chips), None, metric_type)?;
        for (series, own) in &info_rows {
            metric_encoder.encode_info(&LabelsWith { series, own })?;
        }
        for (series, sample) in &rows {
            let labels = LabelsWith { series, own: sample.labels() };
            match metric.kind {
                MetricKind::Gauge => match whole_number(sample.value) {
                    Some(whole) => metric_encoder.encode_family(&labels)?.encode_gauge(&whole)?,
                    None => metric_encoder.encode_family(&labels)?.encode_gauge(&sample.value)?,
                },
                MetricKind::Counter => {
                    let mut family = metric_encoder.encode_family(&labels)?;
                    let no_exemplar = None::<&Exemplar<NoLabelSet, f64>>;
                    match whole_number(sample.value).and_then(|whole| u64::try_from(whole).ok()) {
                        Some(count) => family.encode_counter::<NoLabelSet, u64, f64>(&count, no_exemplar)?,
                        None => family.encode_counter::<NoLabelSet, f64, f64>(&sample.value, no_exemplar)?,
                    }
                }
                MetricKind::Info => metric_encoder.encode_info(&labels)?,
            }
        }
        Ok(())
    }
}

/// A metric's HELP: its own, except Huawei's `network` names on an Ascend950 host, which Huawei's exporter describes
/// per UB port ([`crate::network::catalogue::UB_PORT_HELP`]).
fn help_of(metric: &MetricDef, chips: &[ChipSnapshot]) -> &'static str {
    let ascend950 =
        chips.iter().find_map(|chip| chip.identity.as_ref().and_then(|id| id.chip_type)) == Some(ChipType::Ascend950);
    let ub_port = crate::network::catalogue::UB_PORT_HELP.iter().find(|(name, _)| *name == metric.name);
    match ub_port {
        Some((_, help)) if metric.naming == Naming::Huawei && ascend950 => help,
        _ => metric.help,
    }
}

/// Whole numbers are written without a fraction (`52`, not `52.0`): shorter output, and what Huawei's dashboards
/// and most exporters show. Only values that an `f64` holds exactly qualify.
fn whole_number(value: f64) -> Option<i64> {
    const EXACT_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
    (value.fract() == 0.0 && value.abs() <= EXACT_LIMIT).then_some(value as i64)
}

impl Collector for SnapshotCollector {
    fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
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
            now: Instant::now(),
            unix_now: SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_secs_f64(),
        };
        let mut sink = SampleSink::new();
        for metric in &self.plan.metrics {
            self.encode_metric(&mut encoder, metric, &context, &mut sink)?;
        }
        Ok(())
    }
}

/// A registry holding the snapshot collector, rendering either text format.
#[derive(Debug)]
pub struct Exposition {
    registry: Registry,
}

impl Exposition {
    /// A registry with `collector` as its only source.
    pub fn new(collector: SnapshotCollector) -> Self {
        let mut registry = Registry::default();
        registry.register_collector(Box::new(collector));
        Self { registry }
    }

    /// Renders the latest snapshot.
    ///
    /// # Errors
    /// Only a formatting error from the encoder, which writing into a `String` does not produce in practice.
    pub fn render(&self, format: ExpositionFormat) -> Result<String, std::fmt::Error> {
        self.render_with_capacity(format, 64 * 1024)
    }

    /// Renders the latest snapshot into a buffer of `capacity` bytes, so that a body of the expected size is written
    /// without the buffer growing (and copying) along the way.
    ///
    /// # Errors
    /// Only a formatting error from the encoder, which writing into a `String` does not produce in practice.
    pub fn render_with_capacity(&self, format: ExpositionFormat, capacity: usize) -> Result<String, std::fmt::Error> {
        let mut body = String::with_capacity(capacity);
        match format {
            ExpositionFormat::OpenMetrics => prometheus_client::encoding::text::encode(&mut body, &self.registry)?,
            ExpositionFormat::ClassicText => {
                prometheus_client::encoding::prometheus_text::encode(&mut body, &self.registry)?
            }
        }
        Ok(body)
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
        exposition(naming, true).render(format).expect("renders")
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
        let text = exposition.render(ExpositionFormat::OpenMetrics).expect("renders");
        assert!(text.contains("ascend_npu_chips 0"));
        assert!(text.contains("ascend_npu_pod_resources_up 0"));
        assert!(!text.contains("ascend_npu_temperature_celsius"));
    }
}
