//! The doctor in English and in Chinese: a failing run on a fake Atlas 800T A2 (laid out by dcmi-sim's `fake_host`)
//! printed in each language, compared with golden files under `tests/fixtures/` (`UPDATE_SNAPSHOTS=1 cargo test`
//! rewrites them), and the JSON's stable fields beside its localised ones.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_doctor::{render_json, render_text, run, DoctorOptions, DoctorReport, DriverConnector, Lang};
use ascend_doctor::{ClusterApi, ClusterPod, Error, NodeResources, Status};
use ascend_oci::runtime_config::RuntimeClassRef;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions, FakeSoftware};

/// Never reached on this host (its `libdcmi.so` is removed); a driver that does not load, were it asked.
struct NoDriver;

impl DriverConnector for NoDriver {
    fn connect(&self, library: &Path) -> ascend_doctor::Result<Arc<dyn DeviceManager>> {
        let source = ascend_dcmi::Error::LibraryNotFound { searched: vec![library.to_path_buf()] };
        Err(Error::Driver { library: library.to_path_buf(), source })
    }
}

/// A cluster that is not configured, with the same reason whichever features the crate is built with.
struct NoCluster;

impl ClusterApi for NoCluster {
    fn unavailable(&self) -> Option<String> {
        Some("no cluster configured for this test".to_owned())
    }
    fn kubelet_version(&self, _: &str) -> ascend_doctor::Result<Option<String>> {
        unreachable!("an unavailable cluster is not asked")
    }
    fn served_versions(&self, _: &str) -> ascend_doctor::Result<Option<Vec<String>>> {
        unreachable!("an unavailable cluster is not asked")
    }
    fn node_resources(&self, _: &str) -> ascend_doctor::Result<NodeResources> {
        unreachable!("an unavailable cluster is not asked")
    }
    fn pods(&self, _: Option<&str>) -> ascend_doctor::Result<Vec<ClusterPod>> {
        unreachable!("an unavailable cluster is not asked")
    }
    fn runtime_classes(&self) -> ascend_doctor::Result<Vec<RuntimeClassRef>> {
        unreachable!("an unavailable cluster is not asked")
    }
}

/// A broken node: no kernel headers, the driver unloaded and its `libdcmi.so` gone, device nodes that are plain
/// files, a firmware the driver refuses, a CANN that needs a newer driver interface, no container engine set up.
fn broken_host(dir: &Path) -> PathBuf {
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("topology");
    let library = dir.join("libdcmi.so");
    std::fs::write(&library, "not loaded by this test\n").expect("library file");
    let software = FakeSoftware {
        firmware_version: Some("7.8.0.1.100".to_owned()),
        required_ascendhal: "99.0.0".to_owned(),
        ..FakeSoftware::default()
    };
    let options =
        FakeHostOptions { library: Some(library), plain_device_nodes: true, software, ..FakeHostOptions::default() };
    let host = FakeHost::build(&topology, &dir.join("host"), &options).expect("fake host");
    for gone in ["lib/modules", "sys/module", "usr/local/Ascend/driver/lib64"] {
        let path = host.root.join(gone);
        if path.exists() {
            std::fs::remove_dir_all(&path).expect("remove");
        }
    }
    host.root
}

fn failing_run(lang: Lang) -> DoctorReport {
    let dir = tempfile::tempdir().expect("tempdir");
    let root = broken_host(dir.path());
    let mut options = DoctorOptions::for_root(&root, Duration::from_secs(1)).expect("options");
    options.kernel_release = "6.1.0-test".to_owned();
    options.node_name = Some("worker-1".to_owned());
    options.connector = Box::new(NoDriver);
    options.cluster_api = Some(Box::new(NoCluster));
    options.lang = lang;
    let mut report = run(&options);
    report.host_root = "<fake host>".to_owned();
    report
}

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Compares with the golden file, the CANN's architecture directory (`x86_64-linux`) written `<arch>-linux`.
fn assert_snapshot(name: &str, actual: &str) {
    let actual = &actual.replace(&format!("{}-linux", std::env::consts::ARCH), "<arch>-linux");
    let path = fixture(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::create_dir_all(path.parent().expect("parent")).expect("fixtures directory");
        std::fs::write(&path, actual).expect("write snapshot");
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|error| panic!("{}: {error}; run with UPDATE_SNAPSHOTS=1 to create it", path.display()));
    let line = expected.lines().zip(actual.lines()).position(|(want, got)| want != got);
    assert!(
        &expected == actual,
        "{} differs from the output (first at line {}):\n{actual}\n(run with UPDATE_SNAPSHOTS=1 to accept)",
        path.display(),
        line.map_or(expected.lines().count().min(actual.lines().count()), |l| l) + 1
    );
}

/// Whether `text` holds a CJK ideograph.
fn has_han(text: &str) -> bool {
    text.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c))
}

#[test]
fn a_failing_run_reads_in_english_and_in_chinese() {
    let english = failing_run(Lang::En);
    let chinese = failing_run(Lang::ZhCn);
    assert!(english.has_failures());
    for id in ["driver.loaded", "driver.libdcmi", "driver.firmware", "versions.cann_host"] {
        assert_eq!(english.check(id).expect(id).status, Status::Fail, "{id}");
    }
    assert_snapshot("doctor_failing_atlas-800t-a2.en.txt", &render_text(&english, "<fake host>"));
    assert_snapshot("doctor_failing_atlas-800t-a2.zh-CN.txt", &render_text(&chinese, "<fake host>"));
    assert_snapshot("doctor_failing_atlas-800t-a2.zh-CN.json", &render_json(&chinese).expect("JSON"));
}

#[test]
fn chinese_changes_only_the_localised_texts() {
    let english = failing_run(Lang::En);
    let chinese = failing_run(Lang::ZhCn);
    assert_eq!((english.lang.as_str(), chinese.lang.as_str()), ("en", "zh-CN"));
    assert_eq!(english.checks.len(), chinese.checks.len());
    for (en, zh) in english.checks.iter().zip(&chinese.checks) {
        // Ids, statuses, evidence, findings and the English texts are the same in both reports.
        assert_eq!((&en.id, en.status, &en.evidence, &en.findings), (&zh.id, zh.status, &zh.evidence, &zh.findings));
        assert_eq!((&en.title, &en.fix), (&zh.title, &zh.fix), "{}", en.id);
        assert_eq!((&en.title_localized, &en.fix_localized), (&en.title, &en.fix), "{}", en.id);
        assert!(has_han(&zh.title_localized) && !has_han(&zh.title), "{}: {:?}", zh.id, zh.title_localized);
        match (&zh.fix, &zh.fix_localized) {
            (Some(fix), Some(localized)) => {
                assert!(has_han(localized) && !has_han(fix), "{}: {localized:?}", zh.id);
                assert!(!zh.findings.is_empty(), "{}: a fix names its findings", zh.id);
            }
            (None, None) => assert!(zh.findings.is_empty(), "{}", zh.id),
            other => panic!("{}: fix and its translation disagree: {other:?}", zh.id),
        }
    }
    // Every failure of this host has its fix in Chinese: the operator can act on each one.
    let failed: Vec<&str> = chinese
        .checks
        .iter()
        .filter(|c| c.status == Status::Fail && c.fix_localized.is_none())
        .map(|c| c.id.as_str())
        .collect();
    assert!(failed.is_empty(), "failures without a fix: {failed:?}");
}

#[test]
fn the_json_keeps_its_stable_fields_and_round_trips() {
    let chinese = failing_run(Lang::ZhCn);
    let text = render_json(&chinese).expect("JSON");
    let value: serde_json::Value = serde_json::from_str(&text).expect("parses");
    assert_eq!(value["schema_version"], 2);
    assert_eq!(value["lang"], "zh-CN");
    let loaded =
        &value["checks"].as_array().expect("checks").iter().find(|c| c["id"] == "driver.loaded").expect("check");
    assert_eq!(loaded["title"], "Driver kernel modules loaded");
    assert_eq!(loaded["title_localized"], "驱动内核模块已加载");
    assert_eq!(loaded["findings"], serde_json::json!(["driver.loaded.not_loaded"]));
    assert!(loaded["fix"].as_str().expect("fix").starts_with("install the Ascend driver and firmware"));
    assert!(loaded["fix_localized"].as_str().expect("fix").starts_with("安装昇腾驱动和固件"));
    let back: DoctorReport = serde_json::from_str(&text).expect("reads back");
    assert_eq!(back.language(), Lang::ZhCn);
    assert_eq!(
        back.checks.iter().map(|c| &c.fix_localized).collect::<Vec<_>>(),
        chinese.checks.iter().map(|c| &c.fix_localized).collect::<Vec<_>>()
    );
}
