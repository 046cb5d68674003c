//! Golden tests of the engine configurations we edit: Docker daemon.json, containerd config.toml
//! (versions 2 and 3), a CRI-O drop-in; idempotency, backups, dry-run diffs, RuntimeClass checks.

mod common;

use std::path::{Path, PathBuf};

use ascend_oci::runtime_config::{
    configure, configure_containerd, configure_crio, configure_docker, parse_runtime_classes, runtime_class_manifest,
    runtime_class_warnings, ConfigureOptions, RuntimeKind,
};
use common::golden::{assert_golden, fixture_path, read_fixture};

fn options(set_as_default: bool, enable_cdi: bool) -> ConfigureOptions {
    ConfigureOptions {
        runtime_name: "ascend".to_owned(),
        runtime_path: PathBuf::from("/usr/local/bin/ascend-runtime"),
        set_as_default,
        enable_cdi,
    }
}

#[test]
fn docker_daemon_json_keeps_unrelated_keys_and_order() {
    let input = read_fixture("docker/daemon.json");
    let (output, handlers) =
        configure_docker(Path::new("daemon.json"), Some(&input), &options(true, true)).expect("configure");
    assert_golden("docker/daemon.ascend.json", &output);
    assert_eq!(handlers, ["runc", "nvidia", "ascend"]);
    let (again, _) = configure_docker(Path::new("daemon.json"), Some(&output), &options(true, true)).expect("again");
    assert_eq!(again, output, "second run must not change daemon.json");
}

#[test]
fn docker_without_a_file_creates_one() {
    let (output, _) = configure_docker(Path::new("daemon.json"), None, &options(false, false)).expect("configure");
    assert_golden("docker/daemon.new.json", &output);
}

#[test]
fn containerd_v2_keeps_comments_and_copies_runc_options() {
    let input = read_fixture("containerd/config-v2.toml");
    let (output, handlers) =
        configure_containerd(Path::new("config.toml"), Some(&input), &options(false, true)).expect("configure");
    assert_golden("containerd/config-v2.ascend.toml", &output);
    assert_eq!(handlers, ["runc", "ascend"]);
    assert!(output.contains("# Sandbox image mirrored internally."));
    let (again, _) =
        configure_containerd(Path::new("config.toml"), Some(&output), &options(false, true)).expect("again");
    assert_eq!(again, output);
}

#[test]
fn containerd_v3_uses_the_cri_runtime_plugin() {
    let input = read_fixture("containerd/config-v3.toml");
    let (output, _) =
        configure_containerd(Path::new("config.toml"), Some(&input), &options(true, true)).expect("configure");
    assert_golden("containerd/config-v3.ascend.toml", &output);
    let (again, _) =
        configure_containerd(Path::new("config.toml"), Some(&output), &options(true, true)).expect("again");
    assert_eq!(again, output);
}

#[test]
fn containerd_unknown_version_is_refused() {
    let err = configure_containerd(Path::new("c.toml"), Some("version = 9\n"), &options(false, false))
        .expect_err("version 9");
    assert!(err.to_string().contains("config version 9"), "{err}");
}

#[test]
fn crio_drop_in() {
    let (fresh, handlers) = configure_crio(Path::new("99-ascend.conf"), None, &options(true, true)).expect("configure");
    assert_golden("crio/99-ascend.conf", &fresh);
    assert!(handlers.contains(&"ascend".to_owned()));
    let existing = read_fixture("crio/existing.conf");
    let (merged, _) = configure_crio(Path::new("x.conf"), Some(&existing), &options(false, false)).expect("merge");
    assert_golden("crio/existing.ascend.conf", &merged);
}

#[test]
fn write_backs_up_the_original_once_and_dry_run_diff_names_the_change() {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("daemon.json");
    std::fs::copy(fixture_path("docker/daemon.json"), &path).expect("copy");
    let edit = configure(RuntimeKind::Docker, &path, &options(false, false)).expect("configure");
    let diff = edit.diff();
    assert!(diff.contains("+        \"ascend\": {"), "{diff}");
    assert!(!diff.contains("-    \"log-driver\""), "unrelated lines must not change: {diff}");
    let backup = edit.write().expect("write").expect("a backup");
    assert_eq!(std::fs::read_to_string(&backup).expect("backup"), read_fixture("docker/daemon.json"));
    let second = configure(RuntimeKind::Docker, &path, &options(false, false)).expect("again");
    assert!(!second.changes_file());
    assert_eq!(second.diff(), "");
}

#[test]
fn runtime_class_with_an_unknown_handler_is_reported() {
    let classes = parse_runtime_classes(&read_fixture("runtimeclass/cluster.yaml"));
    let input = read_fixture("containerd/config-v2.toml");
    let (_, handlers) =
        configure_containerd(Path::new("c.toml"), Some(&input), &options(false, false)).expect("configure");
    let warnings = runtime_class_warnings(&classes, &handlers);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("\"npu\"") && warnings[0].contains("\"huawei-npu\""), "{}", warnings[0]);
}

#[test]
fn runtime_class_manifest_matches_golden() {
    assert_golden("runtimeclass/ascend.yaml", &runtime_class_manifest("ascend", "ascend"));
}

#[test]
fn containerd_v1_without_version_key_uses_the_cri_plugin() {
    let input = "# old node\n[plugins.cri.containerd]\n  snapshotter = \"overlayfs\"\n";
    let (output, handlers) =
        configure_containerd(Path::new("config.toml"), Some(input), &options(false, false)).expect("configure");
    assert!(output.starts_with("# old node\n"), "{output}");
    assert!(output.contains("[plugins.cri.containerd.runtimes.ascend]"), "{output}");
    assert!(!output.contains("version"), "a v1 file must stay v1: {output}");
    assert_eq!(handlers, ["ascend"]);
}

#[test]
fn docker_runtimes_of_the_wrong_type_is_an_error_naming_the_key() {
    let err = configure_docker(Path::new("daemon.json"), Some(r#"{"runtimes": []}"#), &options(false, false))
        .expect_err("runtimes is an array");
    assert!(err.to_string().contains("\"runtimes\" is not an object"), "{err}");
    let err = configure_docker(Path::new("daemon.json"), Some("{"), &options(false, false)).expect_err("bad json");
    assert!(err.to_string().contains("daemon.json"), "{err}");
}
