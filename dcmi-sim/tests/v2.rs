//! The V2 personality: on the Ascend950 samples `dcmi_init` fails and the `dcmiv2_*` functions answer,
//! keyed by logic id, with the same injection, timelines and fault events as V1; on a V1 topology
//! the V2 functions answer -8255.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::os::raw::{c_char, c_int, c_uint};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use common::{start, text};
use dcmi_sim::Api;
use dcmi_sim::{samples, Function};
use dcmi_sys::*;

const NOT_SUPPORTED: c_int = -8255;
const INTERNAL_ERROR: c_int = -8005;
const INVALID_DEVICE_ID: c_int = -8007;

fn sample(name: &str) -> &'static str {
    samples::by_name(name).expect("sample exists").toml
}

#[test]
fn the_v1_api_fails_and_the_v2_api_answers_on_both_ascend950_samples() {
    for name in ["atlas-950-8", "atlas-950-16"] {
        let session = start(sample(name));
        let lib = session.lib;
        assert_eq!(session.topology.api(), Api::V2);
        assert_eq!(call!(lib, dcmi_init()), INTERNAL_ERROR, "{name}: dcmi_init must fail as on Ascend950");
        let mut cards = [0 as c_int; 64];
        let mut card_count = 0;
        assert_eq!(call!(lib, dcmi_get_card_list(&mut card_count, cards.as_mut_ptr(), 64)), INTERNAL_ERROR);
        assert_eq!(call!(lib, dcmiv2_init()), 0, "{name}: dcmiv2_init");

        let chips: Vec<_> = session.topology.chips().collect();
        let mut count = 0;
        assert_eq!(call!(lib, dcmiv2_get_all_device_count(&mut count)), 0);
        assert_eq!(count as usize, chips.len());
        let mut list = [0 as c_int; 64];
        assert_eq!(call!(lib, dcmiv2_get_device_list(list.as_mut_ptr(), &mut count, 64)), 0);
        let logic_ids: Vec<c_int> = chips.iter().map(|found| found.chip.logic_id as c_int).collect();
        assert_eq!(&list[..count as usize], logic_ids.as_slice());

        for found in &chips {
            let (logic, chip) = (found.chip.logic_id, found.chip);
            let mut phy = u32::MAX;
            assert_eq!(call!(lib, dcmiv2_get_chip_phy_id_by_dev_id(logic, &mut phy)), 0);
            assert_eq!(phy, chip.phy_id);
            let mut back = u32::MAX;
            assert_eq!(call!(lib, dcmiv2_get_dev_id_by_chip_phy_id(phy, &mut back)), 0);
            assert_eq!(back, logic);

            let mut info = dcmi_chip_info_v2::default();
            assert_eq!(call!(lib, dcmiv2_get_device_chip_info(logic as c_int, &mut info)), 0);
            assert!(text(&info.chip_name).starts_with("Ascend950"), "{}", text(&info.chip_name));
            assert_eq!(info.aicore_cnt, chip.aicore_count);
            let mut board = dcmi_board_info::default();
            assert_eq!(call!(lib, dcmiv2_get_device_board_info(logic as c_int, &mut board)), 0);
            assert_eq!(board.board_id, chip.board.board_id);
            let mut elabel = dcmi_elabel_info::default();
            assert_eq!(call!(lib, dcmiv2_get_device_elabel_info(logic as c_int, &mut elabel)), 0);
            assert_eq!(text(&elabel.serial_number), found.card.elabel.serial_number);
        }
        assert_eq!(call!(lib, dcmiv2_get_device_health(99, &mut 0)), INVALID_DEVICE_ID);
    }
}

#[test]
fn telemetry_and_v2_only_counters() {
    let session = start(sample("atlas-950-8"));
    let lib = session.lib;
    let mut temperature = 0;
    assert_eq!(call!(lib, dcmiv2_get_device_temperature(3, &mut temperature)), 0);
    assert!((40..=70).contains(&temperature), "{temperature}");
    let mut power = 0;
    assert_eq!(call!(lib, dcmiv2_get_device_power_info(3, &mut power)), 0);
    assert!(power > 0);
    let mut hbm = dcmi_hbm_info::default();
    assert_eq!(call!(lib, dcmiv2_get_device_hbm_info(3, &mut hbm)), 0);
    assert_eq!(hbm.memory_size, 147_456);
    let mut utilization = dcmi_multi_utilization_info::default();
    assert_eq!(call!(lib, dcmiv2_get_device_multi_utilization_rate_period(3, &mut utilization, 1)), 0);
    assert!(utilization.aicore_util <= 100);
    let mut version = [0 as c_char; 33];
    assert_eq!(call!(lib, dcmiv2_get_dcmi_version(version.as_mut_ptr(), 33)), 0);
    assert_eq!(text(&version), session.topology.simulation.driver_version);

    // Unified-bus port counters grow; a port the chip does not have is an invalid parameter.
    let read = |port_id: c_int| {
        let mut port = dcmi_ub_port_info { udie_id: 1, port_id };
        let mut stats = dcmi_port_pkt_stats_info::default();
        let status = call!(lib, dcmiv2_get_port_pkt_stats_info(3, &mut port, &mut stats));
        (status, stats.ub_glb_ipv4_pkt_cnt_rx, stats.ub_glb_ipv4_pkt_cnt_tx)
    };
    let (status, rx_before, _) = read(8);
    assert_eq!(status, 0);
    std::thread::sleep(Duration::from_millis(30));
    let (_, rx_after, tx_after) = read(8);
    assert!(rx_after > rx_before && tx_after > 0, "{rx_before} -> {rx_after}, tx {tx_after}");
    assert_eq!(read(9).0, -8001, "nine ports per die: 0..8");

    let mut urma = 0;
    assert_eq!(call!(lib, dcmiv2_get_urma_device_cnt(3, &mut urma)), 0);
    assert_eq!(urma, 1);
    let mut eids = [dcmi_urma_eid_info_t::default(); 4];
    let mut eid_count: c_uint = 4;
    assert_eq!(call!(lib, dcmiv2_get_eid_list_by_urma_dev_index(3, 0, eids.as_mut_ptr(), &mut eid_count)), 0);
    assert_eq!(eid_count, 1);

    // What V2 has no call for on this hardware (the chip's resources answer: tests/recognition.rs).
    let mut size = std::mem::size_of::<dcmi_vdev_query_stru>() as c_uint;
    let mut one = dcmi_vdev_query_stru { vdev_id: 100, ..Default::default() };
    let buffer = (&mut one as *mut dcmi_vdev_query_stru).cast();
    let vnpu = call!(lib, dcmiv2_get_device_info(3, dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG, 0, buffer, &mut size));
    assert_eq!(vnpu, NOT_SUPPORTED, "Ascend950 has no vNPU");
    let mut state = 0;
    assert_eq!(call!(lib, dcmiv2_get_ub_ping_mesh_state(3, 0, &mut state)), NOT_SUPPORTED);
}

/// (logic id, code, assertion) of every delivered event.
static EVENTS: Mutex<Vec<(u16, u32, u8)>> = Mutex::new(Vec::new());

extern "C" fn collect(event: *mut dcmi_event) {
    // SAFETY: the simulator passes a valid fault event for the duration of the call.
    let dms = unsafe { (*event).event_t.dms_event };
    if let Ok(mut events) = EVENTS.lock() {
        events.push((dms.deviceid, dms.event_id, dms.assertion));
    }
}

#[test]
fn timeline_faults_reach_the_v2_subscription_and_drop_the_chip() {
    let timeline = r#"
[[timeline]]
at_s = 0.2
logic_id = 5
action = "raise_fault"
code = 0x80E01801
severity = 3

[[timeline]]
at_s = 0.4
logic_id = 6
action = "drop"
"#;
    let session = start(&format!("{}{timeline}", sample("atlas-950-8")));
    let lib = session.lib;
    let filter = dcmi_event_filter::default();
    assert_eq!(call!(lib, dcmiv2_subscribe_fault_event(-1, filter, Some(collect))), 0);
    assert_eq!(call!(lib, dcmiv2_subscribe_fault_event(0, filter, None)), -8001);
    let deadline = Instant::now() + Duration::from_secs(5);
    while !EVENTS.lock().map(|events| events.contains(&(5, 0x80E0_1801, 1))).unwrap_or(false) {
        assert!(Instant::now() < deadline, "no raised event for logic id 5: {:?}", EVENTS.lock().ok());
        std::thread::sleep(Duration::from_millis(10));
    }
    let mut health = 0;
    assert_eq!(call!(lib, dcmiv2_get_device_health(5, &mut health)), 0);
    assert_eq!(health, 3);
    let mut codes = [0 as c_uint; 128];
    let mut count = 0;
    assert_eq!(call!(lib, dcmiv2_get_device_error_code_list(5, &mut count, codes.as_mut_ptr(), 128)), 0);
    assert_eq!(&codes[..count as usize], &[0x80E0_1801]);

    std::thread::sleep(Duration::from_millis(400));
    assert_eq!(call!(lib, dcmiv2_get_device_health(6, &mut health)), -8012, "a dropped chip is not ready");
    let mut boot = dcmi_boot_status(99);
    assert_eq!(call!(lib, dcmiv2_get_device_boot_status(6, &mut boot)), 0);
    assert_eq!(boot.0, 0);
    assert_eq!(call!(lib, dcmiv2_reset_device(6, dcmi_reset_channel::INBAND_CHANNEL)), 0);
    assert_eq!(call!(lib, dcmiv2_pre_reset_device(6)), 0);
    assert_eq!(call!(lib, dcmiv2_rescan_device(6)), 0);
}

#[test]
fn injection_names_v2_functions_and_hangs_one_chip() {
    let rules = r#"
[simulation]
name = "atlas-950-8"
hang_ms = 400

[[inject]]
function = "dcmiv2_get_device_temperature"
logic_id = 2
hang = true

[[inject]]
function = "dcmiv2_get_device_power_info"
code = -8012
from_call = 2
"#;
    // The sample's own [simulation] table is replaced by the one above.
    let body = sample("atlas-950-8").split_once("\n[[card]]").map(|(_, cards)| cards).expect("cards");
    let session = start(&format!("{rules}\n[[card]]{body}"));
    let lib = session.lib;
    let started = Instant::now();
    assert_eq!(call!(lib, dcmiv2_get_device_temperature(1, &mut 0)), 0);
    assert!(started.elapsed() < Duration::from_millis(300), "other chips do not hang");
    let started = Instant::now();
    assert_eq!(call!(lib, dcmiv2_get_device_temperature(2, &mut 0)), 0);
    assert!(started.elapsed() >= Duration::from_millis(400), "logic id 2 hangs for hang_ms");
    let codes: Vec<c_int> = (0..3).map(|_| call!(lib, dcmiv2_get_device_power_info(0, &mut 0))).collect();
    assert_eq!(codes, [0, -8012, -8012]);

    let wrong_family =
        format!("{rules}\n[[inject]]\nfunction = \"dcmi_get_device_health\"\ncode = -8005\n[[card]]{body}");
    let error = dcmi_sim::Topology::from_toml_str(&wrong_family, std::path::Path::new("t.toml")).expect_err("V1 name");
    assert!(error.to_string().contains("dcmi_get_device_health is a DCMI V1 function"), "{error}");
}

#[test]
fn a_v1_topology_exports_no_working_v2() {
    let session = start(sample("atlas-800t-a2"));
    let lib = session.lib;
    assert_eq!(call!(lib, dcmiv2_init()), NOT_SUPPORTED);
    let mut count = 0;
    assert_eq!(call!(lib, dcmiv2_get_all_device_count(&mut count)), NOT_SUPPORTED);
    assert_eq!(call!(lib, dcmiv2_get_device_health(0, &mut 0)), NOT_SUPPORTED);
    assert!(Function::ALL.iter().filter(|function| function.api() == Api::V2).count() == 42);
    assert_eq!(call!(lib, dcmi_init()), 0, "the V1 API still works");
}
