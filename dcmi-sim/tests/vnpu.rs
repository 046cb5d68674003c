//! vNPU creation, destruction and the `dcmi_get_device_info` queries of main_cmd 52, with resource
//! accounting and the template allow-lists of each family.

#[macro_use]
mod common;

use std::os::raw::{c_char, c_int, c_uint};

use common::{start, text, Session};
use dcmi_sys::*;

fn create(session: &Session, card: c_int, template: &str, vdev_id: c_uint) -> (c_int, dcmi_create_vdev_out) {
    let mut request = dcmi_create_vdev_res_stru { vdev_id, vfg_id: 0xFFFF_FFFF, ..Default::default() };
    for (slot, byte) in request.template_name.iter_mut().zip(template.bytes()) {
        *slot = byte as c_char;
    }
    let mut out = dcmi_create_vdev_out::default();
    let status = call!(session.lib, dcmi_create_vdevice(card, 0, &mut request, &mut out));
    (status, out)
}

fn query<T: Default>(session: &Session, card: c_int, sub_cmd: c_uint, mut value: T) -> (c_int, T) {
    let mut size = std::mem::size_of::<T>() as c_uint;
    let status = call!(
        session.lib,
        dcmi_get_device_info(
            card,
            0,
            dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG,
            sub_cmd,
            (&mut value as *mut T).cast(),
            &mut size
        )
    );
    if status == 0 {
        assert_eq!(size as usize, std::mem::size_of::<T>());
    }
    (status, value)
}

#[test]
fn accounting_on_a_310p_card() {
    let session = start(dcmi_sim::samples::by_name("atlas-300i-pro").expect("sample").toml);
    let chip = &session.topology.cards[0].chips[0];
    let (status, first) = create(&session, 0, "vir04", 0xFFFF_FFFF);
    assert_eq!((status, first.vdev_id), (0, 100));
    let (status, second) = create(&session, 0, "vir02_1c", 150);
    assert_eq!((status, second.vdev_id), (0, 150));
    assert_eq!(create(&session, 1, "vir01", 150).0, -8020, "vdev ids are unique on the host");
    assert_eq!(create(&session, 0, "vir04", 0xFFFF_FFFF).0, -8020, "only 2 of 8 AI cores left");
    assert_eq!(create(&session, 0, "vir08", 0xFFFF_FFFF).0, -8001, "vir08 is a 910 template");
    assert_eq!(create(&session, 0, "vir01", 99).0, -8001, "ids start at 100");

    let (status, total) = query(&session, 0, 1, dcmi_soc_total_resource::default());
    assert_eq!(status, 0);
    assert_eq!((total.vdev_num, &total.vdev_id[..2]), (2, &[100, 150][..]));
    assert_eq!((total.computing.aic as u32, total.computing.memory_size), (8, chip.ddr.size_mb));
    let (status, free) = query(&session, 0, 2, dcmi_soc_free_resource::default());
    assert_eq!((status, free.computing.aic as u32, free.computing.memory_size), (0, 2, chip.ddr.size_mb / 4));

    let (status, one) = query(&session, 0, 0, dcmi_vdev_query_stru { vdev_id: 150, ..Default::default() });
    assert_eq!(status, 0);
    assert_eq!((text(&one.query_info.name), one.query_info.computing.aic as u32), ("vir02_1c".to_owned(), 2));
    let (status, activity) = query(&session, 0, 5, dcmi_vdev_query_stru { vdev_id: 100, ..Default::default() });
    assert_eq!(status, 0);
    assert_eq!(activity.query_info.computing.vdev_memory_total, chip.ddr.size_mb / 2 * 1024);
    assert!(activity.query_info.computing.vdev_aicore_utilization <= 100);
    assert_eq!(query(&session, 0, 0, dcmi_vdev_query_stru { vdev_id: 333, ..Default::default() }).0, -8001);
    let mut small = dcmi_soc_total_resource::default();
    let mut size = 8;
    let status = call!(
        session.lib,
        dcmi_get_device_info(
            0,
            0,
            dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG,
            1,
            (&mut small as *mut dcmi_soc_total_resource).cast(),
            &mut size
        )
    );
    assert_eq!(status, -8001, "a buffer too small for the answer");

    assert_eq!(call!(session.lib, dcmi_set_destroy_vdevice(0, 0, 100)), 0);
    let (_, free) = query(&session, 0, 2, dcmi_soc_free_resource::default());
    assert_eq!(free.computing.aic as u32, 6);
    assert_eq!(call!(session.lib, dcmi_set_destroy_vdevice(0, 0, 100)), -8001);
}

#[test]
fn templates_per_family() {
    let session = start(dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").toml);
    assert_eq!(create(&session, 0, "vir02", 0xFFFF_FFFF).0, -8001, "310P/910A template on 910B");
    assert_eq!(create(&session, 0, "vir12_3c_32g", 0xFFFF_FFFF).0, 0);
    assert_eq!(create(&session, 0, "vir10_3c_32g", 0xFFFF_FFFF).0, -8020, "20 AI cores: 12 + 10 do not fit");
    assert_eq!(create(&session, 0, "vir06_1c_16g", 0xFFFF_FFFF).0, 0);
    drop(session);

    let session = start(dcmi_sim::samples::by_name("edge-310").expect("sample").toml);
    assert_eq!(create(&session, 0, "vir01", 0xFFFF_FFFF).0, -8255);
    assert_eq!(query(&session, 0, 1, dcmi_soc_total_resource::default()).0, -8255);
}

#[test]
fn preset_vnpus_and_910a() {
    let toml = r#"
[[card]]
card_id = 0

[[card.chip]]
device_id = 0
logic_id = 0
phy_id = 0
chip_type = "Ascend910"
chip_name = "910A"
aicore_count = 32
work_mode = 1
pcie = { bdf = "0000:3d:00.0" }

[[card.chip.vnpu]]
template = "vir16"
vdev_id = 120
"#;
    let session = start(toml);
    let (status, total) = query(&session, 0, 1, dcmi_soc_total_resource::default());
    assert_eq!((status, total.vdev_num, total.vdev_id[0]), (0, 1, 120));
    assert_eq!(create(&session, 0, "vir16", 0xFFFF_FFFF).0, 0);
    assert_eq!(create(&session, 0, "vir01", 0xFFFF_FFFF).0, -8020);
    let mut mode = 0u8;
    assert_eq!(call!(session.lib, dcmi_get_npu_work_mode(0, &mut mode)), 0);
    assert_eq!(mode, 1);
}
