//! Proves that a warm sampler allocates nothing per poll of the hot groups (utilisation, chip state, memory), nor
//! when readers take snapshots. A counting global allocator counts every allocation of every thread of this test
//! binary; the binary holds this one test so that nothing else allocates meanwhile.

mod counting_allocator;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::fake::{fake_temperature, FakeManager};
use ascend_dcmi::{GroupSet, LogicId, Metric, MetricGroup, SampleState, Sampler, SamplerConfig, UtilizationKind};

const CHIPS: u32 = 16;
const HOT_GROUPS: [MetricGroup; 3] = [MetricGroup::Utilization, MetricGroup::ChipState, MetricGroup::Memory];

#[test]
fn warm_polls_and_reads_allocate_nothing() {
    let fake = Arc::new(FakeManager::new(CHIPS as usize));
    // Unsupported answers take the error path once and are then skipped: both must be allocation-free.
    fake.set_unsupported(LogicId(3), Metric::Utilization(UtilizationKind::AiCube));
    fake.set_unsupported(LogicId(5), Metric::HbmMemory);
    let config = SamplerConfig::default().with_concurrency(4);
    let sampler = Sampler::new(fake.clone(), config).expect("the fake enumerates");

    // Warm-up: `Sampler::new` waits for its workers to set up; this thread sets up in its first poll; the channels
    // get their waiters in rounds that wait on a slow driver.
    let hot = GroupSet::of(MetricGroup::Utilization).with(MetricGroup::ChipState).with(MetricGroup::Memory);
    fake.set_latency(Duration::from_micros(200));
    for group in HOT_GROUPS {
        sampler.poll(group).expect("poll");
    }
    fake.set_latency(Duration::ZERO);
    for _ in 0..5 {
        sampler.poll_groups(hot).expect("poll");
    }

    let calls_before = fake.calls(LogicId(0));
    let before = counting_allocator::allocations();
    let mut completed = 0;
    for _ in 0..200 {
        for group in HOT_GROUPS {
            completed += sampler.poll(group).expect("poll").completed;
        }
        completed += sampler.poll_groups(hot).expect("poll").completed;
    }
    // Rounds that wait on a slow driver take the blocking paths of every thread.
    fake.set_latency(Duration::from_micros(200));
    for _ in 0..3 {
        completed += sampler.poll_groups(hot).expect("poll").completed;
    }
    let mut temperatures = 0i64;
    let mut up = 0;
    sampler.visit(|chip| {
        temperatures += i64::from(chip.state().temperature.fresh().map_or(0, |t| t.0));
        up += usize::from(chip.is_up());
    });
    let snapshot = sampler.snapshot(LogicId(7)).expect("chip 7");
    let sampled_at = sampler.read(LogicId(2), |chip| chip.group(MetricGroup::Memory).last_completed());
    let allocations = counting_allocator::allocations() - before;

    assert_eq!(allocations, 0, "a warm sampler allocated {allocations} times in 803 polls and reads");
    // The polls did the work they claim: each hot group polled 403 times, 11 + 11 + 7 calls per chip.
    assert_eq!(completed, 803 * CHIPS as usize);
    assert_eq!(fake.calls(LogicId(0)) - calls_before, 403 * (11 + 11 + 7));
    assert_eq!(up, CHIPS as usize);
    let expected: i64 = (0..CHIPS).map(|chip| i64::from(fake_temperature(LogicId(chip)).0)).sum();
    assert_eq!(temperatures, expected);
    assert_eq!(snapshot.state().temperature.fresh(), Some(&fake_temperature(LogicId(7))));
    assert!(sampled_at.flatten().is_some_and(|at| at <= Instant::now()));
    let unsupported = sampler.read(LogicId(3), |chip| chip.utilization().get(UtilizationKind::AiCube).state());
    assert_eq!(unsupported, Some(SampleState::Unsupported));
    assert_eq!(fake.calls_of(LogicId(3), Metric::Utilization(UtilizationKind::AiCube)), 1);
}
