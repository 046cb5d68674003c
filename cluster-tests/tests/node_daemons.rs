//! The exporter and the node labeller of the 910B pool on the real cluster: the exporter reads the real kubelet's
//! PodResources socket and names the pod that holds each chip; the labeller keeps the real Node's labels.
//!
//! The references for these scenarios; ascend-exporter/tests/pod_resources.rs and ascend-kube/tests/node_labels*.rs
//! cover the same code against the in-repo kubelet and API server stand-ins.

use std::time::Duration;

use ascend_cluster_tests::stack::{
    daemon_pod, delete_pod, deploy_910b_pool, start_pod, test_namespace, NAMESPACE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};

#[tokio::test]
async fn the_exporter_names_the_pod_holding_each_chip_from_the_real_kubelet() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("exporter");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    start_pod(&cluster, "scraped", 1).await;
    timer.mark("pod with 1 chip running");

    let exporter = daemon_pod(&cluster, "app.kubernetes.io/name=npu-exporter").await;
    let forward = cluster.port_forward(SYSTEM, &exporter, 8082);
    let wanted = format!("namespace=\"{NAMESPACE}\",pod=\"scraped\",container=\"work\"");
    let lines = wait_until("a scrape naming the pod", Duration::from_secs(30), || async {
        let body = forward.get("/metrics")?;
        let lines: Vec<String> = body
            .lines()
            .filter(|line| line.starts_with("ascend_npu_") && line.contains(&wanted))
            .map(str::to_owned)
            .collect();
        if lines.is_empty() {
            Err(body
                .lines()
                .find(|line| line.starts_with("ascend_npu_temperature"))
                .unwrap_or("no chip series")
                .to_owned())
        } else {
            Ok(lines)
        }
    })
    .await;
    timer.mark("scrape names the pod");
    // Exactly one chip carries the pod: every attributed series names the same chip.
    let chips: std::collections::BTreeSet<&str> =
        lines.iter().filter_map(|line| line.split("chip=\"").nth(1)?.split('"').next()).collect();
    assert_eq!(chips.len(), 1, "one chip attributed to the pod: {lines:?}");
    drop(forward);
    delete_pod(&cluster, "scraped").await;
}

#[tokio::test]
async fn the_labeller_keeps_the_real_nodes_labels() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("node labeller");
    deploy_910b_pool(&cluster, &mut timer).await;
    let label = |node: &k8s_openapi::api::core::v1::Node, key: &str| {
        node.metadata.labels.as_ref().and_then(|labels| labels.get(key)).cloned()
    };
    wait_until("the labeller's labels", Duration::from_secs(60), || async {
        let node = cluster.node().await;
        match label(&node, "ascend.huawei.com/chip-count").as_deref() {
            Some("8") => Ok(()),
            other => Err(format!("chip-count {other:?}")),
        }
    })
    .await;
    timer.mark("labels set");
    let node = cluster.node().await;
    assert_eq!(label(&node, "ascend.huawei.com/chip-type").as_deref(), Some("910B"));
    assert!(label(&node, "ascend.huawei.com/driver-version").is_some(), "driver version label");
    let managers: Vec<String> =
        node.metadata.managed_fields.iter().flatten().filter_map(|entry| entry.manager.clone()).collect();
    assert!(managers.iter().any(|m| m == "ascend-node-labeller"), "the labeller's field manager: {managers:?}");

    // A drifted value is put right and a label of someone else's is left alone, when the labeller next runs (a
    // restart of its pod runs it at once instead of after its 60 s interval).
    cluster.label_node("ascend.huawei.com/chip-count", Some("99"));
    cluster.label_node("example.com/team", Some("npu"));
    let plugin = daemon_pod(&cluster, "app.kubernetes.io/name=ascend-device-plugin").await;
    cluster.kubectl(&["-n", SYSTEM, "delete", "pod", &plugin, "--wait=false"]);
    wait_until("chip-count put right", Duration::from_secs(90), || async {
        let node = cluster.node().await;
        match label(&node, "ascend.huawei.com/chip-count").as_deref() {
            Some("8") => Ok(()),
            other => Err(format!("chip-count {other:?}")),
        }
    })
    .await;
    timer.mark("drifted label put right");
    assert_eq!(label(&cluster.node().await, "example.com/team").as_deref(), Some("npu"));
    cluster.label_node("example.com/team", None);
    println!("node {NODE_NAME} labels checked");
}
