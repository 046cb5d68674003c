//! Each sample host answers the values Huawei's device plugin and exporter recognise its product by: chip name,
//! board id, mainboard id, product type, super-pod type and the AI-core count of the `servertype` label
//! (docs/huawei-compatibility.md, "Sample hosts as Huawei's programs recognise them"). The expected values are
//! written out here, not read from the topologies, so a changed sample fails.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::os::raw::{c_char, c_int, c_uint, c_void};

use common::{start, text, Session};
use dcmi_sim::samples;
use dcmi_sys::*;

const NOT_SUPPORTED: c_int = -8255;
/// `main_cmd` 12, sub 1: `struct dcmi_spod_info`.
const CHIP_INFO: dcmi_main_cmd = dcmi_main_cmd(12);
const SUPER_POD_INFO: c_uint = 1;
/// `main_cmd` 52 subs: total and free resources, one vNPU.
const TOTAL_RESOURCE: c_uint = 1;
const FREE_RESOURCE: c_uint = 2;
const ONE_VNPU: c_uint = 0;

/// What a sample must answer to be taken for its product.
struct Product {
    sample: &'static str,
    /// Huawei's `GetDevType` reads the chip name (`Ascend950` prefix, `310P`, `910B`, `310`) ...
    chip_name: &'static str,
    /// ... and the board id (A3 by board id).
    board_id: u32,
    mainboard_id: u32,
    /// `dcmi_get_product_type` (310 family; `None`: -8255).
    product_type: Option<&'static str>,
    /// `computing.aic` of the vNPU total resource, the number in the `servertype` label (`None`: -8255).
    servertype_aicore: Option<f32>,
    /// (super_pod_type, super_pod_id, chassis_id) of the super-pod query on Ascend950.
    super_pod: Option<(u32, u32, u32)>,
}

const PRODUCTS: [Product; 7] = [
    Product {
        sample: "atlas-300i-duo",
        chip_name: "310P3",
        board_id: 0x64,
        mainboard_id: 0,
        product_type: Some("Atlas 300I Duo"),
        servertype_aicore: Some(8.0),
        super_pod: None,
    },
    Product {
        sample: "atlas-300i-pro",
        chip_name: "310P3",
        board_id: 0x65,
        mainboard_id: 0,
        product_type: Some("Atlas 300I Pro"),
        servertype_aicore: Some(8.0),
        super_pod: None,
    },
    Product {
        sample: "atlas-800t-a2",
        chip_name: "910B3",
        board_id: 0x32,
        mainboard_id: 0,
        product_type: None,
        servertype_aicore: Some(20.0),
        super_pod: None,
    },
    Product {
        sample: "atlas-800i-a3",
        chip_name: "910_9382",
        board_id: 0xb3,
        mainboard_id: 0x14,
        product_type: None,
        servertype_aicore: Some(24.0),
        super_pod: None,
    },
    Product {
        sample: "edge-310",
        chip_name: "310",
        board_id: 0,
        mainboard_id: 0,
        product_type: Some("Atlas 200 Model 3000"),
        servertype_aicore: None,
        super_pod: None,
    },
    Product {
        sample: "atlas-950-8",
        chip_name: "Ascend950DT",
        board_id: 0x07,
        mainboard_id: 0x07,
        product_type: None,
        servertype_aicore: Some(32.0),
        super_pod: Some((1, 1, 1)),
    },
    Product {
        sample: "atlas-950-16",
        chip_name: "Ascend950PR",
        board_id: 0x44,
        mainboard_id: 0x44,
        product_type: None,
        servertype_aicore: Some(32.0),
        super_pod: Some((3, u32::MAX, 0)),
    },
];

/// A chip as the V1 (`card`, `device`) or V2 (`logic`) calls name it.
#[derive(Clone, Copy)]
enum Target {
    V1 { card: c_int, device: c_int },
    V2 { logic: c_int },
}

fn targets(session: &Session) -> Vec<Target> {
    session
        .topology
        .chips()
        .map(|found| match found.chip.chip_type.api() {
            dcmi_sim::Api::V1 => Target::V1 { card: found.card.card_id, device: found.chip.device_id },
            dcmi_sim::Api::V2 => Target::V2 { logic: found.chip.logic_id as c_int },
        })
        .collect()
}

fn device_info<T: Default>(session: &Session, target: Target, main_cmd: dcmi_main_cmd, sub_cmd: c_uint) -> (c_int, T) {
    let lib = session.lib;
    let mut answer = T::default();
    let mut size = std::mem::size_of::<T>() as c_uint;
    let buffer = (&mut answer as *mut T).cast::<c_void>();
    let status = match target {
        Target::V1 { card, device } => {
            call!(lib, dcmi_get_device_info(card, device, main_cmd, sub_cmd, buffer, &mut size))
        }
        Target::V2 { logic } => call!(lib, dcmiv2_get_device_info(logic, main_cmd, sub_cmd, buffer, &mut size)),
    };
    (status, answer)
}

fn chip_name(session: &Session, target: Target) -> String {
    let lib = session.lib;
    match target {
        Target::V1 { card, device } => {
            let mut info = dcmi_chip_info::default();
            assert_eq!(call!(lib, dcmi_get_device_chip_info(card, device, &mut info)), 0);
            text(&info.chip_name)
        }
        Target::V2 { logic } => {
            let mut info = dcmi_chip_info_v2::default();
            assert_eq!(call!(lib, dcmiv2_get_device_chip_info(logic, &mut info)), 0);
            text(&info.chip_name)
        }
    }
}

fn board_and_mainboard(session: &Session, target: Target) -> (u32, u32) {
    let lib = session.lib;
    let mut board = dcmi_board_info::default();
    let mut mainboard = u32::MAX;
    match target {
        Target::V1 { card, device } => {
            assert_eq!(call!(lib, dcmi_get_device_board_info(card, device, &mut board)), 0);
            assert_eq!(call!(lib, dcmi_get_mainboard_id(card, device, &mut mainboard)), 0);
        }
        Target::V2 { logic } => {
            assert_eq!(call!(lib, dcmiv2_get_device_board_info(logic, &mut board)), 0);
            assert_eq!(call!(lib, dcmiv2_get_mainboard_id(logic, &mut mainboard)), 0);
        }
    }
    (board.board_id, mainboard)
}

fn product_type(session: &Session, target: Target) -> Option<String> {
    let Target::V1 { card, device } = target else { return None };
    let mut buffer = [0 as c_char; 65];
    let status = call!(session.lib, dcmi_get_product_type(card, device, buffer.as_mut_ptr(), buffer.len() as c_int));
    match status {
        0 => Some(text(&buffer)),
        NOT_SUPPORTED => None,
        other => panic!("dcmi_get_product_type answered {other}"),
    }
}

#[test]
fn every_sample_answers_what_huawei_recognises_its_product_by() {
    assert_eq!(samples::SAMPLES.len(), PRODUCTS.len(), "a new sample needs its row here");
    for product in &PRODUCTS {
        let name = product.sample;
        let session = start(samples::by_name(name).expect("sample exists").toml);
        for target in targets(&session) {
            assert_eq!(chip_name(&session, target), product.chip_name, "{name}: chip name");
            assert_eq!(
                board_and_mainboard(&session, target),
                (product.board_id, product.mainboard_id),
                "{name}: (board id, mainboard id)"
            );
            assert_eq!(product_type(&session, target).as_deref(), product.product_type, "{name}: product type");

            let (status, total) = device_info::<dcmi_soc_total_resource>(
                &session,
                target,
                dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG,
                TOTAL_RESOURCE,
            );
            match product.servertype_aicore {
                Some(aicore) => {
                    assert_eq!(status, 0, "{name}: the vNPU total resource must answer");
                    assert_eq!(total.computing.aic, aicore, "{name}: AI cores of the servertype label");
                }
                None => assert_eq!(status, NOT_SUPPORTED, "{name}: no vNPU resources"),
            }

            let (status, spod) = device_info::<dcmi_spod_info>(&session, target, CHIP_INFO, SUPER_POD_INFO);
            if let Some((super_pod_type, super_pod_id, rack)) = product.super_pod {
                assert_eq!(status, 0, "{name}: super-pod info");
                assert_eq!(
                    (spod.super_pod_type, spod.super_pod_id, spod.chassis_id),
                    (super_pod_type, super_pod_id, rack),
                    "{name}: (super-pod type, super-pod id, rack)"
                );
            }
        }
    }
}

#[test]
fn ascend950_answers_its_resources_but_has_no_vnpu() {
    for name in ["atlas-950-8", "atlas-950-16"] {
        let session = start(samples::by_name(name).expect("sample exists").toml);
        for target in targets(&session) {
            let vnpu_mng = dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG;
            let (status, total) = device_info::<dcmi_soc_total_resource>(&session, target, vnpu_mng, TOTAL_RESOURCE);
            assert_eq!(status, 0, "{name}: total resource (used to answer -8255)");
            assert_eq!((total.vdev_num, total.vfg_num), (0, 0), "{name}: no vNPU");
            assert!(total.computing.memory_size > 0, "{name}: the chip's HBM");
            let (status, free) = device_info::<dcmi_soc_free_resource>(&session, target, vnpu_mng, FREE_RESOURCE);
            assert_eq!(status, 0, "{name}: free resource (used to answer -8255)");
            assert_eq!((free.computing.aic, free.vfg_num, free.vfg_bitmap), (total.computing.aic, 0, 0), "{name}");
            let (status, _) = device_info::<dcmi_vdev_query_stru>(&session, target, vnpu_mng, ONE_VNPU);
            assert_eq!(status, NOT_SUPPORTED, "{name}: there is no vNPU to query");
        }
    }
}
