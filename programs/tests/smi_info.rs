//! `ascend-smi info`, `info -v`, `health` and `--json` over a mocked host: exact output, exit codes, hung chips.

mod smi_doctor_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{CallContext, Error, MockDeviceManager};
use ascend_node::host_report::{ChipStatus, HostReport, SCHEMA_VERSION};
use ascend_node::{parse_visible_devices, CollectError, CollectOptions, Collector, ProcessNames};
use ascend_smi::SmiExit;
use ascend_smi::{details, health_view, table};
use smi_doctor_support::mock_host::{faulty_310p, healthy_910b, manager, MockChip};
use smi_doctor_support::snapshot::assert_snapshot;

/// A host root whose `/proc` knows one of the processes, so names are exact.
fn proc_root() -> tempfile::TempDir {
    let root = tempfile::tempdir().expect("temp dir");
    let comm = root.path().join("proc/4242");
    std::fs::create_dir_all(&comm).expect("proc dir");
    std::fs::write(comm.join("comm"), "python3\n").expect("comm");
    root
}

fn collect(chips: Vec<MockChip>, verbose: bool) -> HostReport {
    let root = proc_root();
    let options = CollectOptions {
        verbose,
        process_names: ProcessNames::Proc { root: root.path().to_path_buf() },
        firmware_version: Some("7.5.0.1.129".to_owned()),
        ..CollectOptions::default()
    };
    Collector::new(manager(chips), options).collect().expect("the mock lists its chips")
}

#[test]
fn info_table_matches_the_snapshot_and_fits_80_columns() {
    let report = collect(vec![healthy_910b(), faulty_310p()], false);
    let text = table::render(&report);
    for line in text.lines() {
        assert!(line.chars().count() <= ascend_cli::text::WIDTH, "too wide: {line:?}");
        if line.starts_with('+') || line.starts_with('|') {
            assert_eq!(line.chars().count(), ascend_cli::text::WIDTH, "table line not full width: {line:?}");
        }
    }
    assert_snapshot("smi_info_mock.txt", &text);
}

#[test]
fn verbose_info_shows_every_id_space_and_identity() {
    let report = collect(vec![healthy_910b(), faulty_310p()], true);
    let text = details::render(&report);
    assert!(text.contains("phy 4 | logic 0 | card 0 device 0 | visible 0"), "{text}");
    assert!(text.lines().all(|line| line.chars().count() <= ascend_cli::text::WIDTH), "{text}");
    assert_snapshot("smi_info_verbose_mock.txt", &text);
    let json = serde_json::to_string_pretty(&report).expect("serialise");
    assert_snapshot("smi_info_verbose_mock.json", &(json + "\n"));
}

#[test]
fn json_document_round_trips_and_matches_the_snapshot() {
    let report = collect(vec![healthy_910b(), faulty_310p()], false);
    let json = serde_json::to_string_pretty(&report).expect("serialise");
    let back: HostReport = serde_json::from_str(&json).expect("the schema reads back");
    assert_eq!(back, report);
    assert_eq!(back.schema_version, SCHEMA_VERSION);
    let value: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
    assert!(value["chips"][0].get("details").is_none(), "details only with -v");
    assert_eq!(value["chips"][1]["health"]["faults"][0]["code"], "80E01801");
    assert_snapshot("smi_info_mock.json", &(json + "\n"));
}

#[test]
fn health_lists_fault_codes_with_level_and_meaning() {
    let report = collect(vec![healthy_910b(), faulty_310p()], false);
    let text = health_view::render(&report);
    assert!(text.contains("80E3A201"), "{text}");
    assert!(text.contains("SeparateNPU"), "{text}");
    assert!(text.contains("isolate the chip now"), "{text}");
    assert_snapshot("smi_health_mock.txt", &text);
}

#[test]
fn exit_codes_tell_healthy_from_unhealthy() {
    assert_eq!(SmiExit::for_report(&collect(vec![healthy_910b()], false)), SmiExit::Healthy);
    let mixed = collect(vec![healthy_910b(), faulty_310p()], false);
    assert_eq!(mixed.chips[1].status, ChipStatus::Unhealthy);
    assert_eq!(SmiExit::for_report(&mixed), SmiExit::Unhealthy);
    assert_eq!(SmiExit::for_report(&mixed).code(), 3);
}

#[test]
fn a_hung_chip_is_shown_as_timed_out_without_blocking_the_others() {
    let mut hung = faulty_310p();
    hung.health_delay = Some(Duration::from_secs(60));
    // Long enough for the healthy chip on a loaded machine, far shorter than the hang.
    let options = CollectOptions { deadline: Duration::from_secs(2), ..CollectOptions::default() };
    let collector = Collector::new(manager(vec![healthy_910b(), hung]), options);

    let started = Instant::now();
    let report = collector.collect().expect("enumeration works");
    assert!(started.elapsed() < Duration::from_secs(10), "collect waited for the hung chip");
    assert_eq!(report.chips[0].status, ChipStatus::Ok);
    assert_eq!(report.chips[0].temperature_celsius, Some(45));
    let hung = &report.chips[1];
    assert_eq!(hung.status, ChipStatus::Timeout);
    assert_eq!(hung.name.as_deref(), Some("310P3"), "fields read before the hang are kept");
    assert!(hung.errors.iter().any(|e| e.field == "health" && e.message.contains("no answer")), "{:?}", hung.errors);
    assert_eq!(SmiExit::for_report(&report), SmiExit::NotResponding);
    let text = table::render(&report);
    assert!(text.contains("Timeout"), "{text}");

    // The next refresh does not stack a second worker on the hung chip.
    let again = collector.collect().expect("enumeration works");
    assert_eq!(again.chips[1].status, ChipStatus::Timeout);
    assert!(again.chips[1].errors.iter().any(|e| e.message.contains("still blocked")), "{:?}", again.chips[1].errors);
}

#[test]
fn a_driver_error_on_one_field_is_reported_not_fatal() {
    let mut chip = healthy_910b();
    chip.temperature_error = Some(-8009);
    let report = collect(vec![chip], false);
    let only = &report.chips[0];
    assert_eq!(only.status, ChipStatus::Ok);
    assert_eq!(only.temperature_celsius, None);
    let error = only.errors.iter().find(|e| e.field == "temperature_celsius").expect("temperature error recorded");
    assert!(error.message.contains("dcmi_get_device_temperature"), "{}", error.message);
    assert!(error.message.contains("-8009"), "{}", error.message);
    assert!(table::render(&report).contains("NPU 4 temperature_celsius: dcmi_get_device_temperature"));
}

#[test]
fn an_enumeration_error_is_a_driver_error() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Err(Error::from_code(-8005, CallContext::global("dcmi_get_card_list"))));
    mock.expect_driver_version().returning(|| Ok("24.1.rc2".to_owned()));
    let collector = Collector::new(Arc::new(mock), CollectOptions::default());
    match collector.collect() {
        Err(CollectError::Enumerate(message)) => assert!(message.contains("dcmi_get_card_list"), "{message}"),
        other => panic!("expected an enumeration error, got {other:?}"),
    }
}

#[test]
fn a_hung_enumeration_times_out() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| {
        std::thread::sleep(Duration::from_secs(30));
        Ok(Vec::new())
    });
    mock.expect_driver_version().returning(|| Ok(String::new()));
    let options = CollectOptions { deadline: Duration::from_millis(200), ..CollectOptions::default() };
    let collector = Collector::new(Arc::new(mock), options);
    assert!(matches!(collector.collect(), Err(CollectError::EnumerateTimeout(_))));
    assert!(matches!(collector.collect(), Err(CollectError::EnumerateTimeout(_))), "second call must not block");
}

#[test]
fn visible_ids_follow_ascend_rt_visible_devices() {
    assert_eq!(parse_visible_devices("3, 1,x,0"), vec![3, 1, 0]);
    let options = CollectOptions { visible_devices: Some(vec![1]), ..CollectOptions::default() };
    let report = Collector::new(manager(vec![healthy_910b(), faulty_310p()]), options).collect().expect("collect");
    assert_eq!(report.chips[0].ids.visible_id, None, "logic 0 is hidden");
    assert_eq!(report.chips[1].ids.visible_id, Some(0), "logic 1 is the application's device 0");
}

#[test]
fn no_chips_renders_a_hint() {
    let report = collect(Vec::new(), false);
    assert!(table::render(&report).contains("No NPUs found"));
    assert_eq!(SmiExit::for_report(&report), SmiExit::Healthy);
}
