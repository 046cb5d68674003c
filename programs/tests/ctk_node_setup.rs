//! `ascend-ctk node-setup`, the Helm chart's init step, on a `dcmi_sim` fake host that can run programs: the host
//! root gets the C libraries ascend-ctk and the simulated libdcmi.so load (as every real host has them), then
//! node-setup enters it as the init container enters the host's root and installs the toolkit, writes the CDI spec
//! of the simulated chips and registers the runtime in containerd's configuration; a second run changes nothing. A
//! host whose C library cannot run the binary fails with what to do. Needs root (chroot, mknod); CI runs as root.

mod ctk_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ctk_support::sim_host::SimHost;
use ctk_support::{ctk, describe, run};

/// Copies into `root` every shared library `binaries` load, at its path on this machine, with the dynamic loader.
fn install_c_libraries(root: &Path, binaries: &[PathBuf]) {
    for binary in binaries {
        let output = run(Command::new("ldd").arg(binary));
        assert!(output.status.success(), "ldd {}\n{}", binary.display(), describe(&output));
        let text = String::from_utf8_lossy(&output.stdout);
        // "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and the loader, "/lib64/ld-linux-x86-64.so.2 (0x...)".
        for library in text.lines().filter_map(|line| line.split_whitespace().find(|word| word.starts_with('/'))) {
            let target = root.join(library.trim_start_matches('/'));
            std::fs::create_dir_all(target.parent().expect("library directory")).expect("mkdir library directory");
            std::fs::copy(library, &target).unwrap_or_else(|e| panic!("copy {library}: {e}"));
        }
    }
}

fn node_setup(host: &SimHost, extra: &[&str]) -> Output {
    let mut command = ctk();
    command.args(["node-setup", "--host-root"]).arg(host.root());
    run(command.args(["--runtime", "containerd", "--runtime-name", "ascend-test"]).args(extra))
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn node_setup_installs_the_toolkit_writes_the_cdi_spec_and_registers_the_runtime_once() {
    let host = SimHost::sample("atlas-800t-a2");
    let ctk_binary = PathBuf::from(env!("CARGO_BIN_EXE_ascend-ctk"));
    install_c_libraries(host.root(), &[ctk_binary.clone(), host.fake.library.clone()]);
    let config = host.path("/etc/containerd/config.toml");
    std::fs::create_dir_all(config.parent().expect("dir")).expect("mkdir /etc/containerd");
    std::fs::write(&config, "version = 3\n").expect("write the engine configuration");

    let first = node_setup(&host, &["--install-dir", "/opt/ascend/bin"]);
    assert!(first.status.success(), "{}", describe(&first));
    let installed = host.path("/opt/ascend/bin/ascend-ctk");
    assert_eq!(
        std::fs::read(&installed).expect("installed binary"),
        std::fs::read(&ctk_binary).expect("binary"),
        "the host gets this very binary"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&installed).expect("stat").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "the runtime refuses a helper others could replace");
    let link = host.path("/opt/ascend/bin/ascend-runtime");
    assert_eq!(std::fs::read_link(&link).expect("link"), Path::new("ascend-ctk"));

    // The spec names the chips by the host's own paths, since it was written inside the host's root.
    let spec_path = host.path("/var/run/cdi/huawei.com-npu.json");
    let spec: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&spec_path).unwrap_or_else(|e| panic!("{}: {e}", spec_path.display())))
            .expect("the spec is JSON");
    let devices = spec["devices"].as_array().expect("devices");
    assert_eq!(devices.len(), host.phy_ids().len() + 1, "a device per chip and `all`: {spec}");
    assert_eq!(devices[0]["containerEdits"]["deviceNodes"][0]["path"], "/dev/davinci0");
    let root = host.root().to_string_lossy();
    assert!(!spec.to_string().contains(root.as_ref()), "no path of the container's view of the host: {spec}");

    let text = std::fs::read_to_string(&config).expect("read the engine configuration");
    assert!(text.contains("runtimes.ascend-test") || text.contains("runtimes.\"ascend-test\""), "{text}");
    assert!(text.contains("BinaryName = \"/opt/ascend/bin/ascend-runtime\""), "{text}");
    assert!(text.contains("enable_cdi = true"), "{text}");
    let log = stderr(&first);
    assert!(log.contains("installed /opt/ascend/bin/ascend-ctk") && log.contains("restart containerd"), "{log}");

    let second = node_setup(&host, &["--install-dir", "/opt/ascend/bin"]);
    assert!(second.status.success(), "{}", describe(&second));
    let log = stderr(&second);
    assert!(log.contains("is this toolkit already: unchanged") && log.contains("unchanged"), "{log}");
    assert!(!log.contains("restart containerd"), "nothing changed, nothing to restart: {log}");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), text);
}

#[test]
fn a_host_that_cannot_run_the_toolkit_is_named_with_what_to_do() {
    // The fake host without the C libraries: the installed binary cannot start there.
    let host = SimHost::sample("atlas-300i-pro");
    let output = node_setup(&host, &[]);
    assert!(!output.status.success(), "{}", describe(&output));
    let log = stderr(&output);
    assert!(log.contains("/usr/local/bin/ascend-ctk does not run on this host"), "{log}");
    assert!(log.contains("nodeSetup.enabled=false"), "{log}");
    assert!(std::fs::read(host.path("/usr/local/bin/ascend-ctk")).is_ok(), "the copy happened before the check");
}

#[test]
fn relative_paths_are_refused_before_anything_is_written() {
    let output = run(ctk().args(["node-setup", "--host-root", "/nonexistent", "--install-dir", "usr/bin"]));
    assert!(!output.status.success());
    assert!(
        stderr(&output).contains("--install-dir usr/bin: must be an absolute path on the host"),
        "{}",
        describe(&output)
    );
    let output = run(ctk().args(["node-setup", "--config", "config.toml"]));
    assert!(stderr(&output).contains("--runtime"), "--config without an engine: {}", describe(&output));
}

/// The hook's own binary, beside ascend-ctk in the image, goes beside it on the host too: the runtime points hook
/// mode's spec at it there.
#[test]
fn node_setup_installs_the_hook_binary_beside_the_toolkit() {
    let host = SimHost::sample("atlas-300i-pro");
    let hook_binary = PathBuf::from(env!("CARGO_BIN_EXE_ascend-ctk-hook"));
    install_c_libraries(
        host.root(),
        &[PathBuf::from(env!("CARGO_BIN_EXE_ascend-ctk")), hook_binary.clone(), host.fake.library.clone()],
    );
    let output = run(ctk().args(["node-setup", "--host-root"]).arg(host.root()));
    assert!(output.status.success(), "{}", describe(&output));
    let installed = host.path("/usr/local/bin/ascend-ctk-hook");
    assert_eq!(
        std::fs::read(&installed).expect("installed hook binary"),
        std::fs::read(&hook_binary).expect("hook binary"),
        "the host gets this very hook binary"
    );
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&installed).expect("stat").permissions().mode() & 0o7777;
    assert_eq!(mode, 0o755, "{}", describe(&output));
    assert!(stderr(&output).contains("installed /usr/local/bin/ascend-ctk-hook"), "{}", describe(&output));
}
