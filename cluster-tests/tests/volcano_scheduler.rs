//! The real Volcano scheduler, with Huawei's Ascend plugin compiled in, placing NPU pods onto a device plugin in
//! Volcano mode: ours (deploy/kubernetes/volcano-910b.yaml), then Huawei's own in its place as the reference
//! (cluster-tests/manifests/huawei-device-plugin.yaml with `-volcanoType=true`, the comparison tier's build). Volcano
//! v1.15 is built and started by scripts/cluster/volcano.sh, configured as Huawei's deployment for that version
//! configures it (docs/volcano.md). The same scenario runs against each plugin ([`scenario`]), and each step must give
//! the same outcome with both, but for the differences listed in [`DIFFERENCES`] with their reasons (said again in
//! docs/huawei-compatibility.md and docs/volcano.md).
//!
//! In every step each pod's chips are the ones Volcano's plugin wrote on it (`huawei.com/Ascend910`), exactly: the
//! container's `/dev/davinci*`, whatever ids the kubelet passed to Allocate, and the `huawei.com/AscendReal` the
//! device plugin records (for ours in every step; for Huawei's where it writes one).
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
//! chosen, is chosen again after its recovery, and a pod holding a chip that faults keeps it. Each chip faults once
//! only: Huawei's plugin separates a chip whose fault code comes twice in a day (its faultCustomization.json's
//! `FaultFrequency`, `ManuallySeparateNPU`), which is another scenario. Breaking the contract fails the first step:
//! with our device plugin handing out the kubelet's ids instead of the annotated chips, the pod of 1 saw
//! `/dev/davinci4` where Volcano chose chip 0; with no `baseDeviceInfos` annotation on the Node, it stayed Pending.
//!
//! A second test restarts our device plugin between Volcano's choice and the kubelet's Allocate. The kubelet gives a
//! pod its devices when it admits it and refuses the pod for good if the resource's plugin is not registered then
//! (Kubernetes `pkg/kubelet/cm/devicemanager/manager.go`, `devicesToAllocate`), so the restart has to fall in the gap
//! between the binding and the admission: the test makes that gap by cutting the kubelet off from the API server
//! ([`KubeletCut`]) while Volcano binds a pod of 2 and our plugin's container is stopped, restarted by the kubelet and
//! registered again. The pod then gets exactly Volcano's chips from the restarted plugin, and the kubelet's ids it
//! passed to Allocate name other chips (asserted), so a plugin handing those out fails the test.
//!
//! The reference for the scheduler side of the Volcano contract; tests/volcano.rs covers the device-info ConfigMap
//! and faults without a scheduler, programs/tests/device_plugin_volcano.rs the Allocate contract against the in-repo
//! kubelet peer, tests/huawei_device_plugin.rs what both plugins write on the Node. Without a mind-cluster tree there
//! is no Ascend plugin to build Volcano with, nor Huawei's device plugin: the test then says it is skipped (or skips
//! Huawei's side), and why (an error under CI).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ascend_cluster_tests::stack::{
    chip_fault, davinci_nodes, delete_pod, device_list, huawei, npu_pod, remove_plain_stack, sleeping_container,
    test_namespace, wait_free_chips, NAMESPACE, RESOURCE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::{ConfigMap, Pod};
use kube::api::{Api, ApiResource, DeleteParams, DynamicObject, GroupVersionKind, PostParams};

/// The annotation a device plugin writes with the chips a pod really got.
const REAL_CHIPS: &str = "huawei.com/AscendReal";
/// The name Volcano answers to in `schedulerName`.
const VOLCANO: &str = "volcano";

/// Which device plugin serves the node's chips.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Plugin {
    /// Ours in Volcano mode: deploy/kubernetes/volcano-910b.yaml.
    Ours,
    /// Huawei's with `-volcanoType=true`, the reference.
    Huaweis,
}

impl std::fmt::Display for Plugin {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str(match self {
            Plugin::Ours => "our device plugin",
            Plugin::Huaweis => "Huawei's device plugin",
        })
    }
}

/// A step of the scenario whose outcome differs between the two plugins, on purpose or for a reason outside our
/// plugin: the step's key in the [`Outcome`] and why. Each must still differ (a difference that is gone is to be
/// struck from the list); docs/huawei-compatibility.md says the same.
struct Difference {
    step: &'static str,
    why: &'static str,
}

/// The differences of the scenario between ours and Huawei's.
const DIFFERENCES: &[Difference] = &[];

/// What each step of the scenario gave, by step: the chips of its pods as Volcano chose them and the containers saw
/// them, the scheduler's reason, the chips a device plugin recorded (`AscendReal`). The two plugins must give the
/// same, but for [`DIFFERENCES`].
type Outcome = BTreeMap<String, String>;

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
/// Volcano stopped, Huawei's plugin removed, every chip healthy, the plain 910B pool deployed, and what a plugin in
/// Volcano mode wrote for Volcano (the device-info ConfigMap, the Node annotations) removed.
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
        huawei::remove(cluster);
        // A fault an overlay raised stays until one clears it: every chip healthy.
        cluster.set_overlay((0..8).map(|logic_id| chip_fault(logic_id, false)).collect());
        for step in [
            &["label", "node", NODE_NAME, "ascend.huawei.com/chip-type=910B", "--overwrite"][..],
            &["apply", "--server-side", "--force-conflicts", "-f", "deploy/kubernetes/training-910b.yaml"],
            &["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"],
        ] {
            let _ = cluster.try_kubectl(step);
        }
        huawei::remove_volcano_writes(cluster);
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

/// How long a device plugin may take to record a running pod's chips: ours writes `AscendReal` at Allocate, Huawei's
/// in its next round over the node's pods (mind-cluster `component/ascend-device-plugin/pkg/server/manager.go`,
/// `updateSpecTypePodAnnotation`, every few seconds).
const RECORD_LIMIT: Duration = Duration::from_secs(20);

/// A running pod's chips three ways: written on it by Volcano's plugin, seen by its container (`/dev/davinci*`),
/// recorded by the device plugin (`None` when it recorded none within [`RECORD_LIMIT`]).
struct ChipView {
    scheduled: BTreeSet<u32>,
    seen: BTreeSet<u32>,
    recorded: Option<BTreeSet<u32>>,
}

impl ChipView {
    /// The record, as the [`Outcome`] shows it.
    fn record(&self) -> String {
        self.recorded.as_ref().map_or_else(|| "none".to_owned(), |chips| format!("{chips:?}"))
    }
}

/// Waits until the pod runs and the device plugin's record of its chips shows (for at most [`RECORD_LIMIT`]), and
/// reads its [`ChipView`].
async fn chip_view(cluster: &Cluster, pod: &str, count: usize) -> ChipView {
    cluster.wait_running(NAMESPACE, pod, Duration::from_secs(120)).await;
    // Ours records the real chips just after Allocate, Huawei's a few seconds later; the pod may run before either.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let started = std::time::Instant::now();
    let now = loop {
        let now = pods.get(pod).await.unwrap_or_else(|error| panic!("get pod {pod}: {error}"));
        if !annotated_chips(&now, REAL_CHIPS).is_empty() || started.elapsed() >= RECORD_LIMIT {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let scheduled = annotated_chips(&now, RESOURCE);
    assert_eq!(scheduled.len(), count, "{pod}: Volcano's {RESOURCE} annotation: {:?}", now.metadata.annotations);
    let listing = cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout;
    let seen = davinci_nodes(&listing)
        .iter()
        .map(|node| node.trim_start_matches("davinci").parse().expect("davinci number"))
        .collect();
    let recorded = Some(annotated_chips(&now, REAL_CHIPS)).filter(|chips| !chips.is_empty());
    ChipView { scheduled, seen, recorded }
}

/// Waits until the pod runs and checks the contract: the chips Volcano's plugin wrote on it are the chips its
/// container sees, and our device plugin recorded them (Huawei's record goes to the outcome, `record: <pod>`, for
/// the comparison). Returns them.
async fn chips_of_running_pod(
    cluster: &Cluster,
    plugin: Plugin,
    outcome: &mut Outcome,
    pod: &str,
    count: usize,
) -> BTreeSet<u32> {
    let view = chip_view(cluster, pod, count).await;
    assert_eq!(view.seen, view.scheduled, "{plugin}, {pod}: the container's chips (/dev/davinci*) are Volcano's");
    if plugin == Plugin::Ours {
        assert_eq!(view.recorded.as_ref(), Some(&view.scheduled), "{pod}: {REAL_CHIPS}, what our plugin handed out");
    }
    outcome.insert(format!("record: {pod}"), view.record());
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
async fn volcano_places_pods_alike_on_our_device_plugin_and_on_huaweis() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("volcano scheduler");
    if !volcano_built(&cluster) {
        return;
    }
    timer.mark("Volcano built (cached)");
    let _restore = RestoreNode(&cluster);
    serve_node(&cluster, Plugin::Ours, &mut timer).await;
    cluster.script("volcano.sh", &["start"]);
    timer.mark("Volcano started");
    test_namespace(&cluster).await;
    let ours = scenario(&cluster, Plugin::Ours, &mut timer).await;
    if !huawei::image_present("volcano_scheduler with Huawei's device plugin") {
        return;
    }
    serve_node(&cluster, Plugin::Huaweis, &mut timer).await;
    let theirs = scenario(&cluster, Plugin::Huaweis, &mut timer).await;
    assert_same_outcome(&ours, &theirs);
}

/// Puts `plugin` on the node in Volcano mode, in place of the other, and waits until its device-info ConfigMap lists
/// the 8 chips free.
async fn serve_node(cluster: &Cluster, plugin: Plugin, timer: &mut Timer) {
    match plugin {
        Plugin::Ours => {
            huawei::remove(cluster);
            cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
            cluster.apply("deploy/kubernetes/volcano-910b.yaml");
            cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
            cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
        }
        Plugin::Huaweis => {
            // Ours gone with what it wrote for Volcano, so that what Volcano reads next is Huawei's.
            remove_plain_stack(cluster).await;
            huawei::remove_volcano_writes(cluster);
            huawei::deploy(cluster, true).await;
        }
    }
    wait_free_chips(cluster, 8).await;
    timer.mark(&format!("{plugin} in Volcano mode serving the node"));
}

/// The scenario, with `plugin` serving the node and Volcano running; asserts each step's contract and returns what
/// each step gave. Leaves no pod or job behind and every chip healthy.
async fn scenario(cluster: &Cluster, plugin: Plugin, timer: &mut Timer) -> Outcome {
    let mut outcome = Outcome::new();
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);

    // A plain pod for Volcano, one chip.
    create_volcano_pod(&pods, "one-chip", 1).await;
    let held = chips_of_running_pod(cluster, plugin, &mut outcome, "one-chip", 1).await;
    let held_chip = *held.first().expect("one chip");
    outcome.insert("pod of 1".into(), format!("{held:?}"));
    timer.mark(&format!("{plugin}: pod with 1 chip running on Volcano's chip"));

    // Jobs of two chips while one chip of a group is held: the other group, then that group's remaining pair.
    let resource = ApiResource::from_gvk(&GroupVersionKind::gvk("batch.volcano.sh", "v1alpha1", "Job"));
    let jobs: Api<DynamicObject> = Api::namespaced_with(cluster.client(), NAMESPACE, &resource);
    jobs.create(&PostParams::default(), &volcano_job("pair-a", 2)).await.expect("create job pair-a");
    let first_pair = chips_of_running_pod(cluster, plugin, &mut outcome, "pair-a-work-0", 2).await;
    let other_group = 1 - hccs_group(held_chip);
    outcome.insert("first job of 2".into(), format!("{first_pair:?}"));
    assert!(
        first_pair.iter().all(|chip| hccs_group(*chip) == other_group),
        "{plugin}: with chip {held_chip} held, a job of 2 gets two chips of the other HCCS group, got {first_pair:?}"
    );
    timer.mark(&format!("{plugin}: job of 2 on the other HCCS group"));
    jobs.create(&PostParams::default(), &volcano_job("pair-b", 2)).await.expect("create job pair-b");
    let second_pair = chips_of_running_pod(cluster, plugin, &mut outcome, "pair-b-work-0", 2).await;
    let group: BTreeSet<u32> = (other_group * 4..other_group * 4 + 4).collect();
    let remaining: BTreeSet<u32> = group.difference(&first_pair).copied().collect();
    outcome.insert("second job of 2".into(), format!("{second_pair:?}"));
    assert_eq!(second_pair, remaining, "{plugin}: the next job of 2 gets the remaining pair of that group");
    timer.mark(&format!("{plugin}: next job of 2 on that group's remaining pair"));

    // `kubectl ascend pods` names each Volcano pod's chips.
    let scope = ascend_cluster::Scope::Namespace(NAMESPACE.to_owned());
    let report = ascend_cluster::pods_report(&cluster.client(), &scope).await.expect("kubectl ascend pods");
    let shown: Vec<(String, ascend_cluster::Mode, BTreeSet<u32>)> = report
        .pods
        .iter()
        .map(|pod| (pod.pod.clone(), pod.mode, pod.chips.iter().map(|chip| chip_id(chip)).collect()))
        .collect();
    outcome.insert("kubectl ascend pods".into(), format!("{shown:?}"));
    if plugin == Plugin::Ours {
        let expected = [("one-chip", held), ("pair-a-work-0", first_pair), ("pair-b-work-0", second_pair)];
        let expected: Vec<(String, ascend_cluster::Mode, BTreeSet<u32>)> =
            expected.into_iter().map(|(pod, chips)| (pod.to_owned(), ascend_cluster::Mode::Volcano, chips)).collect();
        assert_eq!(shown, expected, "kubectl ascend pods: {report:?}");
    }
    timer.mark(&format!("{plugin}: kubectl ascend pods read"));

    // A job of 8 while 3 chips are free waits with the scheduler's reason, and runs once the chips are freed.
    jobs.create(&PostParams::default(), &volcano_job("all-eight", 8)).await.expect("create job all-eight");
    // Volcano admits no part of a gang it cannot place: the job controller makes no pod yet, and the reason is on
    // the job's PodGroup.
    let reason = unschedulable_podgroup(cluster, "all-eight").await;
    assert!(reason.contains(RESOURCE) || reason.contains("npu"), "{plugin}: the reason names the chips: {reason}");
    let job = jobs.get("all-eight").await.expect("job all-eight");
    assert_eq!(job.data["status"]["state"]["phase"], "Pending", "the job of 8 waits: {:?}", job.data["status"]);
    outcome.insert("job of 8 waits".into(), reason);
    delete_pod(cluster, "one-chip").await;
    delete_job(cluster, &jobs, "pair-a").await;
    delete_job(cluster, &jobs, "pair-b").await;
    let all = chips_of_running_pod(cluster, plugin, &mut outcome, "all-eight-work-0", 8).await;
    assert_eq!(all, (0..8).collect(), "{plugin}: the job of 8 gets every chip");
    outcome.insert("job of 8 runs".into(), format!("{all:?}"));
    delete_job(cluster, &jobs, "all-eight").await;
    timer.mark(&format!("{plugin}: job of 8 pending with the scheduler's reason, then running on all 8 chips"));

    // Two pods bound in the same scheduling round get disjoint chips, together the two Volcano wrote. Which pod gets
    // which is not asserted: Allocate does not say which pod it is for, and both plugins serve the pod of the oldest
    // predicate-time (Huawei's `getOldestPod`), while the kubelet may admit the later-bound pod first (seen here:
    // each container had the other's chip; docs/volcano.md, "Known gaps").
    create_volcano_pod(&pods, "twin-a", 1).await;
    create_volcano_pod(&pods, "twin-b", 1).await;
    let twin_a = chip_view(cluster, "twin-a", 1).await;
    let twin_b = chip_view(cluster, "twin-b", 1).await;
    assert!(twin_a.seen.is_disjoint(&twin_b.seen), "{plugin}: two pods at once share a chip: {:?}", twin_a.seen);
    let scheduled: BTreeSet<u32> = twin_a.scheduled.union(&twin_b.scheduled).copied().collect();
    let seen: BTreeSet<u32> = twin_a.seen.union(&twin_b.seen).copied().collect();
    assert_eq!(seen, scheduled, "{plugin}: the two containers' chips are the two Volcano chose");
    outcome.insert("two pods at once".into(), format!("{seen:?}"));
    let crossed = twin_a.seen != twin_a.scheduled;
    println!(
        "{plugin}, two pods at once: Volcano chose {:?} and {:?}; the containers see {:?} and {:?}{}",
        twin_a.scheduled,
        twin_b.scheduled,
        twin_a.seen,
        twin_b.seen,
        if crossed { " (crossed)" } else { "" }
    );
    delete_pod(cluster, "twin-a").await;
    delete_pod(cluster, "twin-b").await;
    timer.mark(&format!("{plugin}: two pods at once on disjoint chips"));

    chip_faults(cluster, plugin, &mut outcome, held_chip, timer).await;
    outcome
}

/// The scenario's faults. The policy's first choice for a pod of 1 faults: the device-info ConfigMap lists it
/// unhealthy and Volcano chooses another; after the recovery it chooses it again. Then the chip of the pod that ran
/// beside the fault faults: the running pod keeps it. Each chip faults once (the module docs say why). The topology
/// (dcmi-sim/topologies/atlas-800t-a2.toml) gives physical id `p` the logic id `(p + 4) % 8`.
async fn chip_faults(cluster: &Cluster, plugin: Plugin, outcome: &mut Outcome, first_choice: u32, timer: &mut Timer) {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = ascend_kube::device_info::config_map_name(NODE_NAME);
    let logic_id = |chip: u32| (chip + 4) % 8;
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), true)]);
    wait_device_info(&config_maps, &name, Some(first_choice)).await;
    create_volcano_pod(&pods, "beside-fault", 1).await;
    let beside = chips_of_running_pod(cluster, plugin, outcome, "beside-fault", 1).await;
    assert!(!beside.contains(&first_choice), "{plugin}: Volcano chose the faulty chip {first_choice}: {beside:?}");
    outcome.insert("pod of 1 beside a faulty chip".into(), format!("{beside:?}"));
    timer.mark(&format!("{plugin}: a faulty chip is not chosen"));
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), false)]);
    wait_device_info(&config_maps, &name, None).await;
    create_volcano_pod(&pods, "after-recovery", 1).await;
    let recovered = chips_of_running_pod(cluster, plugin, outcome, "after-recovery", 1).await;
    assert_eq!(recovered, BTreeSet::from([first_choice]), "{plugin}: the recovered chip is Volcano's choice again");
    outcome.insert("pod of 1 after the recovery".into(), format!("{recovered:?}"));
    timer.mark(&format!("{plugin}: the recovered chip is chosen again"));

    let kept = *beside.first().expect("one chip");
    cluster.set_overlay(vec![chip_fault(logic_id(first_choice), false), chip_fault(logic_id(kept), true)]);
    wait_device_info(&config_maps, &name, Some(kept)).await;
    let still = cluster.wait_running(NAMESPACE, "beside-fault", Duration::from_secs(5)).await;
    let listing = cluster.exec(NAMESPACE, "beside-fault", &["ls", "/dev"]).stdout;
    assert_eq!(davinci_nodes(&listing), [format!("davinci{kept}")], "{plugin}: the running pod keeps its chip");
    if plugin == Plugin::Ours {
        assert_eq!(annotated_chips(&still, REAL_CHIPS), beside, "and our record of it");
    }
    outcome.insert("running pod's chip faults".into(), davinci_nodes(&listing).join(","));
    cluster.set_overlay(vec![chip_fault(logic_id(kept), false)]);
    wait_device_info(&config_maps, &name, None).await;
    delete_pod(cluster, "beside-fault").await;
    delete_pod(cluster, "after-recovery").await;
    timer.mark(&format!("{plugin}: a running pod keeps its chip through a fault"));
}

/// Asserts that both plugins gave the same outcome in every step but the listed [`DIFFERENCES`], and that each of
/// those is still a difference; prints the comparison.
fn assert_same_outcome(ours: &Outcome, theirs: &Outcome) {
    let listed = |step: &str| DIFFERENCES.iter().any(|difference| difference.step == step);
    let steps: BTreeSet<&String> = ours.keys().chain(theirs.keys()).collect();
    let mut unlisted = Vec::new();
    for step in steps {
        let (our, their) = (ours.get(step), theirs.get(step));
        println!("{step}: ours {our:?}, Huawei's {their:?}");
        if our != their && !listed(step) {
            unlisted.push(format!("{step}: ours {our:?}, Huawei's {their:?}"));
        }
    }
    for difference in DIFFERENCES {
        println!("listed difference: {}: {}", difference.step, difference.why);
        let (our, their) = (ours.get(difference.step), theirs.get(difference.step));
        assert_ne!(our, their, "{}: listed as a difference, but both plugins give the same now", difference.step);
    }
    assert!(unlisted.is_empty(), "the plugins' outcomes differ:\n{}", unlisted.join("\n"));
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
    wait_until(&format!("device-info ConfigMap: unhealthy {want:?}"), Duration::from_secs(60), || async {
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

/// The kubelet cut off from the API server while it keeps running: the packets of its established connections to
/// the API server (found with `ss` by its pid, scripts/cluster's pid file) are dropped by rules of an iptables chain
/// of the test's own, so it learns of no new pod while it still restarts containers and takes device plugins'
/// registrations (both local). Resuming deletes the chain; so does dropping the guard, also when the test fails. The
/// cut must stay short: the kubelet's HTTP/2 health check closes a connection that has been silent for 30 + 15 s
/// and dials anew, and the node's lease runs out after its grace period.
struct KubeletCut {
    ports: Vec<u16>,
}

/// The iptables chain of [`KubeletCut`].
const CUT_CHAIN: &str = "ASCEND-TEST-KUBELET-CUT";
/// The API server's port (scripts/cluster/pki.sh's kubeconfigs).
const API_PORT: &str = "6443";

impl KubeletCut {
    fn start() -> KubeletCut {
        let pid_file = Cluster::state_dir().join("run/kubelet.pid");
        let pid = std::fs::read_to_string(&pid_file).unwrap_or_else(|error| panic!("{}: {error}", pid_file.display()));
        let pid = pid.trim();
        let sockets = run("ss", &["-tnpH", "state", "established", "dst", &format!("127.0.0.1:{API_PORT}")]);
        let owner = format!("pid={pid},");
        let ports: Vec<u16> = sockets
            .lines()
            .filter(|line| line.contains(&owner))
            .filter_map(|line| line.split_whitespace().nth(2)?.rsplit_once(':')?.1.parse().ok())
            .collect();
        assert!(!ports.is_empty(), "no connection of the kubelet (pid {pid}) to the API server in:\n{sockets}");
        let cut = KubeletCut { ports };
        cut.remove_rules();
        run("iptables", &["-N", CUT_CHAIN]);
        for port in &cut.ports {
            let port = port.to_string();
            let both = [[port.as_str(), API_PORT], [API_PORT, port.as_str()]];
            for [source, destination] in both {
                let rule = ["-p", "tcp", "-s", "127.0.0.1", "-d", "127.0.0.1", "--sport", source, "--dport"];
                run("iptables", &[&["-A", CUT_CHAIN][..], &rule, &[destination, "-j", "DROP"]].concat());
            }
        }
        run("iptables", &["-I", "OUTPUT", "-j", CUT_CHAIN]);
        println!("the kubelet's connections to the API server cut (local ports {:?})", cut.ports);
        cut
    }

    fn remove_rules(&self) {
        for args in [&["-D", "OUTPUT", "-j", CUT_CHAIN][..], &["-F", CUT_CHAIN], &["-X", CUT_CHAIN]] {
            let _ = std::process::Command::new("iptables").args(args).output();
        }
    }
}

impl Drop for KubeletCut {
    fn drop(&mut self) {
        self.remove_rules();
    }
}

/// Runs a host tool; its standard output, or a panic with its error output.
fn run(program: &str, args: &[&str]) -> String {
    let output = std::process::Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|error| panic!("{program} {}: {error}", args.join(" ")));
    assert!(
        output.status.success(),
        "{program} {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&output.stderr).trim()
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// Our device plugin's pod: its name, uid, the containerd id of its `device-plugin` container and that container's
/// restart count.
async fn our_plugin_pod(cluster: &Cluster) -> (String, String, String, i32) {
    let selector = "app.kubernetes.io/name=ascend-device-plugin";
    let pod = cluster.wait_pods_running(SYSTEM, selector, 1, Duration::from_secs(60)).await.remove(0);
    let status = pod.status.unwrap_or_default();
    let container = status
        .container_statuses
        .iter()
        .flatten()
        .find(|container| container.name == "device-plugin")
        .expect("the device-plugin container's status")
        .clone();
    let id = container.container_id.unwrap_or_default();
    let id = id.rsplit_once("://").map_or(id.as_str(), |(_, id)| id).to_owned();
    (pod.metadata.name.unwrap_or_default(), pod.metadata.uid.unwrap_or_default(), id, container.restart_count)
}

#[tokio::test]
async fn our_device_plugin_restarted_between_volcanos_choice_and_allocate_hands_out_the_chosen_chips() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("volcano scheduler, device plugin restart");
    if !volcano_built(&cluster) {
        return;
    }
    let _restore = RestoreNode(&cluster);
    serve_node(&cluster, Plugin::Ours, &mut timer).await;
    cluster.script("volcano.sh", &["start"]);
    test_namespace(&cluster).await;
    timer.mark("Volcano started");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let mut outcome = Outcome::new();
    create_volcano_pod(&pods, "holder", 1).await;
    let held = chips_of_running_pod(&cluster, Plugin::Ours, &mut outcome, "holder", 1).await;
    let (plugin_pod, plugin_uid, container, restarts) = our_plugin_pod(&cluster).await;
    timer.mark("a pod of 1 holds a chip");

    // The kubelet hears of no new pod: Volcano chooses and binds; our device plugin restarts and registers again.
    let cut = KubeletCut::start();
    create_volcano_pod(&pods, "between", 2).await;
    let bound = wait_until("Volcano binds the pod of 2 and writes its chips", Duration::from_secs(20), || async {
        let pod = pods.get("between").await.map_err(|error| error.to_string())?;
        let chips = annotated_chips(&pod, RESOURCE);
        let node = pod.spec.as_ref().and_then(|spec| spec.node_name.clone());
        if chips.len() == 2 && node.is_some() {
            Ok(pod)
        } else {
            Err(format!("node {node:?}, annotations {:?}", pod.metadata.annotations))
        }
    })
    .await;
    let chosen = annotated_chips(&bound, RESOURCE);
    timer.mark("Volcano chose and bound the pod of 2 (the kubelet cut off)");
    let script = format!("source scripts/cluster/lib.sh && ctr task kill --signal SIGTERM {container}");
    let output = std::process::Command::new("bash")
        .args(["-c", &script])
        .current_dir(cluster.repository())
        .output()
        .expect("bash");
    assert!(output.status.success(), "{script}: {}", String::from_utf8_lossy(&output.stderr));
    let log = format!("/var/log/pods/{SYSTEM}_{plugin_pod}_{plugin_uid}/device-plugin/{}.log", restarts + 1);
    wait_until("our device plugin restarted and registered again", Duration::from_secs(20), || async {
        let text = std::fs::read_to_string(&log).map_err(|error| format!("{log}: {error}"))?;
        if text.contains("registered with the kubelet") {
            Ok(())
        } else {
            Err(format!("{log}: not registered yet"))
        }
    })
    .await;
    timer.mark("our device plugin restarted by the kubelet and registered again");
    drop(cut);

    // The kubelet admits the pod now: its Allocate reaches the restarted plugin, which hands out Volcano's chips.
    let between = chip_view(&cluster, "between", 2).await;
    assert_eq!(between.scheduled, chosen, "Volcano's choice stands");
    assert_eq!(between.seen, chosen, "the container's chips are Volcano's, after the device plugin's restart");
    assert_eq!(between.recorded.as_ref(), Some(&chosen), "{REAL_CHIPS}, what the restarted plugin handed out");
    assert!(between.seen.is_disjoint(&held), "the pod of 2 shares no chip with the holder");
    let now = pods.get("between").await.expect("pod between");
    let kubelet_ids = annotated_chips(&now, "huawei.com/kltDev");
    println!("the pod of 2: Volcano chose {chosen:?}, the kubelet asked for {kubelet_ids:?}");
    // The kubelet's ids name other chips, so a plugin that handed those out would fail the checks above.
    assert_ne!(kubelet_ids, chosen, "the kubelet's ids must differ from Volcano's choice for the test to tell");
    let (_, _, _, restarted) = our_plugin_pod(&cluster).await;
    assert_eq!(restarted, restarts + 1, "our device plugin restarted once, between the choice and the Allocate");
    timer.mark("the pod of 2 runs on Volcano's chips, handed out by the restarted plugin");
}

/// The comparison itself, without a cluster: a step whose outcome differs, or that only one plugin gave, fails it
/// unless [`DIFFERENCES`] lists it.
#[test]
fn a_step_that_differs_between_the_plugins_fails_the_comparison() {
    let ours: Outcome = [("pod of 1".to_owned(), "{0}".to_owned())].into();
    assert_same_outcome(&ours, &ours.clone());
    let theirs: Outcome = [("pod of 1".to_owned(), "{4}".to_owned())].into();
    let failed = std::panic::catch_unwind(|| assert_same_outcome(&ours, &theirs));
    let message = failed.expect_err("a difference fails");
    let message = message.downcast_ref::<String>().expect("a formatted message");
    assert!(message.contains("pod of 1: ours Some(\"{0}\"), Huawei's Some(\"{4}\")"), "{message}");
    let missing: Outcome = Outcome::new();
    assert!(std::panic::catch_unwind(|| assert_same_outcome(&ours, &missing)).is_err(), "a step only one gave");
}
