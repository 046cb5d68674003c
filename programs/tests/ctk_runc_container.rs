//! Real containers with Debian's runc (and crun for the two delivery modes): `ascend-ctk runtime exec` (and the
//! hook) prepare a busybox container on a `dcmi_sim` fake Ascend host, with the chips read from the simulated
//! driver; the container itself reports what it sees. Spec delivery also runs on an Atlas 950 node, whose driver
//! answers only the DCMI V2 API. Needs root (mknod, runc, crun); CI runs as root.

mod ctk_support;

use ctk_support::bundle::{Bundle, OciRuntime};
use ctk_support::sim_host::{SimHost, MISSING_TOPOLOGY};
use ctk_support::{atlas_950_shared_nodes, ctk, describe, expected_npu_nodes, run, Probe, V1_SHARED_NODES};

#[test]
fn runtime_exec_gives_exactly_the_requested_chips_and_read_only_driver() {
    spec_delivery_gives_exactly_the_requested_chips(
        OciRuntime::Runc,
        "atlas-800t-a2",
        &V1_SHARED_NODES.map(str::to_owned),
    );
}

#[test]
fn runtime_exec_under_crun_gives_exactly_the_requested_chips() {
    spec_delivery_gives_exactly_the_requested_chips(
        OciRuntime::Crun,
        "atlas-800t-a2",
        &V1_SHARED_NODES.map(str::to_owned),
    );
}

/// DCMI V2: the chips come from the `dcmiv2_*` calls, the container gets no `devmm_svm` and every unified-bus node.
#[test]
fn runtime_exec_on_an_atlas_950_node_gives_exactly_the_requested_npus() {
    spec_delivery_gives_exactly_the_requested_chips(OciRuntime::Runc, "atlas-950-8", &atlas_950_shared_nodes(8));
}

/// Chips 3 and 1 (by physical id, one given as `npu-1`) of the `sample` host, whose containers get the `shared`
/// nodes besides their chips.
fn spec_delivery_gives_exactly_the_requested_chips(runtime: OciRuntime, sample: &str, shared: &[String]) {
    let host = SimHost::sample(sample);
    let bundle = Bundle::with_runtime(runtime, &["ASCEND_VISIBLE_DEVICES=3,npu-1"]);
    let output = bundle.run_through_ctk(&host, &[]);
    let context = describe(&output);
    assert!(output.status.success(), "container failed\n{context}");
    assert!(!context.contains("DCMI was not used"), "the chips must come from the driver\n{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, expected_npu_nodes(&[1, 3], shared), "{context}");
    probe.assert_driver_mounted_read_only(&host, &context);
    probe.assert_devices_allowed(&context);
    assert_eq!(probe.ld_library_path, "/usr/local/Ascend/driver/lib64/common:/usr/local/Ascend/driver/lib64/driver");
    assert_eq!(probe.rt_visible, "0,1", "{context}");
    // The mounts were delivered in the spec itself.
    let mounts = bundle.config()["mounts"].as_array().map(Vec::len).unwrap_or_default();
    assert!(mounts >= 12, "expected the runtime's 7 mounts plus 5 driver mounts, found {mounts}");
}

#[test]
fn later_containers_get_their_chips_from_the_cache_without_the_driver() {
    let host = SimHost::sample("atlas-800t-a2");
    let first = Bundle::new(&["ASCEND_VISIBLE_DEVICES=2"]);
    let output = first.run_through_ctk(&host, &[]);
    assert!(output.status.success(), "first container failed\n{}", describe(&output));
    assert!(host.chip_cache().is_file(), "the first start must remember DCMI's answer");

    // The simulator cannot initialise any more (its topology is gone from the environment): only
    // the cache can still name the chip type, which decides the shared nodes.
    let second = Bundle::new(&["ASCEND_VISIBLE_DEVICES=5"]);
    let mut command = ctk();
    host.with_driver(&mut command).env("DCMI_SIM_CONFIG", MISSING_TOPOLOGY);
    command.args(["runtime", "exec", "--host-root"]).arg(host.root()).arg("--");
    command.arg("--root").arg(second.state_root()).args(["run", "--bundle"]).arg(second.path()).arg(&second.id);
    let output = run(&mut command);
    let context = describe(&output);
    assert!(output.status.success(), "second container failed\n{context}");
    assert!(!context.contains("DCMI was not used") && !context.contains("warning"), "{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, ["davinci5", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");

    // With the cache off the same start has to ask the driver, which now fails: the /dev scan,
    // with its warning.
    let third = Bundle::new(&["ASCEND_VISIBLE_DEVICES=6"]);
    let mut command = ctk();
    host.with_driver(&mut command).env("DCMI_SIM_CONFIG", MISSING_TOPOLOGY);
    command.args(["runtime", "exec", "--chip-cache", "off", "--host-root"]).arg(host.root()).arg("--");
    command.arg("--root").arg(third.state_root()).args(["run", "--bundle"]).arg(third.path()).arg(&third.id);
    let output = run(&mut command);
    let context = describe(&output);
    assert!(output.status.success(), "third container failed\n{context}");
    assert!(context.contains("DCMI was not used"), "without the cache the driver must be asked\n{context}");
}

#[test]
fn hook_delivery_mounts_inside_the_container_namespace() {
    hook_delivery_mounts_inside_the_container(OciRuntime::Runc);
}

/// crun sends the hook another state (`status: created` and a `root` field) than runc.
#[test]
fn hook_delivery_under_crun_mounts_inside_the_container_namespace() {
    hook_delivery_mounts_inside_the_container(OciRuntime::Crun);
}

fn hook_delivery_mounts_inside_the_container(runtime: OciRuntime) {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::with_runtime(runtime, &["ASCEND_VISIBLE_DEVICES=0"]);
    let output = bundle.run_through_ctk(&host, &["--mount-delivery", "hook"]);
    let context = describe(&output);
    assert!(output.status.success(), "container failed\n{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, ["davinci0", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");
    probe.assert_driver_mounted_read_only(&host, &context);
    probe.assert_devices_allowed(&context);
    let config = bundle.config();
    let hooks = config["hooks"]["createRuntime"].as_array().cloned().unwrap_or_default();
    assert_eq!(hooks.len(), 1, "{config}");
    // The hook gets exactly this environment; nothing of the container's or the engine's.
    assert_eq!(hooks[0]["env"], serde_json::json!(["PATH=/usr/sbin:/usr/bin:/sbin:/bin"]), "{config}");
    let spec_mounts: Vec<String> = config["mounts"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|m| m["destination"].as_str().map(str::to_owned))
        .collect();
    assert!(!spec_mounts.iter().any(|m| m.starts_with("/usr/local")), "hook mode must not put mounts in the spec");
}

#[test]
fn hook_also_works_as_a_prestart_hook_under_plain_runc() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=1"]);
    let mut inject = ctk();
    host.with_driver(&mut inject);
    inject
        .args(["spec", "inject", "--mount-by-hook", "--bundle"])
        .arg(bundle.path())
        .arg("--host-root")
        .arg(host.root());
    let injected = run(&mut inject);
    assert!(injected.status.success(), "spec inject failed\n{}", describe(&injected));
    let mut config = bundle.config();
    let hook = config["hooks"]["createRuntime"].take();
    config["hooks"] = serde_json::json!({ "prestart": hook });
    std::fs::write(bundle.path().join("config.json"), config.to_string()).expect("write config.json");

    let output = bundle.run_plain();
    let context = describe(&output);
    assert!(output.status.success(), "container failed\n{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, ["davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");
    probe.assert_driver_mounted_read_only(&host, &context);
    probe.assert_devices_allowed(&context);
}

#[test]
fn request_for_an_absent_chip_fails_creation_with_our_message() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0,9"]);
    let before = std::fs::read_to_string(bundle.path().join("config.json")).expect("read");
    let output = bundle.run_through_ctk(&host, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success(), "creation must fail\n{}", describe(&output));
    assert!(stderr.contains("requests chip 9") && stderr.contains("chips present: 0,1"), "{stderr}");
    assert!(!bundle.container_exists(), "no container may be created");
    assert_eq!(before, std::fs::read_to_string(bundle.path().join("config.json")).expect("read"));
}

#[test]
fn bad_request_token_is_quoted() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0,gpu0"]);
    let output = bundle.run_through_ctk(&host, &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("invalid token \"gpu0\""), "{stderr}");
}

#[test]
fn container_without_a_request_runs_untouched() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&[]);
    let before = std::fs::read_to_string(bundle.path().join("config.json")).expect("read");
    let output = bundle.run_through_ctk(&host, &[]);
    let context = describe(&output);
    assert!(output.status.success(), "{context}");
    assert!(Probe::parse(&output.stdout).npu_devices.is_empty(), "{context}");
    assert_eq!(before, std::fs::read_to_string(bundle.path().join("config.json")).expect("read"));
}

#[test]
fn runtime_link_name_takes_all_arguments_for_runc_and_settings_from_the_environment() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=all"]);
    let link = bundle.path().join("ascend-runtime");
    std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_ascend-ctk"), &link).expect("runtime link");
    let mut command = std::process::Command::new(&link);
    host.with_driver(&mut command);
    command.env("ASCEND_CTK_HOST_ROOT", host.root()).arg("--root").arg(bundle.state_root());
    command.args(["run", "--bundle"]).arg(bundle.path()).arg(&bundle.id);
    let output = run(&mut command);
    let context = describe(&output);
    assert!(output.status.success(), "{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, ["davinci0", "davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");
    assert_eq!(probe.rt_visible, "0,1", "{context}");
}

/// The runtime hands the hook the mounts it resolved and points the spec at the hook's own binary beside ascend-ctk,
/// which mounts exactly those.
#[test]
fn hook_mode_runs_the_hook_binary_with_the_mounts_the_runtime_resolved() {
    let host = SimHost::sample("atlas-300i-pro");
    let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=0"]);
    let output = bundle.run_through_ctk(&host, &["--mount-delivery", "hook"]);
    let context = describe(&output);
    assert!(output.status.success(), "container failed\n{context}");
    Probe::parse(&output.stdout).assert_driver_mounted_read_only(&host, &context);
    let config = bundle.config();
    let hook = &config["hooks"]["createRuntime"][0];
    let expected = std::fs::canonicalize(env!("CARGO_BIN_EXE_ascend-ctk-hook")).expect("the hook binary");
    assert_eq!(hook["path"].as_str(), expected.to_str(), "{config}");
    let args: Vec<&str> = hook["args"].as_array().into_iter().flatten().filter_map(|a| a.as_str()).collect();
    let mut mounts: Vec<&str> = args.iter().filter_map(|a| a.strip_prefix("--mount=")).collect();
    mounts.sort_unstable();
    let mut expected_mounts = ctk_support::sim_host::BASE_MOUNTS;
    expected_mounts.sort_unstable();
    assert_eq!(mounts, expected_mounts, "{config}");
    assert!(!args.contains(&"hook") && !args.contains(&"--allow-link"), "{config}");
}

/// A hook entry without the mounts (written by an older runtime, or by hand) reads the request and the mount lists
/// itself, through `ascend-ctk hook` as through the hook's own binary.
#[test]
fn a_hook_entry_without_mounts_still_resolves_them_itself() {
    let host = SimHost::sample("atlas-300i-pro");
    for program in [env!("CARGO_BIN_EXE_ascend-ctk"), env!("CARGO_BIN_EXE_ascend-ctk-hook")] {
        let bundle = Bundle::new(&["ASCEND_VISIBLE_DEVICES=1"]);
        bundle.inject_by_hook(&host);
        let mut config = bundle.config();
        let mut args = vec![program.to_owned()];
        if program.ends_with("/ascend-ctk") {
            args.push("hook".to_owned());
        }
        args.extend(["--host-root".to_owned(), host.root().to_string_lossy().into_owned()]);
        config["hooks"]["createRuntime"][0]["path"] = serde_json::json!(program);
        config["hooks"]["createRuntime"][0]["args"] = serde_json::json!(args);
        std::fs::write(bundle.path().join("config.json"), config.to_string()).expect("write config.json");
        let output = bundle.run_plain();
        let context = format!("{program}\n{}", describe(&output));
        assert!(output.status.success(), "container failed\n{context}");
        let probe = Probe::parse(&output.stdout);
        assert_eq!(probe.npu_devices, ["davinci1", "davinci_manager", "devmm_svm", "hisi_hdc"], "{context}");
        probe.assert_driver_mounted_read_only(&host, &context);
    }
}
