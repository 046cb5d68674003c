//! Huawei's device plugin on the real cluster, in place of ours: the program the comparison tier runs (built from
//! a mind-cluster tree at the pinned commit by scripts/peers/build.sh, packed by
//! scripts/cluster/images/huawei_device_plugin.sh), deployed from cluster-tests/manifests/huawei-device-plugin.yaml,
//! our manifest written from what Huawei's ascendplugin.yaml gives it. What it leaves on the real Node (allocatable,
//! labels, annotations), its device-info ConfigMap and, in plain mode, the device nodes a pod with two chips gets
//! are recorded; then our stack takes the node again (deploy/kubernetes/training-910b.yaml, or volcano-910b.yaml
//! against Huawei's `-volcanoType=true`) and must give the same, but for the differences listed in
//! [`PLAIN_DIFFERENCES`] and [`VOLCANO_DIFFERENCES`]. The node is left with our 910B pool deployed, as the other
//! tests expect.
//!
//! The reference for this comparison on a real kubelet and containerd; the comparison tier (peer-tests/) compares
//! the same programs' registrations, Allocate responses, Node and ConfigMaps against the in-repo stand-ins, on every
//! sample host and in each mode. Without a mind-cluster tree there is no Huawei program to run: the test then says
//! it is skipped, and why.

use std::collections::BTreeMap;
use std::process::Command;
use std::time::{Duration, Instant};

use ascend_cluster_tests::stack::huawei::WORKER_LABEL;
use ascend_cluster_tests::stack::{
    davinci_nodes, delete_pod, deploy_910b_pool, huawei, remove_plain_stack, start_pod, test_namespace, wait_no_chips,
    NAMESPACE, RESOURCE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::{ConfigMap, Node};
use kube::api::{Api, Patch, PatchParams};

/// The archive scripts/cluster/up.sh imports, when scripts/peers/build.sh had Huawei's programs.
const IMAGE_ARCHIVE: &str = "images/huawei-device-plugin.tar";
/// The name [`Difference::what`] gives the device-info ConfigMap.
const DEVICE_INFO: &str = "configmap:mindx-dl-deviceinfo";

/// Something Huawei's plugin sets that ours gives otherwise, on purpose: a Node label or annotation
/// (`label:KEY`, `annotation:KEY`), a key of the device-info ConfigMap as [`flatten`] names it (`configmap:KEY`), or
/// the whole ConfigMap ([`DEVICE_INFO`]). docs/huawei-compatibility.md, "Device plugin", says the same.
struct Difference {
    what: &'static str,
    why: &'static str,
}

/// Why plain mode differs: our device plugin writes the Volcano contract (the device-info ConfigMap and the
/// annotations of Huawei's scheduler plugin) only in Volcano mode (`--volcano`, deploy/kubernetes/volcano-910b.yaml),
/// where its reader, Volcano's huawei-npu plugin, runs; Huawei's plugin writes them in either mode. The Volcano-mode
/// test compares them.
const VOLCANO_CONTRACT: &str = "written by ours in Volcano mode only, where Volcano reads it; compared by the \
                                Volcano-mode test";
/// The differences in plain mode.
const PLAIN_DIFFERENCES: &[Difference] = &[
    Difference { what: "annotation:baseDeviceInfos", why: VOLCANO_CONTRACT },
    Difference { what: "annotation:serverIndex", why: VOLCANO_CONTRACT },
    Difference { what: "annotation:serverType", why: VOLCANO_CONTRACT },
    Difference { what: "annotation:superPodID", why: VOLCANO_CONTRACT },
    Difference { what: DEVICE_INFO, why: VOLCANO_CONTRACT },
];
/// The differences in Volcano mode.
const VOLCANO_DIFFERENCES: &[Difference] = &[Difference {
    what: "configmap:Description",
    why: "a notice for people (the per-resource lists of used chips are sunset, Volcano keeps them itself) that no \
          program reads; ours writes data only",
}];

/// A Node's labels and annotations, as `label:KEY` and `annotation:KEY`.
type Metadata = BTreeMap<String, String>;

fn metadata(node: &Node) -> Metadata {
    let labels = node.metadata.labels.iter().flatten().map(|(key, value)| (format!("label:{key}"), value.clone()));
    let annotations =
        node.metadata.annotations.iter().flatten().map(|(key, value)| (format!("annotation:{key}"), value.clone()));
    labels.chain(annotations).collect()
}

/// The labels and annotations the kubelet and the controller manager put on a Node, which no device plugin sets.
const KUBERNETES_OWN: &[&str] = &[
    "label:kubernetes.io/hostname",
    "label:kubernetes.io/os",
    "label:kubernetes.io/arch",
    "label:beta.kubernetes.io/os",
    "label:beta.kubernetes.io/arch",
    "annotation:node.alpha.kubernetes.io/ttl",
    "annotation:volumes.kubernetes.io/controller-managed-attach-detach",
];

fn kubernetes_own(key: &str) -> bool {
    KUBERNETES_OWN.contains(&key)
}

/// Removes every label and annotation of the Node but Kubernetes' own, so that what a plugin sets next is its own.
async fn strip_node(cluster: &Cluster) {
    let node = cluster.node().await;
    let mut labels = serde_json::Map::new();
    let mut annotations = serde_json::Map::new();
    for key in metadata(&node).keys().filter(|key| !kubernetes_own(key)) {
        match key.split_once(':') {
            Some(("label", key)) => labels.insert(key.to_owned(), serde_json::Value::Null),
            Some((_, key)) => annotations.insert(key.to_owned(), serde_json::Value::Null),
            None => None,
        };
    }
    let patch = serde_json::json!({"metadata": {"labels": labels, "annotations": annotations}});
    Api::<Node>::all(cluster.client())
        .patch(NODE_NAME, &PatchParams::default(), &Patch::Merge(&patch))
        .await
        .expect("strip the node's labels and annotations");
}

/// Waits until the Node's labels and annotations have not changed for `quiet` (a plugin labels the Node after it
/// registers), for at most `limit`; returns them.
async fn settled_metadata(cluster: &Cluster, quiet: Duration, limit: Duration) -> Metadata {
    let started = Instant::now();
    let mut last = metadata(&cluster.node().await);
    let mut since = Instant::now();
    loop {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let now = metadata(&cluster.node().await);
        if now != last {
            last = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            return last;
        }
        assert!(started.elapsed() < limit, "the Node's labels and annotations still change after {limit:?}: {last:#?}");
    }
}

/// What a container sees in /dev: its davinci nodes, and every other entry.
type PodDevices = (Vec<String>, Vec<String>);

fn pod_devices(cluster: &Cluster, pod: &str) -> PodDevices {
    let listing = cluster.exec(NAMESPACE, pod, &["ls", "/dev"]).stdout;
    let chips = davinci_nodes(&listing);
    let others = listing.split_whitespace().filter(|entry| !chips.iter().any(|chip| chip == entry)).map(str::to_owned);
    let others = others.collect();
    (chips, others)
}

/// The device-info ConfigMap of the node (`mindx-dl-deviceinfo-<node>` in kube-system), if one is there.
async fn device_info(cluster: &Cluster) -> Option<ConfigMap> {
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    config_maps
        .get_opt(&ascend_kube::device_info::config_map_name(NODE_NAME))
        .await
        .expect("get the device-info ConfigMap")
}

/// Removes Huawei's plugin and its node label (also when the test fails half-way, so that the next test finds the
/// node free of it).
struct RemoveHuaweis<'a>(&'a Cluster);

impl RemoveHuaweis<'_> {
    fn remove(&self) {
        huawei::remove(self.0);
    }
}

impl Drop for RemoveHuaweis<'_> {
    fn drop(&mut self) {
        self.remove();
    }
}

/// The directory of Huawei's programs (scripts/peers/build.sh's last line), or `None`, said loudly, when there is
/// no mind-cluster tree to build them from (an error under CI).
fn huawei_programs(cluster: &Cluster) -> Option<String> {
    let output = Command::new("bash")
        .arg(cluster.repository().join("scripts/peers/build.sh"))
        .output()
        .expect("run scripts/peers/build.sh");
    let stdout = String::from_utf8_lossy(&output.stdout);
    match output.status.code() {
        Some(0) => Some(stdout.lines().last().unwrap_or_default().to_owned()),
        Some(3) => {
            // As in the comparison tier (peer-tests/run.sh): CI lays the tree beside the checkout; a lack is an error.
            assert!(
                std::env::var("CI").as_deref() != Ok("true"),
                "no mind-cluster tree beside the checkout, where CI lays it: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            println!(
                "SKIPPED huawei_device_plugin: scripts/peers/build.sh has no mind-cluster tree to build Huawei's \
                 device plugin from ({}); give one with MIND_CLUSTER_TREE",
                String::from_utf8_lossy(&output.stderr).trim()
            );
            None
        }
        _ => panic!("scripts/peers/build.sh failed: {stdout}{}", String::from_utf8_lossy(&output.stderr)),
    }
}

/// What Huawei's plugin left: the Node's labels and annotations it set (key to value) and its device-info ConfigMap
/// (flattened, [`flatten`]), if it wrote one.
struct Record {
    node: Metadata,
    device_info: Option<Metadata>,
}

/// The Node's metadata keys of `node` a plugin set: those not as they were on the stripped Node `bare`, without the
/// label the test itself put for Huawei's DaemonSet.
fn set_by_plugin(node: &Metadata, bare: &Metadata) -> Metadata {
    let worker = format!("label:{}", WORKER_LABEL.0);
    node.iter()
        .filter(|(key, value)| bare.get(*key) != Some(*value) && **key != worker)
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// Keys of the device-info document that carry a time or a checksum of the rest: not compared.
const VOLATILE_KEYS: &[&str] = &["UpdateTime", "CheckCode"];

/// A ConfigMap's data as path to leaf, a value holding JSON read as JSON, without [`VOLATILE_KEYS`].
fn flatten(config_map: &ConfigMap) -> Metadata {
    fn walk(value: &serde_json::Value, prefix: &str, out: &mut Metadata) {
        match value {
            serde_json::Value::String(text) if text.starts_with(['{', '[']) => {
                match serde_json::from_str::<serde_json::Value>(text) {
                    Ok(inner) => walk(&inner, prefix, out),
                    Err(_) => {
                        out.insert(prefix.to_owned(), text.clone());
                    }
                }
            }
            serde_json::Value::Object(map) => {
                for (key, inner) in map.iter().filter(|(key, _)| !VOLATILE_KEYS.contains(&key.as_str())) {
                    walk(inner, &if prefix.is_empty() { key.clone() } else { format!("{prefix}.{key}") }, out);
                }
            }
            serde_json::Value::String(text) => {
                out.insert(prefix.to_owned(), text.clone());
            }
            other => {
                out.insert(prefix.to_owned(), other.to_string());
            }
        }
    }
    let mut out = Metadata::new();
    for (key, value) in config_map.data.iter().flatten() {
        walk(&serde_json::Value::String(value.clone()), key, &mut out);
    }
    out
}

/// Takes the node from our stack to Huawei's plugin (in Volcano mode with `volcano`), records what it sets, and
/// with `two_chips` the /dev of a pod given two chips by it; then removes it, its ConfigMap and what it set on the
/// Node. `None`, said loudly, without a mind-cluster tree.
async fn huaweis_run(
    cluster: &Cluster,
    timer: &mut Timer,
    volcano: bool,
    two_chips: bool,
) -> Option<(Metadata, Record, Option<PodDevices>)> {
    let programs = huawei_programs(cluster)?;
    let archive = Cluster::state_dir().join(IMAGE_ARCHIVE);
    assert!(
        archive.exists(),
        "{} is missing although scripts/peers/build.sh has Huawei's programs in {programs}: start the cluster again \
         with scripts/cluster/up.sh, which builds and imports the image",
        archive.display()
    );

    // The node with no plugin of ours, and only Kubernetes' own labels and annotations.
    remove_plain_stack(cluster).await;
    strip_node(cluster).await;
    let bare = metadata(&cluster.node().await);
    test_namespace(cluster).await;
    timer.mark("our stack removed, the Node stripped");

    // Huawei's plugin, as its installation deploys it.
    let guard = RemoveHuaweis(cluster);
    huawei::deploy(cluster, volcano).await;
    timer.mark("Huawei's device plugin running, node allocatable huawei.com/Ascend910 = 8 from it");
    let node =
        set_by_plugin(&settled_metadata(cluster, Duration::from_secs(10), Duration::from_secs(120)).await, &bare);
    println!("Huawei's plugin set on the Node:");
    for (key, value) in &node {
        println!("  {key} = {value}");
    }
    let device_info = device_info(cluster).await.map(|map| flatten(&map));
    println!("Huawei's device-info ConfigMap: {device_info:#?}");
    timer.mark("Huawei's Node labels and annotations recorded");

    let devices = if two_chips {
        start_pod(cluster, "huawei-two-chips", 2).await;
        let devices = pod_devices(cluster, "huawei-two-chips");
        println!("a pod with 2 chips from Huawei's plugin: {devices:?}");
        assert_eq!(devices.0.len(), 2, "Huawei's plugin gives two chips: {devices:?}");
        delete_pod(cluster, "huawei-two-chips").await;
        timer.mark("pod with 2 chips from Huawei's plugin");
        Some(devices)
    } else {
        None
    };

    guard.remove();
    drop(guard);
    wait_no_chips(cluster).await;
    if device_info.is_some() {
        cluster.kubectl(&[
            "delete",
            "configmap",
            "-n",
            "kube-system",
            &ascend_kube::device_info::config_map_name(NODE_NAME),
        ]);
    }
    strip_node(cluster).await;
    timer.mark("Huawei's plugin removed, the Node stripped");
    Some((bare, Record { node, device_info }, devices))
}

/// The device-info keys (flattened) of a ConfigMap not listed among the `deliberate` differences
/// (`configmap:KEY`), or `None` when the whole ConfigMap is ([`DEVICE_INFO`]) or there is none.
fn compared_device_info(info: Option<&Metadata>, deliberate: &[Difference]) -> Option<Metadata> {
    let listed = |what: String| deliberate.iter().any(|difference| difference.what == what);
    if listed(DEVICE_INFO.to_owned()) {
        return None;
    }
    let kept = info?.iter().filter(|(key, _)| !listed(format!("configmap:{key}")));
    Some(kept.map(|(key, value)| (key.clone(), value.clone())).collect())
}

/// What our stack shows of what Huawei's plugin set: the Node's values of the same keys, and the device-info.
async fn our_view(cluster: &Cluster, keys: &Metadata) -> (Metadata, Option<Metadata>) {
    let node = metadata(&cluster.node().await);
    let ours = keys.keys().filter_map(|key| Some((key.clone(), node.get(key)?.clone()))).collect();
    (ours, device_info(cluster).await.map(|map| flatten(&map)))
}

/// Waits until our stack has set every key of Huawei's `record` on the Node, and written its device-info ConfigMap,
/// as Huawei's plugin did, but for the `deliberate` differences of this mode; panics naming each difference, and
/// when a listed difference is one no more.
async fn assert_ours_match(cluster: &Cluster, bare: &Metadata, theirs: &Record, deliberate: &[Difference]) {
    let listed = |what: &str| deliberate.iter().any(|difference| difference.what == what);
    let expected: Metadata =
        theirs.node.iter().filter(|(key, _)| !listed(key)).map(|(k, v)| (k.clone(), v.clone())).collect();
    let expected_info = compared_device_info(theirs.device_info.as_ref(), deliberate);
    let what = "our stack sets the Node and the device-info as Huawei's plugin did";
    wait_until(what, Duration::from_secs(90), || async {
        let (ours, info) = our_view(cluster, &expected).await;
        let info = compared_device_info(info.as_ref(), deliberate);
        if ours == expected && info == expected_info {
            Ok(())
        } else {
            Err(format!(
                "Node: Huawei's {expected:#?}\nours {ours:#?}\ndevice-info: Huawei's {expected_info:#?}\nours {info:#?}"
            ))
        }
    })
    .await;
    // Each listed difference must still be one: one that is gone is to be struck from the list.
    let (ours, info) = our_view(cluster, &theirs.node).await;
    for difference in deliberate {
        println!("listed difference: {}: {}", difference.what, difference.why);
        let value = |info: Option<&Metadata>, key: &str| info.and_then(|info| info.get(key)).cloned();
        let same = match difference.what.strip_prefix("configmap:") {
            _ if difference.what == DEVICE_INFO => info.is_some() == theirs.device_info.is_some(),
            Some(key) => value(info.as_ref(), key) == value(theirs.device_info.as_ref(), key),
            None => ours.get(difference.what) == theirs.node.get(difference.what),
        };
        assert!(!same, "{}: listed as a difference, but ours is Huawei's now", difference.what);
    }
    let node = metadata(&cluster.node().await);
    let extra: Vec<&String> =
        node.keys().filter(|key| !bare.contains_key(*key) && !theirs.node.contains_key(*key)).collect();
    println!("set by ours, not by Huawei's plugin: {extra:?}");
}

#[tokio::test]
async fn huaweis_device_plugin_and_ours_give_the_same_node_and_pod_devices() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("huawei device plugin");
    let Some((bare, theirs, their_devices)) = huaweis_run(&cluster, &mut timer, false, true).await else { return };

    deploy_910b_pool(&cluster, &mut timer).await;
    assert_ours_match(&cluster, &bare, &theirs, PLAIN_DIFFERENCES).await;
    timer.mark("our Node labels and annotations match Huawei's");

    start_pod(&cluster, "ours-two-chips", 2).await;
    let our_devices = pod_devices(&cluster, "ours-two-chips");
    println!("a pod with 2 chips from our plugin: {our_devices:?}");
    // Which two chips is the kubelet's choice among the free ones (neither plugin prefers any on this host, and
    // Huawei's pod got others from run to run): the count of chips and every other device node must be the same.
    let their_devices = their_devices.expect("Huawei's pod's devices");
    assert_eq!(our_devices.0.len(), 2, "two chips from ours: {our_devices:?}");
    assert_eq!(our_devices.1, their_devices.1, "the device nodes besides the chips: ours, then Huawei's");
    delete_pod(&cluster, "ours-two-chips").await;
    timer.mark("pod with 2 chips from ours");
    assert_eq!(cluster.allocatable(RESOURCE).await.as_deref(), Some("8"));
}

#[tokio::test]
async fn in_volcano_mode_huaweis_device_plugin_and_ours_give_the_same_node_and_device_info() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("huawei device plugin, Volcano mode");
    let Some((bare, theirs, _)) = huaweis_run(&cluster, &mut timer, true, false).await else { return };

    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/volcano-910b.yaml");
    cluster.kubectl(&["-n", SYSTEM, "rollout", "status", "daemonset/ascend-device-plugin", "--timeout=180s"]);
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("our device plugin in Volcano mode running");
    assert_ours_match(&cluster, &bare, &theirs, VOLCANO_DIFFERENCES).await;
    timer.mark("our Node annotations and device-info match Huawei's");

    // Our plain pool back, as the other tests find the node: without what our Volcano mode wrote for Volcano, the
    // device-info ConfigMap (kubectl ascend takes a node that has one for a Volcano node) and the Node annotations.
    deploy_910b_pool(&cluster, &mut timer).await;
    cluster.kubectl(&[
        "delete",
        "configmap",
        "-n",
        "kube-system",
        &ascend_kube::device_info::config_map_name(NODE_NAME),
        "--ignore-not-found",
    ]);
    let volcano_annotations: serde_json::Map<String, serde_json::Value> =
        huawei::VOLCANO_ANNOTATIONS.iter().map(|key| ((*key).to_owned(), serde_json::Value::Null)).collect();
    Api::<Node>::all(cluster.client())
        .patch(
            NODE_NAME,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"metadata": {"annotations": volcano_annotations}})),
        )
        .await
        .expect("remove the Volcano annotations");
    timer.mark("our plain pool back, Volcano's ConfigMap and annotations removed");
}
