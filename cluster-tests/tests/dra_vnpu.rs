//! vNPUs through the DRA driver on the real cluster: the node becomes an Atlas 300I Duo (310P chips), the driver
//! runs with `--partitionable` (DRAPartitionableDevices is on), and the real scheduler hands out partitions against
//! the chips' shared counters. A claim for a `vir02` partition gets a vNPU the driver creates through DCMI when the
//! kubelet prepares it (the host's `/dev/vdavinci<id>`, shown in the container as `/dev/davinci<id>`), the whole
//! chip is not allocatable while the partition is held, and the vNPU is destroyed when the pod goes. The node is
//! an Atlas 800T A2 again afterwards.

use std::path::Path;
use std::time::Duration;

use ascend_cluster_tests::stack::{
    davinci_nodes, delete_pod, published_devices, release_dir, remove_dra, sleeping_pod_spec, test_namespace,
    unschedulable_reason, wait_dra_registered, DRA_DRIVER, DRA_NAMESPACE, NAMESPACE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, wait_until_empty, Cluster, Timer};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};
use serde_json::json;

/// A sleeping pod whose claim (named as the pod) asks for one device of `class` picked by `cel`.
async fn start_pod(cluster: &Cluster, name: &str, class: &str, cel: &str) {
    delete_pod(cluster, name).await;
    let _ = cluster.try_kubectl(&["delete", "resourceclaim", name, "-n", NAMESPACE, "--wait=true"]);
    let claims: Api<k8s_openapi::api::resource::v1::ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    let claim = json!({
        "metadata": {"name": name},
        "spec": {"devices": {"requests": [{"name": "npu", "exactly": {
            "deviceClassName": class, "selectors": [{"cel": {"expression": cel}}],
        }}]}},
    });
    claims.create(&PostParams::default(), &serde_json::from_value(claim).expect("claim")).await.expect("claim");
    let pod = json!({
        "metadata": {"name": name},
        "spec": sleeping_pod_spec(json!({"name": "npu", "resourceClaimName": name})),
    });
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &serde_json::from_value(pod).expect("pod")).await.expect("create pod");
}

fn host_vnpu_nodes() -> Vec<String> {
    std::fs::read_dir("/dev")
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with("vdavinci"))
                .collect()
        })
        .unwrap_or_default()
}

fn switch_host(cluster: &Cluster, topology: &str, chip_type: &str) {
    let release = release_dir(cluster);
    cluster.script("fake_host.sh", &["install", topology, release.to_str().expect("path")]);
    cluster.label_node("ascend.huawei.com/chip-type", Some(chip_type));
}

#[tokio::test]
async fn a_partition_claim_gets_a_vnpu_made_and_destroyed_by_the_driver() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra vnpu");
    // Nothing may hold the driver files while the host changes: the device plugin's pool and the DRA driver go.
    let _ = cluster.try_kubectl(&["delete", "namespace", SYSTEM, "--wait=true", "--timeout=120s"]);
    remove_dra(&cluster).await;
    switch_host(&cluster, "atlas-300i-duo", "310P");
    cluster.apply("deploy/kubernetes/dra.yaml");
    cluster.kubectl(&[
        "set",
        "env",
        "daemonset/ascend-dra-driver",
        "-n",
        DRA_NAMESPACE,
        "ASCEND_DRA_PARTITIONABLE=true",
    ]);
    // The pod of the first template may have started: the one with partitions must be the one registered.
    wait_dra_registered(&cluster).await;
    wait_until("the partitions published", Duration::from_secs(120), || async {
        let devices = published_devices(&cluster).await?;
        if devices.contains("npu-0-vir02") {
            Ok(())
        } else {
            Err(format!("{devices:?}"))
        }
    })
    .await;
    timer.mark("310P host, driver with partitions published");
    test_namespace(&cluster).await;
    assert!(host_vnpu_nodes().is_empty(), "no vNPU yet: {:?}", host_vnpu_nodes());

    // A vir02 partition of chip 0: the driver makes the vNPU at prepare.
    let attributes = format!("device.attributes['{DRA_DRIVER}']");
    start_pod(
        &cluster,
        "vnpu-holder",
        "vnpu.npu.huawei.com",
        &format!("{attributes}.vnpuTemplate == 'vir02' && {attributes}.physicalId == 0"),
    )
    .await;
    cluster.wait_running(NAMESPACE, "vnpu-holder", Duration::from_secs(90)).await;
    timer.mark("pod with a vir02 partition running");
    let made = host_vnpu_nodes();
    assert_eq!(made.len(), 1, "one vNPU on the host: {made:?}");
    let id = made[0].trim_start_matches("vdavinci").to_owned();
    assert!(id.parse::<u32>().is_ok_and(|id| id >= 100), "a vNPU id: {id}");
    let listing = cluster.exec(NAMESPACE, "vnpu-holder", &["ls", "/dev"]).stdout;
    let chips = davinci_nodes(&listing);
    assert_eq!(chips, [format!("davinci{id}")], "the container sees the vNPU as /dev/davinci{id}: {listing}");

    // The whole chip 0 is not allocatable while its partition is held.
    start_pod(&cluster, "whole-chip-0", "ascend310p.npu.huawei.com", &format!("{attributes}.physicalId == 0")).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let reason = unschedulable_reason(&cluster, "whole-chip-0").await;
    println!("scheduler: {reason}");
    assert!(reason.contains("cannot allocate all claims"), "{reason}");
    timer.mark("the whole chip refused while its partition is held");

    // The partition's pod goes: the vNPU is destroyed, and the whole chip is given out.
    delete_pod(&cluster, "vnpu-holder").await;
    wait_until_empty("the vNPU destroyed", Duration::from_secs(60), || async { Ok(host_vnpu_nodes()) }).await;
    cluster.wait_running(NAMESPACE, "whole-chip-0", Duration::from_secs(90)).await;
    timer.mark("vNPU destroyed, the whole chip running");
    delete_pod(&cluster, "whole-chip-0").await;

    // The example, applied as it is.
    let example = cluster.repository().join("deploy/kubernetes/examples/dra/vnpu.yaml");
    cluster.kubectl(&["apply", "-n", NAMESPACE, "-f", example.to_str().expect("path")]);
    wait_until("the vnpu-2c example succeeded", Duration::from_secs(90), || async {
        let phase = pods.get("vnpu-2c").await.map_err(|e| e.to_string())?.status.and_then(|status| status.phase);
        match phase.as_deref() {
            Some("Succeeded") => Ok(()),
            Some("Failed") => panic!("vnpu-2c failed"),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
    let log = cluster.kubectl(&["logs", "-n", NAMESPACE, "vnpu-2c"]);
    assert!(
        log.lines().any(|line| line
            .strip_prefix("/dev/davinci")
            .and_then(|id| id.parse::<u32>().ok())
            .is_some_and(|id| id >= 100)),
        "{log}"
    );
    timer.mark("the vnpu.yaml example ran");
    cluster.kubectl(&["delete", "-n", NAMESPACE, "-f", example.to_str().expect("path"), "--wait=true"]);

    for name in ["vnpu-holder", "whole-chip-0"] {
        let _ = cluster.try_kubectl(&["delete", "resourceclaim", name, "-n", NAMESPACE, "--wait=true"]);
    }
    remove_dra(&cluster).await;
    wait_until_empty("the host free of vNPUs", Duration::from_secs(30), || async { Ok(host_vnpu_nodes()) }).await;
    assert!(Path::new("/usr/local/Ascend/driver").exists());
    switch_host(&cluster, "atlas-800t-a2", "910B");
}
