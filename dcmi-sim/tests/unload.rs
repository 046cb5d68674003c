//! Unloading the library (`dlclose`, as the Go stack does on shutdown) must not crash the host
//! process while the simulator thread runs: the cdylib is linked `-z nodelete`. This binary loads
//! the library only here, so dropping the handle really closes it.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[test]
fn the_library_is_marked_nodelete() {
    let path = dcmi_sim::library_path().expect("library");
    let output = std::process::Command::new("readelf")
        .arg("-d")
        .arg(&path)
        .output()
        .expect("`readelf` must be installed (binutils, pulled in by gcc in scripts/deps/debian.txt)");
    let dynamic = String::from_utf8_lossy(&output.stdout);
    assert!(dynamic.contains("NODELETE"), "{}: no NODELETE flag in\n{dynamic}", path.display());
}

#[test]
fn dlclose_while_the_simulator_thread_runs() {
    let path = dcmi_sim::library_path().expect("library");
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
    {
        // SAFETY: the simulator exports the header's functions with the bindings' signatures.
        let lib = unsafe { dcmi_sys::DcmiLib::new(&path) }.expect("load");
        let init = lib.dcmi_init.as_ref().expect("dcmi_init");
        // SAFETY: dcmi_init takes no arguments.
        assert_eq!(unsafe { init() }, 0);
    }
    // The simulator thread wakes every 10 ms; with its code unmapped this process would crash here.
    std::thread::sleep(std::time::Duration::from_millis(100));
    // SAFETY: as above; loading again finds the library still resident and initialised.
    let lib = unsafe { dcmi_sys::DcmiLib::new(&path) }.expect("load again");
    let list = lib.dcmi_get_card_list.as_ref().expect("dcmi_get_card_list");
    let mut count = 0;
    let mut ids = [0; 64];
    // SAFETY: both pointers point to live locals; the list holds 64 ints.
    assert_eq!(unsafe { list(&mut count, ids.as_mut_ptr(), 64) }, 0);
    assert_eq!(count, 8);
}
