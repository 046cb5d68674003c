//! A vNPU made through the simulator installed as a fake host's `libdcmi.so` gets the host's `/dev/vdavinci<id>`,
//! as the real driver makes it, and loses it when destroyed; the simulator loaded from its build directory makes
//! no node anywhere.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

use std::os::raw::{c_char, c_int};
use std::os::unix::fs::FileTypeExt;

use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sys::{dcmi_create_vdev_out, dcmi_create_vdev_res_stru, DcmiLib};

fn create(lib: &DcmiLib, card: c_int, template: &str) -> (c_int, u32) {
    let mut request = dcmi_create_vdev_res_stru { vdev_id: 0xFFFF_FFFF, vfg_id: 0xFFFF_FFFF, ..Default::default() };
    for (slot, byte) in request.template_name.iter_mut().zip(template.bytes()) {
        *slot = byte as c_char;
    }
    let mut out = dcmi_create_vdev_out::default();
    // SAFETY: both structs are ours and live across the call.
    let status = unsafe { lib.dcmi_create_vdevice(card, 0, &mut request, &mut out) };
    (status, out.vdev_id)
}

#[test]
fn a_vnpu_has_its_host_device_node_while_it_exists() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let topology = dcmi_sim::samples::by_name("atlas-300i-duo").expect("sample").topology().expect("valid");
    let host = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default()).expect("fake host");
    // The topology is read beside the library, as on a host with no simulator setting.
    std::env::remove_var(dcmi_sim::CONFIG_ENV);
    // SAFETY: the fake host's libdcmi.so is the simulator, which exports the header's functions.
    let lib = unsafe { DcmiLib::new(&host.library) }.expect("load the fake host's libdcmi.so");
    // SAFETY: plain C calls into the simulator.
    assert_eq!(unsafe { lib.dcmi_init() }, 0);

    // Card 2, device 0: the first chip of the sample (its cards are 2, 3, 6 and 7).
    let (status, vdev_id) = create(&lib, 2, "vir02");
    assert_eq!(status, 0, "dcmi_create_vdevice");
    let node = dcmi_sim::fake_host::vnpu_node_path(&host.root, vdev_id);
    let metadata = std::fs::symlink_metadata(&node).unwrap_or_else(|error| panic!("{}: {error}", node.display()));
    if rustix::process::geteuid().is_root() {
        assert!(metadata.file_type().is_char_device(), "{} is a character device as root", node.display());
    }

    // SAFETY: a plain C call.
    assert_eq!(unsafe { lib.dcmi_set_destroy_vdevice(2, 0, vdev_id) }, 0, "dcmi_set_destroy_vdevice");
    assert!(!node.exists(), "{} removed with its vNPU", node.display());
}

#[test]
fn loaded_from_its_build_directory_the_simulator_has_no_host() {
    assert_eq!(dcmi_sim::fake_host::loaded_host_root(), None);
}
