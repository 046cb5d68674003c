//! The DRA driver on the real cluster (deploy/kubernetes/dra.yaml, the examples of
//! deploy/kubernetes/examples/dra applied as they are): the real API server accepts its ResourceSlices and compiles
//! the DeviceClasses' CEL, the real scheduler allocates claims against the published attributes, the real kubelet
//! calls prepare and unprepare, and containerd injects the chips from the claim's CDI spec.
//! The reference for these scenarios; programs/tests/dra_driver_e2e.rs covers the driver against the in-repo fake
//! API server and kubelet (kills, checkpoints, v1beta1, vNPU).

use std::time::Duration;

use ascend_cluster_tests::stack::{
    deploy_dra, published_devices, remove_dra, test_namespace, wait_claims_gone, wait_no_claim_cdi_specs, NAMESPACE,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::Pod;
use kube::api::Api;

/// Waits until the example pod ran to completion and returns its log.
async fn completed_log(cluster: &Cluster, pod: &str) -> String {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    wait_until(&format!("pod {pod} succeeded"), Duration::from_secs(90), || async {
        let status = pods.get(pod).await.map_err(|error| error.to_string())?.status.unwrap_or_default();
        match status.phase.as_deref() {
            Some("Succeeded") => Ok(()),
            Some("Failed") => panic!("pod {pod} failed: {:?}", status.container_statuses),
            _ => Err(format!("{:?} {:?}", status.phase, status.conditions)),
        }
    })
    .await;
    cluster.kubectl(&["logs", "-n", NAMESPACE, pod])
}

/// The davinci nodes and ASCEND_RT_VISIBLE_DEVICES the example's container printed.
fn chips_in_log(log: &str) -> (Vec<String>, String) {
    let chips = log
        .split_whitespace()
        .filter(|word| word.strip_prefix("/dev/davinci").is_some_and(|id| id.parse::<u32>().is_ok()))
        .map(str::to_owned)
        .collect();
    let visible = log.lines().find_map(|line| line.strip_prefix("ASCEND_RT_VISIBLE_DEVICES=")).unwrap_or("").to_owned();
    (chips, visible)
}

async fn delete_example(cluster: &Cluster, file: &str) {
    let path = cluster.repository().join(file);
    cluster.kubectl(&["delete", "-n", NAMESPACE, "-f", path.to_str().expect("path"), "--wait=true"]);
    wait_claims_gone(cluster).await;
}

#[tokio::test]
async fn the_real_scheduler_allocates_claims_and_containerd_injects_the_chips() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra");
    deploy_dra(&cluster, &mut timer).await;
    let devices = published_devices(&cluster).await.expect("published devices");
    println!("published: {devices:?}");
    // `kubectl ascend nodes` sees the node as a DRA node.
    let report = ascend_cluster::nodes_report(&cluster.client()).await.expect("nodes report");
    let node = report.nodes.iter().find(|node| node.node == NODE_NAME).expect("our node in the report");
    assert!(node.modes.contains(&ascend_cluster::Mode::Dra), "{node:?}");
    assert_eq!(node.total, 8, "{node:?}");
    test_namespace(&cluster).await;

    cluster.kubectl(&[
        "apply",
        "-n",
        NAMESPACE,
        "-f",
        cluster.repository().join("deploy/kubernetes/examples/dra/one-chip.yaml").to_str().expect("path"),
    ]);
    let (chips, visible) = chips_in_log(&completed_log(&cluster, "one-npu").await);
    timer.mark("one-chip example ran");
    assert_eq!(chips.len(), 1, "exactly the allocated chip: {chips:?}");
    assert_eq!(visible.split(',').filter(|id| !id.is_empty()).count(), 1, "ASCEND_RT_VISIBLE_DEVICES={visible}");
    delete_example(&cluster, "deploy/kubernetes/examples/dra/one-chip.yaml").await;
    wait_no_claim_cdi_specs("the claim's CDI spec removed").await;
    timer.mark("claim unprepared, CDI spec gone");

    cluster.kubectl(&[
        "apply",
        "-n",
        NAMESPACE,
        "-f",
        cluster.repository().join("deploy/kubernetes/examples/dra/two-chips-same-hccs.yaml").to_str().expect("path"),
    ]);
    let (chips, _) = chips_in_log(&completed_log(&cluster, "two-npus-same-hccs").await);
    timer.mark("two chips in one HCCS group ran");
    assert_eq!(chips.len(), 2, "{chips:?}");
    delete_example(&cluster, "deploy/kubernetes/examples/dra/two-chips-same-hccs.yaml").await;

    remove_dra(&cluster).await;
}
