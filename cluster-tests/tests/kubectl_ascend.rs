//! `kubectl ascend` on the real cluster: each report shows the truth after a pod takes chips, a chip faults and
//! recovers, and the node is switched from the device plugin to the DRA driver, read from what our daemons published
//! on the real API server; `doctor NODE` runs the doctor in the node's daemon pod through the real kubelet's exec.
//! The reference for these scenarios; ascend-cluster/tests/cluster_reports.rs covers every source (DRA, Volcano) and
//! the command line against the fake API server. The fault Events of `faults` are checked in volcano.rs, where the
//! device plugin runs with `--node-events`.

use std::time::Duration;

use ascend_cluster::{
    capacity_report, doctor_report, faults_report, nodes_report, pods_report, CapacityQuery, Mode, NodeNpus, Scope,
};
use ascend_cluster_tests::stack::{
    chip_fault, delete_pod, deploy_910b_pool, deploy_dra, remove_dra, sleeping_pod_spec, start_pod, test_namespace,
    DRA_CLASS_910B, NAMESPACE,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::ResourceClaim;
use kube::api::{Api, PostParams};
use serde_json::json;

async fn our_node(cluster: &Cluster) -> Result<NodeNpus, String> {
    let report = nodes_report(&cluster.client()).await.map_err(|error| error.to_string())?;
    report.nodes.into_iter().find(|node| node.node == NODE_NAME).ok_or_else(|| "node not in the report".to_owned())
}

/// How many nodes `kubectl ascend capacity --chips N` lists.
async fn fits(cluster: &Cluster, chips: u32) -> usize {
    let query = CapacityQuery { chips, same_hccs: false, chip_type: None };
    capacity_report(&cluster.client(), &query).await.expect("capacity report").fits.len()
}

#[tokio::test]
async fn kubectl_ascend_shows_allocation_faults_and_room_on_the_real_cluster() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("kubectl ascend");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    start_pod(&cluster, "two-for-the-report", 2).await;
    timer.mark("a pod holds 2 chips");

    // A DRA driver that ran before leaves slices for 30 s; the report follows the node back to the device plugin.
    let node = wait_until("the node reported as a device-plugin node", Duration::from_secs(90), || async {
        let node = our_node(&cluster).await?;
        if node.modes == [ascend_cluster::Mode::DevicePlugin] {
            Ok(node)
        } else {
            Err(format!("{:?}", node.modes))
        }
    })
    .await;
    assert_eq!((node.total, node.allocated), (8, 2), "{node:?}");
    let pods = pods_report(&cluster.client(), &Scope::Namespace(NAMESPACE.to_owned())).await.expect("pods report");
    let held = pods.pods.iter().find(|pod| pod.pod == "two-for-the-report").expect("the pod in the report");
    assert_eq!((held.count, held.node.as_deref()), (2, Some(NODE_NAME)), "{held:?}");
    assert_eq!(fits(&cluster, 6).await, 1, "six chips fit beside the pod");
    assert_eq!(fits(&cluster, 7).await, 0, "seven do not");
    timer.mark("nodes, pods and capacity reports");

    cluster.set_overlay(vec![chip_fault(6, true)]);
    let faulty = wait_until("the report shows the unhealthy chip", Duration::from_secs(30), || async {
        let node = our_node(&cluster).await?;
        if node.unhealthy == 1 {
            Ok(node)
        } else {
            Err(format!("{node:?}"))
        }
    })
    .await;
    assert_eq!(faulty.healthy, 7, "{faulty:?}");
    assert_eq!(fits(&cluster, 6).await, 0, "a faulty chip leaves only five");
    let faults = faults_report(&cluster.client()).await.expect("faults report");
    let ours: Vec<_> = faults.current.iter().filter(|fault| fault.node == NODE_NAME).collect();
    assert_eq!(ours.len(), 1, "one current fault on the node: {faults:?}");
    timer.mark("fault in the reports");
    cluster.set_overlay(vec![chip_fault(6, false)]);
    wait_until("the chip healthy again in the report", Duration::from_secs(30), || async {
        let node = our_node(&cluster).await?;
        if node.unhealthy == 0 && node.healthy == 8 {
            Ok(())
        } else {
            Err(format!("{node:?}"))
        }
    })
    .await;
    let faults = faults_report(&cluster.client()).await.expect("faults report");
    assert!(faults.current.iter().all(|fault| fault.node != NODE_NAME), "no current fault after recovery: {faults:?}");
    timer.mark("recovery in the reports");
    delete_pod(&cluster, "two-for-the-report").await;

    // `kubectl ascend doctor NODE`: the doctor in the device plugin's pod, through the API server's exec.
    let run = doctor_report(&cluster.client(), NODE_NAME, &["--section".into(), "driver".into(), "--json".into()])
        .await
        .expect("doctor through exec");
    assert_eq!(run.daemon.container, "device-plugin", "{run:?}");
    let report: serde_json::Value = serde_json::from_str(&run.stdout).unwrap_or_else(|error| {
        panic!("the doctor's JSON report ({error}): {}\n{}", run.stdout, run.stderr);
    });
    let checks = report["checks"].as_array().expect("checks");
    let ids: Vec<&str> = checks.iter().filter_map(|check| check["id"].as_str()).collect();
    assert!(ids.contains(&"driver.dcmi_init"), "{ids:?}");
    let failed = checks.iter().any(|check| check["status"] == "fail");
    assert_eq!(run.exit_code, Some(i32::from(failed)), "exit code follows the checks: {run:?}");
    timer.mark("doctor NODE through exec");

    // The node switched to the DRA driver: the reports follow at once (the kubelet keeps the departed plugin's
    // capacity for 5 minutes, which the report does not count), and a claim's pod holds a named chip.
    deploy_dra(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    let node = wait_until("the node reported as a DRA node", Duration::from_secs(10), || async {
        let node = our_node(&cluster).await?;
        if node.modes == [Mode::Dra] && node.total == 8 {
            Ok(node)
        } else {
            Err(format!("{node:?}"))
        }
    })
    .await;
    assert_eq!((node.allocated, node.healthy), (0, 8), "{node:?}");
    let claim = json!({
        "metadata": {"name": "dra-for-the-report"},
        "spec": {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRA_CLASS_910B}}]}},
    });
    let claims: Api<ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    claims.create(&PostParams::default(), &serde_json::from_value(claim).expect("claim")).await.expect("create claim");
    let pod = json!({
        "metadata": {"name": "dra-for-the-report"},
        "spec": sleeping_pod_spec(json!({"name": "npu", "resourceClaimName": "dra-for-the-report"})),
    });
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
    cluster.wait_running(NAMESPACE, "dra-for-the-report", Duration::from_secs(60)).await;
    let pods_report = pods_report(&cluster.client(), &Scope::Namespace(NAMESPACE.to_owned())).await.expect("pods");
    let held = pods_report.pods.iter().find(|pod| pod.pod == "dra-for-the-report").expect("the DRA pod reported");
    assert_eq!((held.mode, held.count, held.chips.len()), (Mode::Dra, 1, 1), "{held:?}");
    assert_eq!(held.claim.as_deref(), Some("dra-for-the-report"), "{held:?}");
    assert_eq!(our_node(&cluster).await.expect("node").allocated, 1);
    timer.mark("DRA node and its claim in the reports");
    remove_dra(&cluster).await;
}
