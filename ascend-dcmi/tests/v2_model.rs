//! The model on an Ascend950 (DCMI V2) host, the `atlas-950-8` sample of dcmi-sim: the family is detected at
//! initialisation, and discovery, identity, health, telemetry, fault events and the sampler work through the same
//! API as on V1; what V2 lacks is a typed error.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{
    ApiFamily, Assertion, ChipType, DeviceManager, Error, EventSource, FaultCode, LogicId, MetricGroup, PhyId,
    SampleState, Sampler, SamplerConfig, UbPort,
};

#[test]
fn the_family_is_detected_and_discovery_uses_logic_ids_without_inventing_cards() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    assert_eq!(dcmi.api_family(), ApiFamily::V2);
    assert_eq!(DeviceManager::api_family(&dcmi), ApiFamily::V2);
    assert_eq!(dcmi.driver_version().expect("version"), "26.0.rc1");
    let chips = dcmi.chips().expect("enumeration");
    let phys: Vec<u32> = chips.iter().map(|ids| ids.phy.0).collect();
    assert_eq!(phys, [4, 5, 6, 7, 0, 1, 2, 3]);
    assert!(chips.iter().all(|ids| ids.locator.is_none()), "V2 has no (card, device) pairs");
    assert_eq!(chips[0].to_string(), "chip phy 4 (logic 0)");
    assert_eq!(dcmi.logic_id(PhyId(0)).expect("logic of phy 0"), LogicId(4));
    let chip = dcmi.chip_by_phy(PhyId(2)).expect("chip by phy");
    assert_eq!((chip.logic(), chip.locator()), (LogicId(6), None));

    let (v1, _sim) = support::start("atlas-800t-a2");
    assert_eq!(v1.api_family(), ApiFamily::V1);
    assert!(v1.chips().expect("enumeration").iter().all(|ids| ids.locator.is_some()));
}

#[test]
fn identity_health_and_telemetry_through_the_v2_calls() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    let chip = dcmi.chip(LogicId(3)).expect("chip");
    let identity = chip.identity().expect("identity");
    assert_eq!(identity.chip_type, Some(ChipType::Ascend950));
    assert_eq!(identity.info.chip_name, "Ascend950DT");
    assert!(chip.health().expect("health").is_healthy());
    let celsius = chip.temperature().expect("temperature");
    assert!((40..=70).contains(&celsius.0), "{celsius:?}");
    assert_eq!(chip.hbm_memory().expect("hbm").total_bytes, 147_456 * 1024 * 1024);
    assert!(chip.power().is_ok());

    let port = UbPort { die: 1, port: 8 };
    let first = chip.ub_port_stats(port).expect("UB counters");
    std::thread::sleep(Duration::from_millis(30));
    let second = chip.ub_port_stats(port).expect("UB counters");
    assert!(second.rx_packets > first.rx_packets && second.tx_packets > 0, "{first:?} {second:?}");
    assert!(matches!(chip.ub_port_stats(UbPort { die: 0, port: 9 }), Err(Error::InvalidParameter(_))));
}

#[test]
fn what_v2_lacks_is_a_typed_error_naming_the_family() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    for error in
        [chip.vnpus().map(drop).expect_err("no vNPU"), chip.create_vnpu("vir05_1c_16g").map(drop).expect_err("")]
    {
        assert!(matches!(error, Error::UnavailableOnApi { family: ApiFamily::V2, .. }), "{error}");
        assert!(error.to_string().ends_with("is not available on the DCMI V2 API"), "{error}");
        assert!(error.is_unsupported());
    }
    let (v1, _sim) = support::start("atlas-800t-a2");
    let error = v1.chip(LogicId(0)).expect("chip").ub_port_stats(UbPort { die: 0, port: 0 }).expect_err("no UB");
    assert!(matches!(error, Error::UnavailableOnApi { family: ApiFamily::V1, .. }), "{error}");
}

#[test]
fn fault_events_arrive_through_the_v2_subscription() {
    let (dcmi, sim) = support::start("atlas-950-8");
    let events = dcmi.fault_events(Duration::from_secs(3600)).expect("subscribe");
    sim.overlay("[[chip]]\nlogic_id = 5\nfaults = [{ code = 0x80E18402, severity = 3 }]\n");
    let deadline = Instant::now() + Duration::from_secs(5);
    let raised = loop {
        let left = deadline.saturating_duration_since(Instant::now());
        let event = events.recv_timeout(left).expect("an event before the deadline");
        if event.code == FaultCode(0x80E1_8402) {
            break event;
        }
    };
    assert_eq!(
        (raised.logic, raised.assertion, raised.source),
        (LogicId(5), Assertion::Occur, EventSource::Subscription)
    );
    assert!(!dcmi.chip(LogicId(5)).expect("chip").health().expect("health").is_healthy());
}

#[test]
fn the_sampler_isolates_a_hung_chip_on_v2() {
    let topology = format!(
        "{}\n[[inject]]\nfunction = \"dcmiv2_get_device_temperature\"\nlogic_id = 2\nhang = true\n",
        support::sample_toml("atlas-950-8").replacen("seed = 950", "seed = 950\nhang_ms = 2000", 1)
    );
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("hung.toml");
    std::fs::write(&path, topology).expect("write");
    let (dcmi, _sim) = support::start(path.to_str().expect("utf-8 path"));
    let deadline = Duration::from_millis(300);
    let config = SamplerConfig::default().with_deadline(deadline).with_concurrency(4);
    let sampler = Sampler::new(Arc::new(dcmi), config).expect("sampler");
    let summary = sampler.poll(MetricGroup::ChipState).expect("poll");
    assert_eq!((summary.completed, summary.timed_out), (7, 1), "{summary:?}");
    sampler.visit(|chip| {
        let state = chip.state().temperature.state();
        if chip.ids().logic == LogicId(2) {
            assert_eq!(state, SampleState::TimedOut);
        } else {
            assert_ne!(state, SampleState::TimedOut, "{}", chip.ids());
        }
    });
}
