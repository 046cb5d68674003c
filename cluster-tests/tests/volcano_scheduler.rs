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
//! Then, on the same set-up: `kubectl ascend pods` names those pods' chips; a job of 8 while 3 chips are free waits
//! (no pod: Volcano admits no part of a gang) with the plugin's reason on its PodGroup, and runs on all 8 once they
//! are freed; two pods created together get disjoint chips, together the two Volcano chose (which pod gets which is
//! not asserted: docs/volcano.md, "Known gaps"); a faulty chip (listed unhealthy in the device-info ConfigMap) is not
//! chosen, is chosen again after its recovery, and a pod holding a chip that faults keeps it. Breaking the contract
//! fails the first step: with the device plugin handing out the kubelet's ids instead of the annotated chips, the pod
//! of 1 saw `/dev/davinci4` where Volcano chose chip 0; with no `baseDeviceInfos` annotation on the Node, it stayed
//! Pending.
//!
//! The reference for the scheduler side of the Volcano contract; tests/volcano.rs covers the device-info ConfigMap
//! and faults without a scheduler, programs/tests/device_plugin_volcano.rs the Allocate contract against the in-repo
//! kubelet peer. Without a mind-cluster tree there is no Ascend plugin to build Volcano with: the test then says it
//! is skipped, and why (an error under CI).

use std::collections::BTreeSet;
use std::time::Duration;

use ascend_cluster_tests::stack::{
    chip_fault, davinci_nodes, delete_pod, device_list, npu_pod, sleeping_container, test_namespace, NAMESPACE,
    RESOURCE, SYSTEM,
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

/// A running pod's chips three ways: written on it by Volcano's plugin, seen by its container (`/dev/davinci*`),
/// recorded by our device plugin.
struct ChipView {
    scheduled: BTreeSet<u32>,
    seen: BTreeSet<u32>,
    recorded: BTreeSet<u32>,
}

/// Waits until the pod runs and our device plugin's record of its chips shows, and reads its [`ChipView`].
async fn chip_view(cluster: &Cluster, pod: &str, count: usize) -> ChipView {
    cluster.wait_running(NAMESPACE, pod, Duration::from_secs(120)).await;
    // The device plugin records the real chips just after Allocate; the pod may run a moment before the write shows.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let now = wait_until(&format!("{pod}: {REAL_CHIPS} written"), Duration::from_secs(30), || async {
        let now = pods.get(pod).await.map_err(|error| error.to_string())?;
        if annotated_chips(&now, REAL_CHIPS).is_empty() {
            Err(format!("{:?}", now.metadata.annotations))
        } else {
            Ok(now)
        }
    })
    .await;
    let scheduled = annotated_chips(&now, RESOURCE);
    assert_eq!(scheduled.len(), count, "{pod}: Volcano's {RESOURCE} annotation: {:?}", now.metadata.annotations);
    let listing = cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout;
    let seen = davinci_nodes(&listing)
        .iter()
        .map(|node| node.trim_start_matches("davinci").parse().expect("davinci number"))
        .collect();
    ChipView { scheduled, seen, recorded: annotated_chips(&now, REAL_CHIPS) }
}

/// Waits until the pod runs and checks the contract: the chips Volcano's plugin wrote on it are the chips its
/// container sees and the chips our device plugin recorded. Returns them.
async fn chips_of_running_pod(cluster: &Cluster, pod: &str, count: usize) -> BTreeSet<u32> {
    let view = chip_view(cluster, pod, count).await;
    assert_eq!(view.seen, view.scheduled, "{pod}: the container's chips (/dev/davinci*) are the ones Volcano chose");
    assert_eq!(view.recorded, view.scheduled, "{pod}: {REAL_CHIPS}, what our plugin handed out");
    view.scheduled
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
    create_volcano_pod(&pods, "one-chip", 1).await;
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
    println!("Volcano's chips for the first job of 2: {first_pair:?}");
    assert!(
        first_pair.iter().all(|chip| hccs_group(*chip) == other_group),
        "with chip {held_chip} held, a job of 2 gets two chips of the other HCCS group, got {first_pair:?}"
    );
    timer.mark("job of 2 on the other HCCS group");
    jobs.create(&PostParams::default(), &volcano_job("pair-b", 2)).await.expect("create job pair-b");
    let second_pair = chips_of_running_pod(&cluster, "pair-b-work-0", 2).await;
    let group: BTreeSet<u32> = (other_group * 4..other_group * 4 + 4).collect();
    let remaining: BTreeSet<u32> = group.difference(&first_pair).copied().collect();
    println!("Volcano's chips for the second job of 2: {second_pair:?}");
    assert_eq!(second_pair, remaining, "the next job of 2 gets the remaining pair of that group");
    timer.mark("next job of 2 on that group's remaining pair");

    // `kubectl ascend pods` names each Volcano pod's chips.
    let scope = ascend_cluster::Scope::Namespace(NAMESPACE.to_owned());
    let report = ascend_cluster::pods_report(&cluster.client(), &scope).await.expect("kubectl ascend pods");
    let shown: Vec<(String, ascend_cluster::Mode, BTreeSet<u32>)> = report
        .pods
        .iter()
        .map(|pod| (pod.pod.clone(), pod.mode, pod.chips.iter().map(|chip| chip_id(chip)).collect()))
        .collect();
    let expected = [("one-chip", held), ("pair-a-work-0", first_pair), ("pair-b-work-0", second_pair)];
    let expected: Vec<(String, ascend_cluster::Mode, BTreeSet<u32>)> =
        expected.into_iter().map(|(pod, chips)| (pod.to_owned(), ascend_cluster::Mode::Volcano, chips)).collect();
    assert_eq!(shown, expected, "kubectl ascend pods: {report:?}");
    timer.mark("kubectl ascend pods names the Volcano pods' chips");

    // A job of 8 while 3 chips are free waits with the scheduler's reason, and runs once the chips are freed.
    jobs.create(&PostParams::default(), &volcano_job("all-eight", 8)).await.expect("create job all-eight");
    // Volcano admits no part of a gang it cannot place: the job controller makes no pod yet, and the reason is on
    // the job's PodGroup.
    let reason = unschedulable_podgroup(&cluster, "all-eight").await;
    println!("Volcano's reason for the job of 8: {reason}");
    assert!(reason.contains(RESOURCE) || reason.contains("npu"), "the reason names the chips: {reason}");
    let job = jobs.get("all-eight").await.expect("job all-eight");
    assert_eq!(job.data["status"]["state"]["phase"], "Pending", "the job of 8 waits: {:?}", job.data["status"]);
    delete_pod(&cluster, "one-chip").await;
    delete_job(&cluster, &jobs, "pair-a").await;
    delete_job(&cluster, &jobs, "pair-b").await;
    let all = chips_of_running_pod(&cluster, "all-eight-work-0", 8).await;
    assert_eq!(all, (0..8).collect(), "the job of 8 gets every chip");
    delete_job(&cluster, &jobs, "all-eight").await;
    timer.mark("job of 8 pending with the scheduler's reason, then running on all 8 chips");

    // Two pods bound in the same scheduling round get disjoint chips, together the two Volcano wrote. Which pod gets
    // which is not asserted: Allocate does not say which pod it is for, and the device plugin serves the pod of the
    // oldest predicate-time, as Huawei's does (`getOldestPod`), while the kubelet may admit the later-bound pod first
    // (seen here: each container had the other's chip; docs/volcano.md, "Known gaps").
    create_volcano_pod(&pods, "twin-a", 1).await;
    create_volcano_pod(&pods, "twin-b", 1).await;
    let twin_a = chip_view(&cluster, "twin-a", 1).await;
    let twin_b = chip_view(&cluster, "twin-b", 1).await;
    assert!(
        twin_a.seen.is_disjoint(&twin_b.seen),
        "two pods at once share a chip: {:?}, {:?}",
        twin_a.seen,
        twin_b.seen
    );
    let scheduled: BTreeSet<u32> = twin_a.scheduled.union(&twin_b.scheduled).copied().collect();
    let seen: BTreeSet<u32> = twin_a.seen.union(&twin_b.seen).copied().collect();
    assert_eq!(seen, scheduled, "the two containers' chips are the two Volcano chose");
    let crossed = twin_a.seen != twin_a.scheduled;
    println!(
        "two pods at once: Volcano chose {:?} and {:?}; the containers see {:?} and {:?}{}",
        twin_a.scheduled,
        twin_b.scheduled,
        twin_a.seen,
        twin_b.seen,
        if crossed { " (crossed)" } else { "" }
    );
    delete_pod(&cluster, "twin-a").await;
    delete_pod(&cluster, "twin-b").await;
    timer.mark("two pods at once on disjoint chips");

    // A chip fault: the device-info ConfigMap lists the chip unhealthy and Volcano stops choosing it; after the
    // recovery it chooses it again; a pod holding a chip that faults keeps it. Chip 0 is the one the policy picks
    // first for a pod of 1 on a free node, as above; it is logic id 4 of the topology (dcmi-sim/topologies/
    // atlas-800t-a2.toml).
    let first_choice = held_chip;
    let logic_id = |chip: u32| (chip + 4) % 8;
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), true)]);
    wait_device_info(&config_maps, &name, Some(first_choice)).await;
    create_volcano_pod(&pods, "beside-fault", 1).await;
    let beside = chips_of_running_pod(&cluster, "beside-fault", 1).await;
    assert!(!beside.contains(&first_choice), "Volcano chose the faulty chip {first_choice}: {beside:?}");
    timer.mark("a faulty chip is not chosen");
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), false)]);
    wait_device_info(&config_maps, &name, None).await;
    create_volcano_pod(&pods, "after-recovery", 1).await;
    let recovered = chips_of_running_pod(&cluster, "after-recovery", 1).await;
    assert_eq!(recovered, BTreeSet::from([first_choice]), "the recovered chip is Volcano's choice again");
    timer.mark("the recovered chip is chosen again");
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), true)]);
    wait_device_info(&config_maps, &name, Some(first_choice)).await;
    let still = cluster.wait_running(NAMESPACE, "after-recovery", Duration::from_secs(5)).await;
    let listing = cluster.exec(NAMESPACE, "after-recovery", &["ls", "/dev"]).stdout;
    assert_eq!(davinci_nodes(&listing), [format!("davinci{first_choice}")], "the running pod keeps its chip");
    assert_eq!(annotated_chips(&still, REAL_CHIPS), recovered, "and its record of it");
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), false)]);
    wait_device_info(&config_maps, &name, None).await;
    timer.mark("a running pod keeps its chip through a fault");
}

/// Creates a plain pod for Volcano asking for `chips` chips.
async fn create_volcano_pod(pods: &Api<Pod>, name: &str, chips: u32) {
    let mut pod = npu_pod(name, chips);
    pod.spec.as_mut().expect("spec").scheduler_name = Some(VOLCANO.to_owned());
    pods.create(&PostParams::default(), &pod).await.unwrap_or_else(|error| panic!("create pod {name}: {error}"));
}

/// The Unschedulable condition's message of the PodGroup Volcano's job controller made for the job `job`, once it
/// has one.
async fn unschedulable_podgroup(cluster: &Cluster, job: &str) -> String {
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("scheduling.volcano.sh", "v1beta1", "PodGroup"));
    let groups: Api<DynamicObject> = Api::namespaced_with(cluster.client(), NAMESPACE, &resource);
    wait_until(&format!("the PodGroup of job {job} unschedulable"), Duration::from_secs(60), || async {
        let list = groups.list(&Default::default()).await.map_err(|error| error.to_string())?;
        let group = list
            .items
            .iter()
            .find(|group| group.metadata.name.as_deref().is_some_and(|name| name.starts_with(&format!("{job}-"))))
            .ok_or("no PodGroup yet")?;
        let conditions = group.data["status"]["conditions"].as_array().cloned().unwrap_or_default();
        conditions
            .iter()
            .find(|condition| condition["type"] == "Unschedulable" && condition["status"] == "True")
            .and_then(|condition| condition["message"].as_str().map(str::to_owned))
            .ok_or_else(|| format!("{:?}", group.data["status"]))
    })
    .await
}

/// Deletes a Volcano Job of [`volcano_job`] and waits until its pod is gone.
async fn delete_job(cluster: &Cluster, jobs: &Api<DynamicObject>, name: &str) {
    jobs.delete(name, &DeleteParams::default()).await.unwrap_or_else(|error| panic!("delete job {name}: {error}"));
    delete_pod(cluster, &format!("{name}-work-0")).await;
}

/// Waits until the device-info ConfigMap lists `unhealthy` (a chip id) as the one unhealthy chip, or no chip when
/// `None`.
async fn wait_device_info(config_maps: &Api<ConfigMap>, name: &str, unhealthy: Option<u32>) {
    let want: Vec<String> = unhealthy.iter().map(|chip| format!("Ascend910-{chip}")).collect();
    let key = format!("{RESOURCE}-Unhealthy");
    wait_until(&format!("device-info ConfigMap: unhealthy {want:?}"), Duration::from_secs(30), || async {
        let config_map = config_maps.get(name).await.map_err(|error| error.to_string())?;
        let listed = device_list(&config_map, &key)?;
        if listed == want {
            Ok(())
        } else {
            Err(format!("unhealthy {listed:?}"))
        }
    })
    .await;
}
