//! The two roles on the path of every container start read their settings without clap
//! (`ascend_oci::runtime_main`, `hook_program_main`): the `ascend-runtime` link refuses a setting it cannot use
//! before anything runs, naming the variable, and a hook command line that is not the one its spec entry carries
//! still gets clap's answer; and the binary is linked
//! position-dependent, so that the dynamic loader has no relocations of its own to apply on every start
//! (`programs/build.rs`).

mod ctk_support;

use ctk_support::{ctk, describe, run};

#[test]
fn the_runtime_link_refuses_an_unusable_setting_naming_the_variable_before_running_anything() {
    let dir = tempfile::tempdir().expect("tempdir");
    let link = dir.path().join("ascend-runtime");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ascend-ctk"), &link).expect("runtime link");
    let marker = dir.path().join("ran");
    let mut command = std::process::Command::new(&link);
    command.env("ASCEND_CTK_MOUNT_DELIVERY", "sideways").env("ASCEND_CTK_RUNC", "/bin/touch");
    let output = run(command.arg(&marker));
    let context = describe(&output);
    assert_eq!(output.status.code(), Some(1), "{context}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(
            "ascend-ctk: error: runtime settings from the environment: runtime command line: \
             ASCEND_CTK_MOUNT_DELIVERY=\"sideways\": expected \"spec\" or \"hook\""
        ),
        "{context}"
    );
    assert!(!marker.exists(), "runc ran despite the unusable setting\n{context}");
}

#[test]
fn a_hook_command_line_beyond_its_own_flags_gets_claps_answer() {
    let help = run(ctk().args(["hook", "--help"]));
    assert!(help.status.success(), "{}", describe(&help));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--mount-list-dir"), "{}", describe(&help));
    let unknown = run(ctk().args(["hook", "--host-root", "/", "--prestart"]));
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
    assert!(
        String::from_utf8_lossy(&unknown.stderr).contains("unexpected argument '--prestart'"),
        "{}",
        describe(&unknown)
    );
}

/// ELF header: `e_type` is the 16-bit field at offset 16; 2 is `ET_EXEC` (position-dependent), 3 `ET_DYN` (a PIE).
#[test]
fn the_binary_on_the_start_path_is_position_dependent() {
    use std::io::Read;
    let path = env!("CARGO_BIN_EXE_ascend-ctk");
    let mut header = [0u8; 18];
    std::fs::File::open(path).and_then(|mut file| file.read_exact(&mut header)).expect("read ascend-ctk's ELF header");
    assert_eq!(&header[..4], b"\x7fELF", "{path} is not an ELF file");
    let e_type = u16::from_le_bytes([header[16], header[17]]);
    assert_eq!(e_type, 2, "{path}: ELF type {e_type}, expected 2 (ET_EXEC): is the -no-pie link argument gone?");
}

/// The hook's own binary, on the start path of hook mode, is position-dependent too (statically linked in the
/// release builds: `cargo ctk-hook-static`), and links none of the toolkit's command line.
#[test]
fn the_hook_binary_is_position_dependent_and_small() {
    use std::io::Read;
    let hook = env!("CARGO_BIN_EXE_ascend-ctk-hook");
    let mut header = [0u8; 18];
    std::fs::File::open(hook).and_then(|mut file| file.read_exact(&mut header)).expect("read the hook's ELF header");
    assert_eq!(&header[..4], b"\x7fELF", "{hook} is not an ELF file");
    assert_eq!(u16::from_le_bytes([header[16], header[17]]), 2, "{hook}: expected ET_EXEC");
    let size = |path: &str| std::fs::metadata(path).map(|m| m.len()).expect("binary size");
    let toolkit = env!("CARGO_BIN_EXE_ascend-ctk");
    assert!(size(hook) < size(toolkit), "{hook} ({} bytes) is not smaller than {toolkit}", size(hook));
}

/// The hook's own binary answers --help, and a command line it does not know with exit status 2 and its error.
#[test]
fn the_hook_binary_says_what_it_is_and_refuses_unknown_arguments() {
    let program = env!("CARGO_BIN_EXE_ascend-ctk-hook");
    let help = run(std::process::Command::new(program).arg("--help"));
    assert!(help.status.success(), "{}", describe(&help));
    assert!(String::from_utf8_lossy(&help.stdout).contains("--mount=PATH"), "{}", describe(&help));
    let unknown = run(std::process::Command::new(program).args(["--host-root", "/", "--prestart"]));
    assert_eq!(unknown.status.code(), Some(2), "{}", describe(&unknown));
    let stderr = String::from_utf8_lossy(&unknown.stderr);
    assert!(
        stderr.contains("ascend-ctk-hook: error: runtime command line: unknown hook argument \"--prestart\""),
        "{stderr}"
    );
}

/// Both binaries on the start path carry the unwinder of `libgcc_eh.a`: the dynamic loader has no `libgcc_s.so.1` to
/// map, bind and run the constructor of on every start (`programs/build.rs`).
#[test]
fn the_start_path_binaries_do_not_load_libgcc_s() {
    for binary in [env!("CARGO_BIN_EXE_ascend-ctk"), env!("CARGO_BIN_EXE_ascend-ctk-hook")] {
        let output = run(std::process::Command::new("ldd").arg(binary));
        assert!(output.status.success(), "ldd {binary}\n{}", describe(&output));
        let libraries = String::from_utf8_lossy(&output.stdout);
        assert!(libraries.contains("libc.so.6"), "{binary}: ldd lists no C library\n{libraries}");
        assert!(
            !libraries.contains("libgcc_s"),
            "{binary} loads libgcc_s: is build.rs's static unwinder gone?\n{libraries}"
        );
    }
}
