//! The device plugin on the real cluster, deployed from deploy/kubernetes/training-910b.yaml as an operator
//! would: the real kubelet registers it, the Node shows the chips, the real scheduler places pods on them, and
//! containerd starts containers with the chips, from our CDI spec (allocate mode cdi) or from the plugin's device
//! specs (allocate mode device-specs). A chip fault in the simulator lowers the Node's allocatable.
//!
//! The reference for these scenarios; programs/tests/device_plugin_daemon.rs covers the same plugin against the
//! in-repo kubelet peer, faster and with more corner cases.

use std::time::Duration;

use ascend_cluster_tests::{Cluster, Timer};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};

use ascend_cluster_tests::stack::{
    chip_fault, davinci_nodes, delete_pod, deploy_910b_pool, edit_device_plugin_args, npu_pod, start_pod,
    test_namespace, unschedulable_reason, NAMESPACE, RESOURCE, SYSTEM,
};

/// The shared nodes of a 910-family chip that every container with a chip gets (deploy/README.md, CDI).
const SHARED_NODES: [&str; 3] = ["davinci_manager", "devmm_svm", "hisi_hdc"];

/// What a container with chips sees: its davinci nodes, the shared nodes present, and ASCEND_RT_VISIBLE_DEVICES.
fn container_view(cluster: &Cluster, pod: &str) -> (Vec<String>, Vec<String>, String) {
    let listing = cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout;
    let nodes: Vec<String> = listing.split_whitespace().map(str::to_owned).collect();
    let chips = davinci_nodes(&listing);
    let shared = SHARED_NODES.iter().filter(|node| nodes.iter().any(|n| n == *node)).map(|n| n.to_string()).collect();
    let env = cluster.exec(NAMESPACE, pod, &["env"]).stdout;
    let visible =
        env.lines().find_map(|line| line.strip_prefix("ASCEND_RT_VISIBLE_DEVICES=")).unwrap_or_default().to_owned();
    (chips, shared, visible)
}

fn assert_container_has(cluster: &Cluster, pod: &str, count: usize) {
    let (chips, shared, visible) = container_view(cluster, pod);
    assert_eq!(chips.len(), count, "{pod}: exactly its chips in /dev: {chips:?}");
    assert_eq!(shared, SHARED_NODES, "{pod}: the shared nodes of the 910 family");
    assert_eq!(
        visible.split(',').filter(|id| !id.is_empty()).count(),
        count,
        "{pod}: ASCEND_RT_VISIBLE_DEVICES={visible}"
    );
}

#[tokio::test]
async fn pods_get_chips_from_the_device_plugin_through_the_real_kubelet_scheduler_and_containerd() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("device plugin");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;

    // CDI mode (the overlay's default): containerd injects the chips from /var/run/cdi.
    start_pod(&cluster, "two-chips", 2).await;
    timer.mark("pod with 2 chips running (CDI)");
    assert_container_has(&cluster, "two-chips", 2);

    // Six chips are left: a pod asking for seven stays Pending with the scheduler's reason.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &npu_pod("seven-chips", 7)).await.expect("create pod");
    let reason = unschedulable_reason(&cluster, "seven-chips").await;
    assert!(reason.contains(&format!("Insufficient {RESOURCE}")), "scheduler's reason: {reason}");
    assert_eq!(
        pods.get("seven-chips").await.expect("pod").status.unwrap_or_default().phase.as_deref(),
        Some("Pending")
    );
    delete_pod(&cluster, "seven-chips").await;
    timer.mark("seven chips refused by the scheduler");

    // A fault on a chip takes it out of the Node's allocatable, its recovery brings it back.
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(10)).await;
    cluster.set_overlay(vec![chip_fault(7, true)]);
    let lowered = cluster.wait_allocatable(RESOURCE, "7", Duration::from_secs(10)).await;
    timer.mark("fault: allocatable 7");
    cluster.set_overlay(vec![chip_fault(7, false)]);
    let restored = cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(10)).await;
    timer.mark("recovery: allocatable 8");
    println!("fault to Node allocatable: {lowered:?}; recovery: {restored:?}");
    assert!(lowered <= Duration::from_secs(2), "a fault reaches the Node within 2 s, took {lowered:?}");
    assert!(restored <= Duration::from_secs(2), "a recovery reaches the Node within 2 s, took {restored:?}");

    delete_pod(&cluster, "two-chips").await;

    // Device-spec mode: the plugin hands the kubelet the device nodes itself, no CDI.
    edit_device_plugin_args(&cluster, |args| {
        let mode = args.iter_mut().find(|arg| *arg == "--allocate-mode=cdi");
        *mode.expect("the overlay's args name --allocate-mode=cdi") = "--allocate-mode=device-specs".to_owned();
    });
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("device plugin in device-specs mode");
    start_pod(&cluster, "one-chip-device-specs", 1).await;
    timer.mark("pod with 1 chip running (device specs)");
    assert_container_has(&cluster, "one-chip-device-specs", 1);
    delete_pod(&cluster, "one-chip-device-specs").await;

    cluster.apply("deploy/kubernetes/training-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=120s"]);
}
