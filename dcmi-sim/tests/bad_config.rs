//! A bad topology is rejected with one line naming the file, the field and the problem: from Rust
//! (`Topology::load`), from `dcmi_init` (-8005 plus `dcmi_sim_last_error`), and on stderr.
//!
//! Golden files: `fixtures/bad/<case>.toml` must produce the message in `<case>.err`, with the
//! fixture's path written as `<file>`. Set `DCMI_SIM_BLESS=1` to rewrite the `.err` files.

// Calls the simulator through its C ABI, as the real library is called.
#![allow(unsafe_code)]

#[macro_use]
mod common;

use std::os::raw::{c_char, c_int};
use std::path::{Path, PathBuf};

fn bad_fixtures() -> Vec<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/bad");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|error| panic!("{}: {error}", dir.display()))
        .filter_map(|entry| entry.ok().map(|entry| entry.path()))
        .filter(|path| path.extension().is_some_and(|extension| extension == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 8, "fixtures missing in {}", dir.display());
    paths
}

fn message_for(path: &Path) -> String {
    let error = dcmi_sim::Topology::load(path).expect_err("a bad fixture must be rejected");
    let dcmi_sim::Error::Config { file, .. } = &error else { panic!("not a configuration error: {error}") };
    assert_eq!(file, path);
    error.to_string().replace(&path.display().to_string(), "<file>")
}

#[test]
fn every_bad_fixture_matches_its_golden_message() {
    let bless = std::env::var_os("DCMI_SIM_BLESS").is_some();
    for path in bad_fixtures() {
        let message = message_for(&path);
        assert!(!message.contains('\n'), "not one line: {message}");
        assert!(message.starts_with("dcmi-sim: <file>: field `"), "{message}");
        let golden = path.with_extension("err");
        if bless {
            std::fs::write(&golden, format!("{message}\n")).expect("write golden file");
        }
        let expected = std::fs::read_to_string(&golden).unwrap_or_else(|error| panic!("{}: {error}", golden.display()));
        assert_eq!(message, expected.trim_end(), "{}", path.display());
    }
}

/// `dcmi_sim_last_error`, the simulator's own extension (not part of `DcmiLib`).
fn last_error_function() -> (libloading::Library, unsafe extern "C" fn(*mut c_char, c_int) -> c_int) {
    let path = dcmi_sim::library_path().expect("library");
    // SAFETY: loading the simulator runs no code beyond Rust's own initialisers.
    let library = unsafe { libloading::Library::new(&path) }.expect("load");
    // SAFETY: dcmi_sim_last_error has this signature (see dcmi-sim/src/abi/init.rs).
    let function =
        *unsafe { library.get::<unsafe extern "C" fn(*mut c_char, c_int) -> c_int>(b"dcmi_sim_last_error\0") }
            .expect("symbol");
    (library, function)
}

/// The whole message, however long: the message holds the fixture's absolute path, so its length depends on where
/// the checkout is. A first call into a small buffer learns the full length, as a C caller of snprintf would.
fn last_error() -> String {
    let (_library, function) = last_error_function();
    let mut buffer = vec![0 as c_char; 16];
    // SAFETY: the buffer holds 16 bytes.
    let length = unsafe { function(buffer.as_mut_ptr(), 16) };
    assert!(length >= 0, "dcmi_sim_last_error returned {length}");
    buffer = vec![0 as c_char; length as usize + 1];
    // SAFETY: the buffer holds length + 1 bytes.
    assert_eq!(unsafe { function(buffer.as_mut_ptr(), length + 1) }, length);
    common::text(&buffer)
}

#[test]
fn dcmi_init_rejects_a_bad_topology_with_the_same_message() {
    let _guard = common::start(dcmi_sim::samples::by_name("edge-310").expect("sample").toml);
    let lib = common::lib();
    assert_eq!(last_error(), "");
    for path in bad_fixtures() {
        std::env::set_var(dcmi_sim::CONFIG_ENV, &path);
        assert_eq!(call!(lib, dcmi_init()), -8005, "{}", path.display());
        let message = last_error();
        assert_eq!(message.replace(&path.display().to_string(), "<file>"), message_for(&path));
        let mut count = 0;
        let mut ids = [0 as c_int; 64];
        assert_eq!(
            call!(lib, dcmi_get_card_list(&mut count, ids.as_mut_ptr(), 64)),
            -8005,
            "no instance after a failed init"
        );
    }
    std::env::set_var(dcmi_sim::CONFIG_ENV, "/nonexistent/topology.toml");
    assert_eq!(call!(lib, dcmi_init()), -8005);
    assert!(last_error().starts_with("dcmi-sim: /nonexistent/topology.toml: field `(file)`: cannot read:"));
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-300i-pro");
    assert_eq!(call!(lib, dcmi_init()), 0, "embedded samples load by name");
    assert_eq!(last_error(), "");
}

/// Runs `dcmi_init` in a child process (this test binary, filtered to the helper below) and checks
/// the one line it writes to stderr.
#[test]
fn dcmi_init_writes_one_line_to_stderr() {
    let path = bad_fixtures().into_iter().next().expect("a fixture");
    let output = std::process::Command::new(std::env::current_exe().expect("test binary"))
        .args(["--exact", "child_calls_dcmi_init", "--nocapture", "--test-threads=1"])
        .env("DCMI_SIM_CHILD", "1")
        .env(dcmi_sim::CONFIG_ENV, &path)
        .output()
        .expect("run child");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let lines: Vec<&str> = stderr.lines().filter(|line| line.starts_with("dcmi-sim:")).collect();
    let expected = message_for(&path).replace("<file>", &path.display().to_string());
    assert_eq!(lines, vec![expected.as_str()], "stderr was: {stderr}");
    assert!(output.status.success(), "child failed: {stderr}");
}

#[test]
fn child_calls_dcmi_init() {
    if std::env::var_os("DCMI_SIM_CHILD").is_none() {
        return; // only meaningful as the child of dcmi_init_writes_one_line_to_stderr
    }
    assert_eq!(call!(common::lib(), dcmi_init()), -8005);
}

/// A buffer shorter than the message gets as much of it as fits, NUL-terminated and cut on a character boundary,
/// and the return value is the full length, so the caller knows how much to ask for (snprintf's convention).
#[test]
fn last_error_truncates_to_the_buffer_and_returns_the_full_length() {
    let _guard = common::start(dcmi_sim::samples::by_name("edge-310").expect("sample").toml);
    let lib = common::lib();
    std::env::set_var(dcmi_sim::CONFIG_ENV, "/nonexistent/topology-\u{e9}\u{e9}.toml");
    assert_eq!(call!(lib, dcmi_init()), -8005);
    let message = last_error();
    let (_library, function) = last_error_function();
    // "dcmi-sim: /nonexistent/topology-" is 32 bytes; each é takes two, so a 34-byte buffer (33 bytes of text) would
    // end inside the first é: the copy stops before it.
    let mut buffer = [0x7f as c_char; 34];
    // SAFETY: the buffer holds 34 bytes.
    let length = unsafe { function(buffer.as_mut_ptr(), 34) };
    assert_eq!(length as usize, message.len());
    assert_eq!(common::text(&buffer), "dcmi-sim: /nonexistent/topology-");
    assert_eq!(buffer[32], 0, "NUL-terminated right after the last whole character");
    let mut one = [0x7f as c_char; 1];
    // SAFETY: the buffer holds 1 byte.
    assert_eq!(unsafe { function(one.as_mut_ptr(), 1) } as usize, message.len());
    assert_eq!(one[0], 0, "a one-byte buffer gets only the NUL");
    // SAFETY: a null buffer is refused before anything is written.
    assert_eq!(unsafe { function(std::ptr::null_mut(), 64) }, -8001);
    // SAFETY: a zero length is refused before anything is written.
    assert_eq!(unsafe { function(buffer.as_mut_ptr(), 0) }, -8001, "no room even for the NUL");
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-300i-pro");
    assert_eq!(call!(lib, dcmi_init()), 0);
}
