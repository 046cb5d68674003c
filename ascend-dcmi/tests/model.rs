//! The model against every sample topology: enumeration and id conversions, identity, telemetry in base units, and
//! the utilisation probe with its caches. Expected values come from the topologies, not from copies of them.

mod support;

use std::path::Path;
use std::time::Duration;

use ascend_dcmi::{
    CardId, ChipIds, ChipLocator, ChipType, DeviceId, DeviceManager, EccComponent, Error, FrequencyKind, LogicId,
    PhyId, Power, UtilizationKind, UtilizationMethod, Watts, BYTES_PER_MB,
};
use dcmi_sim::{Signal, Topology};

fn topology(name: &str) -> Topology {
    Topology::from_toml_str(support::sample_toml(name), Path::new(name)).expect("sample topology parses")
}

/// The smallest and largest value a signal can take.
fn range(signal: &Signal) -> (i64, i64) {
    match signal {
        Signal::Constant(value) => (*value, *value),
        Signal::Wave(wave) => {
            let spread = wave.amplitude.abs() + wave.noise.abs();
            let low = (wave.base - spread).max(wave.min);
            let high = (wave.base + spread).min(wave.max);
            (low, high)
        }
    }
}

fn expected_ids(topology: &Topology) -> Vec<ChipIds> {
    let mut ids: Vec<ChipIds> = topology
        .chips()
        .map(|found| ChipIds {
            logic: LogicId(found.chip.logic_id),
            phy: PhyId(found.chip.phy_id),
            locator: Some(ChipLocator { card: CardId(found.card.card_id), device: DeviceId(found.chip.device_id) }),
        })
        .collect();
    ids.sort_by_key(|ids| ids.logic);
    ids
}

#[test]
fn enumeration_and_id_conversions_match_every_sample() {
    // The V2 (Ascend950) samples have their own tests.
    for sample in dcmi_sim::SAMPLES.iter().filter(|sample| sample.api == dcmi_sim::Api::V1) {
        let (dcmi, _sim) = support::start(sample.name);
        let expected = expected_ids(&topology(sample.name));
        assert_eq!(dcmi.chips().expect("enumeration"), expected, "{}", sample.name);
        for ids in &expected {
            assert_eq!(dcmi.ids(ids.logic).expect("ids by logic"), *ids);
            assert_eq!(dcmi.logic_id(ids.phy).expect("logic by phy"), ids.logic);
            let chip = dcmi.chip_by_phy(ids.phy).expect("chip by phy");
            assert_eq!((chip.logic(), chip.phy(), chip.locator()), (ids.logic, ids.phy, ids.locator));
        }
        assert!(matches!(dcmi.chip(LogicId(250)), Err(Error::NoSuchChip(_))), "{}", sample.name);
    }
}

#[test]
fn id_conversions_work_without_enumerating_first() {
    let (dcmi, _sim) = support::start("atlas-800t-a2");
    let expected = expected_ids(&topology("atlas-800t-a2"));
    let last = expected.last().expect("chips");
    assert_eq!(dcmi.ids(last.logic).expect("conversion"), *last);
    assert_eq!(dcmi.chip_by_phy(last.phy).expect("by phy").ids(), *last);
}

#[test]
fn id_conversions_are_cached() {
    let (dcmi, sim) = support::start("atlas-300i-duo");
    let expected = dcmi.chips().expect("enumeration");
    let failing = [
        "dcmi_get_device_phyid_from_logicid",
        "dcmi_get_device_logicid_from_phyid",
        "dcmi_get_card_id_device_id_from_logicid",
    ]
    .iter()
    .map(|function| format!("[[inject]]\nfunction = \"{function}\"\ncode = -8005\n"))
    .collect::<String>();
    sim.overlay(&failing);
    assert!(matches!(dcmi.chips(), Err(Error::Internal(_))), "the conversion calls fail now");
    for ids in expected {
        assert_eq!(dcmi.ids(ids.logic).expect("cached"), ids);
        assert_eq!(dcmi.logic_id(ids.phy).expect("cached"), ids.logic);
    }
}

#[test]
fn identity_reports_the_topology_and_classifies_like_the_vendor() {
    // The V2 (Ascend950) samples have their own tests.
    for sample in dcmi_sim::SAMPLES.iter().filter(|sample| sample.api == dcmi_sim::Api::V1) {
        let (dcmi, _sim) = support::start(sample.name);
        let topology = topology(sample.name);
        for found in topology.chips() {
            let identity = dcmi.identity(LogicId(found.chip.logic_id)).expect("identity");
            let expected_type: ChipType = found.chip.chip_type.as_str().parse().expect("known type");
            assert_eq!(identity.chip_type, Some(expected_type), "{} logic {}", sample.name, found.chip.logic_id);
            assert_eq!(identity.info.chip_name, found.chip.chip_name);
            assert_eq!(identity.info.chip_version, found.chip.chip_version);
            assert_eq!(identity.info.aicore_count, found.chip.aicore_count);
            assert_eq!(identity.board.and_then(|b| b.board_id), Some(found.chip.board.board_id));
            assert_eq!(identity.mainboard_id, Some(found.chip.mainboard_id));
            assert_eq!(identity.pcie_address.map(|a| a.to_string()), Some(found.chip.pcie.bdf.clone()));
            assert_eq!(identity.affinity_cpus.as_deref(), Some(found.chip.affinity_cpus.as_str()));
            assert_eq!(identity.die_id.map(|d| d.0), Some(found.chip.die_id.vdie));
            assert_eq!(identity.serial_number(), Some(found.card.elabel.serial_number.as_str()));
            let product = (!found.card.product_type.is_empty()).then(|| found.card.product_type.clone());
            if expected_type.is_inference(identity.board.and_then(|b| b.board_id)) {
                assert_eq!(identity.product_type, product, "{}", sample.name);
            }
        }
    }
}

#[test]
fn a3_is_recognised_by_board_id_not_chip_name() {
    let (dcmi, _sim) = support::start("atlas-800i-a3");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let name = chip.chip_info().expect("info").chip_name;
    assert_eq!(ChipType::classify(&name, None), Some(ChipType::Ascend910), "the name alone says 910");
    assert_eq!(chip.chip_type().expect("type"), Some(ChipType::Ascend910A3));
}

#[test]
fn telemetry_is_in_base_units() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    let topology = topology("atlas-800t-a2");
    let found = topology.chip_by_logic_id(0).expect("chip 0");
    sim.overlay("[[chip]]\nlogic_id = 0\ntemperature = 61\npower = 2345\n");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    assert_eq!(chip.temperature().expect("temperature").0, 61);
    assert_eq!(chip.power().expect("power"), Power::Chip(Watts(234.5)));
    let (low, high) = range(&found.chip.telemetry.voltage);
    let volts = chip.voltage().expect("voltage").0;
    assert!((low as f64 / 100.0..=high as f64 / 100.0).contains(&volts), "{volts} V");
    let (low, high) = range(&found.chip.telemetry.frequency.aicore_current);
    let mhz = i64::from(chip.frequency(FrequencyKind::AiCoreCurrent).expect("frequency").0);
    assert!((low..=high).contains(&mhz), "{mhz} MHz");
    assert!(chip.frequency(FrequencyKind::Ddr).expect_err("910B has no DDR clock").is_unsupported());

    let hbm = chip.hbm_memory().expect("HBM");
    assert_eq!(hbm.total_bytes, found.chip.hbm.size_mb * BYTES_PER_MB);
    assert!(hbm.used_bytes <= hbm.total_bytes);
    let error = chip.ddr_memory().expect_err("910B has no DDR info");
    assert!(matches!(&error, Error::NotSupported(context) if context.call == "dcmi_get_device_memory_info_v3"));

    let processes = chip.processes().expect("processes");
    let listed: Vec<(i32, u64)> = processes.as_slice().iter().map(|p| (p.pid, p.memory_bytes)).collect();
    let expected: Vec<(i32, u64)> = found.chip.processes.iter().map(|p| (p.pid, p.memory_bytes)).collect();
    assert_eq!(listed, expected);

    let ecc = chip.ecc(EccComponent::Hbm).expect("HBM ECC");
    assert_eq!(ecc.total_single_bit_errors, found.chip.ecc.total_single_bit_error_cnt);
    assert!(chip.ecc(EccComponent::Ddr).expect_err("no DDR ECC on 910B").is_unsupported());

    let pcie = chip.pcie_bandwidth(Duration::from_millis(200)).expect("PCIe bandwidth");
    assert_eq!(pcie.profiling, Duration::from_millis(200));
    assert!(pcie.rx_posted.min <= pcie.rx_posted.max);
    let error = chip.pcie_bandwidth(Duration::from_secs(5)).expect_err("window too long");
    assert!(matches!(&error, Error::InvalidArgument { .. }) && error.to_string().contains("5s"), "{error}");
    let hccs = chip.hccs_bandwidth(Duration::from_millis(100)).expect("HCCS bandwidth");
    assert!(hccs.total_tx >= 0.0 && hccs.tx_per_link.iter().all(|bw| *bw >= 0.0));
    assert!(matches!(chip.hccs_bandwidth(Duration::ZERO), Err(Error::InvalidArgument { .. })));
    let network = chip.network_health().expect("network health");
    assert_eq!(network, ascend_dcmi::NetworkHealth::from_raw(found.chip.network_health));
}

#[test]
fn power_on_310p_is_the_whole_card_and_ddr_is_read() {
    let (dcmi, _sim) = support::start("atlas-300i-duo");
    let topology = topology("atlas-300i-duo");
    for found in topology.chips() {
        let chip = dcmi.chip(LogicId(found.chip.logic_id)).expect("chip");
        let (low, high) = range(&found.card.mcu_power);
        match chip.power().expect("power") {
            Power::Card(Watts(watts)) => {
                assert!((low as f64 / 10.0..=high as f64 / 10.0).contains(&watts), "{watts} W")
            }
            other => panic!("310P power must be card power, got {other:?}"),
        }
        let ddr = chip.ddr_memory().expect("DDR");
        assert_eq!(ddr.total_bytes, found.chip.ddr.size_mb * BYTES_PER_MB);
        assert!(ddr.used_bytes() <= ddr.total_bytes);
        assert!(chip.hbm_memory().expect_err("no HBM on 310P").is_unsupported());
        assert!(chip.pcie_bandwidth(Duration::from_millis(10)).expect_err("910B only").is_unsupported());
    }
}

#[test]
fn utilization_probes_once_and_remembers_unsupported_kinds() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    sim.overlay("[[chip]]\nlogic_id = 1\naicore_utilization = 37\n");
    assert_eq!(dcmi.utilization_method(), None);
    let chip = dcmi.chip(LogicId(1)).expect("chip");
    assert_eq!(chip.utilization(UtilizationKind::AiCore).expect("AI core").get(), 37);
    assert_eq!(dcmi.utilization_method(), Some(UtilizationMethod::MultiPeriod));
    assert!(chip.utilization(UtilizationKind::Hbm).is_ok(), "single call for kinds outside the multi struct");

    let (dcmi, sim) = support::start("edge-310");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    assert!(chip.utilization(UtilizationKind::AiCore).is_ok());
    assert_eq!(dcmi.utilization_method(), Some(UtilizationMethod::Single), "310 has no multi call");
    let first = chip.utilization(UtilizationKind::VectorCore).expect_err("310 has no vector core");
    assert!(matches!(first, Error::NotSupported(_)));
    // From now on every single call would fail with -8001; a remembered -8255 is answered without a call.
    sim.overlay("[[inject]]\nfunction = \"dcmi_get_device_utilization_rate\"\ncode = -8001\n");
    assert!(matches!(chip.utilization(UtilizationKind::Memory), Err(Error::InvalidParameter(_))), "injection live");
    assert!(matches!(chip.utilization(UtilizationKind::VectorCore), Err(Error::NotSupported(_))), "not asked again");
}

#[test]
fn the_handle_is_a_device_manager() {
    let (dcmi, _sim) = support::start("atlas-300i-pro");
    let manager: std::sync::Arc<dyn DeviceManager> = std::sync::Arc::new(dcmi);
    let chips = manager.chips().expect("chips");
    assert_eq!(chips.len(), topology("atlas-300i-pro").chips().count());
    let worker = std::thread::spawn(move || manager.temperature(chips[0].logic));
    assert!(worker.join().expect("thread").is_ok(), "usable from another thread");
}
