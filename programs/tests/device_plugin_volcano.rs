//! The real `ascend-device-plugin` in Volcano mode (`--volcano --node-events`) on a simulated Atlas 800T A2 (eight
//! Ascend 910B chips; logic ids 0..7 are physical ids 4,5,6,7,0,1,2,3, chip `Ascend910-<phy>`), with the fake
//! kubelet over unix sockets and the fake API server over HTTP (the daemon's own kube-rs client, from a
//! kubeconfig). One run covers what Volcano and an operator see:
//!
//! - a scripted dcmi-sim fault timeline (a fault, a card drop, both cleared) moves chips between the device-info
//!   keys and back, every written `DeviceInfoCfg` decodes with Volcano's field names, `UpdateTime` strictly
//!   increases, and the timeline becomes Events on the Node;
//! - a fault moves its chip to `-Unhealthy` within a second of the plugin seeing it; `ManuallySeparateNPU` takes
//!   a chip out of service for the kubelet and for Volcano, and gives it back;
//! - a Volcano-style pending pod gets exactly the chips its annotation names (not the kubelet's ids) and is marked
//!   served; a pod naming an unhealthy or separated chip is refused and left unmarked;
//! - the Node condition `AscendNPUUnhealthy` says which chips are unhealthy, and the kubelet's `Ready` stays;
//! - an API server answering 500, then gone, holds up neither health updates nor Allocate.

mod daemon_support;
mod device_plugin_support;

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest, ContainerAllocateResponse};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use dcmi_sim::TimelineAction;
use device_plugin_support::{
    at, free_port, health_list_of, is, overlay_fault, scripted_sim_host, sim_args, spawn_plugin, wait_health_of, WAIT,
};
use fake_apiserver::{FakeApiServer, FaultRule};
use k8s_openapi::api::core::v1::{ConfigMap, Node, NodeCondition, Pod};
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, Patch, PatchParams};
use serde::Deserialize;
use serde_json::json;

const NODE: &str = "worker-1";
const RESOURCE: &str = "huawei.com/Ascend910";
const CONFIG_MAP: &str = "mindx-dl-deviceinfo-worker-1";
const SEPARATE_NPU: u32 = 0x80E1_8402;

/// `DeviceInfoCfg` as Volcano's plugin decodes it (ascend-for-volcano `NodeDeviceInfoWithDevPlugin`): only its
/// field names and types.
#[derive(Debug, Deserialize)]
#[allow(non_snake_case)]
struct DeviceInfoCfg {
    DeviceInfo: NodeDeviceInfo,
}

#[derive(Debug, Clone, Deserialize)]
#[allow(non_snake_case)]
struct NodeDeviceInfo {
    DeviceList: BTreeMap<String, String>,
    UpdateTime: i64,
}

impl NodeDeviceInfo {
    fn chips(&self, suffix: &str) -> BTreeSet<String> {
        let value = self.DeviceList.get(&format!("{RESOURCE}{suffix}")).map_or("", String::as_str);
        value.split(',').filter(|chip| !chip.is_empty()).map(str::to_owned).collect()
    }

    fn faults(&self) -> serde_json::Value {
        let text = self.DeviceList.get(&format!("{RESOURCE}-Fault")).map_or("null", String::as_str);
        serde_json::from_str(text).expect("the -Fault value is a JSON list")
    }

    fn fault_of(&self, chip: &str) -> Option<serde_json::Value> {
        self.faults().as_array()?.iter().find(|fault| fault["npu_name"] == chip).cloned()
    }
}

fn chips(phys: &[u32]) -> BTreeSet<String> {
    phys.iter().map(|phy| format!("Ascend910-{phy}")).collect()
}

fn decode(text: &str) -> NodeDeviceInfo {
    serde_json::from_str::<DeviceInfoCfg>(text).expect("Volcano's reader decodes DeviceInfoCfg").DeviceInfo
}

fn device_info(server: &FakeApiServer) -> Option<NodeDeviceInfo> {
    let map: ConfigMap = server.get(Some("kube-system"), CONFIG_MAP)?;
    map.data?.get("DeviceInfoCfg").map(|text| decode(text))
}

async fn wait_map(server: &FakeApiServer, what: &str, done: impl Fn(&NodeDeviceInfo) -> bool) -> NodeDeviceInfo {
    let started = Instant::now();
    loop {
        if let Some(info) = device_info(server).filter(|info| done(info)) {
            return info;
        }
        assert!(started.elapsed() < WAIT, "device info never showed {what}; last: {:?}", device_info(server));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

/// Every device info the daemon wrote, in order. A write that found no ConfigMap is a PATCH answered 404 and then
/// the POST with the same document: one write.
fn written(server: &FakeApiServer) -> Vec<NodeDeviceInfo> {
    let mut documents: Vec<NodeDeviceInfo> = Vec::new();
    for request in server.requests() {
        if !matches!(request.method.as_str(), "PATCH" | "POST") || !request.path.contains(CONFIG_MAP) {
            continue;
        }
        let Some(text) = request.body.as_ref().and_then(|body| body.pointer("/data/DeviceInfoCfg")?.as_str()) else {
            continue;
        };
        let info = decode(text);
        if documents.last().is_none_or(|last| last.UpdateTime != info.UpdateTime) {
            documents.push(info);
        }
    }
    documents
}

async fn wait_events(server: &FakeApiServer, what: &str, done: impl Fn(&[Event]) -> bool) -> Vec<Event> {
    let started = Instant::now();
    loop {
        let events = server.list::<Event>();
        if done(&events) {
            return events;
        }
        assert!(started.elapsed() < WAIT, "no Events for {what}: {events:#?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn event<'a>(events: &'a [Event], reason: &str, chip: &str) -> Option<&'a Event> {
    events.iter().find(|event| event.reason.as_deref() == Some(reason) && event.action.as_deref() == Some(chip))
}

fn node_conditions(server: &FakeApiServer) -> Vec<NodeCondition> {
    server.get::<Node>(None, NODE).and_then(|node| node.status?.conditions).unwrap_or_default()
}

async fn wait_condition(server: &FakeApiServer, what: &str, done: impl Fn(&NodeCondition) -> bool) -> NodeCondition {
    let started = Instant::now();
    loop {
        let found = node_conditions(server).into_iter().find(|condition| condition.type_ == "AscendNPUUnhealthy");
        if let Some(condition) = found.filter(|condition| done(condition)) {
            return condition;
        }
        assert!(started.elapsed() < WAIT, "the Node condition never was {what}: {:#?}", node_conditions(server));
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// A pod as Volcano leaves it for the kubelet: bound to the node, pending, the chips it chose in the annotation
/// named like the resource, and when it chose them (`predicate-time`, Unix nanoseconds).
fn volcano_pod(name: &str, phys: &[u32]) -> serde_json::Value {
    let chosen = phys.iter().map(|phy| format!("Ascend910-{phy}")).collect::<Vec<_>>().join(",");
    let now = SystemTime::now().duration_since(UNIX_EPOCH).expect("after 1970").as_nanos();
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "training", "annotations": {
            RESOURCE: chosen, "predicate-time": now.to_string(),
        }},
        "spec": {"nodeName": NODE, "schedulerName": "volcano", "containers": [{"name": "worker", "image": "mindspore",
            "resources": {"limits": {RESOURCE: phys.len().to_string()}, "requests": {RESOURCE: phys.len().to_string()}}}]},
        "status": {"phase": "Pending"},
    })
}

fn pod_annotations(server: &FakeApiServer, name: &str) -> BTreeMap<String, String> {
    server.get::<Pod>(Some("training"), name).and_then(|pod| pod.metadata.annotations).unwrap_or_default()
}

/// Allocate as the kubelet sends it: one container, the kubelet's own choice of ids.
async fn allocate(kubelet: &FakeKubelet, ids: &[&str]) -> Result<ContainerAllocateResponse, tonic::Status> {
    let mut client = kubelet.plugin_client(RESOURCE).await.expect("plugin client");
    let devices_ids = ids.iter().map(|id| (*id).to_owned()).collect();
    let request = AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids }] };
    Ok(client.allocate(request).await?.into_inner().container_responses.remove(0))
}

fn cdi_names(response: &ContainerAllocateResponse) -> Vec<String> {
    response.cdi_devices.iter().map(|device| device.name.clone()).collect()
}

async fn wait_kubelet(kubelet: &FakeKubelet, what: &str, done: impl Fn(&[(String, String)]) -> bool) -> Duration {
    wait_health_of(kubelet, RESOURCE, what, done).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn volcano_mode_through_a_fault_timeline() {
    let server = FakeApiServer::start().await.expect("fake API server");
    let node = server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE},
        "status": {"conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}]}}));
    let root = tempfile::tempdir().expect("host root");
    let plugins = tempfile::tempdir().expect("plugin dir");
    // The timeline (seconds after the daemon's dcmi_init): chip 5 (logic 1) raises a SeparateNPU fault, card 6
    // (logic 2) drops off the bus, then both recover.
    let timeline = vec![
        at(1.0, 1, TimelineAction::RaiseFault, Some(SEPARATE_NPU)),
        at(2.0, 2, TimelineAction::Drop, None),
        at(3.2, 1, TimelineAction::ClearFault, Some(SEPARATE_NPU)),
        at(3.2, 2, TimelineAction::Restore, None),
    ];
    let host = scripted_sim_host("atlas-800t-a2.toml", root.path(), Duration::from_millis(1500), timeline);
    let overlay = root.path().join("overlay.toml");
    let kubeconfig = daemon_support::kubeconfig(root.path(), &server.url());
    let kubelet = FakeKubelet::start(plugins.path()).await.expect("fake kubelet");
    let port = free_port();
    let flags = ["--poll-interval=200ms", "--health-deadline=500ms", "--volcano", "--node-events"];
    let mut args = sim_args(plugins.path(), &host, port, &flags);
    args.push(format!("--node-name={NODE}"));
    let envs = [
        ("DCMI_SIM_CONFIG", host.topology.as_path()),
        ("DCMI_SIM_OVERLAY", overlay.as_path()),
        ("KUBECONFIG", kubeconfig.as_path()),
    ];
    let mut daemon = spawn_plugin(&args, &envs);
    wait_kubelet(&kubelet, "eight chips advertised", |d| d.len() == 8).await;

    // While the timeline runs, Volcano binds a pod to chips 2 and 3; the kubelet picks 0 and 1 for it.
    server.seed(volcano_pod("train-a", &[3, 2]));
    let served = allocate(&kubelet, &["Ascend910-0", "Ascend910-1"]).await.expect("the annotated chips are served");
    // Every request the daemon sent so far (watches, the device info, Allocate's LIST and PATCH) says who it is.
    let agents: BTreeSet<String> = server.requests().iter().filter_map(|r| r.user_agent.clone()).collect();
    let agent = format!("ascend-device-plugin/{}", env!("CARGO_PKG_VERSION"));
    assert_eq!(agents, BTreeSet::from([agent]));
    assert_eq!(cdi_names(&served), ["huawei.com/npu=2", "huawei.com/npu=3"]);
    assert_eq!(served.envs.get("ASCEND_RT_VISIBLE_DEVICES").map(String::as_str), Some("0,1"));
    let marked = pod_annotations(&server, "train-a");
    assert_eq!(marked["predicate-time"], "18446744073709551615", "consumed");
    assert_eq!(marked["huawei.com/kltDev"], "Ascend910-0,Ascend910-1");
    assert_eq!(marked["huawei.com/AscendReal"], "Ascend910-3,Ascend910-2");

    // The timeline's end: every chip healthy again, 2 and 3 held by the pod, the rest free.
    let settled = wait_map(&server, "the timeline's end", |info| {
        info.chips("") == chips(&[0, 1, 4, 5, 6, 7]) && info.chips("-Unhealthy").is_empty()
    })
    .await;
    assert!(settled.chips("-Recovering").is_empty() && settled.chips("-NetworkUnhealthy").is_empty());
    assert_eq!(settled.faults(), json!([]));

    // Volcano counts the free chips from the Node annotation baseDeviceInfos: every chip by name, with the RoCE
    // address of that chip (the sample's physical ids 4..7, 0..3 have 192.168.100.10..17).
    let expected: BTreeMap<String, String> =
        (0..8).map(|phy| (format!("Ascend910-{phy}"), format!("192.168.100.{}", 10 + (phy + 4) % 8))).collect();
    let started = Instant::now();
    loop {
        let text = server.get::<Node>(None, NODE).and_then(|node| node.metadata.annotations?.remove("baseDeviceInfos"));
        let ips = text.map(|text| {
            let entries: BTreeMap<String, serde_json::Value> = serde_json::from_str(&text).expect("a JSON map");
            entries.into_iter().map(|(chip, entry)| (chip, entry["IP"].as_str().unwrap_or("").to_owned())).collect()
        });
        if ips.as_ref() == Some(&expected) {
            break;
        }
        assert!(started.elapsed() < WAIT, "baseDeviceInfos never named the eight chips' addresses: {ips:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    // Every write in order: Volcano's reader decodes it, UpdateTime strictly increases, no chip is free and
    // unhealthy at once, the held chips are never free after the pod was served, and the timeline's states
    // appear in its order.
    let history = written(&server);
    let times: Vec<i64> = history.iter().map(|info| info.UpdateTime).collect();
    assert!(times.windows(2).all(|pair| pair[0] < pair[1]), "UpdateTime strictly increases: {times:?}");
    for info in &history {
        assert!(info.chips("").is_disjoint(&info.chips("-Unhealthy")), "{info:?}");
    }
    let fault_5 = history.iter().position(|info| info.chips("-Unhealthy").contains("Ascend910-5"));
    let fault_5 = fault_5.unwrap_or_else(|| panic!("chip 5 never listed unhealthy: {history:#?}"));
    let entry = history[fault_5].fault_of("Ascend910-5").expect("chip 5 in -Fault");
    assert_eq!((entry["fault_code"].as_str(), entry["fault_level"].as_str()), (Some("80E18402"), Some("SeparateNPU")));
    assert_eq!(entry["fault_time_and_level_map"]["80E18402"]["fault_level"], "SeparateNPU");
    let dropped = history[fault_5..].iter().find(|info| info.chips("-Unhealthy").contains("Ascend910-6"));
    let dropped = dropped.unwrap_or_else(|| panic!("card 6's drop never listed after chip 5's fault: {history:#?}"));
    assert_eq!(dropped.fault_of("Ascend910-6").expect("chip 6 in -Fault")["fault_code"], "40F84E00");

    // The same timeline as Events on the Node.
    let events = wait_events(&server, "the timeline", |events| {
        event(events, "NpuFaultRaised", "Ascend910-5").is_some()
            && event(events, "NpuCardDropped", "Ascend910-6").is_some()
            && event(events, "NpuFaultRecovered", "Ascend910-5").is_some()
            && events.iter().any(|e| e.type_.as_deref() == Some("Normal") && e.action.as_deref() == Some("Ascend910-6"))
    })
    .await;
    let raised = event(&events, "NpuFaultRaised", "Ascend910-5").expect("raised");
    let note = raised.note.as_deref().unwrap_or_default();
    assert!(note.contains("80E18402") && note.contains("SeparateNPU"), "{note}");
    assert_eq!(raised.type_.as_deref(), Some("Warning"));
    let regarding = raised.regarding.as_ref().expect("regarding");
    assert_eq!((regarding.kind.as_deref(), regarding.name.as_deref()), (Some("Node"), Some(NODE)));
    assert_eq!(regarding.uid.as_deref(), node.pointer("/metadata/uid").and_then(|uid| uid.as_str()));
    assert!(events
        .iter()
        .all(|e| e.action.as_deref().is_some_and(|chip| chip == "Ascend910-5" || chip == "Ascend910-6")));

    // In steady state (the last write over a second old), a fault on chip 7 (logic 3) reaches -Unhealthy within a
    // second of the kubelet hearing of it. The operator has separated chip 0 meanwhile: the same writes take it
    // out of service, for Volcano and for the kubelet.
    let maps: Api<ConfigMap> = Api::namespaced(server.client(), "kube-system");
    let separate = |chips: &str| json!({"data": {"ManuallySeparateNPU": chips}});
    maps.patch(CONFIG_MAP, &PatchParams::default(), &Patch::Merge(separate("Ascend910-0"))).await.expect("edited");
    tokio::time::sleep(Duration::from_millis(1100)).await;
    overlay_fault(&overlay, 3, vec![SEPARATE_NPU], 2);
    wait_kubelet(&kubelet, "chip 7 unhealthy", |d| is(d, "Ascend910-7", "Unhealthy")).await;
    let heard = Instant::now();
    wait_map(&server, "chip 7 unhealthy", |info| info.chips("-Unhealthy").contains("Ascend910-7")).await;
    let moved = heard.elapsed();
    eprintln!("chip 7 moved to -Unhealthy {moved:?} after the kubelet heard of its fault");
    assert!(moved < Duration::from_secs(1), "chip 7 took {moved:?} to move");
    let separated = wait_map(&server, "chip 0 separated", |info| info.chips("-Unhealthy") == chips(&[0, 7])).await;
    assert_eq!(separated.fault_of("Ascend910-0").expect("chip 0 in -Fault")["fault_level"], "ManuallySeparateNPU");
    assert_eq!(separated.chips(""), chips(&[1, 4, 5, 6]));
    wait_kubelet(&kubelet, "chip 0 unhealthy", |d| is(d, "Ascend910-0", "Unhealthy")).await;
    let unhealthy = wait_condition(&server, "True for chips 0 and 7", |condition| {
        let message = condition.message.as_deref().unwrap_or_default();
        condition.status == "True" && message.starts_with("2 of 8 NPUs unhealthy: Ascend910-0: separated")
    })
    .await;
    assert!(unhealthy.message.as_deref().unwrap_or_default().contains("Ascend910-7: fault level SeparateNPU"));

    // A pod whose annotation names the separated and the faulty chip is refused, and stays unmarked.
    server.seed(volcano_pod("train-b", &[0, 7]));
    let refused = allocate(&kubelet, &["Ascend910-4", "Ascend910-5"]).await.expect_err("unhealthy chips");
    assert_eq!(refused.code(), tonic::Code::FailedPrecondition, "{refused:?}");
    let message = refused.message();
    assert!(message.contains("training/train-b") && message.contains("Ascend910-0") && message.contains("Ascend910-7"));
    assert_ne!(pod_annotations(&server, "train-b")["predicate-time"], "18446744073709551615");
    let pods: Api<Pod> = Api::namespaced(server.client(), "training");
    let failed = Patch::Merge(json!({"status": {"phase": "Failed"}}));
    pods.patch_status("train-b", &PatchParams::default(), &failed).await.expect("the kubelet fails the pod");

    // The chip recovers and the operator gives chip 0 back.
    maps.patch(CONFIG_MAP, &PatchParams::default(), &Patch::Merge(separate(""))).await.expect("edited");
    overlay_fault(&overlay, 3, Vec::new(), 0);
    wait_map(&server, "chips 0 and 7 back", |info| info.chips("") == chips(&[0, 1, 4, 5, 6, 7])).await;
    wait_kubelet(&kubelet, "every chip healthy", |d| d.iter().all(|(_, health)| health == "Healthy")).await;
    let healthy = wait_condition(&server, "False again", |condition| condition.status == "False").await;
    assert_eq!(healthy.reason.as_deref(), Some("AllNPUsHealthy"));
    let conditions = node_conditions(&server);
    assert!(conditions.iter().any(|c| c.type_ == "Ready" && c.status == "True"), "Ready kept: {conditions:#?}");

    // ConfigMap and Event writes answer 500: health still reaches the kubelet at once, and Allocate (which needs
    // only the pods) still serves Volcano's chips.
    server.inject(FaultRule::status(500).path_contains("/configmaps"));
    server.inject(FaultRule::status(500).path_contains("/events"));
    let raised = Instant::now();
    overlay_fault(&overlay, 5, vec![SEPARATE_NPU], 2);
    wait_kubelet(&kubelet, "chip 1 unhealthy with the API failing", |d| is(d, "Ascend910-1", "Unhealthy")).await;
    assert!(raised.elapsed() < Duration::from_secs(2), "health took {:?} with the API failing", raised.elapsed());
    server.seed(volcano_pod("train-c", &[4, 5]));
    let served = allocate(&kubelet, &["Ascend910-6", "Ascend910-7"]).await.expect("served with the API failing");
    assert_eq!(cdi_names(&served), ["huawei.com/npu=4", "huawei.com/npu=5"]);

    // The API server is gone: health still flows; Allocate fails fast, naming the API call, and hands out nothing.
    server.clear_faults();
    server.stop_listening();
    let cleared = Instant::now();
    overlay_fault(&overlay, 5, Vec::new(), 0);
    wait_kubelet(&kubelet, "chip 1 healthy with the API gone", |d| is(d, "Ascend910-1", "Healthy")).await;
    assert!(cleared.elapsed() < Duration::from_secs(2), "health took {:?} with the API gone", cleared.elapsed());
    let started = Instant::now();
    let refused = allocate(&kubelet, &["Ascend910-6"]).await.expect_err("no pod can be read");
    assert!(started.elapsed() < Duration::from_secs(3), "Allocate took {:?}", started.elapsed());
    assert!(refused.message().contains("pods"), "{}", refused.message());
    assert_eq!(health_list_of(&kubelet, RESOURCE).len(), 8);

    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
    assert!(!daemon.log().contains("panicked"), "{}", daemon.log());
}
