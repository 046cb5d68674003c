//! What the cluster tests share: deploying the 910B pool's stack from deploy/ and starting pods that ask for chips.
#![allow(dead_code)]

use std::time::Duration;

use ascend_cluster_tests::{wait_until, Cluster, Timer};
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, DeleteParams, PostParams};

pub const RESOURCE: &str = "huawei.com/Ascend910";
pub const NAMESPACE: &str = "ascend-e2e";
/// The namespace the 910B pool's overlay deploys to.
pub const SYSTEM: &str = "ascend-training-910b";

/// Labels the node as an NPU node of the 910B pool (deploy/README.md, step 3) and applies the pool's overlay; waits
/// until the device plugin's and exporter's pods run and the node offers 8 chips.
pub async fn deploy_910b_pool(cluster: &Cluster, timer: &mut Timer) {
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("-k", "deploy/kubernetes/overlays/training-910b");
    let limit = Duration::from_secs(120);
    cluster.wait_pods_running(SYSTEM, "app.kubernetes.io/name=ascend-device-plugin", 1, limit).await;
    cluster.wait_pods_running(SYSTEM, "app.kubernetes.io/name=npu-exporter", 1, limit).await;
    timer.mark("device plugin and exporter pods running");
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("node allocatable huawei.com/Ascend910 = 8");
}

pub async fn test_namespace(cluster: &Cluster) {
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    if namespaces.get_opt(NAMESPACE).await.expect("get namespace").is_none() {
        let namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": NAMESPACE}})).expect("namespace");
        namespaces.create(&PostParams::default(), &namespace).await.expect("create namespace");
    }
    wait_until("the test namespace's default ServiceAccount", Duration::from_secs(30), || async {
        let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(cluster.client(), NAMESPACE);
        accounts.get_opt("default").await.map_err(|e| e.to_string())?.map(|_| ()).ok_or_else(|| "absent".to_owned())
    })
    .await;
}

/// A busybox pod whose one container, `work`, asks for `chips` of the 910B resource.
pub fn npu_pod(name: &str, chips: u32) -> Pod {
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "terminationGracePeriodSeconds": 1,
            "containers": [{
                "name": "work",
                "image": "localhost/ascend-test/busybox:1",
                "imagePullPolicy": "Never",
                "command": ["sleep", "3600"],
                "resources": {"limits": {RESOURCE: chips.to_string()}},
            }],
        },
    }))
    .expect("pod")
}

/// Starts the pod (replacing one an interrupted earlier run left) and waits until it runs.
pub async fn start_pod(cluster: &Cluster, name: &str, chips: u32) -> Pod {
    delete_pod(cluster, name).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &npu_pod(name, chips)).await.expect("create pod");
    cluster.wait_running(NAMESPACE, name, Duration::from_secs(60)).await
}

pub async fn delete_pod(cluster: &Cluster, name: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let _ = pods.delete(name, &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() }).await;
    wait_until(&format!("pod {name} gone"), Duration::from_secs(60), || async {
        match pods.get_opt(name).await {
            Ok(None) => Ok(()),
            other => Err(format!("{:?}", other.map(|pod| pod.map(|pod| pod.status)))),
        }
    })
    .await;
}

/// The name of the one running pod selected by `selector` in ascend-system.
pub async fn daemon_pod(cluster: &Cluster, selector: &str) -> String {
    let pods = cluster.wait_pods_running(SYSTEM, selector, 1, Duration::from_secs(120)).await;
    pods[0].metadata.name.clone().expect("pod name")
}

/// A chip fault the fault policy takes the chip out for (an important alarm with a fault code), or its recovery.
pub fn chip_fault(logic_id: u32, faulty: bool) -> dcmi_sim::ChipOverlay {
    let faults = if faulty { vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)] } else { Vec::new() };
    dcmi_sim::ChipOverlay {
        logic_id,
        health: Some(if faulty { 2 } else { 0 }),
        faults: Some(faults),
        ..dcmi_sim::ChipOverlay::default()
    }
}
