//! Label computation over `MockDeviceManager`: the values per chip type, mixed nodes, the product fallback, what
//! happens when the driver cannot be read, and the patch against a node's current labels.

use std::collections::BTreeMap;

mod node_labels_support;

use ascend_dcmi::{Error, LogicId, MockDeviceManager};
use ascend_kube::node_labels::{
    LabelPatch, NodeLabels, ACCELERATOR_LABEL, CHIP_COUNT_LABEL, CHIP_NAME_LABEL, CHIP_TYPE_LABEL,
    DRIVER_VERSION_LABEL, HUAWEI_DRIVER_VERSION_LABEL, INFER_CARD_LABEL, MANAGED_LABELS, MIXED, PRODUCT_LABEL,
    SERVER_TYPE_LABEL,
};
use node_labels_support::{chip, driver};

fn label_map(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs.iter().map(|(key, value)| ((*key).to_owned(), (*value).to_owned())).collect()
}

fn as_map(labels: &NodeLabels) -> BTreeMap<String, String> {
    labels.iter().map(|(key, value)| (key.to_owned(), value.to_owned())).collect()
}

#[test]
fn a_310p_node_gets_every_label() {
    let chips = (0..4).map(|logic| chip(logic, "310P3", Some("Atlas 300I Duo"), Some("ignored"))).collect();
    let labels = NodeLabels::read(&driver(chips, "24.1.rc2")).expect("labels");
    assert_eq!(
        as_map(&labels),
        label_map(&[
            (CHIP_TYPE_LABEL, "310P"),
            (CHIP_COUNT_LABEL, "4"),
            (DRIVER_VERSION_LABEL, "24.1.rc2"),
            (PRODUCT_LABEL, "Atlas-300I-Duo"),
            (ACCELERATOR_LABEL, "huawei-Ascend310P"),
            (CHIP_NAME_LABEL, "310P3"),
            (HUAWEI_DRIVER_VERSION_LABEL, "24.1.rc2"),
            (INFER_CARD_LABEL, "card-300i-duo"),
        ])
    );
}

#[test]
fn a_910b_node_takes_its_product_from_the_electronic_label() {
    let chips = (0..8).map(|logic| chip(logic, "910B3", None, Some("Atlas 800T A2"))).collect();
    let labels = NodeLabels::read(&driver(chips, "24.1.RC2")).expect("labels");
    assert_eq!(labels.get(CHIP_TYPE_LABEL), Some("910B"));
    assert_eq!(labels.get(CHIP_COUNT_LABEL), Some("8"));
    assert_eq!(labels.get(PRODUCT_LABEL), Some("Atlas-800T-A2"));
    assert_eq!(labels.get(ACCELERATOR_LABEL), Some("huawei-Ascend910"), "Huawei's value for the whole 910 family");
    assert_eq!(labels.get(CHIP_NAME_LABEL), Some("910B3"));
}

#[test]
fn a_node_without_any_product_string_has_no_product_label() {
    let chips = vec![chip(0, "910B3", None, None), chip(1, "910B3", Some("  "), Some(""))];
    let labels = NodeLabels::read(&driver(chips, "24.1.rc2")).expect("labels");
    assert_eq!(labels.get(PRODUCT_LABEL), None);
    assert_eq!(labels.get(INFER_CARD_LABEL), None, "not Atlas 300I Duo cards");
    assert_eq!(labels.len(), 6);
}

#[test]
fn a_mixed_node_is_mixed_and_drops_the_huawei_labels_that_need_one_value() {
    let chips = vec![
        chip(0, "310P3", Some("Atlas 300I Duo"), None),
        chip(1, "310P3", Some("Atlas 300I Duo"), None),
        chip(2, "910B3", None, Some("Atlas 300T A2")),
    ];
    let labels = NodeLabels::read(&driver(chips, "24.1.rc2")).expect("labels");
    assert_eq!(labels.get(CHIP_TYPE_LABEL), Some(MIXED));
    assert_eq!(labels.get(CHIP_COUNT_LABEL), Some("3"));
    assert_eq!(labels.get(PRODUCT_LABEL), Some(MIXED));
    assert_eq!(labels.get(ACCELERATOR_LABEL), None);
    assert_eq!(labels.get(CHIP_NAME_LABEL), None);
    assert_eq!(labels.get(DRIVER_VERSION_LABEL), Some("24.1.rc2"));
}

#[test]
fn chips_of_one_accelerator_family_keep_the_accelerator_label() {
    // 910 and 910B differ as chip types (two pools) but are one Huawei resource family.
    let chips = vec![chip(0, "910A", None, None), chip(1, "910B4", None, None)];
    let labels = NodeLabels::read(&driver(chips, "23.0.3")).expect("labels");
    assert_eq!(labels.get(CHIP_TYPE_LABEL), Some(MIXED));
    assert_eq!(labels.get(ACCELERATOR_LABEL), Some("huawei-Ascend910"));
    assert_eq!(labels.get(CHIP_NAME_LABEL), None);
}

#[test]
fn an_unsupported_chip_is_unknown() {
    let labels = NodeLabels::read(&driver(vec![chip(0, "710", None, None)], "1.0")).expect("labels");
    assert_eq!(labels.get(CHIP_TYPE_LABEL), Some("unknown"));
    assert_eq!(labels.get(ACCELERATOR_LABEL), None);
    assert_eq!(labels.get(CHIP_NAME_LABEL), Some("710"));
}

#[test]
fn an_odd_driver_version_becomes_a_valid_label_value() {
    let raw = "Ascend HDK 24.1.RC2 (build 2024/07/01) for aarch64 with a very long suffix that goes on";
    let labels = NodeLabels::read(&driver(vec![chip(0, "310P3", None, None)], raw)).expect("labels");
    let value = labels.get(DRIVER_VERSION_LABEL).expect("a driver version");
    assert!(value.starts_with("Ascend-HDK-24.1.RC2-build-2024-07-01-for-aarch64"), "{value}");
    assert!(value.len() <= 63, "{} characters", value.len());
    assert!(value.chars().all(|c| c.is_ascii_alphanumeric() || "._-".contains(c)), "{value}");
    assert!(value.ends_with(|c: char| c.is_ascii_alphanumeric()), "{value}");
}

#[test]
fn no_chips_is_an_error_not_an_empty_label_set() {
    let error = NodeLabels::read(&driver(Vec::new(), "24.1.rc2")).expect_err("no chips");
    assert!(matches!(error, ascend_kube::Error::NoChips));
    assert!(error.to_string().contains("left unchanged"), "{error}");
}

#[test]
fn a_chip_that_cannot_be_read_fails_the_whole_set_and_is_named() {
    let mut mock = MockDeviceManager::new();
    let ids = vec![chip(0, "310P3", None, None).ids, chip(1, "310P3", None, None).ids];
    mock.expect_chips().returning(move || Ok(ids.clone()));
    mock.expect_identity().returning(|logic| {
        if logic == LogicId(1) {
            Err(Error::NoSuchChip("logic 1".into()))
        } else {
            Ok(chip(0, "310P3", None, None))
        }
    });
    mock.expect_driver_version().returning(|| Ok("24.1.rc2".into()));
    let error = NodeLabels::read(&mock).expect_err("chip 1 fails");
    assert!(error.to_string().contains("identity of chip logic 1 (phy 11)"), "{error}");
}

#[test]
fn a_failing_chip_list_is_reported() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Err(Error::NoSuchChip("all".into())));
    let error = NodeLabels::read(&mock).expect_err("no list");
    assert!(error.to_string().starts_with("reading the chip list for the node labels"), "{error}");
}

#[test]
fn the_patch_sets_differences_removes_stale_keys_and_ignores_foreign_labels() {
    let desired = NodeLabels::read(&driver(vec![chip(0, "910B3", None, None)], "24.1.rc2")).expect("labels");
    let current = label_map(&[
        ("kubernetes.io/hostname", "worker-1"),
        ("ascend.huawei.com/pool-owner", "team-a"),
        ("accelerator", "huawei-Ascend310P"),
        (CHIP_TYPE_LABEL, "910B"),
        (PRODUCT_LABEL, "Atlas-300I-Duo"),
        (SERVER_TYPE_LABEL, "Ascend310P-10-dual"),
    ]);
    let patch = desired.patch_against(&current);
    let changes: Vec<(&str, Option<&str>)> = patch.changes().collect();
    assert_eq!(
        changes,
        [
            (ACCELERATOR_LABEL, Some("huawei-Ascend910")),
            (CHIP_COUNT_LABEL, Some("1")),
            (DRIVER_VERSION_LABEL, Some("24.1.rc2")),
            (PRODUCT_LABEL, None),
            (HUAWEI_DRIVER_VERSION_LABEL, Some("24.1.rc2")),
            (CHIP_NAME_LABEL, Some("910B3")),
        ]
    );
    assert_eq!(
        patch.to_merge_patch(),
        serde_json::json!({"metadata": {"labels": {
            "accelerator": "huawei-Ascend910",
            "ascend.huawei.com/chip-count": "1",
            "ascend.huawei.com/driver-version": "24.1.rc2",
            "ascend.huawei.com/product": null,
            "huawei.com/driver.version": "24.1.rc2",
            "node.kubernetes.io/npu.chip.name": "910B3",
        }}})
    );
    assert!(changes.iter().all(|(key, _)| MANAGED_LABELS.contains(key)));

    // Once applied, the same labels produce no patch: the labeller is idempotent.
    let mut applied = current.clone();
    for (key, value) in patch.changes() {
        match value {
            Some(value) => applied.insert(key.to_owned(), value.to_owned()),
            None => applied.remove(key),
        };
    }
    assert_eq!(desired.patch_against(&applied), LabelPatch::default());
    assert_eq!(applied.get("ascend.huawei.com/pool-owner").map(String::as_str), Some("team-a"));
}
