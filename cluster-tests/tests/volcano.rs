//! The device plugin in Volcano mode on the real cluster (deploy/kubernetes/volcano-910b.yaml): the real API
//! server accepts its device-info ConfigMap, the ConfigMap follows a chip fault, and the fault is a Node Event that
//! `kubectl events` and `kubectl ascend faults` show. The reference for these scenarios; programs/tests/device_plugin_volcano.rs and
//! ascend-kube/tests/device_info_contract.rs cover the contract's details against the fake API server.

use std::time::Duration;

use ascend_cluster_tests::stack::{chip_fault, device_list, wait_free_chips, RESOURCE, SYSTEM};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::ConfigMap;
use kube::api::Api;

#[tokio::test]
async fn the_volcano_device_info_and_node_events_follow_a_fault() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("volcano");
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/volcano-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("device plugin in Volcano mode running");

    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = ascend_kube::device_info::config_map_name(NODE_NAME);
    let healthy = wait_free_chips(&cluster, 8).await;
    let labels = healthy.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("mx-consumer-cim").map(String::as_str), Some("true"), "Volcano's informer label");
    timer.mark("device-info ConfigMap accepted with 8 chips");

    let fault_at = k8s_openapi::jiff::Timestamp::now();
    cluster.set_overlay(vec![chip_fault(2, true)]);
    let unhealthy_key = format!("{RESOURCE}-Unhealthy");
    let unhealthy = wait_until("the faulty chip listed unhealthy", Duration::from_secs(30), || async {
        let config_map = config_maps.get(&name).await.map_err(|e| e.to_string())?;
        let unhealthy = device_list(&config_map, &unhealthy_key)?;
        if unhealthy.len() == 1 && device_list(&config_map, RESOURCE)?.len() == 7 {
            Ok(unhealthy)
        } else {
            Err(format!("unhealthy {unhealthy:?}"))
        }
    })
    .await;
    timer.mark("fault in the device-info ConfigMap");

    let events = wait_until("a fault Event for the node", Duration::from_secs(30), || async {
        let events = cluster.try_kubectl(&["events", "-A", "--for", &format!("node/{NODE_NAME}")])?;
        if events.lines().any(|line| line.contains(&unhealthy[0]) || line.contains("0x80E01801")) {
            Ok(events)
        } else {
            Err(events)
        }
    })
    .await;
    println!("{events}");
    timer.mark("fault Event shown by kubectl events");
    let faults = ascend_cluster::faults_report(&cluster.client()).await.expect("kubectl ascend faults");
    let current: Vec<&str> =
        faults.current.iter().filter(|fault| fault.node == NODE_NAME).map(|fault| fault.chip.as_str()).collect();
    assert_eq!(current, [unhealthy[0].as_str()], "the faulty chip, by name: {faults:?}");
    let raised = |event: &&ascend_cluster::FaultEvent| {
        event.node == NODE_NAME && event.chip == unhealthy[0] && event.time.is_some_and(|time| time >= fault_at)
    };
    let newest = faults.events.iter().find(raised).expect("this fault's Event in kubectl ascend faults");
    assert_eq!((newest.kind.as_str(), newest.reason.as_str()), ("Warning", "NpuFaultRaised"), "{newest:?}");
    timer.mark("fault and its Event in kubectl ascend faults");

    cluster.set_overlay(vec![chip_fault(2, false)]);
    wait_until("the chip healthy again", Duration::from_secs(30), || async {
        let config_map = config_maps.get(&name).await.map_err(|e| e.to_string())?;
        let free = device_list(&config_map, RESOURCE)?;
        if free.len() == 8 && device_list(&config_map, &unhealthy_key)?.is_empty() {
            Ok(())
        } else {
            Err(format!("free {free:?}"))
        }
    })
    .await;
    timer.mark("recovery in the device-info ConfigMap");

    // Back to the plain 910B pool for the tests after this one. The device-info ConfigMap outlives the Volcano mode
    // (nothing else owns it): an operator leaving Volcano deletes it, or `kubectl ascend` keeps showing the mode.
    cluster.apply("deploy/kubernetes/training-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    config_maps.delete(&name, &Default::default()).await.expect("delete the device-info ConfigMap");
}
