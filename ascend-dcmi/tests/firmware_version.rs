//! `dcmi_get_version`, the firmware a chip runs: the topology's per-chip value through `Chip` and `DeviceManager`, a
//! driver without the symbol, and the V2 API, which has no such call.

mod support;

use std::path::Path;

use ascend_dcmi::{ApiFamily, DeviceManager, Error, LogicId};
use dcmi_sim::Topology;

#[test]
fn each_chip_reports_the_firmware_its_topology_gives_it() {
    let mut topology =
        Topology::from_toml_str(support::sample_toml("atlas-800t-a2"), Path::new("atlas-800t-a2")).expect("sample");
    let left_behind = topology.cards[1].chips[0].logic_id;
    topology.cards[1].chips[0].firmware_version = Some("7.1.0.5.220".to_owned());
    let dir = tempfile::tempdir().expect("temporary directory");
    let file = dir.path().join("partial-upgrade.toml");
    std::fs::write(&file, topology.to_toml_string().expect("serialises")).expect("write topology");

    let (dcmi, _sim) = support::start(file.to_str().expect("UTF-8 path"));
    for found in topology.chips() {
        let logic = LogicId(found.chip.logic_id);
        let expected = Topology::firmware_version_of(found.chip);
        assert_eq!(dcmi.chip(logic).expect("chip").firmware_version().expect("firmware"), expected);
        assert_eq!(DeviceManager::firmware_version(&dcmi, logic).expect("firmware"), expected);
    }
    assert_eq!(dcmi.chip(LogicId(left_behind)).expect("chip").firmware_version().expect("firmware"), "7.1.0.5.220");
    assert_eq!(
        dcmi.chip(LogicId(0)).expect("chip").firmware_version().expect("firmware"),
        dcmi_sim::fake_host::DEFAULT_FIRMWARE_VERSION
    );
}

#[test]
fn a_driver_without_the_call_fails_only_that_call() {
    let (dcmi, _sim) = support::start_with("atlas-800t-a2", &["dcmi_get_version"], |builder| builder);
    let dcmi = dcmi.expect("the library loads without dcmi_get_version");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let error = chip.firmware_version().expect_err("the symbol is missing");
    assert!(matches!(error, Error::FunctionMissing("dcmi_get_version")), "{error}");
    assert!(error.is_unsupported());
    assert!(chip.temperature().is_ok(), "other calls still work");
}

#[test]
fn the_v2_api_has_no_per_chip_firmware_call() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    let error = dcmi.chip(LogicId(0)).expect("chip").firmware_version().expect_err("V1 only");
    assert!(matches!(error, Error::UnavailableOnApi { call: "dcmi_get_version", family: ApiFamily::V2 }), "{error}");
}
