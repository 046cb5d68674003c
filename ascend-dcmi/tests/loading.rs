//! Loading: builder, discovery (explicit path, `ASCEND_DCMI_LIBRARY`, host root), the ownership check, and the
//! distinct errors of a failed load, a failed `dcmi_init` and a missing symbol.

mod support;

use std::fs;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

use ascend_dcmi::{Dcmi, Error, LogicId, UtilizationKind, UtilizationMethod, LIBRARY_ENV};

/// A directory below the cargo target directory, whose ancestors are (on CI, as root) root-owned and not writable
/// by group or others, unlike `/tmp`.
fn private_dir() -> tempfile::TempDir {
    tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temporary directory under the target directory")
}

fn chmod(path: &Path, mode: u32) {
    fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod");
}

#[test]
fn builder_loads_the_library_and_shutdown_unloads_after_the_last_clone() {
    let (dcmi, sim) = support::start("atlas-800t-a2");
    assert_eq!(dcmi.driver_version().expect("version"), "24.1.rc2");
    assert_eq!(dcmi.library_path(), sim.library.as_path());
    assert_eq!(dcmi.call_deadline(), ascend_dcmi::DEFAULT_CALL_DEADLINE);
    assert_eq!(dcmi.worker_concurrency(), ascend_dcmi::DEFAULT_WORKER_CONCURRENCY);
    let chip = dcmi.chip(LogicId(0)).expect("chip 0");
    let clone = dcmi.clone();
    clone.shutdown().expect("dropping a shared handle is not an error");
    assert!(chip.temperature().is_ok(), "the library stays loaded while handles exist");
    drop(chip);
    dcmi.shutdown().expect("the last handle unloads and dlclose succeeds");
}

#[test]
fn settings_of_the_builder_are_visible_on_the_handle() {
    let (dcmi, _sim) = support::start_with("edge-310", &[], |builder| {
        builder.call_deadline(std::time::Duration::from_millis(250)).worker_concurrency(7)
    });
    let dcmi = dcmi.expect("loads");
    assert_eq!(dcmi.call_deadline(), std::time::Duration::from_millis(250));
    assert_eq!(dcmi.worker_concurrency(), 7);
    assert!(dcmi.host_root().is_none());
}

#[test]
fn ownership_check_rejects_a_group_writable_directory_and_accepts_a_safe_one() {
    let root = private_dir();
    let driver = root.path().join("driver");
    fs::create_dir(&driver).expect("create driver dir");
    let library = driver.join("libdcmi.so");
    fs::copy(support::simulator_library(), &library).expect("copy the simulator");
    chmod(&library, 0o644);
    chmod(root.path(), 0o755);
    chmod(&driver, 0o775);

    let checked = |path: PathBuf| {
        support::start_with("edge-310", &[], move |builder| builder.library_path(path).verify_library_ownership(true)).0
    };
    let error = checked(library.clone()).expect_err("a group-writable directory must be refused");
    match &error {
        Error::UnsafeLibrary { library: refused, path, mode, .. } => {
            assert_eq!(refused, &library);
            assert_eq!(path, &fs::canonicalize(&driver).expect("resolve"));
            assert_eq!(*mode, 0o775);
        }
        other => panic!("expected UnsafeLibrary, got {other}"),
    }
    let message = error.to_string();
    assert!(message.contains(&driver.display().to_string()) && message.contains("0775"), "{message}");

    chmod(&driver, 0o755);
    let own_uid = fs::metadata(&library).expect("metadata").uid();
    if own_uid == 0 {
        let dcmi = checked(library.clone()).expect("root-owned, not group/other-writable: accepted");
        assert_eq!(dcmi.library_path(), fs::canonicalize(&library).expect("resolve").as_path());
    } else {
        // Not root (a developer machine): the same check must now name the file's owner instead.
        let error = checked(library.clone()).expect_err("a file not owned by root is refused");
        assert!(matches!(error, Error::UnsafeLibrary { uid, .. } if uid == own_uid), "{error}");
        eprintln!("not running as root: verified the refusal of uid {own_uid}; CI (root) verifies acceptance");
    }
    chmod(&driver, 0o775);
    let (unchecked, _sim) =
        support::start_with("edge-310", &[], |builder| builder.library_path(&library).verify_library_ownership(false));
    assert!(unchecked.is_ok(), "the check can be turned off");
}

#[test]
fn discovery_uses_the_environment_variable_then_the_host_root() {
    let root = private_dir();
    let topology = support::sample_toml("atlas-800t-a2");
    let parsed = dcmi_sim::Topology::from_toml_str(topology, Path::new("atlas-800t-a2.toml")).expect("sample parses");
    let options =
        dcmi_sim::fake_host::FakeHostOptions { library: Some(support::simulator_library()), ..Default::default() };
    let host = dcmi_sim::fake_host::FakeHost::build(&parsed, root.path(), &options).expect("fake host");
    let (_other_dir, named) = support::copy_simulator(&[]);

    support::with_environment(|| {
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
        std::env::remove_var(dcmi_sim::OVERLAY_ENV);

        std::env::set_var(LIBRARY_ENV, &named);
        let builder = Dcmi::builder().host_root(&host.root).verify_library_ownership(false);
        assert_eq!(builder.candidate_paths(), std::slice::from_ref(&named), "the variable is the only candidate");
        let dcmi = builder.clone().init().expect("loads the library the variable names");
        assert_eq!(dcmi.library_path(), named.as_path());

        std::env::remove_var(LIBRARY_ENV);
        let candidates = builder.candidate_paths();
        let installed = host.root.join("usr/local/Ascend/driver/lib64/driver/libdcmi.so");
        assert!(candidates.contains(&installed), "{candidates:?}");
        let dcmi = builder.init().expect("finds the host's driver under the host root");
        assert!(dcmi.library_path().starts_with(&host.root), "{}", dcmi.library_path().display());
        assert_eq!(dcmi.host_root(), Some(host.root.as_path()));
        // The fake host's /sys (under the host root) places each chip on the node its topology names.
        for ids in dcmi.chips().expect("chips") {
            let expected = parsed.chip_by_logic_id(ids.logic.0).expect("chip in topology").chip.numa_node;
            let node = dcmi.chip(ids.logic).expect("chip").numa_node();
            assert_eq!(node, u32::try_from(expected).ok(), "NUMA node of {ids}");
        }
    });
}

#[test]
fn a_file_that_is_not_a_library_is_a_load_error_naming_it() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let bogus = dir.path().join("libdcmi.so");
    fs::write(&bogus, b"this is not an ELF file").expect("write");
    let (result, _sim) = support::start_with("edge-310", &[], |builder| builder.library_path(&bogus));
    match result {
        Err(Error::LibraryLoad { path, .. }) => assert_eq!(path, bogus),
        other => panic!("expected LibraryLoad, got {other:?}"),
    }
    let missing = dir.path().join("absent/libdcmi.so");
    let (result, _sim) = support::start_with("edge-310", &[], |builder| builder.library_path(&missing));
    assert!(matches!(result, Err(Error::LibraryNotFound { searched }) if searched == [missing]));
}

#[test]
fn a_failing_dcmi_init_is_init_failed_with_the_code() {
    let (result, _sim) = support::start_with("/nonexistent/topology.toml", &[], |builder| builder);
    match result {
        Err(Error::InitFailed { code, meaning }) => {
            assert_eq!(code, -8005);
            assert_eq!(meaning, "internal error");
        }
        other => panic!("expected InitFailed, got {other:?}"),
    }
    let (result, _sim) = support::start_with("edge-310", &["dcmi_init"], |builder| builder);
    assert!(matches!(result, Err(Error::FunctionMissing("dcmi_init"))), "{result:?}");
}

#[test]
fn a_symbol_missing_from_an_older_driver_fails_only_the_calls_that_need_it() {
    let hidden =
        ["dcmi_get_device_hbm_info", "dcmi_get_device_chip_info_v2", "dcmi_get_device_multi_utilization_rate_period"];
    let (dcmi, _sim) = support::start_with("atlas-800t-a2", &hidden, |builder| builder);
    let dcmi = dcmi.expect("an older driver still loads");
    let chip = dcmi.chip(LogicId(0)).expect("chip 0");
    let error = chip.hbm_memory().expect_err("no HBM call in this driver");
    assert!(matches!(error, Error::FunctionMissing("dcmi_get_device_hbm_info")), "{error}");
    assert!(error.is_unsupported());
    assert!(error.to_string().contains("upgrade the driver"), "{error}");
    assert!(chip.temperature().is_ok(), "other calls work");
    let info = chip.chip_info().expect("falls back to dcmi_get_device_chip_info");
    assert_eq!(info.chip_name, "910B3");
    assert_eq!(info.npu_name, None, "the v1 call has no npu_name");
    assert!(chip.utilization(UtilizationKind::AiCore).is_ok());
    assert_eq!(dcmi.utilization_method(), Some(UtilizationMethod::Multi), "the period call is missing");
}
