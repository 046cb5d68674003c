//! The Helm chart (deploy/helm/ascend-npu) on the real cluster, used as deploy/README.md tells operators to:
//! `helm install` brings the stack up and a pod gets a chip; `helm upgrade` with another exporter naming rolls the
//! exporter's DaemonSet while the running pod keeps its chip and the device plugin is left alone; `helm uninstall`
//! leaves no object of ours behind, looked for in every kind the chart can create.
//!
//! The install also runs the chart's node setup on the node (`ascend-ctk node-setup`, the device plugin's init
//! container) with the runtime registration on: the host's CDI spec is removed first, so the pod's chip proves the
//! spec node setup wrote, and after containerd is restarted (as the chart's NOTES tell) a pod of the chart's
//! RuntimeClass gets its chip through the runtime node setup installed and registered. The host is put back after.

use std::collections::BTreeSet;
use std::path::Path;
use std::time::Duration;

use ascend_cluster_tests::stack::{
    davinci_nodes, delete_pod, remove_plain_stack, sleeping_container, start_pod, test_namespace, wait_no_chips,
    NAMESPACE, RESOURCE,
};
use ascend_cluster_tests::{
    wait_until, wait_until_empty, Cluster, HostBackup, Timer, CONTAINERD_CONFIG, HOST_CDI_SPEC,
};
use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, PostParams};

const CHART: &str = "deploy/helm/ascend-npu";
const RELEASE: &str = "ascend-npu";
/// The release's namespace, made by `helm install --create-namespace` as the README's install does.
const RELEASE_NAMESPACE: &str = "ascend-system";
/// What every object of the release carries (templates/_helpers.tpl).
const RELEASE_SELECTOR: &str = "app.kubernetes.io/instance=ascend-npu";

/// The node setup's settings: its own install directory and runtime handler, so that what it does is told apart
/// from the test bed's own toolkit (scripts/cluster/host_toolkit.sh: /usr/local/bin, handler "ascend").
const INSTALL_DIR: &str = "/opt/ascend-helm-test/bin";
const HANDLER: &str = "ascend-helm";
/// Every kind the chart can create with any values (every part on, once with the device plugin and once with the
/// DRA driver), from its own renders, so that a template added later is covered too. The Prometheus operator's kinds
/// are left out: the test bed serves no such API, so the chart's `auto` does not create them here.
fn chart_kinds(cluster: &Cluster) -> BTreeSet<String> {
    let mut kinds = BTreeSet::new();
    for parts in [
        "devicePlugin.volcano.enabled=true,devicePlugin.nodeEvents=true,namespace.create=true",
        "devicePlugin.enabled=false,draDriver.enabled=true,namespace.create=true",
    ] {
        let rendered = cluster
            .try_helm(&["template", RELEASE, CHART, "--namespace", RELEASE_NAMESPACE, "--set", parts])
            .unwrap_or_else(|error| panic!("{error}"));
        kinds.extend(rendered.lines().filter_map(|line| line.strip_prefix("kind: ")).map(str::to_lowercase));
    }
    assert!(kinds.contains("daemonset") && kinds.contains("deviceclass"), "the renders' kinds: {kinds:?}");
    kinds
}

/// The release's objects of those kinds, in every namespace, as `kind/name`.
fn release_objects(cluster: &Cluster, kinds: &BTreeSet<String>) -> Result<Vec<String>, String> {
    let kinds = kinds.iter().cloned().collect::<Vec<_>>().join(",");
    let listing = cluster.try_kubectl(&["get", &kinds, "--all-namespaces", "-l", RELEASE_SELECTOR, "-o", "name"])?;
    Ok(listing.lines().map(str::to_owned).collect())
}

/// Runs a helm command of whitespace-separated words as the operator would, waiting (`--wait`, 180 s) until what it
/// changed is ready or gone; panics with helm's error output.
fn helm(cluster: &Cluster, command: &str) -> String {
    let mut args: Vec<&str> = command.split_whitespace().collect();
    args.extend(["--wait", "--timeout", "180s"]);
    cluster.try_helm(&args).unwrap_or_else(|error| panic!("{error}"))
}

/// A chip metric of each naming (ascend-exporter/src/catalogue.rs).
const NATIVE_METRIC: &str = "ascend_npu_temperature_celsius{";
const HUAWEI_METRIC: &str = "npu_chip_info_temperature{";

/// A scrape of an exporter pod of the release, once it serves the chips' temperatures in either naming (its first
/// sampler round has ended).
async fn scrape(cluster: &Cluster, pod: &str) -> String {
    let forward = cluster.port_forward(RELEASE_NAMESPACE, pod, 8082);
    wait_until(&format!("a scrape of {pod} with chip metrics"), Duration::from_secs(30), || async {
        let body = forward.get("/metrics")?;
        if body.contains(NATIVE_METRIC) || body.contains(HUAWEI_METRIC) {
            Ok(body)
        } else {
            Err(body)
        }
    })
    .await
}

/// The one running pod of a DaemonSet of the release, by its app.kubernetes.io/name.
async fn release_pod(cluster: &Cluster, name: &str) -> String {
    let selector = format!("app.kubernetes.io/name={name}");
    let pods = cluster.wait_pods_running(RELEASE_NAMESPACE, &selector, 1, Duration::from_secs(120)).await;
    pods[0].metadata.name.clone().expect("pod name")
}

#[tokio::test]
async fn helm_installs_upgrades_and_uninstalls_the_stack() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("helm");
    remove_plain_stack(&cluster).await;
    timer.mark("the plain manifests' stack removed");
    let kinds = chart_kinds(&cluster);

    // Install: the README's commands, on a node of the 910B pool, with the node setup registering the runtime.
    cluster.label_node("ascend.huawei.com/chip-type", Some("910B"));
    let host =
        HostBackup::take(&cluster).remove_on_drop(Path::new(INSTALL_DIR).parent().expect("install directory's parent"));
    helm(
        &cluster,
        &format!(
            "install {RELEASE} {CHART} -n {RELEASE_NAMESPACE} --create-namespace --set pool.chipType=910B \
             --set nodeSetup.runtime=containerd --set nodeSetup.installDir={INSTALL_DIR} \
             --set runtimeClass.name={HANDLER} --set runtimeClass.handler={HANDLER}"
        ),
    );
    timer.mark("helm install --wait returned");
    cluster.wait_allocatable(RESOURCE, "8", Duration::from_secs(60)).await;
    timer.mark("node allocatable huawei.com/Ascend910 = 8");
    let installed = release_objects(&cluster, &kinds).expect("list the release's objects");
    let runtime_class = format!("runtimeclass.node.k8s.io/{HANDLER}");
    for expected in ["daemonset.apps/ascend-device-plugin", "daemonset.apps/npu-exporter", runtime_class.as_str()] {
        assert!(installed.iter().any(|object| object == expected), "{expected} installed: {installed:?}");
    }
    check_node_setup(&cluster).await;
    timer.mark("node setup: toolkit installed, CDI spec written, runtime registered");

    test_namespace(&cluster).await;
    let pod = start_pod(&cluster, "helm-chip", 1).await;
    let chips = davinci_nodes(&cluster.exec(NAMESPACE, "helm-chip", &["ls", "/dev"]).stdout);
    assert_eq!(chips.len(), 1, "the pod sees its one chip, by the CDI spec the node setup wrote: {chips:?}");
    timer.mark("a pod with one chip running");

    // The NOTES' restart, then a pod of the chart's RuntimeClass: it asks the scheduler for no chip and names chip 5
    // in ASCEND_VISIBLE_DEVICES, which only the runtime the node setup installed acts on.
    cluster.script("node.sh", &["restart-containerd"]);
    timer.mark("containerd restarted");
    runtime_class_pod(&cluster).await;
    timer.mark("a pod of the chart's RuntimeClass got its chip through the installed runtime");

    // Upgrade: another exporter naming rolls the exporter, not the device plugin, and not the pod.
    let plugin_before = release_pod(&cluster, "ascend-device-plugin").await;
    let exporter_before = release_pod(&cluster, "npu-exporter").await;
    let before = scrape(&cluster, &exporter_before).await;
    assert!(before.contains(NATIVE_METRIC) && !before.contains(HUAWEI_METRIC), "native names at install:\n{before}");
    helm(
        &cluster,
        &format!("upgrade {RELEASE} {CHART} -n {RELEASE_NAMESPACE} --reuse-values --set exporter.naming=huawei"),
    );
    timer.mark("helm upgrade --wait returned");
    let exporter_after = wait_until("the exporter rolled", Duration::from_secs(120), || async {
        let pod = release_pod(&cluster, "npu-exporter").await;
        if pod == exporter_before {
            Err(format!("still {pod}"))
        } else {
            Ok(pod)
        }
    })
    .await;
    let after = scrape(&cluster, &exporter_after).await;
    assert!(
        after.contains(HUAWEI_METRIC) && !after.contains(NATIVE_METRIC),
        "Huawei's names after the upgrade:\n{after}"
    );
    assert_eq!(release_pod(&cluster, "ascend-device-plugin").await, plugin_before, "the device plugin was not rolled");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    let after = pods.get("helm-chip").await.expect("the pod after the upgrade");
    assert_eq!(after.metadata.uid, pod.metadata.uid, "the same pod");
    let status = after.status.expect("status");
    assert_eq!(status.phase.as_deref(), Some("Running"));
    let restarts: i32 = status.container_statuses.unwrap_or_default().iter().map(|c| c.restart_count).sum();
    assert_eq!(restarts, 0, "the pod's container was not restarted");
    assert_eq!(davinci_nodes(&cluster.exec(NAMESPACE, "helm-chip", &["ls", "/dev"]).stdout), chips, "the same chip");
    timer.mark("exporter rolled to Huawei's names; the pod kept its chip");

    // Uninstall: nothing of ours is left in any kind the chart can create.
    delete_pod(&cluster, "helm-chip").await;
    helm(&cluster, &format!("uninstall {RELEASE} -n {RELEASE_NAMESPACE}"));
    timer.mark("helm uninstall --wait returned");
    wait_until_empty("the release's objects gone", Duration::from_secs(60), || async {
        release_objects(&cluster, &kinds)
    })
    .await;
    assert!(cluster.try_helm(&["status", RELEASE, "--namespace", RELEASE_NAMESPACE]).is_err(), "no release left");
    wait_no_chips(&cluster).await;
    timer.mark("no object of the release left; the node offers no chip");
    let _ = cluster.try_kubectl(&["delete", "namespace", RELEASE_NAMESPACE, "--wait=true"]);
    drop(host);
    timer.mark("the host put back");
}

/// What the node setup init container left on the host, and what its log says.
async fn check_node_setup(cluster: &Cluster) {
    let installed = Path::new(INSTALL_DIR).join("ascend-ctk");
    let built = ascend_cluster_tests::stack::release_dir(cluster).join("ascend-ctk");
    assert!(
        std::fs::read(&installed).ok() == Some(std::fs::read(&built).expect("the release's ascend-ctk")),
        "{} is the image's ascend-ctk (the release build's)",
        installed.display()
    );
    let link = Path::new(INSTALL_DIR).join("ascend-runtime");
    assert_eq!(std::fs::read_link(&link).ok().as_deref(), Some(Path::new("ascend-ctk")), "{}", link.display());
    assert!(Path::new(HOST_CDI_SPEC).is_file(), "the node setup wrote {HOST_CDI_SPEC}");
    let config = std::fs::read_to_string(CONTAINERD_CONFIG).expect("containerd configuration");
    let binary = format!("BinaryName = \"{INSTALL_DIR}/ascend-runtime\"");
    assert!(config.contains(HANDLER) && config.contains(&binary), "{HANDLER} registered:\n{config}");
    let plugin = release_pod(cluster, "ascend-device-plugin").await;
    let log = cluster.kubectl(&["logs", "-n", RELEASE_NAMESPACE, &plugin, "-c", "node-setup"]);
    assert!(log.contains("restart containerd to load it") && log.contains("node-setup: done"), "{log}");
}

/// A pod of the chart's RuntimeClass naming chip 5 in ASCEND_VISIBLE_DEVICES sees /dev/davinci5.
async fn runtime_class_pod(cluster: &Cluster) {
    let mut container = sleeping_container();
    container["env"] = serde_json::json!([{"name": "ASCEND_VISIBLE_DEVICES", "value": "5"}]);
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "helm-runtime-class", "namespace": NAMESPACE},
        "spec": {"runtimeClassName": HANDLER, "terminationGracePeriodSeconds": 1, "containers": [container]},
    }))
    .expect("pod");
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &pod).await.expect("create the RuntimeClass pod");
    cluster.wait_running(NAMESPACE, "helm-runtime-class", Duration::from_secs(60)).await;
    let devices = cluster.exec(NAMESPACE, "helm-runtime-class", &["ls", "/dev"]).stdout;
    assert_eq!(davinci_nodes(&devices), ["davinci5"], "the chip ascend-runtime injected: {devices}");
    delete_pod(cluster, "helm-runtime-class").await;
}
