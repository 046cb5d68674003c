//! `ascend-ctk runtime configure` end to end on copies of the golden inputs: dry-run diff,
//! backup, idempotency, the RuntimeClass manifest and the handler warning.

mod ctk_support;

use std::path::PathBuf;

use ctk_support::{ctk, describe, run};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../ascend-oci/tests/fixtures").join(name)
}

#[test]
fn containerd_dry_run_then_write_then_unchanged() {
    let dir = tempfile::tempdir().expect("tempdir");
    let config = dir.path().join("config.toml");
    std::fs::copy(fixture("containerd/config-v2.toml"), &config).expect("copy");
    let original = std::fs::read_to_string(&config).expect("read");
    let configure = |extra: &[&str]| {
        let mut command = ctk();
        command.args(["runtime", "configure", "--runtime", "containerd", "--cdi", "--config"]).arg(&config);
        command.arg("--runtime-class-file").arg(fixture("runtimeclass/cluster.yaml")).args(extra);
        run(&mut command)
    };

    let dry = configure(&["--dry-run"]);
    let stdout = String::from_utf8_lossy(&dry.stdout);
    assert!(dry.status.success(), "{}", describe(&dry));
    assert!(stdout.contains("+    enable_cdi = true"), "{stdout}");
    assert!(stdout.contains("+BinaryName = \"/usr/local/bin/ascend-runtime\""), "{stdout}");
    assert!(stdout.contains("kind: RuntimeClass") && stdout.contains("handler: ascend"), "{stdout}");
    let stderr = String::from_utf8_lossy(&dry.stderr);
    assert!(stderr.contains("warning: RuntimeClass \"npu\" names handler \"huawei-npu\""), "{stderr}");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), original, "dry run must not write");

    let written = configure(&[]);
    assert!(written.status.success(), "{}", describe(&written));
    let expected = std::fs::read_to_string(fixture("containerd/config-v2.ascend.toml")).expect("golden");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), expected);
    let backup = dir.path().join("config.toml.ascend-ctk.bak");
    assert_eq!(std::fs::read_to_string(&backup).expect("backup"), original);

    let again = configure(&[]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("unchanged"), "{}", describe(&again));
    assert_eq!(std::fs::read_to_string(&config).expect("read"), expected);
}

#[test]
fn unknown_engine_is_refused_with_the_value_quoted() {
    let output = run(ctk().args(["runtime", "configure", "--runtime", "podman", "--dry-run"]));
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("\"podman\""), "{}", describe(&output));
}
