//! A small seeded cluster for the tests and the `demo_cluster` example: a node per mode (plain device plugin 310P,
//! Volcano 910B, an A3 node switched from the device plugin to DRA), a node without NPUs, pods holding chips, a
//! chip fault in each source and fault Events, as our daemons write them.
#![allow(dead_code)] // each includer uses what it needs

use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

/// 2026-01-01T00:00:00Z: the seeded times are before it, the reports count ages to it.
pub const NOW: i64 = 1_767_225_600;

fn time(seconds_before_now: i64) -> String {
    k8s_openapi::jiff::Timestamp::from_second(NOW - seconds_before_now).unwrap().to_string()
}

fn node(name: &str, labels: Value, capacity: Value, allocatable: Value, conditions: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": labels},
        "status": {"capacity": capacity, "allocatable": allocatable, "conditions": conditions}
    })
}

fn ready(heartbeat_before_now: i64) -> Value {
    json!({"type": "Ready", "status": "True", "lastHeartbeatTime": time(heartbeat_before_now)})
}

fn pod(namespace: &str, name: &str, node: &str, annotations: Value, limits: Value) -> Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": namespace, "name": name, "annotations": annotations},
        "spec": {"nodeName": node, "containers": [{"name": "main", "image": "train", "resources": {"limits": limits}}]},
        "status": {"phase": "Running"}
    })
}

fn device_info(node: &str, free: &str, unhealthy: &str, faults: Value, update_time: i64) -> Value {
    let document = json!({
        "DeviceInfo": {
            "DeviceList": {
                "huawei.com/Ascend910": free,
                "huawei.com/Ascend910-Unhealthy": unhealthy,
                "huawei.com/Ascend910-NetworkUnhealthy": "",
                "huawei.com/Ascend910-Recovering": "",
                "huawei.com/Ascend910-Fault": faults.to_string(),
            },
            "UpdateTime": update_time,
        },
        "SuperPodID": -1, "ServerIndex": -1, "CheckCode": "not-checked-by-readers"
    });
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "kube-system", "name": format!("mindx-dl-deviceinfo-{node}"),
                     "labels": {"mx-consumer-cim": "true"}},
        "data": {"DeviceInfoCfg": document.to_string()}
    })
}

fn dra_slice(node: &str, generation: i64, tainted: &[u32]) -> Value {
    let devices: Vec<Value> = (0..8u32)
        .map(|phy| {
            let mut device = json!({
                "name": format!("npu-{phy}"),
                "attributes": {
                    "type": {"string": "Ascend910A3"}, "physicalId": {"int": phy}, "vnpu": {"bool": false},
                    "hccsGroup": {"int": phy / 4}, "driverVersion": {"string": "25.2.0"}
                }
            });
            if tainted.contains(&phy) {
                device["taints"] = json!([{"key": "npu.huawei.com/unhealthy", "value": "SeparateNPU",
                                           "effect": "NoExecute", "timeAdded": time(300)}]);
            }
            device
        })
        .collect();
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": format!("{node}-npu-huawei-com-0")},
        "spec": {"driver": "npu.huawei.com", "nodeName": node,
                 "pool": {"name": node, "generation": generation, "resourceSliceCount": 1}, "devices": devices}
    })
}

fn claim(namespace: &str, name: &str, node: &str, devices: &[&str], pod: &str) -> Value {
    let results: Vec<Value> = devices
        .iter()
        .map(|device| json!({"request": "npus", "driver": "npu.huawei.com", "pool": node, "device": device}))
        .collect();
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {"devices": {"requests": [{"name": "npus", "exactly": {"deviceClassName": "npu.huawei.com",
                                                                         "count": devices.len()}}]}},
        "status": {"allocation": {"devices": {"results": results}},
                   "reservedFor": [{"resource": "pods", "name": pod, "uid": format!("uid-{pod}")}]}
    })
}

pub fn event(name: &str, node: &str, kind: &str, reason: &str, chip: &str, seconds_before_now: i64) -> Value {
    json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"namespace": "default", "name": name},
        "eventTime": k8s_openapi::jiff::Timestamp::from_second(NOW - seconds_before_now).unwrap()
            .strftime("%Y-%m-%dT%H:%M:%S.000000Z").to_string(),
        "reportingController": "ascend-device-plugin", "reportingInstance": node,
        "action": chip, "reason": reason, "type": kind, "note": format!("NPU {chip}: {reason}"),
        "regarding": {"kind": "Node", "name": node, "apiVersion": "v1"}
    })
}

/// The cluster before the switch: `a3-1` still runs the device plugin.
pub async fn seeded_cluster() -> FakeApiServer {
    let server = FakeApiServer::start().await.expect("fake API server");
    // A plain device-plugin 310P node: 4 chips, one unhealthy (allocatable 3), a pod holding 2.
    server.seed(node(
        "infer-1",
        json!({"ascend.huawei.com/chip-type": "310P", "ascend.huawei.com/driver-version": "24.1.rc2",
               "ascend.huawei.com/cann-version": "8.0.RC3"}),
        json!({"huawei.com/Ascend310P": "4", "cpu": "64"}),
        json!({"huawei.com/Ascend310P": "3", "cpu": "64"}),
        json!([ready(20), {"type": "AscendNPUUnhealthy", "status": "True", "reason": "NPUUnhealthy",
                           "message": "1 of 4 NPUs unhealthy: Ascend310P-2: fault 80E01801 level SeparateNPU",
                           "lastHeartbeatTime": time(30), "lastTransitionTime": time(3_600)}]),
    ));
    server.seed(pod("infer", "svc-0", "infer-1", json!({}), json!({"huawei.com/Ascend310P": "2"})));
    // A Volcano 910B node: chip 4 faulty, chips 6 and 7 held by a pod, the others free.
    server.seed(node(
        "train-1",
        json!({"ascend.huawei.com/chip-type": "910B", "ascend.huawei.com/driver-version": "24.1.rc2"}),
        json!({"huawei.com/Ascend910": "8"}),
        json!({"huawei.com/Ascend910": "7"}),
        json!([ready(20)]),
    ));
    let fault = json!([{"fault_type": "CardUnhealthy", "npu_name": "Ascend910-4",
        "large_model_fault_level": "SeparateNPU", "fault_level": "SeparateNPU", "fault_handling": "SeparateNPU",
        "fault_code": "80E01801",
        "fault_time_and_level_map": {"80E01801": {"fault_time": (NOW - 120) * 1000, "fault_level": "SeparateNPU"}}}]);
    server.seed(device_info(
        "train-1",
        "Ascend910-0,Ascend910-1,Ascend910-2,Ascend910-3,Ascend910-5",
        "Ascend910-4",
        fault,
        NOW - 5,
    ));
    server.seed(pod(
        "train",
        "job-0",
        "train-1",
        json!({"huawei.com/AscendReal": "Ascend910-6,Ascend910-7", "huawei.com/Ascend910": "Ascend910-6,Ascend910-7"}),
        json!({"huawei.com/Ascend910": "2"}),
    ));
    // An A3 node on the device plugin, before its switch to DRA: 8 chips, all healthy.
    server.seed(node(
        "a3-1",
        json!({"ascend.huawei.com/chip-type": "910A3", "ascend.huawei.com/driver-version": "25.2.0"}),
        json!({"huawei.com/Ascend910": "8"}),
        json!({"huawei.com/Ascend910": "8"}),
        json!([ready(10)]),
    ));
    // A CPU node.
    server.seed(node("cpu-1", json!({}), json!({"cpu": "32"}), json!({"cpu": "32"}), json!([ready(10)])));
    // Events: a fault, a recovery, and an unrelated Event.
    server.seed(event("e1", "train-1", "Warning", "NpuFaultRaised", "Ascend910-4", 120));
    server.seed(event("e2", "infer-1", "Normal", "NpuFaultRecovered", "Ascend310P-1", 7_200));
    server.seed(event("e3", "train-1", "Normal", "Starting", "", 60));
    server
}

/// Switches `a3-1` to the DRA driver: the device plugin is gone, so the kubelet's allocatable of its resource drops
/// to 0 while its capacity stays for 5 minutes (as the real kubelet does, seen on the test bed), the driver publishes
/// a slice (chip 1 tainted) and a claim holds chips 4 and 5.
pub fn switch_to_dra(server: &FakeApiServer) {
    server.seed(node(
        "a3-1",
        json!({"ascend.huawei.com/chip-type": "910A3", "ascend.huawei.com/driver-version": "25.2.0"}),
        json!({"huawei.com/Ascend910": "8"}),
        json!({"huawei.com/Ascend910": "0"}),
        json!([ready(10)]),
    ));
    // An older generation of the pool, which the scheduler (and the report) ignore.
    let mut stale = dra_slice("a3-1", 1, &[0, 2, 3]);
    stale["metadata"]["name"] = json!("a3-1-npu-huawei-com-old");
    server.seed(stale);
    server.seed(dra_slice("a3-1", 2, &[1]));
    server.seed(claim("train", "claim-a", "a3-1", &["npu-4", "npu-5"], "job-1"));
    server.seed(pod("train", "job-1", "a3-1", json!({}), json!({})));
}
