//! Injection into a real runc-generated `config.json` on a fake host: golden output,
//! idempotency, absent chips, options.

mod common;

use std::path::Path;

use ascend_oci::DeviceRequest;
use ascend_oci::Error;
use ascend_oci::HostChips;
use ascend_oci::HostRoot;
use ascend_oci::{apply_plan, request_from_spec, InjectionConfig, InjectionPlan, MountDelivery};
use ascend_oci::{load_spec, save_spec};
use ascend_oci::{prepare_bundle, PrepareOptions};
use common::fake_host;
use common::golden::{assert_golden, fixture_path, read_fixture};
use dcmi_sim::fake_host::{make_character_device, FakeHost, DAVINCI_MAJOR};

fn bundle_with_env(env: &[&str]) -> tempfile::TempDir {
    let bundle = tempfile::tempdir().expect("bundle dir");
    let mut spec: serde_json::Value =
        serde_json::from_str(&read_fixture("runc-1.1.5-spec.json")).expect("fixture json");
    let list = spec["process"]["env"].as_array_mut().expect("env array");
    list.extend(env.iter().map(|e| serde_json::Value::String((*e).to_owned())));
    std::fs::write(bundle.path().join("config.json"), spec.to_string()).expect("write config.json");
    bundle
}

fn options(host: &FakeHost) -> PrepareOptions {
    PrepareOptions {
        host_root: host.root.clone(),
        injection: InjectionConfig::default(),
        chip_type: None,
        cdi_kind: "huawei.com/npu".to_owned(),
        delivery: MountDelivery::InSpec,
        chip_cache: None,
    }
}

fn normalised(host: &FakeHost, text: &str) -> String {
    text.replace(&host.root.to_string_lossy().into_owned(), "<host-root>")
}

#[test]
fn runc_spec_injection_matches_golden_and_is_idempotent() {
    let (_dir, host) = fake_host(&[0, 1, 2, 3]);
    let bundle = bundle_with_env(&["ASCEND_VISIBLE_DEVICES=3,Ascend910-1"]);
    let outcome = prepare_bundle(bundle.path(), &options(&host)).expect("prepare");
    assert_eq!(outcome.chips, [1, 3]);
    let config = bundle.path().join("config.json");
    let once = std::fs::read_to_string(&config).expect("read");
    let pretty =
        serde_json::to_string_pretty(&serde_json::from_str::<serde_json::Value>(&once).expect("json")).expect("pretty");
    assert_golden("runc-1.1.5-spec.injected.json", &(normalised(&host, &pretty) + "\n"));

    prepare_bundle(bundle.path(), &options(&host)).expect("prepare again");
    assert_eq!(std::fs::read_to_string(&config).expect("read"), once, "second injection changed the spec");
}

#[test]
fn request_for_an_absent_chip_names_it() {
    let (_dir, host) = fake_host(&[0, 1]);
    let bundle = bundle_with_env(&["ASCEND_VISIBLE_DEVICES=0,7"]);
    let before = std::fs::read_to_string(bundle.path().join("config.json")).expect("read");
    let err = prepare_bundle(bundle.path(), &options(&host)).expect_err("chip 7 is absent");
    let message = err.to_string();
    assert!(matches!(err, Error::ChipAbsent { node_id: 7, .. }), "{message}");
    assert!(message.contains("davinci7") && message.contains("chips present: 0,1"), "{message}");
    let after = std::fs::read_to_string(bundle.path().join("config.json")).expect("read");
    assert_eq!(before, after, "a failed injection must leave config.json untouched");
}

#[test]
fn no_request_leaves_the_file_byte_for_byte() {
    let (_dir, host) = fake_host(&[0]);
    let bundle = bundle_with_env(&["ASCEND_VISIBLE_DEVICES=void"]);
    let before = std::fs::read_to_string(bundle.path().join("config.json")).expect("read");
    let outcome = prepare_bundle(bundle.path(), &options(&host)).expect("prepare");
    assert!(outcome.chips.is_empty());
    assert_eq!(before, std::fs::read_to_string(bundle.path().join("config.json")).expect("read"));
}

#[test]
fn all_nodrv_and_virtual() {
    let (_dir, host) = fake_host(&[0, 2]);
    assert!(make_character_device(&host.path("/dev/vdavinci100"), DAVINCI_MAJOR, 100), "mknod vdavinci100");
    let root = HostRoot::open(&host.root).expect("root");
    let chips = HostChips::scan(&root, None).expect("scan");
    assert_eq!(chips.node_ids().into_iter().collect::<Vec<_>>(), [0, 2]);

    let request =
        DeviceRequest::from_env(["ASCEND_VISIBLE_DEVICES=all", "ASCEND_RUNTIME_OPTIONS=NODRV"]).expect("request");
    let plan = InjectionPlan::build(&root, &chips, &request, &InjectionConfig::default()).expect("plan");
    assert_eq!(plan.chips, [0, 2]);
    assert!(plan.mounts.is_empty(), "NODRV must not mount driver files");
    assert!(!plan.env.iter().any(|(k, _)| k == "LD_LIBRARY_PATH"));

    let request =
        DeviceRequest::from_env(["ASCEND_VISIBLE_DEVICES=100", "ASCEND_RUNTIME_OPTIONS=VIRTUAL"]).expect("request");
    let plan = InjectionPlan::build(&root, &chips, &request, &InjectionConfig::default()).expect("virtual plan");
    let node = &plan.device_nodes[0];
    assert_eq!(node.container_path, Path::new("/dev/davinci100"));
    assert_eq!(node.host_path, host.path("/dev/vdavinci100"));
    assert_eq!((node.major, node.minor), (DAVINCI_MAJOR, 100));
}

#[test]
fn hook_delivery_adds_one_create_runtime_hook() {
    let (_dir, host) = fake_host(&[0]);
    let bundle = bundle_with_env(&["ASCEND_VISIBLE_DEVICES=0"]);
    let config = bundle.path().join("config.json");
    let mut spec = load_spec(&config).expect("load");
    let root = HostRoot::open(&host.root).expect("root");
    let chips = HostChips::scan(&root, None).expect("scan");
    let request = request_from_spec(&spec, "huawei.com/npu").expect("request");
    let plan = InjectionPlan::build(&root, &chips, &request, &InjectionConfig::default()).expect("plan");
    let mut hook = oci_spec::runtime::Hook::default();
    hook.set_path("/usr/bin/ascend-ctk".into());
    hook.set_args(Some(vec!["ascend-ctk".to_owned(), "hook".to_owned()]));
    let delivery = MountDelivery::ByHook(hook);
    apply_plan(&mut spec, &plan, &delivery).expect("apply");
    apply_plan(&mut spec, &plan, &delivery).expect("apply again");
    save_spec(&config, &spec).expect("save");
    let spec = load_spec(&config).expect("reload");
    let hooks = spec.hooks().as_ref().and_then(|h| h.create_runtime().clone()).unwrap_or_default();
    assert_eq!(hooks.len(), 1);
    let mounts = spec.mounts().clone().unwrap_or_default();
    assert!(
        !mounts.iter().any(|m| m.destination().starts_with("/usr/local/Ascend")),
        "hook mode keeps mounts out of the spec"
    );
    assert!(fixture_path("runc-1.1.5-spec.json").exists());
}
