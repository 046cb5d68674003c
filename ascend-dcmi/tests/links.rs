//! HCCS statistics and SIO CRC errors on the simulator: the chips that have them, the ones that do not, the V2 API,
//! and a driver without `dcmi_get_device_info`.

mod support;

use ascend_dcmi::{DeviceManager, Error, LogicId};

#[test]
fn a3_reports_hccs_and_sio_counters_from_its_topology() {
    let (dcmi, _sim) = support::start("atlas-800i-a3");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let first = chip.hccs_statistics().expect("HCCS statistics");
    assert_eq!(first.crc_errors[1..8], [3; 7], "the topology's CRC errors on every link");
    assert!(first.tx_messages[1] > 0 && first.rx_messages[1] > 0);
    let sio = chip.sio_crc_errors().expect("SIO");
    assert_eq!((sio.tx, sio.rx), (1, 2));
    let other = DeviceManager::sio_crc_errors(&dcmi, LogicId(1)).expect("SIO of a chip without errors");
    assert_eq!((other.tx, other.rx), (0, 0));
}

#[test]
fn hccs_counters_never_go_back() {
    let (dcmi, _sim) = support::start("atlas-800t-a2");
    let earlier = DeviceManager::hccs_statistics(&dcmi, LogicId(2)).expect("HCCS statistics");
    std::thread::sleep(std::time::Duration::from_millis(50));
    let later = DeviceManager::hccs_statistics(&dcmi, LogicId(2)).expect("HCCS statistics");
    for link in 0..8 {
        assert!(later.tx_messages[link] >= earlier.tx_messages[link], "link {link}");
    }
    let error = dcmi.chip(LogicId(2)).expect("chip").sio_crc_errors().expect_err("a one-die 910B has no SIO");
    assert!(error.is_unsupported(), "{error}");
}

#[test]
fn chips_without_the_links_answer_not_supported() {
    let (dcmi, _sim) = support::start("atlas-300i-duo");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    assert!(chip.hccs_statistics().expect_err("310P has no HCCS").is_unsupported());
    assert!(chip.sio_crc_errors().expect_err("310P has no SIO").is_unsupported());
}

#[test]
fn ascend950_reports_sio_through_the_v2_call_and_has_no_hccs() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    let sio = chip.sio_crc_errors().expect("SIO on V2");
    assert_eq!((sio.tx, sio.rx), (0, 0));
    assert!(chip.hccs_statistics().expect_err("no HCCS queries on V2").is_unsupported());
}

#[test]
fn a_driver_without_device_info_fails_only_these_calls() {
    let (dcmi, _sim) = support::start_with("atlas-800i-a3", &["dcmi_get_device_info"], |builder| builder);
    let dcmi = dcmi.expect("loads without the symbol");
    let chip = dcmi.chip(LogicId(0)).expect("chip");
    assert!(matches!(chip.hccs_statistics(), Err(Error::FunctionMissing("dcmi_get_device_info"))));
    assert!(matches!(chip.sio_crc_errors(), Err(Error::FunctionMissing("dcmi_get_device_info"))));
    assert!(chip.temperature().is_ok());
}

#[test]
fn ascend950_lists_every_ub_port_with_its_raw_counters() {
    let (dcmi, _sim) = support::start("atlas-950-8");
    let topology = dcmi_sim::samples::load_file_or_sample("atlas-950-8").expect("sample");
    let chip_config = topology.chip_by_logic_id(0).expect("chip 0").chip.clone();
    let ports = DeviceManager::ub_ports(&dcmi, LogicId(0)).expect("UB ports");
    assert_eq!(ports.len(), (chip_config.ub.dies * chip_config.ub.ports) as usize, "every die and port, no others");
    let first = ports.first().expect("a port");
    assert_eq!((first.port.die, first.port.port), (0, 0));
    assert!(first.is_uboe(), "the simulator's ports are UBoE ports");
    let summed = dcmi.chip(LogicId(0)).expect("chip").ub_port_stats(first.port).expect("sums");
    assert!(first.get("ub_ipv4_pkt_cnt_rx").expect("counter") <= summed.rx_packets.max(1) * 2);
    assert!(first.get("rx_busi_flit_num").is_some_and(|flits| flits > 0), "flits grow from init");
}

#[test]
fn v1_chips_have_no_ub_ports() {
    let (dcmi, _sim) = support::start("atlas-800t-a2");
    let error = DeviceManager::ub_ports(&dcmi, LogicId(0)).expect_err("V1 has no UB");
    assert!(error.is_unsupported(), "{error}");
}
