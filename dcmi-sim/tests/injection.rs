//! Injected error codes, latency and hangs are observable through the raw bindings.

#[macro_use]
mod common;

use std::os::raw::c_uint;
use std::time::{Duration, Instant};

use common::start;
use dcmi_sim::{InjectionRule, Latency, Overlay, OVERLAY_SETTLE};

const FIXTURE: &str = include_str!("fixtures/two-910b.toml");

fn health(session: &common::Session, card: i32) -> i32 {
    let mut value: c_uint = 0;
    call!(session.lib, dcmi_get_device_health(card, 0, &mut value))
}

#[test]
fn error_code_from_call_n_on_one_chip() {
    let rules = r#"
[[inject]]
function = "dcmi_get_device_health"
logic_id = 1
code = -8012
from_call = 3
until_call = 4
"#;
    let session = start(&format!("{FIXTURE}{rules}"));
    let codes: Vec<i32> = (0..6).map(|_| health(&session, 1)).collect();
    assert_eq!(codes, vec![0, 0, -8012, -8012, 0, 0]);
    assert_eq!(health(&session, 0), 0, "the other chip is not affected");
}

#[test]
fn error_code_in_a_time_window() {
    let rules = r#"
[[inject]]
function = "*"
code = -8005
window_s = [0.3, 0.8]
"#;
    let session = start(&format!("{FIXTURE}{rules}"));
    let started = Instant::now();
    let mut seen = Vec::new();
    while started.elapsed() < Duration::from_millis(1100) {
        let code = health(&session, 0);
        if seen.last() != Some(&code) {
            seen.push(code);
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(seen, vec![0, -8005, 0]);
}

#[test]
fn fixed_and_random_latency_and_hang() {
    let rules = r#"
[[inject]]
function = "dcmi_get_device_temperature"
latency_ms = 60

[[inject]]
function = "dcmi_get_device_voltage"
latency_ms = [20, 40]

[[inject]]
function = "dcmi_get_device_network_health"
logic_id = 0
hang = true
"#;
    let session = start(&format!("{FIXTURE}{rules}"));
    let lib = session.lib;
    let mut temperature = 0;
    let (code, took) = timed(|| call!(lib, dcmi_get_device_temperature(0, 0, &mut temperature)));
    assert_eq!(code, 0);
    assert!(took >= Duration::from_millis(60), "{took:?}");
    for _ in 0..3 {
        let mut voltage = 0;
        let (code, took) = timed(|| call!(lib, dcmi_get_device_voltage(0, 0, &mut voltage)));
        assert_eq!(code, 0);
        assert!(took >= Duration::from_millis(20) && took < Duration::from_millis(400), "{took:?}");
    }
    // The hang (hang_ms = 1500 in the fixture) blocks the call; a caller with a deadline gives up.
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut result = dcmi_sys::dcmi_rdfx_detect_result(0);
        let code = call!(lib, dcmi_get_device_network_health(0, 0, &mut result));
        let _ = sender.send(code);
    });
    assert!(receiver.recv_timeout(Duration::from_millis(500)).is_err(), "the hung call returned early");
    assert_eq!(receiver.recv_timeout(Duration::from_secs(5)), Ok(0), "the hang ends after hang_ms");
    let mut other = dcmi_sys::dcmi_rdfx_detect_result(0);
    let (code, took) = timed(|| call!(lib, dcmi_get_device_network_health(1, 0, &mut other)));
    assert_eq!(code, 0);
    assert!(took < Duration::from_millis(1000), "only logic 0 hangs: {took:?}");
}

fn timed(call: impl FnOnce() -> i32) -> (i32, Duration) {
    let started = Instant::now();
    let code = call();
    (code, started.elapsed())
}

#[test]
fn overlay_injection_replaces_previous_rules() {
    let session = start(FIXTURE);
    let rule = |code: i32| InjectionRule {
        function: "dcmi_get_device_health".into(),
        logic_id: Some(0),
        code: Some(code),
        from_call: 1,
        until_call: None,
        window_s: None,
        latency_ms: Some(Latency::Fixed(1)),
        hang: false,
    };
    dcmi_sim::write_overlay(&session.overlay, &Overlay { chips: Vec::new(), injections: vec![rule(-8007)] })
        .expect("write");
    std::thread::sleep(OVERLAY_SETTLE);
    assert_eq!(health(&session, 0), -8007);
    dcmi_sim::write_overlay(&session.overlay, &Overlay { chips: Vec::new(), injections: vec![rule(-8005)] })
        .expect("write");
    std::thread::sleep(OVERLAY_SETTLE);
    assert_eq!(health(&session, 0), -8005);
    dcmi_sim::write_overlay(&session.overlay, &Overlay::default()).expect("write");
    std::thread::sleep(OVERLAY_SETTLE);
    assert_eq!(health(&session, 0), 0);
}
