//! Health grading, card drop and recovery, fault policies from the vendor's file format, and fault events by
//! subscription (910 family) and by polling (310 family, or when the subscription symbol is missing).

mod support;

use std::time::{Duration, Instant};

use ascend_dcmi::{
    Assertion, EventSource, FaultCode, FaultEvent, FaultEventStream, FaultLevel, FaultPolicy, LogicId, Severity,
};

const EVENT_WAIT: Duration = Duration::from_secs(5);
const POLL: Duration = Duration::from_millis(100);

fn fixture_policy() -> FaultPolicy {
    FaultPolicy::from_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/faultCode.json")).expect("fixture")
}

/// The next event matching `wanted`, skipping others, or a panic naming what was seen.
fn wait_for(stream: &FaultEventStream, wanted: impl Fn(&FaultEvent) -> bool) -> FaultEvent {
    let deadline = Instant::now() + EVENT_WAIT;
    let mut seen = Vec::new();
    while let Some(left) = deadline.checked_duration_since(Instant::now()) {
        match stream.recv_timeout(left) {
            Ok(event) if wanted(&event) => return event,
            Ok(event) => seen.push(event),
            Err(_) => break,
        }
    }
    panic!("no matching event within {EVENT_WAIT:?}; saw {seen:?}");
}

fn faults_overlay(logic: u32, faults: &str) -> String {
    format!("[[chip]]\nlogic_id = {logic}\nfaults = [{faults}]\n")
}

#[test]
fn health_grades_the_active_codes_and_recovers_when_they_clear() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    assert!(chip.health().expect("health").is_healthy());

    sim.overlay(&faults_overlay(0, "0x80E01801"));
    let report = chip.health().expect("health");
    assert_eq!(report.faults.as_slice(), &[FaultCode(0x80E0_1801)]);
    assert_eq!(report.level, FaultLevel::RestartBusiness, "graded by the built-in policy");
    assert!(!report.is_healthy());

    sim.overlay(&faults_overlay(0, "0x80E01801, 0x80E3A201"));
    assert_eq!(chip.health().expect("health").level, FaultLevel::SeparateNpu, "the most serious code wins");

    sim.overlay(&faults_overlay(0, "0x12345678"));
    assert_eq!(chip.health().expect("health").level, FaultLevel::SeparateNpu, "unknown code without severity");

    sim.overlay(&faults_overlay(0, ""));
    let report = chip.health().expect("health");
    assert!(report.is_healthy() && report.faults.is_empty(), "{report:?}");
}

#[test]
fn a_card_drop_is_its_own_state_and_recovers() {
    let (dcmi, sim) = support::start("atlas-300i-duo");
    let chip = dcmi.chip(LogicId(3)).expect("chip");
    sim.overlay("[[chip]]\nlogic_id = 3\ndropped = true\n");
    let report = chip.health().expect("a drop is a report, not an error");
    assert!(report.card_dropped);
    assert_eq!(report.dcmi, None);
    assert!(report.faults.contains(FaultCode::CARD_DROP));
    assert_eq!(report.level, FaultLevel::RestartNpu);
    assert!(!report.is_healthy());
    let error = chip.temperature().expect_err("a dropped card answers nothing");
    assert!(error.is_card_drop(), "{error}");
    assert!(dcmi.chip(LogicId(2)).expect("neighbour").health().expect("health").is_healthy());

    sim.overlay("[[chip]]\nlogic_id = 3\ndropped = false\n");
    assert!(chip.health().expect("health").is_healthy());
}

#[test]
fn a_policy_file_replaces_the_built_in_grading() {
    let (dcmi, sim) = support::start_with("atlas-800t-a2", &[], |builder| builder.fault_policy(fixture_policy()));
    let dcmi = dcmi.expect("loads");
    assert!(dcmi.fault_policy().source().is_some_and(|path| path.ends_with("faultCode.json")));
    sim.overlay(&faults_overlay(1, "0x80E01801"));
    let report = dcmi.chip(LogicId(1)).expect("chip").health().expect("health");
    assert_eq!(report.level, FaultLevel::NotHandleFault, "the file lists 80E01801 as not handled");
    assert!(report.is_healthy());
    assert_eq!(FaultPolicy::default().grade(FaultCode(0x80E0_1801), None), FaultLevel::RestartBusiness);
}

#[test]
fn subscription_delivers_typed_events_on_the_910_family() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let events = dcmi.fault_events(Duration::from_secs(3600)).expect("subscribe");
    sim.overlay(&faults_overlay(2, "{ code = 0x80E18402, severity = 3 }"));
    let raised = wait_for(&events, |event| event.code == FaultCode(0x80E1_8402));
    assert_eq!(raised.logic, LogicId(2));
    assert_eq!(raised.assertion, Assertion::Occur);
    assert_eq!(raised.severity, Some(Severity::Critical));
    assert_eq!(raised.source, EventSource::Subscription);
    assert_eq!(dcmi.fault_policy().grade(raised.code, raised.severity), FaultLevel::SeparateNpu);

    sim.overlay(&faults_overlay(2, ""));
    let cleared = wait_for(&events, |event| event.code == FaultCode(0x80E1_8402));
    assert_eq!(cleared.assertion, Assertion::Recovery);

    let second = dcmi.fault_events(Duration::from_secs(3600)).expect("a second stream reuses the subscription");
    sim.overlay(&faults_overlay(5, "0x80E24E00"));
    assert_eq!(wait_for(&second, |e| e.code == FaultCode(0x80E2_4E00)).logic, LogicId(5));
    assert_eq!(wait_for(&events, |e| e.code == FaultCode(0x80E2_4E00)).logic, LogicId(5));
    assert!(events.try_recv().is_err(), "one subscription per library: no duplicate events");
}

#[test]
fn a_panicking_consumer_does_not_stop_delivery_to_others() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let doomed = dcmi.fault_events(Duration::from_secs(3600)).expect("stream");
    let healthy = dcmi.fault_events(Duration::from_secs(3600)).expect("stream");
    let consumer = std::thread::spawn(move || {
        let event = doomed.recv_timeout(EVENT_WAIT).expect("an event");
        panic!("user code fails while handling {event:?}");
    });
    sim.overlay(&faults_overlay(0, "0x80E24E00"));
    assert!(consumer.join().is_err(), "the consumer panicked on its own thread");
    wait_for(&healthy, |event| event.code == FaultCode(0x80E2_4E00));
    sim.overlay(&faults_overlay(0, "0x80E24E00, 0x8C03A000"));
    wait_for(&healthy, |event| event.code == FaultCode(0x8C03_A000));
}

#[test]
fn the_310_family_is_polled_and_yields_the_same_events() {
    let (dcmi, sim) = support::start("atlas-300i-duo");
    sim.overlay(&faults_overlay(1, "0x80E21007"));
    let events = dcmi.fault_events(POLL).expect("polling stream");
    let initial = wait_for(&events, |event| event.code == FaultCode(0x80E2_1007));
    assert_eq!(
        (initial.logic, initial.assertion, initial.source),
        (LogicId(1), Assertion::Occur, EventSource::Polling)
    );
    assert_eq!(initial.severity, None);

    sim.overlay(&faults_overlay(1, "0x80E21007, 0x80E3A201"));
    let raised = wait_for(&events, |event| event.code == FaultCode(0x80E3_A201));
    assert_eq!(raised.assertion, Assertion::Occur);
    sim.overlay(&faults_overlay(1, "0x80E3A201"));
    let cleared = wait_for(&events, |event| event.code == FaultCode(0x80E2_1007));
    assert_eq!(cleared.assertion, Assertion::Recovery);

    sim.overlay("[[chip]]\nlogic_id = 6\ndropped = true\n");
    let dropped = wait_for(&events, |event| event.code == FaultCode::CARD_DROP);
    assert_eq!((dropped.logic, dropped.assertion), (LogicId(6), Assertion::Occur));
    sim.overlay("[[chip]]\nlogic_id = 6\ndropped = false\n");
    let back = wait_for(&events, |event| event.code == FaultCode::CARD_DROP);
    assert_eq!(back.assertion, Assertion::Recovery);
}

#[test]
fn without_the_subscription_symbol_the_910_family_is_polled() {
    let (dcmi, sim) = support::start_with("atlas-800t-a2", &["dcmi_subscribe_fault_event"], |builder| builder);
    let dcmi = dcmi.expect("loads");
    let events = dcmi.fault_events(POLL).expect("falls back to polling");
    sim.overlay(&faults_overlay(4, "0x80E24E00"));
    let event = wait_for(&events, |event| event.code == FaultCode(0x80E2_4E00));
    assert_eq!((event.logic, event.source), (LogicId(4), EventSource::Polling));
}
