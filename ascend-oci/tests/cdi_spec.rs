//! CDI spec generation on a fake host: golden output, version choice, atomic write, listing.

mod common;

use std::path::PathBuf;

use ascend_oci::cdi::{generate_spec, list_device_names, read_spec, write_spec, GenerateOptions};
use ascend_oci::HostChips;
use ascend_oci::HostRoot;
use ascend_oci::InjectionConfig;
use common::fake_host;
use common::golden::assert_golden;

fn options() -> GenerateOptions {
    GenerateOptions {
        kind: "huawei.com/npu".to_owned(),
        mount_lists: vec!["base".to_owned()],
        injection: InjectionConfig::default(),
        allow_link: false,
        no_driver: false,
    }
}

#[test]
fn spec_for_all_chips_matches_golden() {
    let (_dir, host) = fake_host(&[0, 1, 3]);
    let root = HostRoot::open(&host.root).expect("root");
    let chips = HostChips::scan(&root, None).expect("scan");
    let spec = generate_spec(&root, &chips, &options()).expect("generate");
    // Numeric names and host paths need 0.5.0, the newest version podman 4.3 accepts.
    assert_eq!(spec.cdi_version, "0.5.0");
    let names: Vec<&str> = spec.devices.iter().map(|d| d.name.as_str()).collect();
    assert_eq!(names, ["0", "1", "3", "all"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let path = write_spec(dir.path(), &spec).expect("write");
    assert_eq!(path.file_name().and_then(|n| n.to_str()), Some("huawei.com-npu.json"));
    let text = std::fs::read_to_string(&path).expect("read");
    let root_text = host.root.to_string_lossy().into_owned();
    assert_golden("cdi/huawei.com-npu.json", &text.replace(&root_text, "<host-root>"));
    assert_eq!(read_spec(&path).expect("read back"), spec);
    let leftovers: Vec<PathBuf> = std::fs::read_dir(dir.path())
        .expect("list")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p != &path)
        .collect();
    assert!(leftovers.is_empty(), "atomic write left {leftovers:?}");

    let listed = list_device_names(&[dir.path().to_path_buf(), PathBuf::from("/nonexistent")]).expect("list");
    assert_eq!(listed, ["huawei.com/npu=0", "huawei.com/npu=1", "huawei.com/npu=3", "huawei.com/npu=all"]);
}

#[test]
fn nodrv_spec_has_nodes_only_and_unknown_fields_are_refused() {
    let (_dir, host) = fake_host(&[0]);
    let root = HostRoot::open(&host.root).expect("root");
    let chips = HostChips::scan(&root, None).expect("scan");
    let spec = generate_spec(&root, &chips, &GenerateOptions { no_driver: true, ..options() }).expect("generate");
    assert!(spec.container_edits.mounts.is_empty());
    let shared: Vec<&str> = spec.container_edits.device_nodes.iter().map(|node| node.path.as_str()).collect();
    assert_eq!(shared, ["/dev/dvpp_cmdlist", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]);

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("bad.json");
    std::fs::write(&path, r#"{"cdiVersion":"0.5.0","kind":"huawei.com/npu","devices":[],"surprise":1}"#)
        .expect("write");
    let err = read_spec(&path).expect_err("unknown field");
    assert!(err.to_string().contains("surprise"), "{err}");
}

#[test]
fn host_without_chips_is_an_error() {
    let (_dir, host) = fake_host(&[]);
    let root = HostRoot::open(&host.root).expect("root");
    let chips = HostChips::scan(&root, None).expect("scan");
    let err = generate_spec(&root, &chips, &options()).expect_err("no chips");
    assert!(err.to_string().contains("no davinci"), "{err}");
}
