//! What the cluster tests and the test bed's benchmark share: deploying our stack from deploy/ as an operator would
//! (the 910B pool's device plugin, the DRA driver), Huawei's device plugin in its place ([`huawei`]), and starting
//! pods that ask for chips.

pub mod huawei;
pub mod huawei_dra;
pub mod huawei_exporter;

use std::time::Duration;

use crate::{wait_until, wait_until_empty, Cluster, Timer, NODE_NAME};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod};
use kube::api::{Api, DeleteParams, ListParams, PostParams};

/// The device plugin's resource of the 910B pool's chips.
pub const RESOURCE: &str = "huawei.com/Ascend910";
/// The namespace of the tests' own pods and claims.
pub const NAMESPACE: &str = "ascend-e2e";
/// The namespace the 910B pool's manifest (deploy/kubernetes/training-910b.yaml) deploys to.
pub const SYSTEM: &str = "ascend-training-910b";
/// The DRA driver's name.
pub const DRA_DRIVER: &str = "npu.huawei.com";
/// The namespace deploy/kubernetes/dra.yaml deploys to.
pub const DRA_NAMESPACE: &str = "ascend-dra";
/// The DeviceClass of the 910B pool's whole chips (deploy/helm/ascend-npu/templates/dra-driver/device-classes.yaml).
pub const DRA_CLASS_910B: &str = "ascend910b.npu.huawei.com";
/// The test image, imported by scripts/cluster/up.sh.
pub const BUSYBOX: &str = "localhost/ascend-test/busybox:1";

/// Labels the node as an NPU node of the 910B pool (deploy/README.md, step 3) and applies the pool's overlay; waits
/// until the device plugin's and exporter's pods run and the node offers 8 chips.
pub async fn deploy_910b_pool(cluster: &Cluster, timer: &mut Timer) {
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/training-910b.yaml");
    let limit = Duration::from_secs(120);
    cluster.wait_pods_running(SYSTEM, "app.kubernetes.io/name=ascend-device-plugin", 1, limit).await;
    cluster.wait_pods_running(SYSTEM, "app.kubernetes.io/name=npu-exporter", 1, limit).await;
    timer.mark("device plugin and exporter pods running");
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("node allocatable huawei.com/Ascend910 = 8");
}

/// Rewrites the running device plugin's flags with `edit` (as a changed chart value would) and waits for the
/// DaemonSet's rollout.
pub fn edit_device_plugin_args(cluster: &Cluster, edit: impl FnOnce(&mut Vec<String>)) {
    edit_daemon_args(cluster, SYSTEM, "ascend-device-plugin", edit);
}

/// Rewrites the flags of the first container of DaemonSet `name` in `namespace` with `edit` (as a changed chart
/// value would) and waits for its rollout.
pub fn edit_daemon_args(cluster: &Cluster, namespace: &str, name: &str, edit: impl FnOnce(&mut Vec<String>)) {
    let path = "jsonpath={.spec.template.spec.containers[0].args}";
    let listed = cluster.kubectl(&["-n", namespace, "get", "daemonset", name, "-o", path]);
    let mut args: Vec<String> =
        serde_json::from_str(&listed).unwrap_or_else(|error| panic!("the DaemonSet {name}'s args: {error}"));
    edit(&mut args);
    let patch = serde_json::json!([{"op": "replace", "path": "/spec/template/spec/containers/0/args", "value": args}]);
    let patch = patch.to_string();
    cluster.kubectl(&["-n", namespace, "patch", "daemonset", name, "--type=json", "-p", &patch]);
    cluster.kubectl(&["-n", namespace, "rollout", "status", &format!("daemonset/{name}"), "--timeout=120s"]);
}

/// Removes what earlier tests deployed from the plain manifests of deploy/kubernetes (every profile), and waits until
/// the node offers no chip and the DRA driver's slices are gone: the node then runs nothing of ours.
pub async fn remove_plain_stack(cluster: &Cluster) {
    let _ = cluster.try_kubectl(&["delete", "pods", "--all", "-n", NAMESPACE, "--wait=true"]);
    for profile in ["volcano-910b", "training-910b", "inference-310p", "dra"] {
        let path = cluster.repository().join(format!("deploy/kubernetes/{profile}.yaml"));
        let path = path.to_str().expect("path");
        cluster.kubectl(&["delete", "-f", path, "--ignore-not-found", "--wait=true", "--timeout=180s"]);
    }
    // The kubelet deletes a departed DRA driver's slices after its grace period.
    wait_until_empty("earlier DRA slices deleted", Duration::from_secs(90), || published_devices(cluster)).await;
    wait_no_chips(cluster).await;
}

/// Waits until the node offers none of the 910B pool's chips (a departed plugin's resource stays in capacity, at 0
/// allocatable; a node that never had the plugin has none).
pub async fn wait_no_chips(cluster: &Cluster) {
    wait_until("no chip allocatable", Duration::from_secs(60), || async {
        match cluster.allocatable(RESOURCE).await {
            None => Ok(()),
            Some(quantity) if quantity == "0" => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

/// The chip names under one key of the device list of a Volcano device-info ConfigMap
/// (`huawei.com/Ascend910-Unhealthy` ...).
pub fn device_list(config_map: &ConfigMap, key: &str) -> Result<Vec<String>, String> {
    let data = config_map.data.as_ref().ok_or("no data")?;
    let info: serde_json::Value =
        serde_json::from_str(data.get("DeviceInfoCfg").ok_or("no DeviceInfoCfg")?).map_err(|e| e.to_string())?;
    let list = info["DeviceInfo"]["DeviceList"][key].as_str().unwrap_or_default();
    Ok(list.split(',').filter(|name| !name.is_empty()).map(str::to_owned).collect())
}

/// Waits (a minute at most) until the node's Volcano device-info ConfigMap lists `count` free chips of [`RESOURCE`],
/// whichever device plugin writes it, and returns it.
pub async fn wait_free_chips(cluster: &Cluster, count: usize) -> ConfigMap {
    let config_maps: Api<ConfigMap> = Api::namespaced(cluster.client(), "kube-system");
    let name = ascend_kube::device_info::config_map_name(NODE_NAME);
    wait_until(&format!("the device-info ConfigMap with {count} free chips"), Duration::from_secs(60), || async {
        let config_map = config_maps.get_opt(&name).await.map_err(|e| e.to_string())?.ok_or("absent")?;
        let chips = device_list(&config_map, RESOURCE)?;
        if chips.len() == count {
            Ok(config_map)
        } else {
            Err(format!("{chips:?}"))
        }
    })
    .await
}

/// Creates the tests' namespace [`NAMESPACE`] if absent and waits for its default ServiceAccount (pods need it).
pub async fn test_namespace(cluster: &Cluster) {
    let namespaces: Api<Namespace> = Api::all(cluster.client());
    if namespaces.get_opt(NAMESPACE).await.expect("get namespace").is_none() {
        let namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": NAMESPACE}})).expect("namespace");
        namespaces.create(&PostParams::default(), &namespace).await.expect("create namespace");
    }
    wait_until("the test namespace's default ServiceAccount", Duration::from_secs(30), || async {
        let accounts: Api<k8s_openapi::api::core::v1::ServiceAccount> = Api::namespaced(cluster.client(), NAMESPACE);
        accounts.get_opt("default").await.map_err(|e| e.to_string())?.map(|_| ()).ok_or_else(|| "absent".to_owned())
    })
    .await;
}

/// A busybox pod whose one container, `work`, asks for `chips` of the 910B resource.
pub fn npu_pod(name: &str, chips: u32) -> Pod {
    let mut container = sleeping_container();
    container["resources"] = serde_json::json!({"limits": {RESOURCE: chips.to_string()}});
    serde_json::from_value(serde_json::json!({
        "metadata": {"name": name, "namespace": NAMESPACE},
        "spec": {"terminationGracePeriodSeconds": 1, "containers": [container]},
    }))
    .expect("pod")
}

/// The test pods' one container, `work`: the imported busybox, sleeping an hour.
pub fn sleeping_container() -> serde_json::Value {
    serde_json::json!({
        "name": "work",
        "image": BUSYBOX,
        "imagePullPolicy": "Never",
        "command": ["sleep", "3600"],
    })
}

/// Starts the pod (replacing one an interrupted earlier run left) and waits until it runs.
pub async fn start_pod(cluster: &Cluster, name: &str, chips: u32) -> Pod {
    delete_pod(cluster, name).await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &npu_pod(name, chips)).await.expect("create pod");
    cluster.wait_running(NAMESPACE, name, Duration::from_secs(60)).await
}

/// Deletes a pod of the test namespace at once and waits until it is gone (absent already is fine).
pub async fn delete_pod(cluster: &Cluster, name: &str) {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let _ = pods.delete(name, &DeleteParams { grace_period_seconds: Some(0), ..DeleteParams::default() }).await;
    wait_until(&format!("pod {name} gone"), Duration::from_secs(60), || async {
        match pods.get_opt(name).await {
            Ok(None) => Ok(()),
            other => Err(format!("{:?}", other.map(|pod| pod.map(|pod| pod.status)))),
        }
    })
    .await;
}

/// The name of the one running pod selected by `selector` in ascend-system.
pub async fn daemon_pod(cluster: &Cluster, selector: &str) -> String {
    let pods = cluster.wait_pods_running(SYSTEM, selector, 1, Duration::from_secs(120)).await;
    pods[0].metadata.name.clone().expect("pod name")
}

/// A chip fault the fault policy takes the chip out for (an important alarm with a fault code), or its recovery.
pub fn chip_fault(logic_id: u32, faulty: bool) -> dcmi_sim::ChipOverlay {
    let faults = if faulty { vec![dcmi_sim::topology::FaultSpec::Code(0x80E0_1801)] } else { Vec::new() };
    dcmi_sim::ChipOverlay {
        logic_id,
        health: Some(if faulty { 2 } else { 0 }),
        faults: Some(faults),
        ..dcmi_sim::ChipOverlay::default()
    }
}

/// Our DRA devices published for the node, by name.
pub async fn published_devices(cluster: &Cluster) -> Result<std::collections::BTreeSet<String>, String> {
    let slices: Api<k8s_openapi::api::resource::v1::ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.map_err(|error| error.to_string())?;
    Ok(list
        .items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(NODE_NAME))
        .flat_map(|slice| slice.spec.devices.unwrap_or_default())
        .map(|device| device.name)
        .collect())
}

/// Swaps the node from the device plugin to the DRA driver (one kind of driver per node: the device plugin's pool,
/// which an earlier test may have left, goes first), applies deploy/kubernetes/dra.yaml, and waits until the
/// driver runs and the API server holds its 8 devices.
pub async fn deploy_dra(cluster: &Cluster, timer: &mut Timer) {
    let _ = cluster.try_kubectl(&["delete", "namespace", SYSTEM, "--wait=true", "--timeout=120s"]);
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    cluster.apply("deploy/kubernetes/dra.yaml");
    cluster
        .wait_pods_running(DRA_NAMESPACE, "app.kubernetes.io/name=ascend-dra-driver", 1, Duration::from_secs(120))
        .await;
    timer.mark("DRA driver pod running");
    wait_published(cluster, "8 devices published", Duration::from_secs(60)).await;
    timer.mark("ResourceSlices accepted by the API server");
    wait_dra_registered(cluster).await;
}

/// Waits until the API server holds the node's 8 DRA devices (`what` names the moment).
pub async fn wait_published(cluster: &Cluster, what: &str, limit: Duration) {
    wait_until(what, limit, || async {
        let devices = published_devices(cluster).await?;
        if devices.len() == 8 {
            Ok(devices)
        } else {
            Err(format!("{devices:?}"))
        }
    })
    .await;
}

/// Waits until the running driver pod has registered with the kubelet: a claim whose prepare comes earlier fails
/// ("DRA driver npu.huawei.com is not registered") and waits out the kubelet's backoff, a minute or more.
pub async fn wait_dra_registered(cluster: &Cluster) {
    cluster.kubectl(&["rollout", "status", "daemonset/ascend-dra-driver", "-n", DRA_NAMESPACE, "--timeout=120s"]);
    wait_until("the DRA driver registered with the kubelet", Duration::from_secs(60), || async {
        let log = cluster.try_kubectl(&["logs", "-n", DRA_NAMESPACE, "daemonset/ascend-dra-driver"])?;
        if log.contains("registered with the kubelet") {
            Ok(())
        } else {
            Err("not registered yet".to_owned())
        }
    })
    .await;
}

/// Removes the test namespace's pods and claims, then the DRA driver, and waits until its slices are gone, so that
/// the next test finds the node free.
pub async fn remove_dra(cluster: &Cluster) {
    let _ =
        cluster.try_kubectl(&["delete", "pods,deployments,resourceclaims", "--all", "-n", NAMESPACE, "--wait=true"]);
    let _ = cluster.try_kubectl(&["delete", "namespace", DRA_NAMESPACE, "--wait=true", "--timeout=120s"]);
    // The kubelet deletes the slices of a driver that unregistered after its 30-s grace period.
    wait_until_empty("the DRA driver's slices deleted", Duration::from_secs(90), || published_devices(cluster)).await;
}

/// The CDI spec files the DRA driver writes for the claims it prepared (`k8s.npu.huawei.com-<claim uid>.json` in
/// /var/run/cdi, the name the DRA kubelet-plugin convention gives them), not the host's spec of every chip.
pub fn claim_cdi_specs() -> Vec<String> {
    let prefix = format!("k8s.{DRA_DRIVER}-");
    std::fs::read_dir("/var/run/cdi")
        .map(|entries| {
            entries
                .flatten()
                .map(|entry| entry.file_name().to_string_lossy().into_owned())
                .filter(|name| name.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

/// The release build's directory (`target/release`, or below `CARGO_TARGET_DIR`), where scripts/cluster/up.sh builds
/// the simulator, the tools and the daemons.
pub fn release_dir(cluster: &Cluster) -> std::path::PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| cluster.repository().join("target"), std::path::PathBuf::from);
    target.join("release")
}

/// The chips of a `ls /dev` listing: the `davinci<N>` nodes (not `davinci_manager`), in listing order.
pub fn davinci_nodes(listing: &str) -> Vec<String> {
    listing
        .split_whitespace()
        .filter(|node| node.strip_prefix("davinci").is_some_and(|id| id.parse::<u32>().is_ok()))
        .map(str::to_owned)
        .collect()
}

/// The scheduler's message on a pod of the test namespace it could not place, once it has one.
pub async fn unschedulable_reason(cluster: &Cluster, pod: &str) -> String {
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    wait_until(&format!("{pod} unschedulable"), Duration::from_secs(60), || async {
        let status = pods.get(pod).await.map_err(|error| error.to_string())?.status.unwrap_or_default();
        status
            .conditions
            .iter()
            .flatten()
            .find(|condition| condition.type_ == "PodScheduled" && condition.status == "False")
            .and_then(|condition| condition.message.clone())
            .ok_or_else(|| format!("{:?} {:?}", status.phase, status.conditions))
    })
    .await
}

/// Waits until the DRA driver holds no prepared claim's CDI spec on the node (`what` names the moment).
pub async fn wait_no_claim_cdi_specs(what: &str) {
    wait_until_empty(what, Duration::from_secs(60), || async { Ok(claim_cdi_specs()) }).await;
}

/// Waits until the test namespace holds no ResourceClaim.
pub async fn wait_claims_gone(cluster: &Cluster) {
    let claims: Api<k8s_openapi::api::resource::v1::ResourceClaim> = Api::namespaced(cluster.client(), NAMESPACE);
    wait_until("every claim of the test namespace gone", Duration::from_secs(90), || async {
        let left = claims.list(&ListParams::default()).await.map_err(|error| error.to_string())?.items;
        if left.is_empty() {
            Ok(())
        } else {
            Err(format!("{:?}", left.iter().map(|claim| claim.metadata.name.clone()).collect::<Vec<_>>()))
        }
    })
    .await;
}

/// The spec of a pod whose one container, `work`, sleeps with the devices of one claim: `claim` is the pod's entry
/// for it (`{"name": "npu", "resourceClaimName": "x"}`, or with `resourceClaimTemplateName`); the container refers
/// to it by that entry's name.
pub fn sleeping_pod_spec(claim: serde_json::Value) -> serde_json::Value {
    let mut container = sleeping_container();
    container["resources"] = serde_json::json!({"claims": [{"name": claim["name"].clone()}]});
    serde_json::json!({"terminationGracePeriodSeconds": 1, "containers": [container], "resourceClaims": [claim]})
}
