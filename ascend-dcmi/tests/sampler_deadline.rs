//! The sampler's deadline: a hung chip is timed out for the round while every other chip's values arrive on time,
//! its stuck call is not joined by new ones, and it comes back once the call returns.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::fake::{fake_temperature, FakeManager};
use ascend_dcmi::{LogicId, MetricGroup, SampleState, Sampler, SamplerConfig};

const DEADLINE: Duration = Duration::from_millis(200);

fn sampler(fake: &Arc<FakeManager>, concurrency: usize) -> Sampler {
    let config = SamplerConfig::default().with_deadline(DEADLINE).with_concurrency(concurrency);
    Sampler::new(fake.clone(), config).expect("the fake enumerates")
}

/// Polls `condition` every millisecond for up to five seconds.
fn wait_until(what: &str, mut condition: impl FnMut() -> bool) {
    let give_up = Instant::now() + Duration::from_secs(5);
    while !condition() {
        assert!(Instant::now() < give_up, "timed out waiting until {what}");
        std::thread::sleep(Duration::from_millis(1));
    }
}

#[test]
fn a_hung_chip_times_out_while_the_others_arrive_on_time() {
    let fake = Arc::new(FakeManager::new(8).with_latency(Duration::from_millis(1)));
    // One worker: the stuck worker must be replaced, or no other chip would be read at all.
    let sampler = sampler(&fake, 1);
    let hung = LogicId(2);
    fake.hang(hung);

    let summary = sampler.poll(MetricGroup::ChipState).expect("poll");
    assert_eq!((summary.completed, summary.timed_out), (7, 1), "{summary:?}");
    assert!(summary.elapsed >= DEADLINE, "the round waited for the deadline: {summary:?}");
    // The hung call never returns during the test, so a round that waited for it would not end at all; the bound
    // only keeps a slow round from passing. It is loose because a loaded machine (CI with other builds) delays the
    // dispatcher's wake-up by a scheduling slice or more: how soon after the deadline a round ends is measured by
    // the benches (docs/performance.md, section 3), not here.
    assert!(summary.elapsed < DEADLINE + Duration::from_secs(2), "the round ended after the deadline: {summary:?}");
    sampler.visit(|chip| {
        let temperature = &chip.state().temperature;
        if chip.ids().logic == hung {
            assert!(!chip.is_up());
            assert!(chip.group(MetricGroup::ChipState).timed_out());
            assert_eq!(temperature.state(), SampleState::TimedOut);
            assert_eq!(temperature.value(), None);
        } else {
            assert!(chip.is_up(), "{}", chip.ids());
            assert_eq!(temperature.fresh(), Some(&fake_temperature(chip.ids().logic)));
            // Every value read on time: the chain took 11 calls of 1 ms each, far below the deadline.
            let status = chip.group(MetricGroup::ChipState);
            let took = status.last_completed().zip(status.last_attempt()).map(|(end, start)| end - start);
            assert!(took.is_some_and(|took| took < DEADLINE), "{}: {took:?}", chip.ids());
        }
    });
    assert_eq!(fake.calls(hung), 1);
    assert_eq!(sampler.hung_chips(), 1);
}

#[test]
fn a_stuck_chip_is_skipped_not_piled_up_and_comes_back() {
    let fake = Arc::new(FakeManager::new(4));
    let sampler = sampler(&fake, 2);
    let hung = LogicId(1);
    fake.hang(hung);
    assert_eq!(sampler.poll(MetricGroup::Utilization).expect("poll").timed_out, 1);

    for _ in 0..5 {
        let summary = sampler.poll(MetricGroup::Utilization).expect("poll");
        assert_eq!((summary.completed, summary.timed_out, summary.still_hung), (3, 0, 1), "{summary:?}");
        assert!(summary.elapsed < DEADLINE, "a known-hung chip does not cost a deadline: {summary:?}");
    }
    assert_eq!(fake.calls(hung), 1, "no new call while the first one hangs");
    assert_eq!(fake.blocked_calls(), 1);
    assert_eq!(sampler.read(hung, |chip| chip.is_up()), Some(false));

    fake.release(hung);
    wait_until("the stuck call returned", || sampler.hung_chips() == 0);
    assert_eq!(fake.calls(hung), 1, "the abandoned chain stops after the call that hung");
    let summary = sampler.poll(MetricGroup::Utilization).expect("poll");
    assert_eq!((summary.completed, summary.timed_out, summary.still_hung), (4, 0, 0), "{summary:?}");
    assert_eq!(sampler.read(hung, |chip| chip.is_up()), Some(true));
}

#[test]
fn a_timed_out_chip_keeps_its_last_values_with_their_age() {
    let fake = Arc::new(FakeManager::new(2));
    let sampler = sampler(&fake, 2);
    let chip = LogicId(0);
    sampler.poll(MetricGroup::ChipState).expect("poll");
    let first = sampler.snapshot(chip).expect("chip 0");
    let read_at = first.state().temperature.read_at().expect("read");

    fake.hang(chip);
    sampler.poll(MetricGroup::ChipState).expect("poll");
    let stale = sampler.snapshot(chip).expect("chip 0");
    let temperature = &stale.state().temperature;
    assert_eq!(temperature.state(), SampleState::TimedOut);
    assert_eq!(temperature.value(), Some(&fake_temperature(chip)), "the last value stays");
    assert_eq!(temperature.fresh(), None);
    assert_eq!(temperature.read_at(), Some(read_at));
    let age = stale.group(MetricGroup::ChipState).age(Instant::now()).expect("completed once");
    assert!(age >= DEADLINE, "the sample age covers the missed round: {age:?}");
    assert!(!stale.is_up());
    fake.release(chip);
}

#[test]
fn stop_reports_workers_still_inside_a_hung_call() {
    let fake = Arc::new(FakeManager::new(3));
    let mut sampler = sampler(&fake, 2);
    fake.hang(LogicId(0));
    sampler.poll(MetricGroup::Memory).expect("poll");
    let started = Instant::now();
    let error = sampler.stop().expect_err("one worker is stuck");
    assert!(started.elapsed() < DEADLINE * 3, "stop waits at most about one deadline");
    assert!(error.to_string().contains("1 DCMI sampler worker thread(s) still blocked"), "{error}");
    assert!(sampler.poll(MetricGroup::Memory).is_err(), "a stopped sampler does not poll");
    assert!(sampler.stop().is_ok(), "stopping twice is harmless");
    fake.release(LogicId(0));
    wait_until("the detached worker returned", || fake.blocked_calls() == 0);
}

#[test]
fn readers_never_wait_on_a_chain_that_hangs() {
    let fake = Arc::new(FakeManager::new(4));
    let config = SamplerConfig::default().with_deadline(Duration::from_secs(2)).with_concurrency(2);
    let sampler = Arc::new(Sampler::new(fake.clone(), config).expect("the fake enumerates"));
    sampler.poll(MetricGroup::ChipState).expect("poll");
    let hung = LogicId(3);
    fake.hang(hung);
    let round = {
        let sampler = Arc::clone(&sampler);
        std::thread::spawn(move || sampler.poll(MetricGroup::ChipState))
    };
    wait_until("the chain is blocked in the driver", || fake.blocked_calls() == 1);
    // The round is now waiting for its deadline with a worker inside a call to chip 3; a scrape still answers.
    let started = Instant::now();
    let mut up = 0;
    sampler.visit(|chip| up += usize::from(chip.is_up()));
    let stale = sampler.read(hung, |chip| chip.state().temperature.value().copied()).flatten();
    let waited = started.elapsed();
    // Waiting on the chain would take the 2 s deadline; the margin is for a loaded test machine.
    assert!(waited < Duration::from_millis(500), "a reader waited {waited:?} on a hung chain");
    assert_eq!(up, 4, "the round has not ended yet, so every chip still shows its previous round");
    assert_eq!(stale, Some(fake_temperature(hung)));
    fake.release(hung);
    let summary = round.join().expect("the polling thread does not panic").expect("poll");
    assert_eq!(summary.completed + summary.timed_out, 4, "{summary:?}");
}
