//! A full-node poll as the exporter makes it: every metric of the fast groups (`GroupSet::FAST`, the exporter's
//! default selection; the slow bandwidth group waits out profiling windows on a schedule of its own) in one chain per
//! chip, through the real `Dcmi` on dcmi-sim loaded with `dlopen`, for hosts of
//! 8, 64 and 256 Atlas 800T A2 chips. The sampler with the exporter's defaults (`SamplerConfig::default()`: 4 chips
//! at once, 2 s deadline) against `SerialPoller` making the same calls on one thread.
//!
//! * Driver answering at once: criterion groups `full_poll/sim_0ms/{serial_loop,sampler}/<chips>`.
//! * Driver answering after `ASCEND_BENCH_LATENCY_MS` (default 2) per call, injected through the simulator's
//!   overlay: a serial poll of 256 chips takes many seconds, so these polls are timed directly, a few each, and the
//!   medians compared with the ideal, one chip's chain of calls times `ceil(chips / concurrency)` waves. Only with
//!   `--bench` (`cargo bench`); without it (`cargo test --benches`) one poll of 8 chips checks the path.
//!
//! The direct timings go to stdout and, as JSON, to the file named by `ASCEND_BENCH_FULL_POLL_JSON` (benches/run.sh
//! reads it). Unsupported calls are learnt in warm-up polls at 0 ms, as a running exporter has long learnt them.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Duration;

use ascend_benches::poll_timing::{ideal_poll, median, time_repeats, waves};
use ascend_benches::serial::SerialPoller;
use ascend_benches::sim::SimHost;
use ascend_dcmi::{DeviceManager, GroupSet, PollSummary, Sampler, SamplerConfig};
use criterion::{BenchmarkId, Criterion, Throughput};
use serde_json::{json, Value};

const CHIP_COUNTS: [usize; 3] = [8, 64, 256];
const TEMPLATE_SAMPLE: &str = "atlas-800t-a2";
const LATENCY_ENV: &str = "ASCEND_BENCH_LATENCY_MS";
const DEFAULT_LATENCY: Duration = Duration::from_millis(2);
const RESULTS_ENV: &str = "ASCEND_BENCH_FULL_POLL_JSON";
/// Polls before measuring: the first learns the unsupported calls, the next ones warm the threads' channels.
const WARM_UP_POLLS: usize = 3;
/// Serial chains of chip 0 behind the chain figure.
const CHAIN_REPEATS: usize = 5;

/// How many slow polls are timed per chip count, serial loop and sampler: fewer where one poll takes seconds (a
/// serial poll of 256 chips at 2 ms per call is about 20 s).
fn slow_repeats(chips: usize) -> (usize, usize) {
    match chips {
        0..=8 => (5, 9),
        9..=64 => (3, 5),
        _ => (1, 3),
    }
}

fn configured_latency() -> Duration {
    match std::env::var(LATENCY_ENV) {
        Err(_) => DEFAULT_LATENCY,
        Ok(text) => match text.trim().parse::<u64>() {
            Ok(millis) => Duration::from_millis(millis),
            Err(error) => panic!("{LATENCY_ENV}={text:?} is not a whole number of milliseconds: {error}"),
        },
    }
}

/// One simulated host with its sampler and serial loop, warm.
struct Node {
    // Dropped in this order: the sampler's workers end before the host's files go.
    sampler: Sampler,
    serial: SerialPoller,
    host: SimHost,
    chips: usize,
}

impl Node {
    fn start(chips: usize) -> Node {
        let host = SimHost::start_replicated(TEMPLATE_SAMPLE, chips)
            .unwrap_or_else(|error| panic!("dcmi-sim host of {chips} chips: {error}"));
        let dcmi: Arc<dyn DeviceManager> =
            Arc::new(host.dcmi().unwrap_or_else(|error| panic!("dcmi-sim with {chips} chips loads: {error}")));
        let sampler = Sampler::new(dcmi.clone(), SamplerConfig::default())
            .unwrap_or_else(|error| panic!("sampler on {chips} chips: {error}"));
        let serial = SerialPoller::new(dcmi).unwrap_or_else(|error| panic!("serial poller on {chips} chips: {error}"));
        assert_eq!(sampler.chips().len(), chips, "the simulator enumerates every chip of the topology");
        let mut node = Node { sampler, serial, host, chips };
        for _ in 0..WARM_UP_POLLS {
            node.sampler_poll();
            node.serial_poll();
        }
        node
    }

    /// One full poll by the sampler; every chip must complete (a timed-out chip would make the figure meaningless).
    fn sampler_poll(&self) -> PollSummary {
        let summary = self.sampler.poll_groups(GroupSet::FAST).expect("the sampler polls");
        assert_eq!(
            (summary.completed, summary.timed_out),
            (self.chips, 0),
            "every chip's chain completes within the deadline: {summary:?}"
        );
        summary
    }

    fn serial_poll(&mut self) -> usize {
        self.serial.poll(GroupSet::FAST, self.sampler.metrics())
    }

    fn chain(&mut self) -> usize {
        self.serial.poll_one(0, GroupSet::FAST, self.sampler.metrics())
    }
}

/// The criterion groups at 0 ms: serial loop and sampler over the same calls.
fn bench_instant(criterion: &mut Criterion, node: &mut Node) {
    let chips = node.chips;
    let mut group = criterion.benchmark_group("full_poll/sim_0ms");
    // A 256-chip serial poll takes milliseconds: fewer samples keep criterion within its measurement time.
    group.sample_size(20);
    group.throughput(Throughput::Elements(chips as u64));
    group.bench_with_input(BenchmarkId::new("serial_loop", chips), &chips, |bench, _| {
        bench.iter(|| black_box(node.serial_poll()));
    });
    group.bench_with_input(BenchmarkId::new("sampler", chips), &chips, |bench, _| {
        bench.iter(|| black_box(node.sampler_poll()));
    });
    group.finish();
}

/// The direct timings at `latency` per call; returns the case's JSON record and prints a line.
fn time_slow(node: &mut Node, latency: Duration, (serial_repeats, sampler_repeats): (usize, usize)) -> Value {
    node.host.set_latency(latency).expect("the overlay file is written");
    let chips = node.chips;
    let concurrency = node.sampler.config().concurrency();
    let chain_calls = node.serial.chain_calls(0, GroupSet::FAST, node.sampler.metrics());
    let chains = time_repeats(CHAIN_REPEATS, || {
        black_box(node.chain());
    });
    let sampler_polls = time_repeats(sampler_repeats, || {
        black_box(node.sampler_poll());
    });
    let serial_polls = time_repeats(serial_repeats, || {
        black_box(node.serial_poll());
    });
    node.host.set_latency(Duration::ZERO).expect("the overlay file is written");

    let chain = median(&chains).expect("chains were timed");
    let sampler = median(&sampler_polls).expect("sampler polls were timed");
    let serial = median(&serial_polls).expect("serial polls were timed");
    let ideal = ideal_poll(chain, chips, concurrency);
    let sampler_over_ideal = sampler.as_secs_f64() / ideal.as_secs_f64();
    let serial_over_sampler = serial.as_secs_f64() / sampler.as_secs_f64();
    println!(
        "full_poll/sim_{}ms chips {chips:>3}  chain {chain:>10.3?} ({chain_calls} reads)  waves {:>2}  ideal \
         {ideal:>10.3?}  sampler {sampler:>10.3?}  serial {serial:>10.3?}  sampler/ideal {sampler_over_ideal:.3}  \
         serial/sampler {serial_over_sampler:.2}",
        latency.as_millis(),
        waves(chips, concurrency),
    );
    json!({
        "chips": chips,
        "chain_reads": chain_calls,
        "waves": waves(chips, concurrency),
        "chain_ns": nanos(chain),
        "ideal_ns": nanos(ideal),
        "sampler_ns": nanos(sampler),
        "serial_ns": nanos(serial),
        "chain_samples_ns": chains.iter().copied().map(nanos).collect::<Vec<_>>(),
        "sampler_samples_ns": sampler_polls.iter().copied().map(nanos).collect::<Vec<_>>(),
        "serial_samples_ns": serial_polls.iter().copied().map(nanos).collect::<Vec<_>>(),
        "sampler_over_ideal": sampler_over_ideal,
        "serial_over_sampler": serial_over_sampler,
    })
}

fn nanos(duration: Duration) -> u64 {
    u64::try_from(duration.as_nanos()).unwrap_or(u64::MAX)
}

fn main() {
    let latency = configured_latency();
    // `cargo bench` passes --bench; `cargo test --benches` does not and only checks that every path runs.
    let full_run = std::env::args().any(|argument| argument == "--bench");
    let mut criterion = Criterion::default().configure_from_args();
    let mut slow_cases = Vec::new();
    for chips in CHIP_COUNTS {
        // One host at a time: the next host's `dcmi_init` replaces the simulator, so this one is dropped first.
        let mut node = Node::start(chips);
        bench_instant(&mut criterion, &mut node);
        if full_run {
            slow_cases.push(time_slow(&mut node, latency, slow_repeats(chips)));
        } else if chips == CHIP_COUNTS[0] {
            slow_cases.push(time_slow(&mut node, latency, (1, 1)));
        }
    }
    criterion.final_summary();

    let config = SamplerConfig::default();
    let record = json!({
        "template_sample": TEMPLATE_SAMPLE,
        "latency_ms": latency.as_millis() as u64,
        "concurrency": config.concurrency(),
        "deadline_ms": config.deadline().as_millis() as u64,
        "metrics": config.metrics().len(),
        "chain_repeats": CHAIN_REPEATS,
        "warm_up_polls": WARM_UP_POLLS,
        "cases": slow_cases,
    });
    if let Ok(path) = std::env::var(RESULTS_ENV) {
        let text = serde_json::to_string_pretty(&record).expect("JSON of numbers and strings serialises");
        std::fs::write(&path, text + "\n").unwrap_or_else(|error| panic!("{RESULTS_ENV}={path}: {error}"));
    }
}
