//! `ascend-smi watch` frames and `ascend-smi events` over a mocked host.

mod smi_doctor_support;

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ascend_dcmi::{
    Assertion, EventSource, FaultCode, FaultEvent, FaultEventStream, LogicId, MockDeviceManager, Severity,
};
use ascend_node::{CollectOptions, Collector, FaultGrader};
use ascend_smi::watch::{self, FrameStyle, WatchOptions, CLEAR_TO_END_OF_LINE, CLEAR_TO_END_OF_SCREEN, CURSOR_HOME};
use ascend_smi::SmiExit;
use ascend_smi::{event_line, follow, EventReport, FollowLimits};
use smi_doctor_support::mock_host::{faulty_310p, healthy_910b, ids, manager};

#[test]
fn watch_redraws_in_place_without_clearing_the_screen() {
    let collector = Collector::new(manager(vec![healthy_910b(), faulty_310p()]), CollectOptions::default());
    let options = WatchOptions { interval: Duration::from_millis(10), count: Some(3), style: FrameStyle::InPlace };
    let mut out = Vec::new();
    let exit = watch::run(&collector, &options, &mut out).expect("written");
    assert_eq!(exit, SmiExit::Unhealthy, "the last frame's verdict");
    let text = String::from_utf8(out).expect("UTF-8");
    assert_eq!(text.matches(CURSOR_HOME).count(), 3, "one cursor-home per frame");
    assert_eq!(text.matches(CLEAR_TO_END_OF_SCREEN).count(), 3);
    assert!(!text.contains("\x1b[2J"), "no full-screen clear");
    for line in text.split('\n').filter(|line| !line.is_empty() && !line.starts_with(CLEAR_TO_END_OF_SCREEN)) {
        assert!(line.ends_with(CLEAR_TO_END_OF_LINE), "{line:?}");
    }
    assert!(text.contains("(refresh 3)"));
}

fn event(logic: u32, code: u64, severity: Option<Severity>, name: &str) -> FaultEvent {
    FaultEvent {
        logic: LogicId(logic),
        code: FaultCode(code),
        severity,
        assertion: Assertion::Occur,
        name: name.to_owned(),
        seen_at: UNIX_EPOCH + Duration::from_secs(1_798_761_599),
        source: EventSource::Subscription,
    }
}

fn event_manager(events: Vec<FaultEvent>) -> MockDeviceManager {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Ok(vec![ids(0, 4, 0, 0), ids(1, 0, 3, 1)]));
    mock.expect_fault_events().returning(move |_| {
        let (sender, receiver) = crossbeam_channel::unbounded();
        for event in &events {
            let _ = sender.send(event.clone());
        }
        Ok(FaultEventStream::new(receiver, ()))
    });
    mock
}

#[test]
fn events_are_printed_with_level_and_meaning_until_the_stream_ends() {
    let mock = event_manager(vec![
        event(1, 0x80E3_A201, Some(Severity::Critical), "HBM multi-bit ECC error"),
        event(0, 0x1234_5678, Some(Severity::Minor), ""),
    ]);
    let policy = ascend_dcmi::FaultPolicy::default();
    let grader: FaultGrader = Arc::new(move |code| policy.listed_level(code));
    let mut out = Vec::new();
    let seen =
        follow(&mock, Duration::from_millis(100), FollowLimits::default(), false, &grader, &mut out).expect("follow");
    assert_eq!(seen, 2);
    let text = String::from_utf8(out).expect("UTF-8");
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0],
        "2026-12-31T23:59:59Z NPU 0   80E3A201 occur    critical SeparateNPU: HBM multi-bit ECC error"
    );
    assert!(lines[1].contains("NPU 4") && lines[1].contains("NotHandleFault: informational fault"), "{}", lines[1]);
}

#[test]
fn events_stop_at_the_count_and_print_json_lines() {
    let mock = event_manager(vec![event(0, FaultCode::CARD_DROP.0, None, ""), event(0, 0x80E0_1801, None, "")]);
    let grader: FaultGrader = Arc::new(|_| None);
    let mut out = Vec::new();
    let limits = FollowLimits { count: Some(1), duration: None };
    assert_eq!(follow(&mock, Duration::from_millis(100), limits, true, &grader, &mut out).expect("follow"), 1);
    let text = String::from_utf8(out).expect("UTF-8");
    let report: EventReport = serde_json::from_str(text.trim()).expect("one JSON document");
    assert_eq!(report.code, "40F84E00");
    assert_eq!(report.phy_id, Some(4));
    assert_eq!(report.level, "SeparateNPU", "an unlisted code without severity isolates the chip");
    assert!(report.meaning.starts_with("card dropped"), "{}", report.meaning);
    assert!(event_line(&report).contains("NPU 4"));
}

#[test]
fn events_stop_after_the_duration_on_a_quiet_host() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Ok(Vec::new()));
    mock.expect_fault_events().returning(|_| {
        let (sender, receiver) = crossbeam_channel::unbounded::<FaultEvent>();
        Ok(FaultEventStream::new(receiver, sender))
    });
    let grader: FaultGrader = Arc::new(|_| None);
    let limits = FollowLimits { count: None, duration: Some(Duration::from_millis(200)) };
    let started = SystemTime::now();
    let seen = follow(&mock, Duration::from_millis(50), limits, false, &grader, &mut Vec::new()).expect("follow");
    assert_eq!(seen, 0);
    assert!(started.elapsed().unwrap_or_default() < Duration::from_secs(5));
}
