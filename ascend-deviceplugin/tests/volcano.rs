//! Volcano mode end to end on a simulated eight-chip 910B node: the plugin (fake kubelet, scripted chips) writes
//! the device-info ConfigMap to the fake API server through a real kube-rs client, follows faults and the
//! operator's `ManuallySeparateNPU`, and serves each pod the chips Volcano's annotation names.

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use ascend_dcmi::FaultCode;
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest, ContainerAllocateResponse};
use ascend_kube::device_info::{config_map_name, DEVICE_INFO_KEY, DEVICE_INFO_NAMESPACE, MANUALLY_SEPARATE_NPU_KEY};
use ascend_kube::pod_assignment::{
    CONSUMED_PREDICATE_TIME, KUBELET_DEVICES_ANNOTATION, PREDICATE_TIME_ANNOTATION, REAL_DEVICES_ANNOTATION,
};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, Patch, PatchParams};
use serde::Deserialize;
use serde_json::json;
use support::{health_of, FakeHost, Harness, NODE};
use tonic::Code;

const ASCEND910: &str = "huawei.com/Ascend910";

/// What Volcano's plugin decodes (ascend-for-volcano `NodeDeviceInfoWithDevPlugin`).
#[derive(Debug, Deserialize)]
#[allow(non_snake_case)]
struct DeviceInfo {
    DeviceInfo: NodeDeviceInfo,
}

#[derive(Debug, Deserialize)]
#[allow(non_snake_case)]
struct NodeDeviceInfo {
    DeviceList: BTreeMap<String, String>,
    UpdateTime: i64,
}

fn device_info(server: &FakeApiServer) -> Option<NodeDeviceInfo> {
    let map: ConfigMap = server.get(Some(DEVICE_INFO_NAMESPACE), &config_map_name(NODE))?;
    let text = map.data?.remove(DEVICE_INFO_KEY)?;
    Some(serde_json::from_str::<DeviceInfo>(&text).expect("Volcano's struct decodes DeviceInfoCfg").DeviceInfo)
}

async fn wait_for_map(server: &FakeApiServer, what: &str, within: Duration, done: impl Fn(&NodeDeviceInfo) -> bool) {
    let deadline = Instant::now() + within;
    loop {
        if device_info(server).is_some_and(|info| done(&info)) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "timed out after {within:?} waiting for the device info: {what}; last: {:?}",
            device_info(server)
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn key<'a>(info: &'a NodeDeviceInfo, suffix: &str) -> &'a str {
    info.DeviceList.get(&format!("{ASCEND910}{suffix}")).map_or("<absent>", String::as_str)
}

/// Every `UpdateTime` the plugin wrote, in order. The first write is a PATCH answered 404 and then the POST that
/// creates the ConfigMap, with the same document: that pair is one write.
fn written_update_times(server: &FakeApiServer) -> Vec<i64> {
    let sent: Vec<(String, i64)> = server
        .requests()
        .iter()
        .filter(|request| matches!(request.method.as_str(), "PATCH" | "POST") && request.path.contains("/configmaps"))
        .filter_map(|request| {
            let text = request.body.as_ref()?.pointer(&format!("/data/{DEVICE_INFO_KEY}"))?.as_str()?;
            let time = serde_json::from_str::<DeviceInfo>(text).expect("decodes").DeviceInfo.UpdateTime;
            Some((request.method.clone(), time))
        })
        .collect();
    let mut times = Vec::new();
    for (index, (method, time)) in sent.iter().enumerate() {
        let created_next = sent.get(index + 1).is_some_and(|(next, next_time)| next == "POST" && next_time == time);
        if !(method == "PATCH" && created_next) {
            times.push(*time);
        }
    }
    times
}

async fn separate(server: &FakeApiServer, chips: &str) {
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), DEVICE_INFO_NAMESPACE);
    let edit = json!({"data": {MANUALLY_SEPARATE_NPU_KEY: chips}});
    maps.patch(&config_map_name(NODE), &PatchParams::default(), &Patch::Merge(&edit)).await.expect("operator's edit");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_device_info_follows_faults_and_manual_separation() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), server.client(), |_, _| {}).await;
    let all = "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7";
    wait_for_map(&server, "eight free chips", Duration::from_secs(10), |info| key(info, "") == all).await;
    let first = device_info(&server).expect("written");
    assert_eq!(key(&first, "-Unhealthy"), "");
    assert_eq!(key(&first, "-Fault"), "[]");

    // Steady state: the last write is over a second old, so a fault shows within a second.
    tokio::time::sleep(Duration::from_millis(1100)).await;
    let raised = Instant::now();
    harness.host.raise(3, FaultCode(0x80E1_8402), true);
    wait_for_map(&server, "chip 3 unhealthy", Duration::from_secs(1), |info| key(info, "-Unhealthy") == "Ascend910-3")
        .await;
    assert!(raised.elapsed() < Duration::from_secs(1), "took {:?}", raised.elapsed());
    let faulted = device_info(&server).expect("written");
    assert!(!key(&faulted, "").contains("Ascend910-3,"), "chip 3 is no longer free: {}", key(&faulted, ""));
    let faults: serde_json::Value = serde_json::from_str(key(&faulted, "-Fault")).expect("fault list");
    assert_eq!(faults[0]["npu_name"], "Ascend910-3");
    assert_eq!(faults[0]["fault_code"], "80E18402");
    assert_eq!(faults[0]["fault_level"], "SeparateNPU");
    assert_eq!(faults[0]["fault_time_and_level_map"]["80E18402"]["fault_level"], "SeparateNPU");

    // A flapping chip: many changes in quick succession, each write with a strictly greater UpdateTime.
    for _ in 0..4 {
        harness.host.raise(4, FaultCode(0x80E1_8402), true);
        tokio::time::sleep(Duration::from_millis(300)).await;
        harness.host.clear(4, true);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    harness.host.clear(3, true);
    wait_for_map(&server, "every chip free again", Duration::from_secs(5), |info| key(info, "") == all).await;
    let times = written_update_times(&server);
    assert!(times.len() >= 4, "several writes: {times:?}");
    assert!(times.windows(2).all(|pair| pair[0] < pair[1]), "UpdateTime strictly increases: {times:?}");

    // The operator takes chip 5 out of service, then gives it back.
    separate(&server, "Ascend910-5").await;
    wait_for_map(&server, "chip 5 separated", Duration::from_secs(5), |info| key(info, "-Unhealthy") == "Ascend910-5")
        .await;
    let separated: serde_json::Value =
        serde_json::from_str(key(&device_info(&server).expect("map"), "-Fault")).expect("faults");
    assert_eq!(separated[0]["fault_level"], "ManuallySeparateNPU");
    let devices =
        harness.wait_devices(ASCEND910, "chip 5 unhealthy", |d| health_of(d, "Ascend910-5") == Some("Unhealthy")).await;
    assert_eq!(devices.iter().filter(|(_, health)| health == "Healthy").count(), 7);
    separate(&server, "").await;
    wait_for_map(&server, "chip 5 back", Duration::from_secs(5), |info| key(info, "") == all).await;
    harness.wait_devices(ASCEND910, "chip 5 healthy", |d| health_of(d, "Ascend910-5") == Some("Healthy")).await;
    harness.stop().await;
}

fn pending_pod(name: &str, chips: &str, predicate_time: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "jobs", "annotations": {ASCEND910: chips, PREDICATE_TIME_ANNOTATION: predicate_time}},
        "spec": {"nodeName": NODE, "schedulerName": "volcano", "containers": [{"name": "train", "image": "x",
            "resources": {"limits": {ASCEND910: chips.split(',').count().to_string()}}}]},
        "status": {"phase": "Pending"},
    })
}

async fn allocate(harness: &Harness, kubelet_ids: &[&str]) -> Result<ContainerAllocateResponse, tonic::Status> {
    let mut client = harness.kubelet.plugin_client(ASCEND910).await.expect("plugin client");
    let request = AllocateRequest {
        container_requests: vec![ContainerAllocateRequest {
            devices_ids: kubelet_ids.iter().map(|s| (*s).to_owned()).collect(),
        }],
    };
    client.allocate(request).await.map(|response| response.into_inner().container_responses.remove(0))
}

fn cdi_chips(response: &ContainerAllocateResponse) -> Vec<String> {
    response.cdi_devices.iter().map(|device| device.name.clone()).collect()
}

fn annotations(server: &FakeApiServer, name: &str) -> BTreeMap<String, String> {
    server.get::<Pod>(Some("jobs"), name).and_then(|pod| pod.metadata.annotations).unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn allocate_serves_volcanos_chips_oldest_pod_first_and_never_twice() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), server.client(), |_, _| {}).await;
    harness.wait_devices(ASCEND910, "eight healthy", |d| d.len() == 8 && d.iter().all(|(_, h)| h == "Healthy")).await;
    server.seed(pending_pod("young", "Ascend910-0,Ascend910-1", "200"));
    server.seed(pending_pod("old", "Ascend910-3,Ascend910-2", "100"));

    // The kubelet picked 6 and 7; the older pod gets the chips Volcano chose for it.
    let old = allocate(&harness, &["Ascend910-6", "Ascend910-7"]).await.expect("allocated");
    assert_eq!(cdi_chips(&old), ["huawei.com/npu=2", "huawei.com/npu=3"]);
    assert_eq!(old.envs.get("ASCEND_RT_VISIBLE_DEVICES").map(String::as_str), Some("0,1"));
    assert_eq!(old.annotations.get(REAL_DEVICES_ANNOTATION).map(String::as_str), Some("Ascend910-2,Ascend910-3"));
    let marked = annotations(&server, "old");
    assert_eq!(marked[PREDICATE_TIME_ANNOTATION], CONSUMED_PREDICATE_TIME);
    assert_eq!(marked[KUBELET_DEVICES_ANNOTATION], "Ascend910-6,Ascend910-7");
    assert_eq!(marked[REAL_DEVICES_ANNOTATION], "Ascend910-3,Ascend910-2");
    assert_eq!(annotations(&server, "young")[PREDICATE_TIME_ANNOTATION], "200", "the younger pod waits");

    let young = allocate(&harness, &["Ascend910-2", "Ascend910-3"]).await.expect("allocated");
    assert_eq!(cdi_chips(&young), ["huawei.com/npu=0", "huawei.com/npu=1"]);

    // The kubelet restarts and asks again for the first container: same chips, no other pod consumed.
    harness.kubelet.restart().await.expect("kubelet restarts");
    harness.wait_devices(ASCEND910, "re-registered", |d| d.len() == 8).await;
    server.seed(pending_pod("waiting", "Ascend910-4,Ascend910-5", "300"));
    let again = allocate(&harness, &["Ascend910-7", "Ascend910-6"]).await.expect("allocated again");
    assert_eq!(cdi_chips(&again), ["huawei.com/npu=2", "huawei.com/npu=3"]);
    assert_eq!(annotations(&server, "waiting")[PREDICATE_TIME_ANNOTATION], "300");
    let waiting = allocate(&harness, &["Ascend910-0", "Ascend910-1"]).await.expect("allocated");
    assert_eq!(cdi_chips(&waiting), ["huawei.com/npu=4", "huawei.com/npu=5"]);

    // No chip twice: a pod whose annotation names a chip a running pod holds is refused.
    server.seed(pending_pod("clash", "Ascend910-2,Ascend910-6", "400"));
    let clash = allocate(&harness, &["Ascend910-4", "Ascend910-5"]).await.expect_err("chip 2 is held");
    assert_eq!(clash.code(), Code::FailedPrecondition);
    assert!(clash.message().contains("Ascend910-2 (held by jobs/old)"), "{}", clash.message());
    assert_eq!(annotations(&server, "clash")[PREDICATE_TIME_ANNOTATION], "400", "a refused pod is not marked");
    let held: BTreeSet<String> = ["young", "old", "waiting"]
        .iter()
        .flat_map(|pod| {
            annotations(&server, pod)[REAL_DEVICES_ANNOTATION].split(',').map(str::to_owned).collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(held.len(), 6, "six different chips for three pods: {held:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pod_naming_an_unhealthy_or_foreign_chip_is_refused() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), server.client(), |config, _| {
        config.allocate.mode = ascend_deviceplugin::AllocateMode::RuntimeEnv;
    })
    .await;
    harness.host.raise(5, FaultCode(0x80E1_8402), true);
    harness.wait_devices(ASCEND910, "chip 5 unhealthy", |d| health_of(d, "Ascend910-5") == Some("Unhealthy")).await;
    server.seed(pending_pod("bad", "Ascend910-4,Ascend910-5", "100"));
    let refused = allocate(&harness, &["Ascend910-0", "Ascend910-1"]).await.expect_err("chip 5 is unhealthy");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(
        refused.message().contains("jobs/bad") && refused.message().contains("Ascend910-5"),
        "{}",
        refused.message()
    );
    assert_eq!(annotations(&server, "bad")[PREDICATE_TIME_ANNOTATION], "100");

    // The kubelet fails the pod; the next one names a chip this node does not have.
    let pods: Api<Pod> = Api::namespaced(server.client(), "jobs");
    pods.patch_status("bad", &PatchParams::default(), &Patch::Merge(json!({"status": {"phase": "Failed"}})))
        .await
        .expect("failed");
    server.seed(pending_pod("foreign", "Ascend910-1,Ascend910-9", "150"));
    let foreign = allocate(&harness, &["Ascend910-0", "Ascend910-1"]).await.expect_err("no chip 9 here");
    assert!(
        foreign.message().contains("Ascend910-9") && foreign.message().contains("not on this node"),
        "{}",
        foreign.message()
    );

    // A good pod in runtime-env mode: the hook sees the physical ids Volcano chose.
    pods.patch_status("foreign", &PatchParams::default(), &Patch::Merge(json!({"status": {"phase": "Failed"}})))
        .await
        .expect("failed");
    server.seed(pending_pod("good", "Ascend910-7,Ascend910-4", "200"));
    let good = allocate(&harness, &["Ascend910-0", "Ascend910-1"]).await.expect("allocated");
    assert_eq!(good.envs.get("ASCEND_VISIBLE_DEVICES").map(String::as_str), Some("4,7"));
    assert_eq!(good.envs.get("ASCEND_RT_VISIBLE_DEVICES").map(String::as_str), Some("0,1"));

    // No pod waits: the error says what is missing.
    let none = allocate(&harness, &["Ascend910-0"]).await.expect_err("no pod");
    assert!(none.message().contains("no pending pod"), "{}", none.message());
    harness.stop().await;
}

fn running_pod(name: &str, chip: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "jobs", "annotations": {
            PREDICATE_TIME_ANNOTATION: CONSUMED_PREDICATE_TIME, REAL_DEVICES_ANNOTATION: chip}},
        "spec": {"nodeName": NODE, "containers": [{"name": "train", "image": "x",
            "resources": {"limits": {ASCEND910: "1"}}}]},
        "status": {"phase": "Running"},
    })
}

/// The plugin's requests (its own user agent) by `verb resource` (printed with `--nocapture`: the figures of
/// docs/scale.md).
fn plugin_requests(server: &FakeApiServer) -> BTreeMap<String, usize> {
    let counts: BTreeMap<String, usize> = server
        .request_counts()
        .into_iter()
        .filter(|(key, _)| key.user_agent == "ascend-device-plugin/test")
        .map(|(key, count)| (format!("{} {}", key.verb, key.resource), count))
        .collect();
    eprintln!("requests of the device plugin: {counts:?}");
    counts
}

/// Every device list the plugin wrote, in order: the free chips of each write.
fn written_free_lists(server: &FakeApiServer) -> Vec<String> {
    let requests = server.requests();
    let written = requests.iter().filter(|request| matches!(request.method.as_str(), "PATCH" | "POST"));
    written
        .filter_map(|request| {
            request.body.as_ref()?.pointer(&format!("/data/{DEVICE_INFO_KEY}"))?.as_str().map(str::to_owned)
        })
        .map(|text| {
            let info = serde_json::from_str::<DeviceInfo>(&text).expect("decodes").DeviceInfo;
            info.DeviceList.get(ASCEND910).cloned().unwrap_or_default()
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_device_list_written_has_every_chip() {
    // A node taken over from Huawei's plugin has its complete lists: a first write from the monitor's view before
    // every chip answered would tell Volcano the node has no free chip until the next round.
    let server = FakeApiServer::start().await.expect("fake API server");
    let client = ascend_kube::client_for(server.config(), "ascend-device-plugin", "test").expect("client");
    // Chip 5 answers its first health read late (within the monitor's deadline): the first view waits for it.
    let host = FakeHost::eight_910b();
    host.edit(5, |chip| chip.hang = true);
    let mut harness = Harness::start_volcano(host.clone(), client, |_, _| {}).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    host.edit(5, |chip| chip.hang = false);
    let all = "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7";
    wait_for_map(&server, "eight free chips", Duration::from_secs(10), |info| key(info, "") == all).await;
    let lists = written_free_lists(&server);
    assert!(lists.iter().all(|list| list == all), "every write lists the eight chips: {lists:?}");
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_node_costs_nothing_but_its_watches_and_each_change_one_write() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let client = ascend_kube::client_for(server.config(), "ascend-device-plugin", "test").expect("client");
    // The chips are read every 200 ms and the old resync ran every 200 ms in these tests: polling would show
    // dozens of LISTs and GETs in the idle window.
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), client, |_, _| {}).await;
    let all = "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-4,Ascend910-5,Ascend910-6,Ascend910-7";
    wait_for_map(&server, "eight free chips", Duration::from_secs(10), |info| key(info, "") == all).await;
    let started = plugin_requests(&server);
    assert_eq!(started.get("watch pods"), Some(&1), "{started:?}");
    assert_eq!(started.get("watch configmaps"), Some(&1), "{started:?}");
    assert!(!started.contains_key("get configmaps"), "ManuallySeparateNPU comes from the watch: {started:?}");

    tokio::time::sleep(Duration::from_millis(1100)).await;
    server.clear_requests();
    tokio::time::sleep(Duration::from_secs(3)).await;
    assert_eq!(plugin_requests(&server), BTreeMap::new(), "no request at all while nothing changes");

    // Churn: a pod takes chip 6 and goes, twice. Each change is one PATCH of the map; the pods arrive by the watch.
    let pods: Api<Pod> = Api::namespaced(server.client(), "jobs");
    let without_6 = all.replace("Ascend910-6,", "");
    for _ in 0..2 {
        server.seed(running_pod("holder", "Ascend910-6"));
        wait_for_map(&server, "chip 6 in use", Duration::from_secs(5), |info| key(info, "") == without_6).await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
        pods.delete("holder", &Default::default()).await.expect("pod deleted");
        wait_for_map(&server, "chip 6 free", Duration::from_secs(5), |info| key(info, "") == all).await;
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    let expected: BTreeMap<String, usize> = [("patch configmaps".to_owned(), 4)].into();
    assert_eq!(plugin_requests(&server), expected);
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_throttled_write_waits_for_retry_after_and_a_failing_one_backs_off() {
    let server = FakeApiServer::start().await.expect("fake API server");
    // API Priority and Fairness rejects the first write (plain text, Retry-After: 2), then the server fails twice.
    server.inject(fake_apiserver::FaultRule::rejected_by_flow_control(2).method("PATCH").times(1));
    server.inject(fake_apiserver::FaultRule::status(503).method("PATCH").times(2));
    let client = ascend_kube::client_for(server.config(), "ascend-device-plugin", "test").expect("client");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), client, |_, volcano| {
        volcano.backoff.first = Duration::from_millis(300);
    })
    .await;
    wait_for_map(&server, "written at last", Duration::from_secs(15), |info| key(info, "").len() > 10).await;
    let attempts: Vec<Instant> = server
        .requests()
        .iter()
        .filter(|request| request.method == "PATCH" && request.path.contains("/configmaps"))
        .map(|request| request.received)
        .collect();
    let waits: Vec<Duration> = attempts.windows(2).map(|pair| pair[1] - pair[0]).collect();
    eprintln!("waits between the device-info writes: {waits:?}");
    assert_eq!(attempts.len(), 4, "a 429, two 503s, then the write that went through: {waits:?}");
    assert!(waits[0] >= Duration::from_secs(2), "Retry-After: 2 is honoured: {waits:?}");
    // The 429 took the first step (300 ms); the 503s wait at least 600 ms, then 1.2 s.
    assert!(waits[1] >= Duration::from_millis(600) && waits[2] >= Duration::from_millis(1200), "{waits:?}");
    harness.stop().await;
}

/// A node taken over from a plugin outside Volcano mode, or from Huawei's before its annotation round (issue 49):
/// a running pod without `huawei.com/AscendReal` holds the chips the kubelet's PodResources lists for it, and a
/// Volcano pod naming one is refused; a pod with the annotation holds its annotated chips, not its kubelet ids.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chips_the_kubelet_lists_for_a_pod_without_its_annotation_are_not_given_twice() {
    use ascend_deviceplugin::fake_kubelet::FakePodResources;
    let (_sockets, socket, mut pod_resources) = support::pod_resources(vec![
        FakePodResources::pod("jobs", "plain", ASCEND910, &["Ascend910-2", "Ascend910-3"]),
        // Huawei's Volcano mode: the kubelet's id 0 is a slot, the pod has chip 4.
        FakePodResources::pod("jobs", "annotated", ASCEND910, &["Ascend910-0"]),
    ]);
    let server = FakeApiServer::start().await.expect("fake API server");
    let mut harness = Harness::start_volcano(FakeHost::eight_910b(), server.client(), |config, _| {
        config.pod_resources_socket = Some(socket.clone());
        config.pod_resources_interval = Duration::from_millis(100);
    })
    .await;
    harness.wait_devices(ASCEND910, "eight healthy", |d| d.len() == 8 && d.iter().all(|(_, h)| h == "Healthy")).await;
    let mut plain = running_pod("plain", "");
    plain["metadata"]["annotations"] = json!({});
    server.seed(plain);
    server.seed(running_pod("annotated", "Ascend910-4"));
    // Volcano chooses from the free list: the plain pod's chips are not on it, nor the annotated pod's chip; the
    // annotated pod's kubelet id (a slot) holds no chip.
    let held_out = "Ascend910-0,Ascend910-1,Ascend910-5,Ascend910-6,Ascend910-7";
    wait_for_map(&server, "chips 2, 3 and 4 held", Duration::from_secs(5), |info| key(info, "") == held_out).await;

    server.seed(pending_pod("clash", "Ascend910-3,Ascend910-6", "100"));
    let clash = allocate(&harness, &["Ascend910-6", "Ascend910-7"]).await.expect_err("chip 3 is held");
    assert_eq!(clash.code(), Code::FailedPrecondition);
    assert!(clash.message().contains("Ascend910-3 (held by jobs/plain)"), "{}", clash.message());
    let pods: Api<Pod> = Api::namespaced(server.client(), "jobs");
    let failed = Patch::Merge(json!({"status": {"phase": "Failed"}}));
    pods.patch_status("clash", &PatchParams::default(), &failed).await.expect("failed");

    server.seed(pending_pod("slot", "Ascend910-0,Ascend910-1", "200"));
    let slot = allocate(&harness, &["Ascend910-6", "Ascend910-7"]).await.expect("kubelet id 0 is not chip 0");
    assert_eq!(cdi_chips(&slot), ["huawei.com/npu=0", "huawei.com/npu=1"]);

    // The plain pod ends and is deleted. The API says so at once, the kubelet's PodResources (read every few seconds)
    // may list it a little longer: its chips can be given meanwhile, or the next pod's admission would fail for good
    // (a cluster test met it: UnexpectedAdmissionError).
    pods.delete("plain", &kube::api::DeleteParams::default()).await.expect("deleted");
    tokio::time::sleep(Duration::from_millis(500)).await;
    server.seed(pending_pod("after", "Ascend910-2,Ascend910-3", "300"));
    let after = allocate(&harness, &["Ascend910-2", "Ascend910-3"])
        .await
        .expect("chips 2 and 3 are free again while PodResources still lists their ended pod");
    assert_eq!(cdi_chips(&after), ["huawei.com/npu=2", "huawei.com/npu=3"]);
    pods.delete("after", &kube::api::DeleteParams::default()).await.expect("deleted");
    pods.delete("slot", &kube::api::DeleteParams::default()).await.expect("deleted");
    let only_annotated = "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-5,Ascend910-6,Ascend910-7";
    wait_for_map(&server, "only chip 4 held", Duration::from_secs(5), |info| key(info, "") == only_annotated).await;
    harness.stop().await;
    pod_resources.shutdown().await;
}
