//! The device-info contract with Volcano's Ascend plugin: the JSON against a golden file, decoded by a reader that
//! knows only the field names and types Volcano's plugin declares, and the ConfigMap writer against the fake API
//! server with a real kube-rs client.
//!
//! `tests/fixtures/device-info-910b.json` was written from the facts (Huawei's `NodeDeviceInfoCache` and
//! `DeviceFault` as Go's `json.Marshal` prints them), with its `CheckCode` computed outside this code base (Python's
//! `hashlib.sha256` over the compact JSON of `DeviceInfo`), so the test does not check our encoder against itself.

use std::collections::BTreeMap;
use std::time::Duration;

use ascend_kube::device_info::{
    check_code, config_map_name, device_info_cfg, DeviceFault, DeviceList, FamilyDevices, KeySet, Placement,
    CONSUMER_LABEL, DEVICE_INFO_KEY, DEVICE_INFO_NAMESPACE, MANUALLY_SEPARATE_NPU_KEY,
};
use ascend_kube::device_info::{DeviceInfoPublisher, Published, PublisherConfig};
use ascend_kube::pod_assignment::{PodAssignments, CONSUMED_PREDICATE_TIME, PREDICATE_TIME_ANNOTATION};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams};
use serde::Deserialize;
use serde_json::json;

const GOLDEN: &str = include_str!("fixtures/device-info-910b.json");

/// Volcano's `NodeDeviceInfoWithDevPlugin` (ascend-for-volcano `common/k8s/type.go`): these fields and types only.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct VolcanoDeviceInfo {
    DeviceInfo: VolcanoNodeDeviceInfo,
    CheckCode: String,
    #[serde(default)]
    SuperPodID: i32,
    #[serde(default)]
    ServerIndex: i32,
    #[serde(default)]
    RackID: i32,
}

/// Volcano's `NodeDeviceInfo`.
#[derive(Debug, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case)]
struct VolcanoNodeDeviceInfo {
    DeviceList: BTreeMap<String, String>,
    UpdateTime: i64,
}

/// Huawei's `DeviceFault` JSON tags, the `-Fault` entries.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultEntry {
    fault_type: String,
    npu_name: String,
    large_model_fault_level: String,
    fault_level: String,
    fault_handling: String,
    fault_code: String,
    fault_time_and_level_map: BTreeMap<String, FaultTimeAndLevel>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FaultTimeAndLevel {
    fault_time: i64,
    fault_level: String,
}

fn names(list: &[u32]) -> std::collections::BTreeSet<String> {
    list.iter().map(|phy| format!("Ascend910-{phy}")).collect()
}

/// The node of the golden file: chips 3 (fault) and 5 (separated by hand) unhealthy, 7 held by a pod.
fn golden_list() -> DeviceList {
    let devices = FamilyDevices {
        free: names(&[0, 1, 2, 4, 6]),
        unhealthy: names(&[3, 5]),
        faults: vec![
            DeviceFault::chip("Ascend910-3", "SeparateNPU", &[(0x80E1_8402, 1_764_561_000_000, "SeparateNPU".into())]),
            DeviceFault::chip("Ascend910-5", "ManuallySeparateNPU", &[]),
        ],
        ..FamilyDevices::default()
    };
    let mut list = DeviceList::new();
    list.add_family("huawei.com/Ascend910", KeySet::Training, &devices);
    list
}

fn sha256_hex(text: &str) -> String {
    ring::digest::digest(&ring::digest::SHA256, text.as_bytes()).as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn the_document_is_byte_for_byte_the_golden_file() {
    assert_eq!(device_info_cfg(&golden_list(), 1_764_561_600, Placement::default()), GOLDEN.trim_end());
}

#[test]
fn volcanos_reader_decodes_it_and_the_check_code_matches() {
    let decoded: VolcanoDeviceInfo = serde_json::from_str(GOLDEN).expect("Volcano's struct decodes the document");
    assert_eq!(decoded.DeviceInfo.UpdateTime, 1_764_561_600);
    assert_eq!((decoded.SuperPodID, decoded.ServerIndex, decoded.RackID), (-1, -1, 0));
    let list = &decoded.DeviceInfo.DeviceList;
    assert_eq!(list["huawei.com/Ascend910"], "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-4,Ascend910-6");
    assert_eq!(list["huawei.com/Ascend910-Unhealthy"], "Ascend910-3,Ascend910-5");
    assert_eq!(list["huawei.com/Ascend910-NetworkUnhealthy"], "");
    assert_eq!(list["huawei.com/Ascend910-Recovering"], "");
    let faults: Vec<FaultEntry> = serde_json::from_str(&list["huawei.com/Ascend910-Fault"]).expect("fault list");
    assert_eq!(faults.len(), 2);
    assert_eq!(
        (faults[0].fault_type.as_str(), faults[0].npu_name.as_str(), faults[0].fault_code.as_str()),
        ("CardUnhealthy", "Ascend910-3", "80E18402")
    );
    assert_eq!(faults[0].large_model_fault_level, faults[0].fault_handling);
    assert_eq!(faults[0].fault_time_and_level_map["80E18402"].fault_time, 1_764_561_000_000);
    assert_eq!(faults[0].fault_time_and_level_map["80E18402"].fault_level, "SeparateNPU");
    assert_eq!(faults[1].fault_level, "ManuallySeparateNPU");
    // What older Volcano plugins check (`checkNodeDeviceInfo`): the hash of the re-encoded DeviceInfo.
    let reencoded = serde_json::to_string(&decoded.DeviceInfo).expect("encodes");
    assert_eq!(decoded.CheckCode, sha256_hex(&reencoded));
    assert_eq!(decoded.CheckCode, check_code(&golden_list(), 1_764_561_600));
}

fn stored(server: &FakeApiServer) -> ConfigMap {
    server.get::<ConfigMap>(Some(DEVICE_INFO_NAMESPACE), &config_map_name("worker-1")).expect("the ConfigMap exists")
}

fn update_time(map: &ConfigMap) -> i64 {
    let data = map.data.as_ref().expect("data");
    let decoded: VolcanoDeviceInfo = serde_json::from_str(&data[DEVICE_INFO_KEY]).expect("decodes");
    decoded.DeviceInfo.UpdateTime
}

#[tokio::test]
async fn the_publisher_writes_at_volcanos_cadence_and_keeps_the_operators_key() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let config = PublisherConfig { min_interval: Duration::from_millis(400), ..PublisherConfig::default() };
    let mut publisher = DeviceInfoPublisher::new(server.client(), "worker-1", config).expect("valid node");
    let first = golden_list();
    let Published::Written(t1) = publisher.publish(&first).await.expect("first write") else { panic!("written") };
    let created = stored(&server);
    assert_eq!(created.metadata.labels.as_ref().and_then(|l| l.get(CONSUMER_LABEL)).map(String::as_str), Some("true"));
    assert_eq!(created.data.as_ref().map(|d| d[MANUALLY_SEPARATE_NPU_KEY].as_str()), Some(""));
    assert_eq!(update_time(&created), t1);
    assert_eq!(publisher.publish(&first).await.expect("same list"), Published::Unchanged);

    // An operator separates a chip by hand; the writer reads it and never overwrites it.
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), DEVICE_INFO_NAMESPACE);
    let edit = json!({"data": {MANUALLY_SEPARATE_NPU_KEY: "Ascend910-6, bogus"}});
    maps.patch(&config_map_name("worker-1"), &PatchParams::default(), &Patch::Merge(&edit))
        .await
        .expect("kubectl edit");
    // The publisher reads the key from its watch of the ConfigMap: the edit arrives as a watch event.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while publisher.manually_separated().await.expect("read") != names(&[6]) && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(publisher.manually_separated().await.expect("read"), names(&[6]));

    let mut second = DeviceList::new();
    second.add_family(
        "huawei.com/Ascend910",
        KeySet::Training,
        &FamilyDevices { free: names(&[0]), ..FamilyDevices::default() },
    );
    match publisher.publish(&second).await.expect("rapid change") {
        Published::TooSoon(after) => assert!(after <= Duration::from_millis(400)),
        other => panic!("a second write within the minimum interval: {other:?}"),
    }
    tokio::time::sleep(Duration::from_millis(450)).await;
    let Published::Written(t2) = publisher.publish(&second).await.expect("second write") else { panic!("written") };
    assert!(t2 > t1, "UpdateTime {t2} after {t1}");
    let rewritten = stored(&server);
    assert_eq!(update_time(&rewritten), t2);
    assert_eq!(rewritten.data.as_ref().map(|d| d[MANUALLY_SEPARATE_NPU_KEY].as_str()), Some("Ascend910-6, bogus"));
}

#[tokio::test]
async fn a_publisher_that_cannot_write_says_so_and_writes_next_time() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut publisher =
        DeviceInfoPublisher::new(server.client(), "worker-1", PublisherConfig::default()).expect("node");
    // The write fails (the watch of the map, which lists configmaps too, is not the subject here).
    server.inject(fake_apiserver::FaultRule::status(500).method("PATCH").path_contains("/configmaps").times(1));
    let error = publisher.publish(&golden_list()).await.expect_err("500");
    assert!(error.to_string().contains("configmaps/kube-system/mindx-dl-deviceinfo-worker-1"), "{error}");
    assert!(matches!(publisher.publish(&golden_list()).await, Ok(Published::Written(_))));
}

fn pod(name: &str, node: &str, predicate_time: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "jobs", "annotations": {
            "huawei.com/Ascend910": "Ascend910-0", PREDICATE_TIME_ANNOTATION: predicate_time}},
        "spec": {"nodeName": node, "containers": [{"name": "train", "image": "x",
            "resources": {"limits": {"huawei.com/Ascend910": "1"}}}]},
        "status": {"phase": "Pending"},
    })
}

#[tokio::test]
async fn pods_are_read_per_node_and_a_stale_mark_conflicts() {
    let server = FakeApiServer::start().await.expect("fake API server");
    server.seed(pod("mine", "worker-1", "100"));
    server.seed(pod("other-node", "worker-2", "50"));
    let assignments = PodAssignments::new(server.client(), "worker-1", Duration::from_secs(5)).expect("node");
    let pods = assignments.list().await.expect("list");
    assert_eq!(pods.iter().map(|p| p.name.as_str()).collect::<Vec<_>>(), ["mine"]);
    assert_eq!(pods[0].requests.get("huawei.com/Ascend910"), Some(&1));
    let kubelet = ["Ascend910-7".to_owned()];
    let real = ["Ascend910-0".to_owned()];
    assignments.mark_served(&pods[0], &kubelet, &real).await.expect("first mark");
    let again = assignments.mark_served(&pods[0], &kubelet, &real).await.expect_err("stale resourceVersion");
    assert!(again.is_conflict(), "{again}");
    let marked: Pod = server.get(Some("jobs"), "mine").expect("pod");
    let annotations = marked.metadata.annotations.expect("annotations");
    assert_eq!(annotations[PREDICATE_TIME_ANNOTATION], CONSUMED_PREDICATE_TIME);
    assert_eq!(annotations["huawei.com/kltDev"], "Ascend910-7");
    assert_eq!(annotations["huawei.com/AscendReal"], "Ascend910-0");
}
