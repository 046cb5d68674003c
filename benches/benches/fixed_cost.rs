//! The sampler's own cost per chip per poll, with a fake driver that answers instantly: sampler poll minus the same
//! calls in a serial loop, divided by the chips (criterion reports both per chip via the throughput). And what a
//! reader pays: visiting every chip's sample, copying one.

use std::hint::black_box;
use std::sync::Arc;

use ascend_benches::fake::FakeManager;
use ascend_benches::serial::SerialPoller;
use ascend_dcmi::{GroupSet, LogicId, Metric, MetricGroup, MetricSet, Sampler, SamplerConfig};
use criterion::{BenchmarkId, Criterion, Throughput};

const CHIP_COUNTS: [usize; 3] = [8, 64, 256];
const CONCURRENCY: [usize; 2] = [1, 4];

/// One call per chip (temperature): what is left above the serial loop is the sampler's fixed cost.
fn one_call_per_chip(criterion: &mut Criterion) {
    let selection = MetricSet::EMPTY.with(Metric::Temperature);
    let mut group = criterion.benchmark_group("fixed_cost");
    for chips in CHIP_COUNTS {
        group.throughput(Throughput::Elements(chips as u64));
        let fake = Arc::new(FakeManager::new(chips));
        let mut serial = SerialPoller::new(fake.clone()).expect("the fake enumerates");
        group.bench_with_input(BenchmarkId::new("serial_loop", chips), &chips, |bench, _| {
            bench.iter(|| black_box(serial.poll(GroupSet::of(MetricGroup::ChipState), selection)));
        });
        for concurrency in CONCURRENCY {
            let config = SamplerConfig::default().with_metrics(selection).with_concurrency(concurrency);
            let sampler = Sampler::new(fake.clone(), config).expect("the fake enumerates");
            let name = format!("sampler_c{concurrency}");
            group.bench_with_input(BenchmarkId::new(name, chips), &chips, |bench, _| {
                bench.iter(|| black_box(sampler.poll(MetricGroup::ChipState).expect("poll")));
            });
        }
    }
    group.finish();
}

/// A scrape's cost: visiting every chip (one short lock each), or copying one chip's sample.
fn readers(criterion: &mut Criterion) {
    let mut group = criterion.benchmark_group("readers");
    for chips in CHIP_COUNTS {
        let fake = Arc::new(FakeManager::new(chips));
        let sampler = Sampler::new(fake, SamplerConfig::default()).expect("the fake enumerates");
        for poll_group in GroupSet::FAST.iter() {
            sampler.poll(poll_group).expect("poll");
        }
        group.throughput(Throughput::Elements(chips as u64));
        group.bench_with_input(BenchmarkId::new("visit_temperature", chips), &chips, |bench, _| {
            bench.iter(|| {
                let mut sum = 0;
                sampler.visit(|chip| sum += chip.state().temperature.value().map_or(0, |celsius| celsius.0));
                black_box(sum)
            });
        });
    }
    group.throughput(Throughput::Elements(1));
    let sampler = Sampler::new(Arc::new(FakeManager::new(8)), SamplerConfig::default()).expect("the fake enumerates");
    sampler.poll(MetricGroup::ChipState).expect("poll");
    group.bench_function("snapshot_one_chip", |bench| bench.iter(|| black_box(sampler.snapshot(LogicId(3)))));
    group.finish();
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    one_call_per_chip(&mut criterion);
    readers(&mut criterion);
    criterion.final_summary();
}
