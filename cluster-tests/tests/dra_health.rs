//! Chip health through the DRA driver on the real cluster, with the alpha gates DRADeviceTaints and
//! ResourceHealthStatus on (scripts/cluster/control_plane.sh, kubelet.yaml): a chip fault raised in the simulator
//! puts a device taint on the driver's ResourceSlice; a fault that only stops new work (`NoSchedule`) keeps new
//! claims off the chip and shows in the holder's `allocatedResourcesStatus` as Unhealthy, then Healthy after
//! recovery; a fault that isolates the chip (`NoExecute`) has the controller manager evict the pod holding it.

use std::time::Duration;

use ascend_cluster_tests::stack::{
    chip_fault, delete_pod, deploy_dra, remove_dra, sleeping_pod_spec, test_namespace, unschedulable_reason,
    DRA_CLASS_910B, DRA_DRIVER, NAMESPACE,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceSlice};
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

/// A sleeping pod with a claim (named as the pod) for one chip, picked by CEL when `physical_id` is given.
async fn start_pod_with_claim(cluster: &Cluster, name: &str, physical_id: Option<i64>) {
    delete_pod(cluster, name).await;
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let _ = claims.delete(name, &Default::default()).await;
    let selectors = physical_id.map_or_else(
        || json!([]),
        |id| json!([{"cel": {"expression": format!("device.attributes['{DRA_DRIVER}'].physicalId == {id}")}}]),
    );
    let claim = json!({
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRA_CLASS_910B, "selectors": selectors}}]}},
    });
    wait_until(&format!("claim {name} created"), Duration::from_secs(30), || async {
        claims
            .create(&PostParams::default(), &serde_json::from_value(claim.clone()).expect("claim"))
            .await
            .map_err(|error| error.to_string())
    })
    .await;
    // The pod's name for the claim is the ResourceClaim's own: kubelet 1.34 looks the claim's health up by the name
    // the container uses (kubernetes/kubernetes#134482, fixed in #134875), so a claim named otherwise, or made from
    // a template, never shows allocatedResourcesStatus there.
    let pod = json!({
        "metadata": {"name": name},
        "spec": sleeping_pod_spec(json!({"name": name, "resourceClaimName": name})),
    });
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
}

/// The device allocated to claim `name`, and its logic id (the simulator's handle on the chip).
async fn allocated_device(cluster: &Cluster, name: &str) -> (String, u32) {
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let claim = claims.get(name).await.expect("claim");
    let results = claim.status.and_then(|status| status.allocation).and_then(|allocation| allocation.devices);
    let device = results.and_then(|devices| devices.results).expect("allocated")[0].device.clone();
    let logic = device_logic(cluster, &device).await;
    (device, logic)
}

async fn device_logic(cluster: &Cluster, device: &str) -> u32 {
    let device = device_slice(cluster, device).await;
    let logic = device.attributes.unwrap_or_default().get("logicId").and_then(|value| value.int).expect("logicId");
    u32::try_from(logic).expect("logic id")
}

async fn device_slice(cluster: &Cluster, name: &str) -> k8s_openapi::api::resource::v1::Device {
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.expect("slices");
    list.items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(NODE_NAME))
        .flat_map(|slice| slice.spec.devices.unwrap_or_default())
        .find(|device| device.name == name)
        .unwrap_or_else(|| panic!("device {name} not published"))
}

/// The effect of the device's taint, if it has one.
async fn taint_effect(cluster: &Cluster, device: &str) -> Option<String> {
    let device = device_slice(cluster, device).await;
    device.taints.unwrap_or_default().first().map(|taint| taint.effect.clone())
}

/// The health the kubelet reports for the pod's allocated devices (`allocatedResourcesStatus`).
async fn reported_health(cluster: &Cluster, pod: &str) -> Vec<String> {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let pod = pods.get(pod).await.expect("pod");
    pod.status
        .and_then(|status| status.container_statuses)
        .unwrap_or_default()
        .into_iter()
        .flat_map(|container| container.allocated_resources_status.unwrap_or_default())
        .flat_map(|resource| resource.resources.unwrap_or_default())
        .filter_map(|resource| resource.health)
        .collect()
}

/// A fault that stops new work on the chip but needs no eviction: a restart-request code (Huawei's
/// RestartRequestCodes) with a minor alarm in the health word.
fn restart_request_fault(logic_id: u32) -> dcmi_sim::ChipOverlay {
    dcmi_sim::ChipOverlay {
        logic_id,
        health: Some(1),
        faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80C9_8008)]),
        ..dcmi_sim::ChipOverlay::default()
    }
}

/// A fault that isolates the chip: a code of Huawei's SeparateNPUCodes with a major alarm.
fn separating_fault(logic_id: u32) -> dcmi_sim::ChipOverlay {
    dcmi_sim::ChipOverlay {
        logic_id,
        health: Some(2),
        faults: Some(vec![dcmi_sim::topology::FaultSpec::Code(0x80E3_A201)]),
        ..dcmi_sim::ChipOverlay::default()
    }
}

/// Every chip of the 8-chip host healthy.
fn all_healthy() -> Vec<dcmi_sim::ChipOverlay> {
    (0..8).map(|logic_id| chip_fault(logic_id, false)).collect()
}

async fn wait_taint(cluster: &Cluster, device: &str, effect: Option<&str>) {
    wait_until(&format!("{device}'s taint {effect:?}"), Duration::from_secs(30), || async {
        let now = taint_effect(cluster, device).await;
        if now.as_deref() == effect {
            Ok(())
        } else {
            Err(format!("{now:?}"))
        }
    })
    .await;
}

async fn wait_reported(cluster: &Cluster, pod: &str, health: &str) {
    wait_until(&format!("{pod}'s chip reported {health}"), Duration::from_secs(60), || async {
        let reported = reported_health(cluster, pod).await;
        if reported == [health] {
            Ok(())
        } else {
            Err(format!("{reported:?}"))
        }
    })
    .await;
}

#[tokio::test]
async fn chip_faults_taint_devices_report_health_and_evict() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra health");
    // Overlay fields are assignments that stay until assigned again: every chip healthy, whatever ran before.
    cluster.set_overlay(all_healthy());
    deploy_dra(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    for name in ["health-holder", "tainted-chip"] {
        delete_pod(&cluster, name).await;
    }
    start_pod_with_claim(&cluster, "health-holder", None).await;
    cluster.wait_running(NAMESPACE, "health-holder", Duration::from_secs(90)).await;
    let (held, held_logic) = allocated_device(&cluster, "health-holder").await;
    // A free chip: the lowest-numbered other one.
    let free_physical: i64 = (0..8).find(|id| format!("npu-{id}") != held).expect("a free chip");
    let free = format!("npu-{free_physical}");
    let free_logic = device_logic(&cluster, &free).await;
    timer.mark("a pod holds a chip");
    println!("held: {held} (logic {held_logic}); free: {free} (logic {free_logic})");

    // Faults that stop new work on the held chip and the free one: NoSchedule taints; the holder runs on, and the
    // kubelet reports its chip Unhealthy.
    cluster.set_overlay(vec![restart_request_fault(held_logic), restart_request_fault(free_logic)]);
    wait_taint(&cluster, &held, Some("NoSchedule")).await;
    wait_taint(&cluster, &free, Some("NoSchedule")).await;
    timer.mark("fault: NoSchedule taints in the slice");
    wait_reported(&cluster, "health-holder", "Unhealthy").await;
    timer.mark("fault: the holder's allocatedResourcesStatus Unhealthy");
    // A claim for exactly the free, tainted chip is not allocated.
    start_pod_with_claim(&cluster, "tainted-chip", Some(free_physical)).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let reason = unschedulable_reason(&cluster, "tainted-chip").await;
    println!("scheduler: {reason}");
    assert!(reason.contains("cannot allocate all claims"), "{reason}");
    timer.mark("no claim allocated on the tainted chip");
    let phase = pods.get("health-holder").await.expect("holder").status.and_then(|status| status.phase);
    assert_eq!(phase.as_deref(), Some("Running"), "a NoSchedule taint evicts nothing");

    // Recovery: the taints go, the holder's chip is Healthy again, and the waiting pod gets the free chip.
    cluster.set_overlay(all_healthy());
    wait_taint(&cluster, &held, None).await;
    wait_taint(&cluster, &free, None).await;
    wait_reported(&cluster, "health-holder", "Healthy").await;
    cluster.wait_running(NAMESPACE, "tainted-chip", Duration::from_secs(90)).await;
    timer.mark("recovery: taints gone, Healthy, the waiting pod runs");

    // A fault that isolates the chip: NoExecute, and the controller manager evicts the pod holding it, not the other.
    cluster.set_overlay(vec![separating_fault(free_logic)]);
    wait_taint(&cluster, &free, Some("NoExecute")).await;
    timer.mark("isolating fault: NoExecute taint");
    wait_until("the pod on the isolated chip evicted", Duration::from_secs(60), || async {
        match pods.get_opt("tainted-chip").await.map_err(|e| e.to_string())? {
            None => Ok(()),
            Some(pod) if pod.metadata.deletion_timestamp.is_some() => Ok(()),
            Some(pod) => Err(format!("{:?}", pod.status.and_then(|status| status.phase))),
        }
    })
    .await;
    timer.mark("isolating fault: the pod on the chip evicted");
    let holder = pods.get("health-holder").await.expect("the holder is not evicted");
    assert!(holder.metadata.deletion_timestamp.is_none(), "the holder's chip is healthy: it stays");

    cluster.set_overlay(all_healthy());
    for name in ["health-holder", "tainted-chip"] {
        delete_pod(&cluster, name).await;
    }
    remove_dra(&cluster).await;
}
