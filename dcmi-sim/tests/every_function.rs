//! Every exported function, called through the raw bindings (`dcmi_sys::DcmiLib` loaded from the
//! built .so) against every sample topology, with the results checked against the topology.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::os::raw::{c_char, c_int, c_uint};

use common::{assert_sampled, now_ms, start, text, Session};
use dcmi_sim::capabilities::{freq_type, supports, util_type};
use dcmi_sim::Api;
use dcmi_sim::{ChipType, Function, SAMPLES};
use dcmi_sys::*;

const NOT_SUPPORTED: c_int = -8255;
const INVALID_PARAMETER: c_int = -8001;

/// The expected code: 0 when the chip family supports the function, else -8255.
fn expect_supported(chip_type: ChipType, function: Function) -> c_int {
    if supports(chip_type, function) {
        0
    } else {
        NOT_SUPPORTED
    }
}

#[test]
fn every_v1_function_against_every_v1_sample() {
    // The V2 samples and functions have their own test binary (tests/v2.rs).
    let v1_samples = SAMPLES.iter().filter(|sample| sample.api == Api::V1);
    for sample in v1_samples {
        let session = start(sample.toml);
        check_host(&session);
        for card in &session.topology.cards {
            check_card(&session, card);
            for chip in &card.chips {
                check_chip_identity(&session, card, chip);
                check_chip_telemetry(&session, card, chip);
                check_chip_management(&session, card, chip);
                check_chip_interconnect(&session, card, chip);
            }
        }
        check_reset(&session);
    }
    let missing: Vec<String> = common::header_functions()
        .into_iter()
        .filter(|name| !name.starts_with("dcmiv2_") && !common::called().contains(name.as_str()))
        .collect();
    assert!(missing.is_empty(), "functions never called: {missing:?}");
}

#[test]
fn header_functions_are_all_exported() {
    let header = common::header_functions();
    let exported: std::collections::BTreeSet<String> = Function::ALL.iter().map(|f| f.name().to_owned()).collect();
    assert_eq!(header, exported);
    assert_eq!(header.len(), 67 + 42);
}

fn check_host(session: &Session) {
    let lib = session.lib;
    let topology = &session.topology;
    let expected: Vec<c_int> = topology.cards.iter().map(|card| card.card_id).collect();
    for list in [0, 1] {
        let mut count = 0;
        let mut ids = [0 as c_int; 64];
        let status = if list == 0 {
            call!(lib, dcmi_get_card_list(&mut count, ids.as_mut_ptr(), 64))
        } else {
            call!(lib, dcmi_get_card_num_list(&mut count, ids.as_mut_ptr(), 64))
        };
        assert_eq!(status, 0);
        assert_eq!(&ids[..count as usize], expected.as_slice());
    }
    assert_eq!(call!(lib, dcmi_get_card_list(std::ptr::null_mut(), std::ptr::null_mut(), 64)), INVALID_PARAMETER);

    let mut version = [0 as c_char; 33];
    assert_eq!(call!(lib, dcmi_get_dcmi_version(version.as_mut_ptr(), 33)), 0);
    assert_eq!(text(&version), topology.simulation.driver_version);
    assert_eq!(call!(lib, dcmi_get_dcmi_version(version.as_mut_ptr(), 2)), INVALID_PARAMETER);

    let has_a3 = topology.chips().any(|found| found.chip.chip_type == ChipType::Ascend910A3);
    let mut policy = dcmi_multi_die_policy(99);
    let status = call!(lib, dcmi_get_multi_die_policy(&mut policy));
    if has_a3 {
        assert_eq!((status, policy.0), (0, topology.simulation.multi_die_policy));
        assert_eq!(call!(lib, dcmi_set_multi_die_policy(dcmi_multi_die_policy::DCMI_MULTI_DIE_INDEP_POLICY)), 0);
        assert_eq!(call!(lib, dcmi_get_multi_die_policy(&mut policy)), 0);
        assert_eq!(policy, dcmi_multi_die_policy::DCMI_MULTI_DIE_INDEP_POLICY);
        assert_eq!(call!(lib, dcmi_set_multi_die_policy(dcmi_multi_die_policy(7))), INVALID_PARAMETER);
    } else {
        assert_eq!(status, NOT_SUPPORTED);
        assert_eq!(call!(lib, dcmi_set_multi_die_policy(dcmi_multi_die_policy(0))), NOT_SUPPORTED);
    }
}

fn check_card(session: &Session, card: &dcmi_sim::Card) {
    let lib = session.lib;
    let family = card.chips[0].chip_type;
    let mut device_num = 0;
    assert_eq!(call!(lib, dcmi_get_device_num_in_card(card.card_id, &mut device_num)), 0);
    assert_eq!(device_num as usize, card.chips.len());
    assert_eq!(call!(lib, dcmi_get_device_num_in_card(999, &mut device_num)), -8007);

    let (mut max, mut mcu, mut cpu) = (0, 0, 0);
    assert_eq!(call!(lib, dcmi_get_device_id_in_card(card.card_id, &mut max, &mut mcu, &mut cpu)), 0);
    assert_eq!((max, mcu, cpu), (card.chips.len() as c_int - 1, card.mcu_id, card.cpu_id));

    let mut power = -1;
    let before = now_ms();
    let status = call!(lib, dcmi_mcu_get_power_info(card.card_id, &mut power));
    assert_eq!(status, expect_supported(family, Function::McuGetPowerInfo));
    if status == 0 {
        assert_sampled("mcu power", &session.topology, before, now_ms(), power, |sampler| sampler.mcu_power(card));
    }

    let mut elabel = dcmi_elabel_info::default();
    assert_eq!(call!(lib, dcmi_get_card_elabel_v2(card.card_id, &mut elabel)), 0);
    assert_eq!(text(&elabel.serial_number), card.elabel.serial_number);
    assert_eq!(text(&elabel.product_name), card.elabel.product_name);
    assert_eq!(text(&elabel.model), card.elabel.model);
    assert_eq!(text(&elabel.manufacturer), card.elabel.manufacturer);
    assert_eq!(text(&elabel.manufacturer_date), card.elabel.manufacturer_date);

    let mut mode = 9u8;
    let status = call!(lib, dcmi_get_npu_work_mode(card.card_id, &mut mode));
    assert_eq!(status, expect_supported(family, Function::GetNpuWorkMode));
}

fn check_chip_identity(session: &Session, card: &dcmi_sim::Card, chip: &dcmi_sim::Chip) {
    let lib = session.lib;
    let (card_id, device_id) = (card.card_id, chip.device_id);
    let mut unit = dcmi_unit_type(7);
    assert_eq!(call!(lib, dcmi_get_device_type(card_id, device_id, &mut unit)), 0);
    assert_eq!(unit, dcmi_unit_type::NPU_TYPE);

    let mut logic = -1;
    assert_eq!(call!(lib, dcmi_get_device_logic_id(&mut logic, card_id, device_id)), 0);
    assert_eq!(logic as u32, chip.logic_id);
    let mut phy = 0;
    assert_eq!(call!(lib, dcmi_get_device_phyid_from_logicid(chip.logic_id, &mut phy)), 0);
    assert_eq!(phy, chip.phy_id);
    let mut logic_back = 0;
    assert_eq!(call!(lib, dcmi_get_device_logicid_from_phyid(chip.phy_id, &mut logic_back)), 0);
    assert_eq!(logic_back, chip.logic_id);
    let (mut found_card, mut found_device) = (-1, -1);
    assert_eq!(
        call!(lib, dcmi_get_card_id_device_id_from_logicid(&mut found_card, &mut found_device, chip.logic_id)),
        0
    );
    assert_eq!((found_card, found_device), (card_id, device_id));
    let (mut found_card, mut found_device) = (-1, -1);
    assert_eq!(call!(lib, dcmi_get_card_id_device_id_from_phyid(&mut found_card, &mut found_device, chip.phy_id)), 0);
    assert_eq!((found_card, found_device), (card_id, device_id));
    assert_eq!(call!(lib, dcmi_get_device_phyid_from_logicid(4000, &mut phy)), -8007);

    let mut pcie = dcmi_pcie_info_all::default();
    assert_eq!(call!(lib, dcmi_get_device_pcie_info_v2(card_id, device_id, &mut pcie)), 0);
    let bdf = chip.pcie.parsed_bdf().expect("valid bdf");
    assert_eq!(
        (pcie.venderid, pcie.deviceid, pcie.domain as u32, pcie.bdf_busid, pcie.bdf_deviceid, pcie.bdf_funcid),
        (chip.pcie.vendor_id, chip.pcie.device_id, bdf.domain, bdf.bus, bdf.device, bdf.function)
    );

    let mut info = dcmi_chip_info::default();
    assert_eq!(call!(lib, dcmi_get_device_chip_info(card_id, device_id, &mut info)), 0);
    assert_eq!(
        (text(&info.chip_type), text(&info.chip_name), text(&info.chip_ver), info.aicore_cnt),
        ("Ascend".to_owned(), chip.chip_name.clone(), chip.chip_version.clone(), chip.aicore_count)
    );
    let mut info2 = dcmi_chip_info_v2::default();
    assert_eq!(call!(lib, dcmi_get_device_chip_info_v2(card_id, device_id, &mut info2)), 0);
    assert_eq!((text(&info2.chip_name), text(&info2.npu_name)), (chip.chip_name.clone(), chip.npu_name.clone()));

    let mut board = dcmi_board_info::default();
    assert_eq!(call!(lib, dcmi_get_device_board_info(card_id, device_id, &mut board)), 0);
    assert_eq!((board.board_id, board.slot_id), (chip.board.board_id, chip.board.slot_id));
    let mut mainboard = 0;
    assert_eq!(call!(lib, dcmi_get_mainboard_id(card_id, device_id, &mut mainboard)), 0);
    assert_eq!(mainboard, chip.mainboard_id);

    let mut product = [0 as c_char; 65];
    let status = call!(lib, dcmi_get_product_type(card_id, device_id, product.as_mut_ptr(), 65));
    assert_eq!(status, expect_supported(chip.chip_type, Function::GetProductType));
    if status == 0 {
        assert_eq!(text(&product), card.product_type);
    }

    let mut firmware = [0 as c_char; 64];
    let mut length: c_int = 0;
    assert_eq!(call!(lib, dcmi_get_version(card_id, device_id, firmware.as_mut_ptr(), 64, &mut length)), 0);
    assert_eq!(text(&firmware), dcmi_sim::topology::Topology::firmware_version_of(chip));
    assert_eq!(usize::try_from(length).expect("length"), text(&firmware).len());
    // The driver refuses buffers under its DRIVER_VERSION_MIN_LEN (64).
    assert_eq!(
        call!(lib, dcmi_get_version(card_id, device_id, firmware.as_mut_ptr(), 63, &mut length)),
        INVALID_PARAMETER
    );

    let mut die = dcmi_die_id::default();
    assert_eq!(call!(lib, dcmi_get_device_die_v2(card_id, device_id, dcmi_die_type::VDIE, &mut die)), 0);
    assert_eq!(die.soc_die, chip.die_id.vdie);
    let status = call!(lib, dcmi_get_device_die_v2(card_id, device_id, dcmi_die_type::NDIE, &mut die));
    if chip.chip_type.is_910_family() {
        assert_eq!((status, die.soc_die), (0, chip.die_id.ndie));
    } else {
        assert_eq!(status, NOT_SUPPORTED);
    }

    let mut cpus = [0 as c_char; 33];
    let mut length = -1;
    assert_eq!(
        call!(lib, dcmi_get_affinity_cpu_info_by_device_id(card_id, device_id, cpus.as_mut_ptr(), &mut length)),
        0
    );
    assert_eq!((text(&cpus), length as usize), (chip.affinity_cpus.clone(), chip.affinity_cpus.len()));
}

fn check_chip_telemetry(session: &Session, card: &dcmi_sim::Card, chip: &dcmi_sim::Chip) {
    let lib = session.lib;
    let topology = &session.topology;
    let (card_id, device_id) = (card.card_id, chip.device_id);
    let family = chip.chip_type;

    let (mut power, before) = (0, now_ms());
    let status = call!(lib, dcmi_get_device_power_info(card_id, device_id, &mut power));
    assert_eq!(status, expect_supported(family, Function::GetDevicePowerInfo), "power on {family}");
    if status == 0 {
        assert_sampled("power", topology, before, now_ms(), power, |sampler| sampler.power(chip, None));
    }
    let (mut temperature, before) = (0, now_ms());
    assert_eq!(call!(lib, dcmi_get_device_temperature(card_id, device_id, &mut temperature)), 0);
    assert_sampled("temperature", topology, before, now_ms(), temperature, |sampler| sampler.temperature(chip, None));
    let (mut voltage, before) = (0, now_ms());
    assert_eq!(call!(lib, dcmi_get_device_voltage(card_id, device_id, &mut voltage)), 0);
    assert_sampled("voltage", topology, before, now_ms(), voltage, |sampler| sampler.voltage(chip));

    for kind in freq_type::ALL {
        let (mut frequency, before) = (0, now_ms());
        let status =
            call!(lib, dcmi_get_device_frequency(card_id, device_id, dcmi_freq_type(kind as u32), &mut frequency));
        let supported = dcmi_sim::capabilities::supported_frequency_types(family).contains(&kind);
        assert_eq!(status, if supported { 0 } else { NOT_SUPPORTED }, "frequency {kind} on {family}");
        if supported {
            assert_sampled("frequency", topology, before, now_ms(), Some(frequency), |sampler| {
                sampler.frequency(chip, kind)
            });
        }
    }
    let mut frequency = 0;
    assert_eq!(
        call!(lib, dcmi_get_device_frequency(card_id, device_id, dcmi_freq_type(3), &mut frequency)),
        INVALID_PARAMETER
    );

    for kind in util_type::ALL {
        let (mut rate, before) = (0, now_ms());
        let status = call!(lib, dcmi_get_device_utilization_rate(card_id, device_id, kind, &mut rate));
        let supported = dcmi_sim::capabilities::supports_utilization(family, kind);
        assert_eq!(status, if supported { 0 } else { NOT_SUPPORTED }, "utilization {kind} on {family}");
        if supported {
            assert!(rate <= 100);
            assert_sampled("utilization", topology, before, now_ms(), Some(rate), |sampler| {
                sampler.utilization(chip, kind, None)
            });
        }
    }
    let mut rate = 0;
    assert_eq!(call!(lib, dcmi_get_device_utilization_rate(card_id, device_id, 7, &mut rate)), INVALID_PARAMETER);

    let mut multi = dcmi_multi_utilization_info::default();
    let before = now_ms();
    let status = call!(lib, dcmi_get_device_multi_utilization_rate(card_id, device_id, &mut multi));
    assert_eq!(status, expect_supported(family, Function::GetDeviceMultiUtilizationRate));
    if status == 0 {
        let got = [multi.aic_util, multi.aiv_util, multi.aicore_util, multi.npu_util];
        assert_sampled("multi utilization", topology, before, now_ms(), got, |sampler| {
            sampler.multi_utilization(chip, None)
        });
    }
    let status = call!(lib, dcmi_get_device_multi_utilization_rate_period(card_id, device_id, &mut multi, 1));
    assert_eq!(status, expect_supported(family, Function::GetDeviceMultiUtilizationRatePeriod));
    if status == 0 {
        assert_eq!(
            call!(lib, dcmi_get_device_multi_utilization_rate_period(card_id, device_id, &mut multi, 0)),
            INVALID_PARAMETER
        );
    }

    let mut hbm = dcmi_hbm_info::default();
    let before = now_ms();
    let status = call!(lib, dcmi_get_device_hbm_info(card_id, device_id, &mut hbm));
    assert_eq!(status, if family.has_hbm() { 0 } else { NOT_SUPPORTED });
    if status == 0 {
        let got = (hbm.memory_size, hbm.memory_usage, hbm.freq, hbm.temp, hbm.bandwith_util_rate);
        assert_sampled("hbm", topology, before, now_ms(), got, |sampler| {
            let hbm = sampler.hbm(chip);
            (hbm.size_mb, hbm.usage_mb, hbm.freq_mhz, hbm.temperature, hbm.bandwidth_util)
        });
    }
    // SAFETY: an all-zero dcmi_get_memory_info_stru is a valid value (integers and bytes only).
    let mut memory: dcmi_get_memory_info_stru = unsafe { std::mem::zeroed() };
    let before = now_ms();
    let status = call!(lib, dcmi_get_device_memory_info_v3(card_id, device_id, &mut memory));
    assert_eq!(status, if family.has_ddr() { 0 } else { NOT_SUPPORTED }, "DDR on {family}");
    if status == 0 {
        assert!(memory.memory_available <= memory.memory_size);
        let got = (memory.memory_size, memory.memory_available, memory.utiliza);
        assert_sampled("ddr", topology, before, now_ms(), got, |sampler| {
            let ddr = sampler.ddr(chip);
            (ddr.size_mb, ddr.available_mb, ddr.utilization)
        });
    }
    let mut legacy = dcmi_memory_info_stru::default();
    let status = call!(lib, dcmi_get_memory_info(card_id, device_id, &mut legacy));
    assert_eq!(status, if family.has_ddr() { 0 } else { NOT_SUPPORTED });
    if status == 0 {
        assert_eq!(legacy.memory_size, chip.ddr.size_mb);
    }

    for (kind, present) in [
        (dcmi_device_type::DCMI_DEVICE_TYPE_DDR, family.has_ddr()),
        (dcmi_device_type::DCMI_DEVICE_TYPE_HBM, family.has_hbm()),
    ] {
        let mut ecc = dcmi_ecc_info::default();
        let status = call!(lib, dcmi_get_device_ecc_info(card_id, device_id, kind, &mut ecc));
        assert_eq!(status, if present { 0 } else { NOT_SUPPORTED });
        if present {
            assert_eq!(
                (ecc.enable_flag, ecc.single_bit_error_cnt),
                (c_int::from(chip.ecc.enable_flag), chip.ecc.single_bit_error_cnt)
            );
        }
    }

    let mut processes = [dcmi_proc_mem_info::default(); 32];
    let mut count = -1;
    assert_eq!(call!(lib, dcmi_get_device_resource_info(card_id, device_id, processes.as_mut_ptr(), &mut count)), 0);
    let got: Vec<(c_int, u64)> = processes[..count as usize].iter().map(|p| (p.proc_id, p.proc_mem_usage)).collect();
    let expected: Vec<(c_int, u64)> = chip.processes.iter().map(|p| (p.pid, p.memory_bytes)).collect();
    assert_eq!(got, expected);

    let mut pcie = dcmi_pcie_link_bandwidth_info { profiling_time: 200, ..Default::default() };
    let status = call!(lib, dcmi_get_pcie_link_bandwidth_info(card_id, device_id, &mut pcie));
    assert_eq!(status, expect_supported(family, Function::GetPcieLinkBandwidthInfo));
    if status == 0 {
        assert!(pcie.tx_p_bw[0] <= pcie.tx_p_bw[2] && pcie.tx_p_bw[2] <= pcie.tx_p_bw[1] && pcie.tx_p_bw[1] <= 48);
    }
    let mut hccs = dcmi_hccs_bandwidth_info { profiling_time: 200, ..Default::default() };
    let status = call!(lib, dcmi_get_hccs_link_bandwidth_info(card_id, device_id, &mut hccs));
    assert_eq!(status, expect_supported(family, Function::GetHccsLinkBandwidthInfo));
    if status == 0 {
        assert!((hccs.total_txbw - hccs.tx_bandwidth.iter().sum::<f64>()).abs() < 1e-6);
    }
}

extern "C" fn ignore_event(_event: *mut dcmi_event) {}

fn check_chip_management(session: &Session, card: &dcmi_sim::Card, chip: &dcmi_sim::Chip) {
    let lib = session.lib;
    let (card_id, device_id) = (card.card_id, chip.device_id);
    let family = chip.chip_type;
    let training = family.is_910_family();

    let mut health = 99;
    assert_eq!(call!(lib, dcmi_get_device_health(card_id, device_id, &mut health)), 0);
    assert_eq!(health, chip.health);
    let mut count = -1;
    let mut codes = [0 as c_uint; 128];
    assert_eq!(call!(lib, dcmi_get_device_errorcode_v2(card_id, device_id, &mut count, codes.as_mut_ptr(), 128)), 0);
    let expected: Vec<c_uint> = chip.faults.iter().map(|fault| fault.code()).collect();
    assert_eq!(&codes[..count as usize], expected.as_slice());
    let (mut legacy_count, mut first, mut width) = (-1, 0, 0);
    assert_eq!(call!(lib, dcmi_get_device_errorcode(card_id, device_id, &mut legacy_count, &mut first, &mut width)), 0);
    assert_eq!((legacy_count, first, width), (expected.len() as c_int, expected.first().copied().unwrap_or(0), 4));
    assert_eq!(call!(lib, dcmi_get_device_health(card_id, device_id, std::ptr::null_mut())), INVALID_PARAMETER);
    assert_eq!(call!(lib, dcmi_get_device_health(card_id, 3, &mut health)), -8007);

    let mut network = dcmi_rdfx_detect_result(99);
    let status = call!(lib, dcmi_get_device_network_health(card_id, device_id, &mut network));
    assert_eq!(status, if training { 0 } else { NOT_SUPPORTED });
    if training {
        assert_eq!(network.0, chip.network_health);
    }
    let mut ip = dcmi_ip_addr::default();
    let mut mask = dcmi_ip_addr::default();
    let status =
        call!(lib, dcmi_get_device_ip(card_id, device_id, dcmi_port_type::DCMI_ROCE_PORT, 0, &mut ip, &mut mask));
    match (&chip.roce_ip, training) {
        (Some(address), true) => {
            assert_eq!(status, 0);
            // SAFETY: the simulator wrote an IPv4 address into the union's first 4 bytes.
            let octets = unsafe { ip.u_addr.ip4 };
            assert_eq!(std::net::Ipv4Addr::from(octets).to_string(), *address);
        }
        _ => assert_eq!(status, NOT_SUPPORTED),
    }

    let mut state = -1;
    let status = call!(lib, dcmi_get_device_outband_channel_state(card_id, device_id, &mut state));
    assert_eq!((status, state), if training { (0, 1) } else { (NOT_SUPPORTED, -1) });
    assert_eq!(call!(lib, dcmi_pre_reset_soc(card_id, device_id)), 0);
    assert_eq!(call!(lib, dcmi_rescan_soc(card_id, device_id)), 0);
    let mut brother = -1;
    let status = call!(lib, dcmi_get_netdev_brother_device(card_id, device_id, &mut brother));
    assert_eq!(
        (status, brother),
        if training { (0, card.brother_card_id.unwrap_or(card_id)) } else { (NOT_SUPPORTED, -1) }
    );
    let mut boot = dcmi_boot_status(0);
    assert_eq!(call!(lib, dcmi_get_device_boot_status(card_id, device_id, &mut boot)), 0);
    assert_eq!(boot.0, 16);

    let filter = dcmi_event_filter::default();
    let status = call!(lib, dcmi_subscribe_fault_event(card_id, device_id, filter, Some(ignore_event)));
    assert_eq!(status, if training { 0 } else { NOT_SUPPORTED });
    assert_eq!(call!(lib, dcmi_subscribe_fault_event(card_id, device_id, filter, None)), INVALID_PARAMETER);

    // vNPU: one of the family's templates fits an idle chip; destroy gives the resources back.
    let mut request = dcmi_create_vdev_res_stru { vdev_id: 0xFFFF_FFFF, vfg_id: 0xFFFF_FFFF, ..Default::default() };
    let template = dcmi_sim::vnpu_templates(family).first().map_or("vir01", |template| template.name);
    for (slot, byte) in request.template_name.iter_mut().zip(template.bytes()) {
        *slot = byte as c_char;
    }
    let mut created = dcmi_create_vdev_out::default();
    let status = call!(lib, dcmi_create_vdevice(card_id, device_id, &mut request, &mut created));
    assert_eq!(status, expect_supported(family, Function::CreateVdevice), "create {template} on {family}");
    let mut total = dcmi_soc_total_resource::default();
    let mut size = std::mem::size_of::<dcmi_soc_total_resource>() as c_uint;
    let status_total = call!(
        lib,
        dcmi_get_device_info(
            card_id,
            device_id,
            dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG,
            1,
            (&mut total as *mut dcmi_soc_total_resource).cast(),
            &mut size
        )
    );
    if status == 0 {
        assert!((100..1124).contains(&created.vdev_id));
        assert_eq!(status_total, 0);
        assert_eq!(
            (total.vdev_num, total.vdev_id[0], total.computing.aic as u32),
            (1, created.vdev_id, chip.aicore_count)
        );
        assert_eq!(call!(lib, dcmi_set_destroy_vdevice(card_id, device_id, created.vdev_id)), 0);
        assert_eq!(call!(lib, dcmi_set_destroy_vdevice(card_id, device_id, created.vdev_id)), INVALID_PARAMETER);
    } else {
        assert_eq!(status_total, NOT_SUPPORTED);
        assert_eq!(call!(lib, dcmi_set_destroy_vdevice(card_id, device_id, 100)), NOT_SUPPORTED);
    }
}

fn check_chip_interconnect(session: &Session, card: &dcmi_sim::Card, chip: &dcmi_sim::Chip) {
    let lib = session.lib;
    let (card_id, device_id) = (card.card_id, chip.device_id);
    let family = chip.chip_type;

    let mut operation = dcmi_hccsping_mesh_operate {
        dst_addr_list: [0; 1024],
        pkt_size: 1792,
        pkt_send_num: 10,
        pkt_interval: 1,
        timeout: 1,
        task_interval: 1,
        task_id: 0,
    };
    for (slot, byte) in operation.dst_addr_list.iter_mut().zip(b"10.0.0.1,10.0.0.2".iter()) {
        *slot = *byte as c_char;
    }
    let status = call!(lib, dcmi_start_hccsping_mesh(card_id, device_id, 0, &mut operation));
    let expected = expect_supported(family, Function::StartHccspingMesh);
    assert_eq!(status, expected);
    let mut reply = dcmi_hccsping_mesh_info::default();
    let mut state = 9;
    assert_eq!(call!(lib, dcmi_get_hccsping_mesh_info(card_id, device_id, 0, 0, &mut reply)), expected);
    assert_eq!(call!(lib, dcmi_get_hccsping_mesh_state(card_id, device_id, 0, 0, &mut state)), expected);
    if expected == 0 {
        assert_eq!(
            (reply.dest_num, reply.suc_pkt_num[1], text(&reply.dst_addr[1]), state),
            (2, 10, "10.0.0.2".to_owned(), 1)
        );
    }
    assert_eq!(call!(lib, dcmi_stop_hccsping_mesh(card_id, device_id, 0, 0)), expected);
    if expected == 0 {
        assert_eq!(call!(lib, dcmi_get_hccsping_mesh_state(card_id, device_id, 0, 0, &mut state)), 0);
        assert_eq!(state, 0);
        assert_eq!(call!(lib, dcmi_stop_hccsping_mesh(card_id, device_id, 0, 1)), INVALID_PARAMETER);
    }

    let spod_expected = expect_supported(family, Function::GetSpodNodeStatus);
    let mut status_value = 9;
    assert_eq!(call!(lib, dcmi_set_spod_node_status(card_id, device_id, 5, 2)), spod_expected);
    assert_eq!(call!(lib, dcmi_get_spod_node_status(card_id, device_id, 5, &mut status_value)), spod_expected);
    if spod_expected == 0 {
        assert_eq!(status_value, 2);
        let mut spod = dcmi_spod_info::default();
        let mut size = std::mem::size_of::<dcmi_spod_info>() as c_uint;
        let status = call!(
            lib,
            dcmi_get_device_info(
                card_id,
                device_id,
                dcmi_main_cmd(12),
                1,
                (&mut spod as *mut dcmi_spod_info).cast(),
                &mut size
            )
        );
        assert_eq!((status, spod.sdid, spod.server_id), (0, chip.spod.sdid, chip.spod.server_id));
    }

    let has_hccs = matches!(family, ChipType::Ascend910B | ChipType::Ascend910A3);
    let mut stats = dcmi_hccs_statistic_info_u64::default();
    let mut size = std::mem::size_of::<dcmi_hccs_statistic_info_u64>() as c_uint;
    let status = call!(
        lib,
        dcmi_get_device_info(
            card_id,
            device_id,
            dcmi_main_cmd::DCMI_MAIN_CMD_HCCS,
            5,
            (&mut stats as *mut dcmi_hccs_statistic_info_u64).cast(),
            &mut size
        )
    );
    assert_eq!(status, if has_hccs { 0 } else { NOT_SUPPORTED }, "HCCS statistics on {family}");
    if has_hccs {
        assert!(stats.tx_cnt[0] > 0 && stats.tx_cnt[15] == 0);
        let mut narrow = dcmi_hccs_statistic_info::default();
        let mut size = std::mem::size_of::<dcmi_hccs_statistic_info>() as c_uint;
        let status = call!(
            lib,
            dcmi_get_device_info(
                card_id,
                device_id,
                dcmi_main_cmd::DCMI_MAIN_CMD_HCCS,
                3,
                (&mut narrow as *mut dcmi_hccs_statistic_info).cast(),
                &mut size
            )
        );
        assert_eq!(status, 0);
    }
    let mut sio = dcmi_sio_crc_err_statistic_info::default();
    let mut size = std::mem::size_of::<dcmi_sio_crc_err_statistic_info>() as c_uint;
    let status = call!(
        lib,
        dcmi_get_device_info(
            card_id,
            device_id,
            dcmi_main_cmd::DCMI_MAIN_CMD_SIO,
            0,
            (&mut sio as *mut dcmi_sio_crc_err_statistic_info).cast(),
            &mut size
        )
    );
    assert_eq!(status, if family == ChipType::Ascend910A3 { 0 } else { NOT_SUPPORTED }, "SIO on {family}");

    let mut ub = dcmi_ub_ping_mesh_operate::default();
    assert_eq!(call!(lib, dcmi_start_ub_ping_mesh(card_id, device_id, 1, &mut ub)), NOT_SUPPORTED);
    assert_eq!(call!(lib, dcmi_stop_ub_ping_mesh(card_id, device_id, 0)), NOT_SUPPORTED);
    let mut ub_reply = dcmi_ub_ping_mesh_info::default();
    let mut count = 0;
    assert_eq!(
        call!(lib, dcmi_get_ub_ping_mesh_info(card_id, device_id, 0, &mut ub_reply, 1, &mut count)),
        NOT_SUPPORTED
    );
    let mut ub_state = 0;
    assert_eq!(call!(lib, dcmi_get_ub_ping_mesh_state(card_id, device_id, 0, &mut ub_state)), NOT_SUPPORTED);
    let mut urma = 0;
    assert_eq!(call!(lib, dcmi_get_urma_device_cnt(card_id, device_id, &mut urma)), NOT_SUPPORTED);
    let mut eids = [dcmi_urma_eid_info_t::default(); 4];
    let mut eid_count = 4;
    assert_eq!(
        call!(lib, dcmi_get_eid_list_by_urma_dev_index(card_id, device_id, 0, eids.as_mut_ptr(), &mut eid_count)),
        NOT_SUPPORTED
    );
}

/// A hot reset: -8012 and boot status 1/2 while it runs, 16 and health back afterwards.
fn check_reset(session: &Session) {
    let lib = session.lib;
    let Some(found) = session.topology.chips().last() else { return };
    let (card_id, device_id) = (found.card.card_id, found.chip.device_id);
    let reset_started = std::time::Instant::now();
    assert_eq!(call!(lib, dcmi_set_device_reset(card_id, device_id, dcmi_reset_channel::INBAND_CHANNEL)), 0);
    let mut boot = dcmi_boot_status(0);
    let mut temperature = 0;
    let boot_status = call!(lib, dcmi_get_device_boot_status(card_id, device_id, &mut boot));
    let temperature_status = call!(lib, dcmi_get_device_temperature(card_id, device_id, &mut temperature));
    // Only meaningful if this thread was not descheduled past the reset (500 ms in the samples).
    if reset_started.elapsed() < std::time::Duration::from_millis(400) {
        assert_eq!(boot_status, 0);
        assert!(boot.0 == 1 || boot.0 == 2, "boot status during reset: {}", boot.0);
        assert_eq!(temperature_status, -8012);
    }
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(3);
    while boot.0 != 16 && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert_eq!(call!(lib, dcmi_get_device_boot_status(card_id, device_id, &mut boot)), 0);
    }
    assert_eq!(boot.0, 16);
    assert_eq!(call!(lib, dcmi_get_device_temperature(card_id, device_id, &mut temperature)), 0);
}

/// The gaps of the real chips, written out independently of the simulator's support tables.
#[test]
fn real_chip_gaps_are_modelled() {
    // (sample, function, expected code on its first chip)
    let table: &[(&str, &str, c_int)] = &[
        ("atlas-300i-duo", "power", NOT_SUPPORTED),
        ("atlas-300i-duo", "mcu_power", 0),
        ("atlas-300i-duo", "memory_v3", 0),
        ("atlas-300i-duo", "hbm", NOT_SUPPORTED),
        ("atlas-300i-duo", "subscribe", NOT_SUPPORTED),
        ("atlas-800t-a2", "power", 0),
        ("atlas-800t-a2", "mcu_power", NOT_SUPPORTED),
        ("atlas-800t-a2", "memory_v3", NOT_SUPPORTED),
        ("atlas-800t-a2", "hbm", 0),
        ("atlas-800t-a2", "subscribe", 0),
        ("atlas-800i-a3", "memory_v3", NOT_SUPPORTED),
        ("atlas-800i-a3", "subscribe", 0),
        ("edge-310", "power", 0),
        ("edge-310", "hbm", NOT_SUPPORTED),
        ("edge-310", "subscribe", NOT_SUPPORTED),
    ];
    for (name, what, expected) in table {
        let sample = dcmi_sim::samples::by_name(name).expect("sample");
        let session = start(sample.toml);
        let lib = session.lib;
        let first = session.topology.chips().next().expect("a chip");
        let (card, device) = (first.card.card_id, first.chip.device_id);
        let mut value = 0;
        let status = match *what {
            "power" => call!(lib, dcmi_get_device_power_info(card, device, &mut value)),
            "mcu_power" => call!(lib, dcmi_mcu_get_power_info(card, &mut value)),
            "memory_v3" => {
                // SAFETY: all-zero is a valid dcmi_get_memory_info_stru.
                let mut memory: dcmi_get_memory_info_stru = unsafe { std::mem::zeroed() };
                call!(lib, dcmi_get_device_memory_info_v3(card, device, &mut memory))
            }
            "hbm" => call!(lib, dcmi_get_device_hbm_info(card, device, &mut dcmi_hbm_info::default())),
            _ => call!(lib, dcmi_subscribe_fault_event(-1, -1, dcmi_event_filter::default(), Some(ignore_event))),
        };
        assert_eq!(status, *expected, "{what} on {name}");
        // Frequency sets of `capabilities::supported_frequency_types`: 310P has vector-core clock (12) but no HBM clock (6).
        let mut frequency = 0;
        let hbm_clock = call!(lib, dcmi_get_device_frequency(card, device, dcmi_freq_type(6), &mut frequency));
        let vector_clock = call!(lib, dcmi_get_device_frequency(card, device, dcmi_freq_type(12), &mut frequency));
        let expected_clocks = match first.chip.chip_type {
            ChipType::Ascend310P => (NOT_SUPPORTED, 0),
            ChipType::Ascend310 => (0, NOT_SUPPORTED),
            _ => (0, NOT_SUPPORTED),
        };
        assert_eq!((hbm_clock, vector_clock), expected_clocks, "clocks on {name}");
    }
}
