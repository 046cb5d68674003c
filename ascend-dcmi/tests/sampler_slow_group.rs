//! The slow bandwidth group: its calls wait out profiling windows on workers, a deadline and a schedule of their own,
//! so the fast groups keep their intervals while a bandwidth round runs, and its values still arrive.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::fake::FakeManager;
use ascend_dcmi::{GroupSet, LogicId, Metric, MetricGroup, SampleState, Sampler, SamplerConfig};

const CHIPS: usize = 4;
const FAST_INTERVAL: Duration = Duration::from_millis(100);
/// Each bandwidth call blocks this long, so a chip's bandwidth chain takes twice as long.
const WINDOW: Duration = Duration::from_millis(900);

fn config() -> SamplerConfig {
    SamplerConfig::default()
        .with_interval(MetricGroup::Utilization, FAST_INTERVAL)
        .with_interval(MetricGroup::Bandwidth, FAST_INTERVAL)
        .with_profiling(WINDOW, WINDOW)
        .with_concurrency(1)
}

/// The age of the oldest utilisation sample over every chip (`None` until every chip has one).
fn oldest_utilization(sampler: &Sampler) -> Option<Duration> {
    let now = Instant::now();
    let mut oldest = Some(Duration::ZERO);
    sampler.visit(|chip| {
        let age = chip.group(MetricGroup::Utilization).age(now);
        oldest = oldest.zip(age).map(|(a, b)| a.max(b));
    });
    oldest
}

#[test]
fn a_bandwidth_round_never_delays_the_fast_groups() {
    let fake = Arc::new(FakeManager::new(CHIPS));
    let mut sampler = Sampler::spawn(fake.clone(), config()).expect("the fake enumerates");
    // One slow worker for four chips: a bandwidth round takes 4 x 2 x 900 ms = 7.2 s; watch the first 3 s of it.
    let start = Instant::now();
    let mut worst = Duration::ZERO;
    while start.elapsed() < Duration::from_secs(3) {
        std::thread::sleep(Duration::from_millis(20));
        if let Some(age) = oldest_utilization(&sampler) {
            worst = worst.max(age);
        }
    }
    assert!(fake.calls_of(LogicId(0), Metric::HccsBandwidth) == 1, "the bandwidth round is under way");
    assert!(worst < FAST_INTERVAL * 5, "a utilisation sample was {worst:?} old during the bandwidth round");
    assert!(
        fake.calls_of(LogicId(3), Metric::Utilization(ascend_dcmi::UtilizationKind::AiCore)) >= 10,
        "the fast group kept polling"
    );
    sampler.stop().expect("stops");
}

#[test]
fn bandwidth_values_arrive_through_their_own_round() {
    let fake = Arc::new(FakeManager::new(2));
    let config = SamplerConfig::default().with_profiling(Duration::from_millis(5), Duration::from_millis(5));
    let sampler = Sampler::new(fake.clone(), config).expect("the fake enumerates");
    assert_eq!(config.bandwidth_deadline(), config.deadline() + Duration::from_millis(10));
    let summary = sampler.poll_groups(GroupSet::ALL).expect("polls");
    assert_eq!(summary.groups, GroupSet::ALL);
    assert_eq!(summary.completed, 2);
    let sample = sampler.snapshot(LogicId(1)).expect("chip 1");
    let hccs = sample.bandwidth().hccs.fresh().expect("HCCS bandwidth");
    assert_eq!((hccs.profiling, hccs.total_tx), (Duration::from_millis(5), 8.0));
    assert_eq!(sample.bandwidth().pcie.state(), SampleState::Fresh);
    assert!(sample.group(MetricGroup::Bandwidth).last_completed().is_some());
    assert!(sample.group(MetricGroup::Utilization).last_completed().is_some());
}

#[test]
fn a_hung_bandwidth_call_times_out_on_the_bandwidth_deadline_only() {
    let fake = Arc::new(FakeManager::new(2));
    let config = SamplerConfig::default()
        .with_deadline(Duration::from_millis(100))
        .with_profiling(Duration::from_millis(1), Duration::from_millis(1))
        .with_bandwidth_deadline(Duration::from_millis(300));
    let sampler = Sampler::new(fake.clone(), config).expect("the fake enumerates");
    fake.hang(LogicId(0));
    let started = Instant::now();
    let summary = sampler.poll(MetricGroup::Bandwidth).expect("polls");
    assert_eq!((summary.timed_out, summary.completed), (1, 1));
    assert!(started.elapsed() >= Duration::from_millis(300), "waited for the bandwidth deadline");
    fake.release(LogicId(0));
}
