//! Render time of one npu-exporter scrape for 8, 64 and 256 fully populated chips (every value the sampler reads,
//! half of the chips held by pods), per naming mode and exposition format. The snapshot is synthetic: this measures
//! the exporter's own work per scrape (labels, catalogue walk, the text encoder), not the driver.
//!
//! The "cached" cases measure a scrape served by [`ScrapeCache`] while the data does not change (every scrape but the
//! first after a sampler round): a reference-count clone of the rendered bytes.
//!
//! The `gzip_level` group compresses the OpenMetrics body (what Prometheus asks for) of each size at every gzip level
//! with the exporter's own encoder (flate2's, with the same backend), printing the compressed sizes: the measurement
//! behind the exporter's gzip level (`GZIP_LEVEL` in ascend-exporter/src/content_coding.rs).
//!
//! `cargo bench -p ascend-exporter --bench exporter_render`; figures in docs/npu-exporter.md.

use std::hint::black_box;
use std::io::Write;
use std::sync::Arc;
use std::time::Instant;

use ascend_dcmi::MetricGroup;
use ascend_dcmi::{
    CardId, Celsius, ChipIdentity, ChipIds, ChipInfo, ChipLocator, ChipProcess, ChipType, DeviceId, DieId,
    EccComponent, EccCounters, FrequencyKind, HbmMemory, HealthReport, LogicId, MegaHertz, NetworkHealth, PcieAddress,
    Percent, PhyId, Power, ProcessList, UtilizationKind, Volts, Watts,
};
use ascend_exporter::{
    AssignedDevices, ChipSnapshot, ContainerAssignment, ContainerRef, ContentCoding, Exposition, ExpositionFormat,
    GroupFreshness, NamingMode, PodAttribution, RenderPlan, ScrapeCache, Selection, SharedAttribution, SharedSnapshot,
    Snapshot, SnapshotCollector, SnapshotSource, DEFAULT_MAX_BODY_AGE,
};
use ascend_node::naming::ResourceNaming;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

fn populated_chip(index: u32, now: Instant) -> ChipSnapshot {
    let ids = ChipIds {
        logic: LogicId(index),
        phy: PhyId(index),
        locator: Some(ChipLocator { card: CardId((index / 4) as i32), device: DeviceId((index % 4) as i32) }),
    };
    let mut chip = ChipSnapshot::new(ids);
    for group in MetricGroup::ALL {
        chip.freshness[group.index()] = GroupFreshness { last_success: Some(now), stale: false };
    }
    chip.identity = Some(Arc::new(ChipIdentity {
        ids,
        chip_type: Some(ChipType::Ascend910B),
        info: ChipInfo {
            chip_type: "Ascend".into(),
            chip_name: "910B3".into(),
            chip_version: "V1".into(),
            aicore_count: 20,
            npu_name: None,
        },
        product_type: Some("Atlas 800T A2".into()),
        board: None,
        mainboard_id: None,
        pcie_address: Some(PcieAddress { domain: 0, bus: 0x10 + (index as u8 % 200), device: 0, function: 0 }),
        numa_node: Some(0),
        affinity_cpus: Some("0-47".into()),
        die_id: Some(DieId([index, 1, 2, 3, 4])),
        elabel: None,
    }));
    chip.health = Some(HealthReport::healthy());
    chip.temperature = Some(Celsius(50 + (index % 30) as i32));
    chip.power = Some(Power::Chip(Watts(280.5)));
    chip.voltage = Some(Volts(0.85));
    chip.clocks = FrequencyKind::ALL.iter().map(|kind| (*kind, MegaHertz(1800))).collect();
    chip.utilization =
        UtilizationKind::ALL.iter().map(|kind| (*kind, Percent::new(index % 101).unwrap_or_default())).collect();
    chip.hbm = Some(HbmMemory { total_bytes: 64 << 30, used_bytes: 16 << 30, ..HbmMemory::default() });
    chip.ecc = [EccComponent::Ddr, EccComponent::Sram, EccComponent::Hbm, EccComponent::Npu]
        .into_iter()
        .map(|component| (component, EccCounters { enabled: true, ..EccCounters::default() }))
        .collect();
    let processes: Vec<ChipProcess> =
        (0..4).map(|pid| ChipProcess { pid: 1000 + pid, memory_bytes: 1 << 30 }).collect();
    chip.processes = Some(ProcessList::from_slice(&processes));
    chip.network = Some(NetworkHealth::Ok);
    chip
}

/// The inputs of one exporter: its snapshot, attribution and render plan.
struct Inputs {
    source: Arc<dyn SnapshotSource>,
    attribution: Arc<SharedAttribution>,
    plan: RenderPlan,
}

impl Inputs {
    fn exposition(&self) -> Exposition {
        let collector =
            SnapshotCollector::new(Arc::clone(&self.source), Arc::clone(&self.attribution), self.plan.clone(), "bench");
        Exposition::new(collector)
    }

    fn scrape_cache(&self) -> ScrapeCache {
        ScrapeCache::new(
            self.exposition(),
            Arc::clone(&self.source),
            Arc::clone(&self.attribution),
            DEFAULT_MAX_BODY_AGE,
        )
    }
}

fn inputs(chips: u32, naming: NamingMode) -> Inputs {
    let now = Instant::now();
    let shared = Arc::new(SharedSnapshot::new());
    shared.publish(Snapshot {
        published_at: now,
        driver_version: Some("24.1.rc2".into()),
        cards: Some(2),
        chips: (0..chips).map(|index| populated_chip(index, now)).collect(),
    });
    let assignments: Vec<ContainerAssignment> = (0..chips / 2)
        .map(|index| ContainerAssignment {
            container: ContainerRef { namespace: "ml".into(), pod: format!("job-{index}"), container: "worker".into() },
            devices: vec![AssignedDevices {
                resource_name: "huawei.com/Ascend910".into(),
                device_ids: vec![format!("Ascend910-{}", index * 2)],
            }],
        })
        .collect();
    let attribution = Arc::new(SharedAttribution::new());
    attribution.publish(PodAttribution::from_assignments(&assignments, &ResourceNaming::default()));
    let plan = RenderPlan::new(naming, &Selection::default());
    Inputs { source: shared, attribution, plan }
}

fn render(c: &mut Criterion) {
    let mut group = c.benchmark_group("exporter_render");
    for chips in [8u32, 64, 256] {
        group.throughput(Throughput::Elements(u64::from(chips)));
        for (naming, label) in [(NamingMode::Native, "native"), (NamingMode::Both, "both")] {
            let inputs = inputs(chips, naming);
            let exposition = inputs.exposition();
            let scrape_cache = inputs.scrape_cache();
            for (format, format_label) in
                [(ExpositionFormat::OpenMetrics, "openmetrics"), (ExpositionFormat::ClassicText, "classic")]
            {
                let body = exposition.render(format);
                eprintln!(
                    "{chips} chips, {label}, {format_label}: {} bytes, {} lines",
                    body.len(),
                    body.lines().count()
                );
                group.bench_with_input(BenchmarkId::new(format!("{label}/{format_label}"), chips), &chips, |b, _| {
                    b.iter(|| black_box(exposition.render(format)))
                });
                group.bench_with_input(
                    BenchmarkId::new(format!("{label}/{format_label}/cached"), chips),
                    &chips,
                    |b, _| b.iter(|| black_box(scrape_cache.body(format, ContentCoding::Identity))),
                );
            }
        }
    }
    group.finish();
}

fn gzip_level(c: &mut Criterion) {
    let mut group = c.benchmark_group("gzip_level");
    for chips in [8u32, 64, 256] {
        let body = inputs(chips, NamingMode::Native).exposition().render(ExpositionFormat::OpenMetrics);
        group.throughput(Throughput::Bytes(body.len() as u64));
        for level in 1..=9 {
            let compressed = gzip_at_level(body.as_bytes(), level).len();
            eprintln!(
                "{chips} chips, level {level}: {} -> {compressed} bytes ({:.2} %)",
                body.len(),
                100.0 * compressed as f64 / body.len() as f64
            );
            group.bench_with_input(BenchmarkId::new(format!("level{level}"), chips), &level, |b, &level| {
                b.iter(|| black_box(gzip_at_level(body.as_bytes(), level)))
            });
        }
    }
    group.finish();
}

/// `plain` compressed with gzip at `level`, as the exporter compresses a body at its level.
fn gzip_at_level(plain: &[u8], level: u32) -> Vec<u8> {
    let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(level));
    encoder.write_all(plain).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}

criterion_group!(benches, render, gzip_level);
criterion_main!(benches);
