//! The real Volcano scheduler, with Huawei's Ascend plugin compiled in, placing NPU pods onto our device plugin in
//! Volcano mode (deploy/kubernetes/volcano-910b.yaml): Volcano v1.15 built and started by scripts/cluster/volcano.sh,
//! configured as Huawei's deployment for that version configures it (docs/volcano.md). Each pod's chips are the ones
//! the plugin wrote on it (`huawei.com/Ascend910`), exactly: the container's `/dev/davinci*` and the
//! `huawei.com/AscendReal` our device plugin records, whatever ids the kubelet passed to Allocate.
//!
//! The chip policy is the plugin's default for a 910 server of 8 chips (mind-cluster
//! `component/ascend-for-volcano/internal/npu/ascend910/ascend910old/module910x8`, `selectNPUFromNode`): the chips
//! form two HCCS groups, 0-3 and 4-7, and a request of 2 goes to a group with 2 free chips first, then 4, then 3.
//! So with one chip of a group held, a job of 2 gets two chips of the other group, not the first free ones, and the
//! next job of 2 gets that group's remaining pair.
//!
//! The reference for the scheduler side of the Volcano contract; tests/volcano.rs covers the device-info ConfigMap
//! and faults without a scheduler, examples/tests/device_plugin_volcano.rs the Allocate contract against the in-repo
//! kubelet peer. Without a mind-cluster tree there is no Ascend plugin to build Volcano with: the test then says it
//! is skipped, and why (an error under CI).

use std::collections::BTreeSet;
use std::time::Duration;

use ascend_cluster_tests::stack::{
    davinci_nodes, device_list, sleeping_container, test_namespace, NAMESPACE, RESOURCE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};

/// The annotation our device plugin writes with the chips a pod really got.
const REAL_CHIPS: &str = "huawei.com/AscendReal";
/// The name Volcano answers to in `schedulerName`.
const VOLCANO: &str = "volcano";

/// Builds Volcano (cached: only a machine's first run pays) and says whether it can run; `false`, said loudly, when
/// there is no mind-cluster tree to build the Ascend plugin from (an error under CI).
fn volcano_built(cluster: &Cluster) -> bool {
    let output = cluster.script_output("volcano.sh", &["build"]);
    let stdout = String::from_utf8_lossy(&output.stdout);
    match output.status.code() {
        Some(0) => true,
        Some(3) => {
            assert!(std::env::var("CI").as_deref() != Ok("true"), "no mind-cluster tree, where CI lays it: {stdout}");
            println!("SKIPPED volcano_scheduler: {}", stdout.trim());
            false
        }
        _ => panic!("scripts/cluster/volcano.sh build failed: {stdout}{}", String::from_utf8_lossy(&output.stderr)),
    }
}

/// Puts the node back as the other tests expect it, also when the test fails: Volcano's objects and pods gone,
/// Volcano stopped, the plain 910B pool deployed, the device-info ConfigMap (which nothing else owns) deleted.
struct RestoreNode<'a>(&'a Cluster);

impl Drop for RestoreNode<'_> {
    fn drop(&mut self) {
        let cluster = self.0;
        for step in [
            &["-n", NAMESPACE, "delete", "jobs.batch.volcano.sh", "--all", "--wait=true"][..],
            &["-n", NAMESPACE, "delete", "pods", "--all", "--grace-period=0", "--wait=true"],
        ] {
            let _ = cluster.try_kubectl(step);
        }
        let _ = cluster.script_output("volcano.sh", &["stop"]);
        let device_info = format!("mindx-dl-deviceinfo-{NODE_NAME}");
        for step in [
            &["apply", "--server-side", "--force-conflicts", "-f", "deploy/kubernetes/training-910b.yaml"][..],
            &["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"],
            &["-n", "kube-system", "delete", "configmap", &device_info, "--ignore-not-found"],
        ] {
            let _ = cluster.try_kubectl(step);
        }
    }
}

/// A chip's physical id from its name in Volcano's annotations (`Ascend910-4`).
fn chip_id(name: &str) -> u32 {
    name.rsplit_once('-').and_then(|(_, id)| id.parse().ok()).unwrap_or_else(|| panic!("not a chip name: {name:?}"))
}

/// The chips named by a comma-separated annotation of the pod; empty when it is absent.
fn annotated_chips(pod: &Pod, key: &str) -> BTreeSet<u32> {
    let value = pod.metadata.annotations.as_ref().and_then(|annotations| annotations.get(key));
    value.map(|list| list.split(',').filter(|name| !name.is_empty()).map(chip_id).collect()).unwrap_or_default()
}

/// Waits until the pod runs and checks the contract: the chips Volcano's plugin wrote on it are the chips its
/// container sees and the chips our device plugin recorded. Returns them.
async fn chips_of_running_pod(cluster: &Cluster, pod: &str, count: usize) -> BTreeSet<u32> {
    let running = cluster.wait_running(NAMESPACE, pod, Duration::from_secs(120)).await;
    // The device plugin records the real chips just after Allocate; the pod may run a moment before the write shows.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let pod_now = wait_until(&format!("{pod}: {REAL_CHIPS} written"), Duration::from_secs(30), || async {
        let now = pods.get(pod).await.map_err(|error| error.to_string())?;
        if annotated_chips(&now, REAL_CHIPS).is_empty() {
            Err(format!("{:?}", now.metadata.annotations))
        } else {
            Ok(now)
        }
    })
    .await;
    let scheduled = annotated_chips(&running, RESOURCE);
    assert_eq!(scheduled.len(), count, "{pod}: Volcano's {RESOURCE} annotation: {:?}", running.metadata.annotations);
    let listing = cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout;
    let seen: BTreeSet<u32> = davinci_nodes(&listing)
        .iter()
        .map(|node| node.trim_start_matches("davinci").parse().expect("davinci number"))
        .collect();
    assert_eq!(seen, scheduled, "{pod}: the container's chips (/dev/davinci*) are the ones Volcano chose");
    assert_eq!(annotated_chips(&pod_now, REAL_CHIPS), scheduled, "{pod}: {REAL_CHIPS}, what our plugin handed out");
    scheduled
}

/// A Volcano Job of one task of one pod asking for `chips` chips; its pod is `<name>-work-0`. It sets what Volcano's
/// admission webhook would default (queue, minAvailable), since the test cluster runs none.
fn volcano_job(name: &str, chips: u32) -> DynamicObject {
    let mut container = sleeping_container();
    // Requests as well as limits: Volcano's job controller sums the template's requests into the PodGroup's
    // minResources, which is where Huawei's plugin reads a job's chips from (`GetVCJobReqNPUTypeFromJobInfo`); the
    // API server's defaulting of requests to limits applies to pods, not to a Job's template.
    let count = chips.to_string();
    container["resources"] = serde_json::json!({"requests": {RESOURCE: count}, "limits": {RESOURCE: count}});
    serde_json::from_value(serde_json::json!({
        "apiVersion": "batch.volcano.sh/v1alpha1",
        "kind": "Job",
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {
            "schedulerName": VOLCANO,
            "queue": "default",
            "minAvailable": 1,
            "maxRetry": 1,
            "tasks": [{
                "name": "work",
                "replicas": 1,
                "template": {"spec": {
                    "terminationGracePeriodSeconds": 1,
                    "restartPolicy": "Never",
                    "containers": [container],
                }},
            }],
        },
    }))
    .expect("Volcano Job")
}

/// The HCCS group of a chip of the 8-chip 910 policy: 0 for chips 0-3, 1 for chips 4-7.
fn hccs_group(chip: u32) -> u32 {
    chip / 4
}

#[tokio::test]
async fn volcano_with_huaweis_plugin_places_pods_on_the_chips_our_plugin_hands_out() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("volcano scheduler");
    if !volcano_built(&cluster) {
        return;
    }
    timer.mark("Volcano built (cached)");
    let _restore = RestoreNode(&cluster);
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/volcano-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = format!("mindx-dl-deviceinfo-{NODE_NAME}");
    wait_until("the device-info ConfigMap with 8 free chips", Duration::from_secs(60), || async {
        let config_map = config_maps.get_opt(&name).await.map_err(|e| e.to_string())?.ok_or("absent")?;
        let chips = device_list(&config_map, RESOURCE)?;
        if chips.len() == 8 {
            Ok(())
        } else {
            Err(format!("{chips:?}"))
        }
    })
    .await;
    timer.mark("device plugin in Volcano mode running");
    cluster.script("volcano.sh", &["start"]);
    timer.mark("Volcano started");
    test_namespace(&cluster).await;

    // A plain pod for Volcano, one chip.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let mut pod = ascend_cluster_tests::stack::npu_pod("one-chip", 1);
    pod.spec.as_mut().expect("spec").scheduler_name = Some(VOLCANO.to_owned());
    pods.create(&PostParams::default(), &pod).await.expect("create pod");
    let held = chips_of_running_pod(&cluster, "one-chip", 1).await;
    let held_chip = *held.first().expect("one chip");
    println!("Volcano's chip for the pod of 1: {held:?}");
    timer.mark("pod with 1 chip running on Volcano's chip");

    // Jobs of two chips while one chip of a group is held: the other group, then that group's remaining pair.
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("batch.volcano.sh", "v1alpha1", "Job"));
    let jobs: Api<DynamicObject> = Api::namespaced_with(cluster.client(), NAMESPACE, &resource);
    jobs.create(&PostParams::default(), &volcano_job("pair-a", 2)).await.expect("create job pair-a");
    let first_pair = chips_of_running_pod(&cluster, "pair-a-work-0", 2).await;
    let other_group = 1 - hccs_group(held_chip);
    assert!(
        first_pair.iter().all(|chip| hccs_group(*chip) == other_group),
        "with chip {held_chip} held, a job of 2 gets two chips of the other HCCS group, got {first_pair:?}"
    );
    println!("Volcano's chips for the first job of 2: {first_pair:?}");
    timer.mark("job of 2 on the other HCCS group");
    jobs.create(&PostParams::default(), &volcano_job("pair-b", 2)).await.expect("create job pair-b");
    let second_pair = chips_of_running_pod(&cluster, "pair-b-work-0", 2).await;
    let group: BTreeSet<u32> = (other_group * 4..other_group * 4 + 4).collect();
    let remaining: BTreeSet<u32> = group.difference(&first_pair).copied().collect();
    println!("Volcano's chips for the second job of 2: {second_pair:?}");
    assert_eq!(second_pair, remaining, "the next job of 2 gets the remaining pair of that group");
    timer.mark("next job of 2 on that group's remaining pair");

    jobs.delete("pair-a", &DeleteParams::default()).await.expect("delete job pair-a");
    jobs.delete("pair-b", &DeleteParams::default()).await.expect("delete job pair-b");
}
