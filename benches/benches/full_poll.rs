//! A full poll of the utilisation group (11 calls per chip): the sampler (4 workers) against the same calls in a
//! serial loop, for 8, 64 and 256 fake chips with an instant driver and with `ASCEND_BENCH_LATENCY_US` per call
//! (default 1000), then on dcmi-sim's Atlas 800T A2 (8 chips) with 0 and 1 ms injected latency.
//!
//! With `--bench`, an efficiency table follows the criterion output: each sampler poll against the ideal, one chip's
//! chain times the number of concurrency waves (`ceil(chips / concurrency)`).

use std::hint::black_box;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_benches::fake::FakeManager;
use ascend_benches::serial::SerialPoller;
use ascend_benches::sim::SimHost;
use ascend_dcmi::{DeviceManager, MetricGroup, MetricSet, Sampler, SamplerConfig};
use criterion::{BenchmarkId, Criterion, Throughput};

const CHIP_COUNTS: [usize; 3] = [8, 64, 256];
const CONCURRENCY: usize = 4;
const GROUP: MetricGroup = MetricGroup::Utilization;
const LATENCY_ENV: &str = "ASCEND_BENCH_LATENCY_US";
const SIM_SAMPLE: &str = "atlas-800t-a2";

fn configured_latency() -> Duration {
    match std::env::var(LATENCY_ENV) {
        Err(_) => Duration::from_millis(1),
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(micros) => Duration::from_micros(micros),
            Err(error) => panic!("{LATENCY_ENV}={text:?} is not a number of microseconds: {error}"),
        },
    }
}

fn sampler(manager: Arc<dyn DeviceManager>) -> Sampler {
    // The deadline is far above any chain here: this measures throughput, not timeouts.
    let config = SamplerConfig::default().with_concurrency(CONCURRENCY).with_deadline(Duration::from_secs(30));
    Sampler::new(manager, config).expect("the manager enumerates")
}

/// Benches one manager: serial loop and sampler over the same calls.
fn compare(criterion: &mut Criterion, name: &str, manager: Arc<dyn DeviceManager>, slow: bool) {
    let mut serial = SerialPoller::new(manager.clone()).expect("the manager enumerates");
    let sampler = sampler(manager);
    let chips = serial.chips().len();
    let mut group = criterion.benchmark_group(name);
    if slow {
        group.sample_size(10);
    }
    group.throughput(Throughput::Elements(chips as u64));
    group.bench_with_input(BenchmarkId::new("serial_loop", chips), &chips, |bench, _| {
        bench.iter(|| black_box(serial.poll(GROUP, MetricSet::ALL)));
    });
    group.bench_with_input(BenchmarkId::new("sampler", chips), &chips, |bench, _| {
        bench.iter(|| black_box(sampler.poll(GROUP).expect("poll")));
    });
    group.finish();
}

fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// One line of the efficiency table: the median sampler poll against chain × waves.
fn efficiency(label: &str, manager: Arc<dyn DeviceManager>) {
    let mut serial = SerialPoller::new(manager.clone()).expect("the manager enumerates");
    let sampler = sampler(manager);
    let chips = serial.chips().len();
    serial.poll_one(0, GROUP, MetricSet::ALL);
    sampler.poll(GROUP).expect("poll");
    let chain = median(
        (0..9)
            .map(|_| {
                let started = Instant::now();
                serial.poll_one(0, GROUP, MetricSet::ALL);
                started.elapsed()
            })
            .collect(),
    );
    let poll = median((0..5).map(|_| sampler.poll(GROUP).expect("poll").elapsed).collect());
    let waves = chips.div_ceil(CONCURRENCY) as u32;
    let ideal = chain * waves;
    let ratio = poll.as_secs_f64() / ideal.as_secs_f64();
    println!(
        "{label:<28} chips {chips:>3}  chain {chain:>10.3?}  waves {waves:>2}  ideal {ideal:>10.3?}  \
         sampler {poll:>10.3?}  poll/ideal {ratio:.3}"
    );
}

fn main() {
    let latency = configured_latency();
    // Before any thread starts: the simulator is configured through environment variables.
    let host = SimHost::start(SIM_SAMPLE).unwrap_or_else(|error| panic!("dcmi-sim is needed: {error}"));
    let dcmi: Arc<dyn DeviceManager> = Arc::new(host.dcmi().expect("dcmi-sim loads"));
    let mut criterion = Criterion::default().configure_from_args();
    let latency_name = format!("full_poll/fake_{}us", latency.as_micros());
    for chips in CHIP_COUNTS {
        compare(&mut criterion, "full_poll/fake_0us", Arc::new(FakeManager::new(chips)), false);
        compare(&mut criterion, &latency_name, Arc::new(FakeManager::new(chips).with_latency(latency)), true);
    }
    for sim_latency in [Duration::ZERO, Duration::from_millis(1)] {
        host.set_latency(sim_latency).expect("overlay written");
        let name = format!("full_poll/sim_{}us", sim_latency.as_micros());
        compare(&mut criterion, &name, dcmi.clone(), !sim_latency.is_zero());
    }
    criterion.final_summary();

    if std::env::args().any(|argument| argument == "--bench") {
        println!("\nsampler poll against the ideal (chain x waves), {GROUP} group, concurrency {CONCURRENCY}:");
        for chips in CHIP_COUNTS {
            efficiency(
                &format!("fake, {}us per call", latency.as_micros()),
                Arc::new(FakeManager::new(chips).with_latency(latency)),
            );
        }
        host.set_latency(Duration::from_millis(1)).expect("overlay written");
        efficiency("dcmi-sim, 1 ms per call", dcmi);
    }
}
