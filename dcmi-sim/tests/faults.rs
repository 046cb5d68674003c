//! Fault timelines reach subscribed callbacks; the overlay file changes a running simulator's
//! state; drop and restore; health follows the faults.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::os::raw::{c_int, c_uint};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{start, Session};
use dcmi_sim::{ChipOverlay, Overlay, OVERLAY_SETTLE};
use dcmi_sys::*;

const FIXTURE: &str = include_str!("fixtures/two-910b.toml");

/// (logic id, code, severity, assertion) of every delivered event.
static EVENTS: Mutex<Vec<(u16, u32, u8, u8)>> = Mutex::new(Vec::new());

extern "C" fn collect(event: *mut dcmi_event) {
    // SAFETY: the simulator passes a valid event for the duration of the call; it is a fault event.
    let dms = unsafe { (*event).event_t.dms_event };
    if let Ok(mut events) = EVENTS.lock() {
        events.push((dms.deviceid, dms.event_id, dms.severity, dms.assertion));
    }
}

fn events() -> Vec<(u16, u32, u8, u8)> {
    EVENTS.lock().map(|events| events.clone()).unwrap_or_default()
}

fn wait_for(what: &str, timeout: Duration, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + timeout;
    while !done() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

fn health(session: &Session, card: c_int) -> (c_int, c_uint) {
    let mut value = 0;
    let status = call!(session.lib, dcmi_get_device_health(card, 0, &mut value));
    (status, value)
}

fn error_codes(session: &Session, card: c_int) -> Vec<c_uint> {
    let mut count = 0;
    let mut codes = [0 as c_uint; 128];
    assert_eq!(call!(session.lib, dcmi_get_device_errorcode_v2(card, 0, &mut count, codes.as_mut_ptr(), 128)), 0);
    codes[..count as usize].to_vec()
}

fn write_overlay(session: &Session, chips: Vec<ChipOverlay>, injections: Vec<dcmi_sim::InjectionRule>) {
    let overlay = Overlay { chips, injections };
    dcmi_sim::write_overlay(&session.overlay, &overlay).expect("write overlay");
    std::thread::sleep(OVERLAY_SETTLE);
}

#[test]
fn timeline_faults_reach_the_callback_and_drop_restores() {
    let timeline = r#"
[[timeline]]
at_s = 0.3
logic_id = 1
action = "raise_fault"
code = 0x80E01801
severity = 3

[[timeline]]
at_s = 0.6
logic_id = 1
action = "clear_fault"
code = 0x80E01801

[[timeline]]
at_s = 0.8
logic_id = 0
action = "drop"

[[timeline]]
at_s = 1.8
logic_id = 0
action = "restore"
"#;
    let session = start(&format!("{FIXTURE}{timeline}"));
    EVENTS.lock().map(|mut events| events.clear()).unwrap_or_default();
    let started = Instant::now();
    assert_eq!(call!(session.lib, dcmi_subscribe_fault_event(-1, -1, dcmi_event_filter::default(), Some(collect))), 0);
    assert_eq!(health(&session, 1), (0, 1), "initial fault of severity 1 makes health 1");
    wait_for("raised event", Duration::from_secs(3), || !events().is_empty());
    assert!(started.elapsed() >= Duration::from_millis(250), "raised too early");
    assert_eq!(events()[0], (1, 0x80E01801, 3, 1));
    assert_eq!(health(&session, 1), (0, 3));
    assert_eq!(error_codes(&session, 1), vec![0x80CB8009, 0x80E01801]);
    wait_for("cleared event", Duration::from_secs(3), || events().len() >= 2);
    assert_eq!(events()[1], (1, 0x80E01801, 3, 0));
    assert_eq!(error_codes(&session, 1), vec![0x80CB8009]);
    wait_for("drop", Duration::from_secs(3), || health(&session, 0).0 == -8012);
    let mut temperature = 0;
    assert_eq!(call!(session.lib, dcmi_get_device_temperature(0, 0, &mut temperature)), -8012);
    let mut logic = -1;
    assert_eq!(call!(session.lib, dcmi_get_device_logic_id(&mut logic, 0, 0)), 0, "ids still answer while dropped");
    let mut boot = dcmi_boot_status(9);
    assert_eq!(call!(session.lib, dcmi_get_device_boot_status(0, 0, &mut boot)), 0);
    assert_eq!(boot.0, 0);
    wait_for("restore", Duration::from_secs(3), || health(&session, 0) == (0, 0));
    assert_eq!(events().len(), 2, "drop and restore raise no fault events");
}

#[test]
fn subscription_scope_and_filter() {
    let session = start(FIXTURE);
    EVENTS.lock().map(|mut events| events.clear()).unwrap_or_default();
    // Only chip (1, 0) = logic 1, only severity >= 2.
    let filter = dcmi_event_filter { filter_flag: 1 << 1, severity: 2, ..Default::default() };
    assert_eq!(call!(session.lib, dcmi_subscribe_fault_event(1, 0, filter, Some(collect))), 0);
    let raise = |logic_id: u32, code: u32, severity: u8| ChipOverlay {
        logic_id,
        faults: Some(vec![dcmi_sim::topology::FaultSpec::Detailed { code, severity }]),
        ..ChipOverlay::default()
    };
    write_overlay(&session, vec![raise(0, 0x111, 3), raise(1, 0x222, 1), raise(1, 0x333, 2)], Vec::new());
    wait_for("filtered events", Duration::from_secs(2), || !events().is_empty());
    std::thread::sleep(Duration::from_millis(50));
    // logic 1 had 0x80CB8009 (severity 1) which the overlay's list clears: filtered out (severity 1).
    assert_eq!(events(), vec![(1, 0x333, 2, 1)]);
}

#[test]
fn overlay_changes_a_running_simulator() {
    let session = start(FIXTURE);
    EVENTS.lock().map(|mut events| events.clear()).unwrap_or_default();
    assert_eq!(call!(session.lib, dcmi_subscribe_fault_event(-1, -1, dcmi_event_filter::default(), Some(collect))), 0);
    let mut temperature = 0;
    assert_eq!(call!(session.lib, dcmi_get_device_temperature(0, 0, &mut temperature)), 0);
    assert_eq!(temperature, 50);

    let chip = ChipOverlay {
        logic_id: 0,
        health: Some(1),
        faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x1234)]),
        temperature: Some(dcmi_sim::Signal::Constant(97)),
        power: Some(dcmi_sim::Signal::Constant(3125)),
        aicore_utilization: Some(dcmi_sim::Signal::Constant(64)),
        ecc: Some(dcmi_sim::topology::Ecc { double_bit_error_cnt: 3, ..Default::default() }),
        processes: Some(vec![dcmi_sim::topology::Process { pid: 77, memory_bytes: 1 << 30 }]),
        ..ChipOverlay::default()
    };
    write_overlay(&session, vec![chip.clone()], Vec::new());
    assert_eq!(health(&session, 0), (0, 2), "fault severity 2 outranks health 1");
    assert_eq!(error_codes(&session, 0), vec![0x1234]);
    assert_eq!(call!(session.lib, dcmi_get_device_temperature(0, 0, &mut temperature)), 0);
    assert_eq!(temperature, 97);
    let mut power = 0;
    assert_eq!(call!(session.lib, dcmi_get_device_power_info(0, 0, &mut power)), 0);
    assert_eq!(power, 3125);
    let mut aicore = 0;
    assert_eq!(call!(session.lib, dcmi_get_device_utilization_rate(0, 0, 2, &mut aicore)), 0);
    assert_eq!(aicore, 64);
    let mut ecc = dcmi_ecc_info::default();
    assert_eq!(call!(session.lib, dcmi_get_device_ecc_info(0, 0, dcmi_device_type::DCMI_DEVICE_TYPE_HBM, &mut ecc)), 0);
    assert_eq!((ecc.enable_flag, ecc.double_bit_error_cnt), (1, 3));
    let mut processes = [dcmi_proc_mem_info::default(); 32];
    let mut count = 0;
    assert_eq!(call!(session.lib, dcmi_get_device_resource_info(0, 0, processes.as_mut_ptr(), &mut count)), 0);
    assert_eq!((count, processes[0].proc_id, processes[0].proc_mem_usage), (1, 77, 1 << 30));
    wait_for("raised event", Duration::from_secs(2), || events().contains(&(0, 0x1234, 2, 1)));
    // dcmi_init again with an unchanged environment keeps the running instance and its state.
    assert_eq!(call!(session.lib, dcmi_init()), 0);
    assert_eq!(health(&session, 0), (0, 2));
    assert_eq!(error_codes(&session, 0), vec![0x1234]);

    write_overlay(
        &session,
        vec![ChipOverlay { logic_id: 0, faults: Some(Vec::new()), dropped: Some(true), ..ChipOverlay::default() }],
        Vec::new(),
    );
    assert_eq!(health(&session, 0).0, -8012);
    wait_for("cleared event", Duration::from_secs(2), || events().contains(&(0, 0x1234, 2, 0)));

    // A reset (new reset_generation) brings the dropped chip back with boot status 16.
    write_overlay(
        &session,
        vec![ChipOverlay { logic_id: 0, reset_generation: Some(1), ..ChipOverlay::default() }],
        Vec::new(),
    );
    let mut boot = dcmi_boot_status(0);
    wait_for("boot 16", Duration::from_secs(3), || {
        call!(session.lib, dcmi_get_device_boot_status(0, 0, &mut boot)) == 0 && boot.0 == 16
    });
    assert_eq!(health(&session, 0), (0, 0));

    // A broken overlay, or one naming an unknown chip, is reported and ignored; the state stays.
    std::fs::write(&session.overlay, "[[chip]]\nlogic_id = 0\nhealth = \"bad\"\n").expect("write");
    std::thread::sleep(OVERLAY_SETTLE);
    assert_eq!(health(&session, 0), (0, 0));
    write_overlay(
        &session,
        vec![
            ChipOverlay { logic_id: 0, health: Some(3), ..ChipOverlay::default() },
            ChipOverlay { logic_id: 9, health: Some(3), ..ChipOverlay::default() },
        ],
        Vec::new(),
    );
    assert_eq!(health(&session, 0), (0, 0), "nothing of an overlay with an unknown chip applies");
}

/// `dcmi_set_device_reset` on an Atlas 300I Duo card resets both its chips: a fault on the card's second chip is
/// cleared by the reset Huawei's device plugin asks of the first (device 0); another card is left alone.
#[test]
fn a_duo_card_resets_as_one() {
    let session = start(include_str!("../topologies/atlas-300i-duo.toml"));
    let fault = || Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E2_4E00)]);
    write_overlay(
        &session,
        vec![
            ChipOverlay { logic_id: 1, health: Some(2), faults: fault(), ..ChipOverlay::default() },
            ChipOverlay { logic_id: 3, health: Some(2), faults: fault(), ..ChipOverlay::default() },
        ],
        Vec::new(),
    );
    // Logic 0 and 1 are card 2's chips, logic 3 is card 3's second chip.
    let health_of = |card: c_int, device: c_int| {
        let mut value = 0;
        assert_eq!(call!(session.lib, dcmi_get_device_health(card, device, &mut value)), 0);
        value
    };
    assert_eq!((health_of(2, 1), health_of(3, 1)), (2, 2));
    assert_eq!(call!(session.lib, dcmi_set_device_reset(2, 0, dcmi_reset_channel::INBAND_CHANNEL)), 0);
    let mut boot = dcmi_boot_status(0);
    assert_eq!(call!(session.lib, dcmi_get_device_boot_status(2, 1, &mut boot)), 0);
    assert_ne!(boot.0, 16, "the card-mate reboots with the card");
    wait_for("card 2 booted", Duration::from_secs(3), || {
        [0, 1]
            .iter()
            .all(|&device| call!(session.lib, dcmi_get_device_boot_status(2, device, &mut boot)) == 0 && boot.0 == 16)
    });
    assert_eq!(health_of(2, 1), 0, "the reset cleared the card-mate's fault");
    let mut count = 0;
    let mut codes = [0 as c_uint; 8];
    assert_eq!(call!(session.lib, dcmi_get_device_errorcode_v2(2, 1, &mut count, codes.as_mut_ptr(), 8)), 0);
    assert_eq!(count, 0);
    assert_eq!(health_of(3, 1), 2, "another card is not reset");
}
