//! Proves that a warm sampler over the real `Dcmi`, loading dcmi-sim with `dlopen` exactly as it would load
//! `libdcmi.so`, allocates nothing per poll of any group of the exporter's default configuration (but for the UB port
//! table of Ascend950 and the vNPU list, each read once a minute into a shared table), nor when readers
//! take snapshots. A counting global allocator counts every allocation of every Rust thread of this test binary (the
//! simulator is a separate cdylib with its own allocator, as the vendor's C library would be); the binary holds this
//! one test so that nothing else allocates meanwhile. It runs on a DCMI V1 host (Atlas 800T A2) and then on a DCMI V2
//! one (Atlas 950, `dcmiv2_*` calls keyed by logic id), each from its own copy of the simulator.

mod counting_allocator;
mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{
    ApiFamily, DeviceManager, FaultCode, GroupSet, LogicId, Metric, MetricGroup, MetricSet, SampleState, Sampler,
    SamplerConfig,
};

/// Rounds of each group, and of all groups in one chain, that are counted.
const ROUNDS: usize = 50;
/// The chip that carries an active fault code, so the health read copies codes and grades them.
const FAULTY: LogicId = LogicId(1);
const FAULT: FaultCode = FaultCode(0x80E0_1801);
/// The chip whose temperature call is slow, so that every chip-state round also takes the paths where the dispatcher
/// and the workers block on a slow driver.
const SLOW: LogicId = LogicId(6);

/// Each family's sample and its temperature call (the one made slow).
const HOSTS: [(&str, ApiFamily, &str); 2] = [
    ("atlas-800t-a2", ApiFamily::V1, "dcmi_get_device_temperature"),
    ("atlas-950-8", ApiFamily::V2, "dcmiv2_get_device_temperature"),
];

/// Both families are counted before either verdict, and each count is printed on a line of its own
/// (`dcmi-sim <sample> (<family>): <n> allocations in <polls> polls and reads`), which benches/run.sh's report
/// turns into one figure per family.
#[test]
fn warm_polls_through_dcmi_sim_allocate_nothing() {
    let counts: Vec<String> = HOSTS
        .iter()
        .filter_map(|&(sample, family, temperature_call)| {
            let (allocations, polls, breakdown) = warm_poll_allocations(sample, family, temperature_call);
            println!("dcmi-sim {sample} ({family}): {allocations} allocations in {polls} polls and reads");
            (allocations != 0).then(|| {
                format!("{sample} ({family}): {allocations} times in {polls} polls (single-group polls: {breakdown})")
            })
        })
        .collect();
    assert!(counts.is_empty(), "a warm sampler over dcmi-sim allocated: {}", counts.join("; "));
}

/// Counts the allocations of warm polls and reads on one eight-chip sample of the API `family`, whose temperature
/// call is `temperature_call`, and checks that the polls did their work: (allocations, polls, per-group counts).
fn warm_poll_allocations(sample: &str, family: ApiFamily, temperature_call: &str) -> (usize, usize, String) {
    let (dcmi, sim) = support::start(sample);
    assert_eq!(dcmi.api_family(), family, "{sample}");
    sim.overlay(&format!(
        "[[chip]]\nlogic_id = {}\nfaults = [0x{:08X}]\n\n\
         [[inject]]\nfunction = \"{temperature_call}\"\nlogic_id = {}\nlatency_ms = 2\n",
        FAULTY.0, FAULT.0, SLOW.0
    ));
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    // The exporter's configuration: every metric of every group (see ascend-exporter/src/program/app.rs), except the
    // two reads that allocate by design, once per 60 s interval, into shared tables: the UB port counters (Ascend950,
    // `LinkSample::ub`) and the vNPU list (`ChipSample::vnpus`).
    let config = SamplerConfig::default().with_metrics(MetricSet::ALL.without(Metric::UbPorts).without(Metric::Vnpus));
    let sampler = Sampler::new(manager, config).expect("the simulator enumerates");
    let chips = sampler.chips().len();
    assert!(chips >= 8, "{sample} has 8 chips, the sampler found {chips}");

    // Warm-up: per-thread state of crossbeam and parking_lot, the channels' waiters, the unsupported-call memory.
    for _ in 0..5 {
        for group in MetricGroup::ALL {
            sampler.poll(group).expect("poll");
        }
        sampler.poll_groups(GroupSet::ALL).expect("poll");
    }

    let mut per_group = [0usize; MetricGroup::ALL.len()];
    let mut completed = 0;
    let mut polls = 0;
    let started = Instant::now();
    let before = counting_allocator::allocations();
    for _ in 0..ROUNDS {
        for group in MetricGroup::ALL {
            let group_before = counting_allocator::allocations();
            completed += sampler.poll(group).expect("poll").completed;
            per_group[group.index()] += counting_allocator::allocations() - group_before;
            polls += 1;
        }
        completed += sampler.poll_groups(GroupSet::ALL).expect("poll").completed;
        polls += 1;
    }
    let mut fault_levels = 0;
    let mut up = 0;
    sampler.visit(|chip| {
        fault_levels += usize::from(chip.state().health.fresh().is_some_and(|report| !report.faults.is_empty()));
        up += usize::from(chip.is_up());
    });
    let snapshot = sampler.snapshot(FAULTY).expect("the faulty chip");
    let identity_state = sampler.read(LogicId(0), |chip| chip.identity().state());
    let allocations = counting_allocator::allocations() - before;
    let elapsed = started.elapsed();

    let breakdown: Vec<String> =
        MetricGroup::ALL.iter().map(|group| format!("{group} {}", per_group[group.index()])).collect();
    // The polls did the work they claim, through the simulator, and waited on the slow chip in every chip-state round.
    let slow_rounds = u32::try_from(2 * ROUNDS).expect("a small count");
    assert!(
        elapsed >= Duration::from_millis(2) * slow_rounds,
        "{sample}: {slow_rounds} slow rounds took only {elapsed:?}"
    );
    assert_eq!(completed, polls * chips);
    assert_eq!(up, chips);
    assert_eq!(fault_levels, 1, "only chip {FAULTY} has an active fault code");
    let health = snapshot.state().health.fresh().copied().expect("a fresh health report");
    assert_eq!(health.faults.as_slice(), &[FAULT]);
    assert!(snapshot.state().temperature.fresh().is_some_and(|celsius| celsius.0 > 0));
    assert_eq!(identity_state, Some(SampleState::Fresh));
    (allocations, polls, breakdown.join(", "))
}
