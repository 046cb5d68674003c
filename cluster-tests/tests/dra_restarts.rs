//! The DRA driver through restarts on the real cluster: its own pod deleted while a pod holds a prepared claim (the
//! DaemonSet's new pod unprepares it from the checkpoint when the pod goes, and the chip serves again), and the
//! kubelet restarted (the node's devices are published again within 5 s of the kubelet's return; the running pod
//! keeps its chip). programs/tests/dra_driver_e2e.rs kills the driver between every step against the stand-ins;
//! this is the reference for the real kubelet's side.

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use ascend_cluster_tests::stack::{
    claim_cdi_specs, davinci_nodes, delete_pod, deploy_dra, published_devices, remove_dra, sleeping_pod_spec,
    test_namespace, DRA_CLASS_910B, DRA_DRIVER, DRA_NAMESPACE, NAMESPACE,
};
use ascend_cluster_tests::stack::{wait_claims_gone, wait_no_claim_cdi_specs};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::resource::v1::ResourceSlice;
use kube::api::{Api, ListParams, PostParams};
use serde_json::json;

const DRIVER_SELECTOR: &str = "app.kubernetes.io/name=ascend-dra-driver";

/// Starts a sleeping pod with a claim (from a template) for one chip and returns the chip its container sees.
async fn start_holder(cluster: &Cluster, name: &str) -> String {
    delete_pod(cluster, name).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let pod = json!({
        "metadata": {"name": name},
        "spec": sleeping_pod_spec(json!({"name": "npu", "resourceClaimTemplateName": "restart-one-npu"})),
    });
    pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
    cluster.wait_running(NAMESPACE, name, Duration::from_secs(90)).await;
    let listing = cluster.exec(NAMESPACE, name, &["ls", "/dev"]).stdout;
    let chips = davinci_nodes(&listing);
    assert_eq!(chips.len(), 1, "{name}: one chip: {listing}");
    chips[0].clone()
}

/// The uids of our ResourceSlices for the node.
async fn our_slices(cluster: &Cluster) -> BTreeSet<String> {
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.expect("list slices");
    list.items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(NODE_NAME))
        .filter_map(|slice| slice.metadata.uid)
        .collect()
}

async fn container_restarts(cluster: &Cluster, name: &str) -> i32 {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let pod = pods.get(name).await.expect("pod");
    pod.status.and_then(|status| status.container_statuses).unwrap_or_default().iter().map(|c| c.restart_count).sum()
}

#[tokio::test]
async fn claims_survive_a_driver_pod_deletion_and_a_kubelet_restart() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra restarts");
    deploy_dra(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    let _ = cluster.try_kubectl(&["delete", "resourceclaimtemplate", "restart-one-npu", "-n", NAMESPACE]);
    let template = json!({
        "metadata": {"name": "restart-one-npu"},
        "spec": {"spec": {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": DRA_CLASS_910B}}]}}},
    });
    let templates: Api<k8s_openapi::api::resource::v1::ResourceClaimTemplate> =
        Api::namespaced(cluster.client(), NAMESPACE);
    templates
        .create(&PostParams::default(), &serde_json::from_value(template).expect("template"))
        .await
        .expect("create");

    // The driver's pod is deleted while a pod holds a prepared claim. (The claim of a pod an interrupted run left is
    // unprepared by the kubelet after the pod object is gone: wait for that first.)
    delete_pod(&cluster, "dra-holder").await;
    wait_no_claim_cdi_specs("no prepared claim left on the node").await;
    let chip = start_holder(&cluster, "dra-holder").await;
    timer.mark("a pod holds a prepared claim");
    assert_eq!(claim_cdi_specs().len(), 1, "the prepared claim's CDI spec: {:?}", claim_cdi_specs());
    let old_driver = cluster.wait_pods_running(DRA_NAMESPACE, DRIVER_SELECTOR, 1, Duration::from_secs(30)).await;
    let old_driver = old_driver[0].metadata.name.clone().expect("name");
    cluster.kubectl(&["delete", "pod", "-n", DRA_NAMESPACE, &old_driver, "--wait=true"]);
    let new_driver = wait_until("the DaemonSet's new driver pod running", Duration::from_secs(120), || async {
        let running = cluster.wait_pods_running(DRA_NAMESPACE, DRIVER_SELECTOR, 1, Duration::from_secs(5)).await;
        let name = running[0].metadata.name.clone().expect("name");
        if name == old_driver {
            Err(format!("still {name}"))
        } else {
            Ok(name)
        }
    })
    .await;
    timer.mark("driver pod replaced");
    println!("driver pod {old_driver} replaced by {new_driver}");
    cluster.wait_running(NAMESPACE, "dra-holder", Duration::from_secs(10)).await;
    assert_eq!(container_restarts(&cluster, "dra-holder").await, 0, "the holder runs on untouched");

    // The pod goes: the new driver unprepares the claim it never prepared, from the checkpoint.
    delete_pod(&cluster, "dra-holder").await;
    wait_no_claim_cdi_specs("the claim unprepared by the new driver").await;
    timer.mark("claim unprepared by the new driver pod");
    wait_claims_gone(&cluster).await;

    // The kubelet restarts while a pod holds a chip: the devices are published again within 5 s of its return and the
    // pod runs on with its chip.
    let chip_after_driver = start_holder(&cluster, "dra-holder").await;
    println!("chips held: {chip} before the driver's restart, {chip_after_driver} after");
    let before = our_slices(&cluster).await;
    cluster.script("node.sh", &["restart-kubelet"]);
    let kubelet_back = Instant::now();
    timer.mark("kubelet restarted");
    // The kubelet deletes the node's slices when it starts (no driver has registered with it yet); the driver,
    // registered again, publishes new ones: new objects, not the old ones left alone.
    wait_until("8 devices published in new slices after the kubelet's restart", Duration::from_secs(30), || async {
        let now = our_slices(&cluster).await;
        let devices = published_devices(&cluster).await?;
        if devices.len() == 8 && !now.is_empty() && now.is_disjoint(&before) {
            Ok(())
        } else {
            Err(format!("slices {now:?} (before the restart {before:?}), devices {devices:?}"))
        }
    })
    .await;
    let republished = kubelet_back.elapsed();
    timer.mark("devices published after the kubelet's restart");
    assert!(republished < Duration::from_secs(5), "published again {republished:?} after the kubelet returned");
    cluster.wait_running(NAMESPACE, "dra-holder", Duration::from_secs(30)).await;
    assert_eq!(container_restarts(&cluster, "dra-holder").await, 0, "the holder runs on untouched");
    // exec goes through the kubelet, which may not have synced the pod yet.
    let listing = cluster.exec_retrying(NAMESPACE, "dra-holder", &["ls", "/dev"]).await.stdout;
    assert!(listing.split_whitespace().any(|node| node == chip_after_driver), "still {chip_after_driver}: {listing}");
    // And a new claim is prepared through the registration made after the restart.
    let second = start_holder(&cluster, "dra-after-kubelet").await;
    assert_ne!(second, chip_after_driver, "the new pod gets another chip");
    timer.mark("a new claim prepared after the kubelet's restart");

    delete_pod(&cluster, "dra-after-kubelet").await;
    delete_pod(&cluster, "dra-holder").await;
    let _ = templates.delete("restart-one-npu", &Default::default()).await;
    remove_dra(&cluster).await;
}
