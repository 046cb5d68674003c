//! `dcmi_sim::library_path` finds the built library, honours `DCMI_SIM_LIBRARY`, and explains
//! itself when nothing is found.

#[test]
fn finds_the_built_library_and_honours_the_override() {
    let found = dcmi_sim::library_path().expect("the library next to the test binary");
    assert!(found.is_file());
    assert_eq!(found.file_name().and_then(|name| name.to_str()), Some("libdcmi_sim.so"));

    let dir = tempfile::tempdir().expect("temporary directory");
    let copy = dir.path().join("custom-dcmi.so");
    std::fs::copy(&found, &copy).expect("copy");
    std::env::set_var(dcmi_sim::LIBRARY_ENV, &copy);
    assert_eq!(dcmi_sim::library_path().ok(), Some(copy.clone()));
    std::env::set_var(dcmi_sim::LIBRARY_ENV, dir.path().join("absent.so"));
    let error = dcmi_sim::library_path().expect_err("absent override");
    assert!(error.to_string().contains("absent.so"), "{error}");
    std::env::remove_var(dcmi_sim::LIBRARY_ENV);

    let empty = tempfile::tempdir().expect("temporary directory");
    std::fs::write(empty.path().join("CACHEDIR.TAG"), "").expect("tag");
    let nested = empty.path().join("debug/deps");
    std::fs::create_dir_all(&nested).expect("dirs");
    let error = dcmi_sim::library_near(&nested).expect_err("nothing built there");
    let message = error.to_string();
    assert!(message.contains("cargo build -p dcmi-sim") && message.contains("debug/deps/libdcmi_sim.so"), "{message}");

    // The search walks up from deps/ to the profile directory.
    std::fs::copy(&found, empty.path().join("debug/libdcmi_sim.so")).expect("copy");
    assert_eq!(dcmi_sim::library_near(&nested).ok(), Some(empty.path().join("debug/libdcmi_sim.so")));
}
