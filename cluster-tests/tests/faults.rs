//! What operators restart under running NPU pods, on the real cluster: the kubelet, containerd, the API server, and the
//! device plugin's own pod. Running pods keep their chips, the plugin registers again by itself, no chip is handed
//! out twice, and no update is lost. Each recovery's time is printed in the test log.
//! The reference for these scenarios; programs/tests/device_plugin_faults.rs covers the plugin's side of them
//! against the in-repo kubelet peer (socket removal, kubelet restarts, wall-clock jumps).

use std::time::Duration;

use ascend_cluster_tests::stack::{
    chip_fault, daemon_pod, delete_pod, deploy_910b_pool, npu_pod, start_pod, test_namespace, NAMESPACE, RESOURCE,
    SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, PostParams};

/// The davinci nodes the pod's container sees.
async fn chips_seen(cluster: &Cluster, pod: &str) -> Vec<String> {
    let listing = cluster.exec_retrying(NAMESPACE, pod, &["ls", "/dev"]).await.stdout;
    listing
        .split_whitespace()
        .filter(|node| node.starts_with("davinci") && node[7..].parse::<u32>().is_ok())
        .map(str::to_owned)
        .collect()
}

/// The restart counts of our daemons' containers.
async fn daemon_restarts(cluster: &Cluster) -> Vec<(String, i32)> {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), SYSTEM);
    let mut restarts = Vec::new();
    for pod in pods.list(&ListParams::default()).await.expect("list pods").items {
        for status in pod.status.and_then(|s| s.container_statuses).unwrap_or_default() {
            restarts.push((
                format!("{}/{}", pod.metadata.name.clone().unwrap_or_default(), status.name),
                status.restart_count,
            ));
        }
    }
    restarts.sort();
    restarts
}

/// A pod asking for `chips` stays unschedulable: no chip the running pods hold is offered again.
async fn assert_unschedulable(cluster: &Cluster, name: &str, chips: u32) {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &npu_pod(name, chips)).await.expect("create pod");
    wait_until(&format!("{name} unschedulable"), Duration::from_secs(30), || async {
        let pod = pods.get(name).await.map_err(|error| error.to_string())?;
        let status = pod.status.unwrap_or_default();
        status
            .conditions
            .iter()
            .flatten()
            .find(|c| c.type_ == "PodScheduled" && c.status == "False" && c.reason.as_deref() == Some("Unschedulable"))
            .map(|_| ())
            .ok_or_else(|| format!("{:?} {:?}", status.phase, status.conditions))
    })
    .await;
    delete_pod(cluster, name).await;
}

#[tokio::test]
async fn running_pods_keep_their_chips_through_kubelet_containerd_apiserver_and_plugin_restarts() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("faults");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    start_pod(&cluster, "holder", 2).await;
    let held = chips_seen(&cluster, "holder").await;
    assert_eq!(held.len(), 2, "{held:?}");
    timer.mark("a pod holds 2 chips");

    // The kubelet restarts: it wipes the device-plugin directory, the plugin registers again by itself.
    cluster.script("node.sh", &["restart-kubelet"]);
    timer.mark("kubelet restarted");
    // A new pod's Allocate reaches the plugin only through a registration made after the restart.
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    cluster.wait_running(NAMESPACE, "holder", Duration::from_secs(30)).await;
    assert_eq!(chips_seen(&cluster, "holder").await, held, "the running pod keeps its chips");
    start_pod(&cluster, "after-kubelet", 1).await;
    timer.mark("plugin registered again, new pod started");
    delete_pod(&cluster, "after-kubelet").await;
    assert_unschedulable(&cluster, "too-many-after-kubelet", 7).await;

    // containerd restarts: the containers run on under their shims.
    cluster.script("node.sh", &["restart-containerd"]);
    timer.mark("containerd restarted");
    cluster.wait_running(NAMESPACE, "holder", Duration::from_secs(30)).await;
    assert_eq!(chips_seen(&cluster, "holder").await, held, "the running pod keeps its chips");
    start_pod(&cluster, "after-containerd", 1).await;
    timer.mark("new pod started after containerd restart");
    delete_pod(&cluster, "after-containerd").await;

    // The API server goes away, a chip faults meanwhile, and the API server comes back: no daemon restarts, and the
    // fault reaches the Node.
    let before = daemon_restarts(&cluster).await;
    cluster.script("control_plane.sh", &["restart-apiserver"]);
    timer.mark("kube-apiserver restarted");
    cluster.set_overlay(vec![chip_fault(5, true)]);
    cluster.wait_allocatable(RESOURCE, "7", Duration::from_secs(30)).await;
    timer.mark("fault after the API server's restart reached the Node");
    cluster.set_overlay(vec![chip_fault(5, false)]);
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(30)).await;
    assert_eq!(daemon_restarts(&cluster).await, before, "no daemon restarted because the API server did");

    // The plugin's pod is deleted while a pod holds chips: the DaemonSet brings it back, the holder keeps its chips,
    // and the chips it holds are not offered again.
    let plugin = daemon_pod(&cluster, "app.kubernetes.io/name=ascend-device-plugin").await;
    cluster.kubectl(&["-n", SYSTEM, "delete", "pod", &plugin]);
    timer.mark("device plugin pod deleted");
    cluster.wait_pods_running(SYSTEM, "app.kubernetes.io/name=ascend-device-plugin", 1, Duration::from_secs(120)).await;
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("device plugin back");
    assert_eq!(chips_seen(&cluster, "holder").await, held, "the running pod keeps its chips");
    start_pod(&cluster, "six-more", 6).await;
    timer.mark("the six free chips allocated");
    assert_unschedulable(&cluster, "one-too-many", 1).await;
    delete_pod(&cluster, "six-more").await;
    delete_pod(&cluster, "holder").await;
}
