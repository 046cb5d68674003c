//! A simulated fleet of NPU nodes as our daemons publish them, for the fake API server: the objects
//! `kubectl ascend` reads on a cluster of `nodes` nodes, mixed by generation and mode, some faulty, a third of them
//! running a job.
//!
//! Node `i` is, by `i % 20`: 0-7 an Ascend 910B server (8 chips) under Volcano (the device plugin's capacity and
//! its device-info ConfigMap); 8-11 an Atlas A3 server (16 dies) under the DRA driver (a ResourceSlice, claims);
//! 12-16 a 310P inference server (4 chips, plain device plugin); 17-19 an Atlas 950 server (8 chips,
//! `huawei.com/npu`, plain device plugin). Every tenth node has one faulty chip (published as that mode publishes
//! it, with a fault Event); every third runs a pod holding 4 chips.

use serde_json::{json, Value};

/// The seconds since the Unix epoch the fleet's times are counted back from.
pub const FLEET_EPOCH: i64 = 1_767_225_600;

/// Which generation and mode a node has.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FleetNode {
    /// Ascend 910B, Volcano.
    Volcano910B,
    /// Atlas A3, DRA.
    DraA3,
    /// Ascend 310P, plain device plugin.
    Plugin310P,
    /// Atlas 950, plain device plugin.
    Plugin950,
}

impl FleetNode {
    /// The kind of node `index`.
    pub fn of(index: usize) -> FleetNode {
        match index % 20 {
            0..=7 => FleetNode::Volcano910B,
            8..=11 => FleetNode::DraA3,
            12..=16 => FleetNode::Plugin310P,
            _ => FleetNode::Plugin950,
        }
    }

    /// Its chips.
    pub fn chips(self) -> u32 {
        match self {
            FleetNode::Volcano910B | FleetNode::Plugin950 => 8,
            FleetNode::DraA3 => 16,
            FleetNode::Plugin310P => 4,
        }
    }
}

/// Whether node `index` has a faulty chip.
pub fn is_faulty(index: usize) -> bool {
    index % 10 == 3
}

/// Whether node `index` runs a job of [`JOB_CHIPS`] chips.
pub fn runs_job(index: usize) -> bool {
    index.is_multiple_of(3)
}

/// The chips a job holds.
pub const JOB_CHIPS: u32 = 4;

/// The name of node `index`.
pub fn node_name(index: usize) -> String {
    format!("npu-node-{index:04}")
}

/// Every object of a fleet of `nodes` nodes, in an order the fake API server can seed.
pub fn fleet(nodes: usize) -> Vec<Value> {
    (0..nodes).flat_map(node_objects).collect()
}

fn time(seconds_before: i64) -> String {
    format!("{}", k8s_openapi::jiff::Timestamp::from_second(FLEET_EPOCH - seconds_before).unwrap_or_default())
}

fn node_objects(index: usize) -> Vec<Value> {
    let kind = FleetNode::of(index);
    let name = node_name(index);
    let chips = kind.chips();
    let faulty = is_faulty(index);
    let job = runs_job(index);
    let (chip_type, resource) = match kind {
        FleetNode::Volcano910B => ("910B", "huawei.com/Ascend910"),
        FleetNode::DraA3 => ("910A3", "huawei.com/Ascend910"),
        FleetNode::Plugin310P => ("310P", "huawei.com/Ascend310P"),
        FleetNode::Plugin950 => ("950", "huawei.com/npu"),
    };
    let plugin_chips = if kind == FleetNode::DraA3 { 0 } else { chips };
    let healthy = plugin_chips - u32::from(faulty && kind != FleetNode::DraA3);
    let mut conditions = vec![json!({"type": "Ready", "status": "True", "lastHeartbeatTime": time(20)})];
    if faulty && matches!(kind, FleetNode::Plugin310P | FleetNode::Plugin950) {
        conditions.push(json!({"type": "AscendNPUUnhealthy", "status": "True", "reason": "NPUUnhealthy",
            "message": format!("1 of {chips} NPUs unhealthy: chip 2: fault 80E01801 level SeparateNPU"),
            "lastHeartbeatTime": time(30), "lastTransitionTime": time(600)}));
    }
    let mut objects = vec![json!({
        "apiVersion": "v1", "kind": "Node",
        "metadata": {"name": name, "labels": {
            "kubernetes.io/hostname": name, "ascend.huawei.com/chip-type": chip_type,
            "ascend.huawei.com/chip-count": chips.to_string(), "ascend.huawei.com/driver-version": "24.1.rc3"}},
        "status": {
            "capacity": {"cpu": "192", "memory": "1536Gi", resource: plugin_chips.to_string()},
            "allocatable": {"cpu": "190", "memory": "1500Gi", resource: healthy.to_string()},
            "conditions": conditions,
        }
    })];
    let job_chips: Vec<u32> = if job { (chips - JOB_CHIPS..chips).collect() } else { Vec::new() };
    match kind {
        FleetNode::Volcano910B => objects.push(device_info(&name, chips, faulty, &job_chips)),
        FleetNode::DraA3 => {
            objects.push(slice(&name, chips, faulty));
            if job {
                objects.push(claim(&name, &job_chips));
            }
        }
        FleetNode::Plugin310P | FleetNode::Plugin950 => {}
    }
    if job {
        let mut annotations = json!({});
        let mut limits = json!({});
        match kind {
            FleetNode::Volcano910B => {
                let real: Vec<String> = job_chips.iter().map(|phy| format!("Ascend910-{phy}")).collect();
                annotations = json!({"huawei.com/AscendReal": real.join(","), "huawei.com/Ascend910": real.join(",")});
                limits = json!({resource: JOB_CHIPS.to_string()});
            }
            FleetNode::DraA3 => {}
            FleetNode::Plugin310P | FleetNode::Plugin950 => limits = json!({resource: JOB_CHIPS.to_string()}),
        }
        objects.push(json!({
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"namespace": "training", "name": format!("job-{index:04}"), "annotations": annotations},
            "spec": {"nodeName": name, "containers": [{"name": "main", "image": "train",
                                                       "resources": {"limits": limits}}]},
            "status": {"phase": "Running"}
        }));
    }
    if faulty {
        objects.push(json!({
            "apiVersion": "events.k8s.io/v1", "kind": "Event",
            "metadata": {"namespace": "default", "name": format!("{name}.fault")},
            "eventTime": format!("{}", k8s_openapi::jiff::Timestamp::from_second(FLEET_EPOCH - 120).unwrap_or_default()
                .strftime("%Y-%m-%dT%H:%M:%S.000000Z")),
            "reportingController": "ascend-device-plugin", "reportingInstance": name,
            "action": "chip-2", "reason": "NpuFaultRaised", "type": "Warning", "note": "fault 80E01801 level SeparateNPU",
            "regarding": {"kind": "Node", "name": name, "apiVersion": "v1"}
        }));
    }
    objects
}

fn device_info(node: &str, chips: u32, faulty: bool, held: &[u32]) -> Value {
    let name = |phy: u32| format!("Ascend910-{phy}");
    let free: Vec<String> = (0..chips).filter(|phy| !(held.contains(phy) || faulty && *phy == 2)).map(name).collect();
    let unhealthy = if faulty { name(2) } else { String::new() };
    let faults = if faulty {
        json!([{"fault_type": "CardUnhealthy", "npu_name": name(2), "large_model_fault_level": "SeparateNPU",
                "fault_level": "SeparateNPU", "fault_handling": "SeparateNPU", "fault_code": "80E01801",
                "fault_time_and_level_map": {"80E01801": {"fault_time": (FLEET_EPOCH - 120) * 1000,
                                                          "fault_level": "SeparateNPU"}}}])
    } else {
        json!([])
    };
    let document = json!({
        "DeviceInfo": {"DeviceList": {
            "huawei.com/Ascend910": free.join(","), "huawei.com/Ascend910-Unhealthy": unhealthy,
            "huawei.com/Ascend910-NetworkUnhealthy": "", "huawei.com/Ascend910-Recovering": "",
            "huawei.com/Ascend910-Fault": faults.to_string()}, "UpdateTime": FLEET_EPOCH - 5},
        "SuperPodID": -1, "ServerIndex": -1, "CheckCode": ""
    });
    json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"namespace": "kube-system", "name": format!("mindx-dl-deviceinfo-{node}"),
                     "labels": {"mx-consumer-cim": "true"}},
        "data": {"DeviceInfoCfg": document.to_string()}
    })
}

fn slice(node: &str, chips: u32, faulty: bool) -> Value {
    let devices: Vec<Value> = (0..chips)
        .map(|phy| {
            let mut device = json!({"name": format!("npu-{phy}"), "attributes": {
                "type": {"string": "Ascend910A3"}, "model": {"string": "Ascend910_9392"},
                "physicalId": {"int": phy}, "logicId": {"int": phy}, "vnpu": {"bool": false},
                "hccsGroup": {"int": phy / 4}, "driverVersion": {"string": "24.1.rc3"}},
                "capacity": {"aiCores": {"value": "24"}, "memory": {"value": "68719476736"}}});
            if faulty && phy == 2 {
                device["taints"] = json!([{"key": "npu.huawei.com/unhealthy", "value": "SeparateNPU",
                                           "effect": "NoExecute", "timeAdded": time(120)}]);
            }
            device
        })
        .collect();
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
        "metadata": {"name": format!("{node}-npu-huawei-com-0"), "labels": {"resource.ascend.huawei.com/node": node}},
        "spec": {"driver": "npu.huawei.com", "nodeName": node,
                 "pool": {"name": node, "generation": 1, "resourceSliceCount": 1}, "devices": devices}
    })
}

fn claim(node: &str, chips: &[u32]) -> Value {
    let results: Vec<Value> = chips
        .iter()
        .map(|phy| json!({"request": "npus", "driver": "npu.huawei.com", "pool": node, "device": format!("npu-{phy}")}))
        .collect();
    json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"namespace": "training", "name": format!("{node}-job")},
        "spec": {"devices": {"requests": [{"name": "npus", "exactly": {"deviceClassName": "npu.huawei.com",
                                                                         "count": chips.len()}}]}},
        "status": {"allocation": {"devices": {"results": results}},
                   "reservedFor": [{"resource": "pods", "name": format!("job-{}", &node["npu-node-".len()..]),
                                    "uid": format!("uid-{node}")}]}
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_fleet_mixes_generations_faults_and_jobs() {
        let objects = fleet(20);
        let nodes = objects.iter().filter(|object| object["kind"] == "Node").count();
        assert_eq!(nodes, 20);
        assert_eq!(objects.iter().filter(|object| object["kind"] == "ResourceSlice").count(), 4);
        assert_eq!(objects.iter().filter(|object| object["kind"] == "ConfigMap").count(), 8);
        assert_eq!(objects.iter().filter(|object| object["kind"] == "Event").count(), 2);
        assert_eq!(objects.iter().filter(|object| object["kind"] == "Pod").count(), 7);
    }
}
