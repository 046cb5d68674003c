//! Failure injection: every DCMI return code maps to its own variant with the call and chip as context, a hung call
//! ends at the deadline without stalling other chips, and unsupported answers are typed.

mod support;

use std::time::{Duration, Instant};

use ascend_dcmi::{CallContext, Error, LogicId};

/// The return codes DCMI itself returns (`dcmiErrMap` in Huawei's `Ascend/mind-cluster`,
/// `component/ascend-common/devmanager/dcmi`).
const DCMI_CODES: [i32; 21] = [
    -8001, -8002, -8003, -8004, -8005, -8006, -8007, -8008, -8009, -8010, -8011, -8012, -8013, -8014, -8015, -8016,
    -8017, -8020, -8022, -8023, -8255,
];

fn inject(function: &str, logic: u32, extra: &str) -> String {
    format!("[[inject]]\nfunction = \"{function}\"\nlogic_id = {logic}\n{extra}\n")
}

#[test]
fn every_return_code_is_a_distinct_variant_naming_call_and_chip() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let chip = dcmi.chip(LogicId(2)).expect("chip");
    let mut variants = std::collections::HashSet::new();
    for code in DCMI_CODES.into_iter().chain([-4242]) {
        sim.overlay(&inject("dcmi_get_device_voltage", 2, &format!("code = {code}")));
        let error = chip.voltage().expect_err("injected failure");
        assert_eq!(error.code(), Some(code), "{error}");
        let context = error.context().expect("a DCMI error has a context");
        assert_eq!(context.call, "dcmi_get_device_voltage");
        assert_eq!(context.chip, chip.locator());
        assert_eq!(context.logic, Some(LogicId(2)));
        assert!(error.to_string().contains(&code.to_string()), "{error}");
        variants.insert(std::mem::discriminant(&error));
        assert!(dcmi.chip(LogicId(3)).expect("other chip").voltage().is_ok(), "only chip 2 is affected");
    }
    assert_eq!(variants.len(), DCMI_CODES.len() + 1, "one variant per code, plus Unknown");
    let unknown = {
        sim.overlay(&inject("dcmi_get_device_voltage", 2, "code = -4242"));
        chip.voltage().expect_err("unknown code")
    };
    assert!(matches!(unknown, Error::Unknown { code: -4242, .. }));
}

#[test]
fn unsupported_calls_are_typed_and_distinguished_from_failures() {
    let (dcmi, sim) = support::start("atlas-300i-pro");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let error = chip.network_health().expect_err("310P has no RoCE network health");
    assert!(error.is_unsupported() && !error.is_card_drop(), "{error}");
    sim.overlay(&inject("dcmi_get_device_temperature", 0, "code = -8255"));
    let error = chip.temperature().expect_err("injected -8255");
    assert!(matches!(&error, Error::NotSupported(context) if context.call == "dcmi_get_device_temperature"));
    sim.overlay(&inject("dcmi_get_device_temperature", 0, "code = -8012"));
    assert!(chip.temperature().expect_err("injected -8012").is_card_drop());
}

#[test]
fn a_hung_call_ends_at_the_deadline_and_other_chips_still_answer() {
    let deadline = Duration::from_millis(300);
    let (dcmi, sim) =
        support::start_with("atlas-800t-a2", &[], |builder| builder.call_deadline(deadline).worker_concurrency(2));
    let dcmi = dcmi.expect("loads");
    sim.overlay(&inject("dcmi_get_device_network_health", 3, "hang = true"));
    let hung = dcmi.chip(LogicId(3)).expect("chip");
    let started = Instant::now();
    let error = hung.network_health().expect_err("the call hangs");
    let waited = started.elapsed();
    match &error {
        Error::Timeout { context, deadline: reported } => {
            assert_eq!(context.call, "dcmi_get_device_network_health");
            assert_eq!(context.logic, Some(LogicId(3)));
            assert_eq!(*reported, deadline);
        }
        other => panic!("expected Timeout, got {other}"),
    }
    assert!(waited >= deadline && waited < deadline * 5, "waited {waited:?}");
    let healthy = dcmi.chip(LogicId(4)).expect("chip");
    assert!(healthy.network_health().expect("chip 4 answers").is_healthy());

    // The generic form: any call on a worker thread with the handle's deadline.
    sim.overlay(&inject("dcmi_get_device_temperature", 3, "hang = true"));
    let context = CallContext::global("dcmi_get_device_temperature");
    let error = dcmi.call_with_deadline(context, |dcmi| dcmi.chip(LogicId(3))?.temperature()).expect_err("hangs");
    assert!(matches!(error, Error::Timeout { .. }), "{error}");

    // Two hung calls hold both workers: a third call is refused instead of piling up threads.
    let error = healthy.network_health().expect_err("no free worker");
    assert!(matches!(&error, Error::Worker(message) if message.contains("2 DCMI calls")), "{error}");
    assert!(healthy.temperature().is_ok(), "direct calls on healthy chips still work");
}
