//! A library lacking some symbols yields a per-call "function missing" error while the other calls
//! still work. The partial library is a small C shim compiled here with `cc`: it exports three
//! functions, each forwarding to the simulator, and nothing else.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::error::Error;
use std::os::raw::c_uint;
use std::process::Command;

const SHIM: &str = r#"
#include <dlfcn.h>
static void *simulator(void) {
    static void *handle;
    if (!handle) handle = dlopen(SIM_PATH, RTLD_NOW | RTLD_LOCAL);
    return handle;
}
#define FORWARD(name, params, args) \
    int name params { \
        int (*real) params = (int (*) params)dlsym(simulator(), #name); \
        return real ? real args : -99998; \
    }
FORWARD(dcmi_init, (void), ())
FORWARD(dcmi_get_card_list, (int *card_num, int *card_list, int list_len), (card_num, card_list, list_len))
FORWARD(dcmi_get_device_health, (int card_id, int device_id, unsigned int *health), (card_id, device_id, health))
"#;

#[test]
fn missing_symbols_fail_per_call() {
    let session = common::start(dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").toml);
    let simulator = dcmi_sim::library_path().expect("library");
    let source = session.dir.path().join("shim.c");
    let partial = session.dir.path().join("libdcmi_partial.so");
    std::fs::write(&source, SHIM).expect("write shim");
    let output = Command::new("cc")
        .args(["-shared", "-fPIC", "-o"])
        .arg(&partial)
        .arg(&source)
        .arg(format!("-DSIM_PATH=\"{}\"", simulator.display()))
        .arg("-ldl")
        .output()
        .expect("`cc` must be installed (Debian package gcc, listed in scripts/deps/debian.txt)");
    assert!(output.status.success(), "cc failed: {}", String::from_utf8_lossy(&output.stderr));

    // SAFETY: the shim exports its three functions with the header's signatures.
    let lib = unsafe { dcmi_sys::DcmiLib::new(&partial) }.expect("load the partial library");
    let missing = lib.dcmi_get_device_temperature.as_ref().expect_err("temperature is missing");
    let detail = missing.source().map(ToString::to_string).unwrap_or_else(|| missing.to_string());
    assert!(detail.contains("dcmi_get_device_temperature"), "{detail}");
    assert!(lib.dcmi_get_device_hbm_info.is_err());
    let absent = dcmi_sim::Function::ALL.iter().filter(|function| {
        let name = function.name();
        !["dcmi_init", "dcmi_get_card_list", "dcmi_get_device_health"].contains(&name)
    });
    assert_eq!(absent.count(), 64 + 42);
    // Like a driver older than Ascend950: no V2 symbol at all.
    assert!(lib.dcmiv2_init.is_err());

    assert_eq!(call!(lib, dcmi_init()), 0);
    let mut count = 0;
    let mut ids = [0; 64];
    assert_eq!(call!(lib, dcmi_get_card_list(&mut count, ids.as_mut_ptr(), 64)), 0);
    assert_eq!(count as usize, session.topology.cards.len());
    let mut health: c_uint = 9;
    assert_eq!(call!(lib, dcmi_get_device_health(ids[0], 0, &mut health)), 0);
    assert_eq!(health, 0);
}
