//! Huawei's npu-exporter beside ours on the real cluster, with a pod holding two chips (issue 45: the comparison with
//! a pod holding chips, which the comparison tier's stand-in node cannot give Huawei's exporter): both name the same
//! pod, namespace and container on the same chips' series.
//!
//! Huawei's exporter learns which container holds a chip from the container runtime (`-containerMode=containerd`:
//! the CRI's containers, then each container's OCI spec from containerd), ours from the kubelet's PodResources. On a
//! real node Huawei's finds the chips in the spec's device rules by the driver's `devdrv-cdev` major in
//! `/proc/devices`, which the simulated host cannot add to the kernel's list; the other way Huawei's reads, the
//! `ASCEND_VISIBLE_DEVICES` its runtime acts on, is what our device plugin hands out in `runtime-env` mode, so the
//! test runs ours in that mode (mind-cluster component/npu-exporter/collector/container/parser.go,
//! parseDevicesInContainerd, filterNPUDevices, getNPUMajorID).
//!
//! Compared: every series either exporter serves with the pod's labels (`namespace`, `pod_name`, `container_name`),
//! by metric name and chip (`id`). Our exporter runs with Huawei's names (`--metrics.naming=huawei`, what the chart's
//! Huawei profile and the migration guide's step 3 set).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use ascend_cluster_tests::exposition::{samples, Sample};
use ascend_cluster_tests::stack::huawei::{image_present, WORKER_LABEL};
use ascend_cluster_tests::stack::{
    daemon_pod, delete_pod, deploy_910b_pool, edit_daemon_args, edit_device_plugin_args, huawei_exporter, start_pod,
    test_namespace, NAMESPACE, SYSTEM,
};
use ascend_cluster_tests::{wait_until, Cluster, PortForward, Timer};

/// The test pod and its container (stack::npu_pod).
const POD: &str = "held-by-two";
const CONTAINER: &str = "work";
/// Our exporter's DaemonSet in the 910B pool's namespace, its pod selector and port.
const OUR_EXPORTER: &str = "npu-exporter";
const OUR_SELECTOR: &str = "app.kubernetes.io/name=npu-exporter";
const OUR_PORT: u16 = 8082;

/// The families only Huawei's exporter labels with the pod, and only ours, each with why. A family leaving these
/// lists, or a new one joining them, fails the test: docs/huawei-compatibility.md says the same.
const HUAWEI_ONLY: &[(&str, &str)] = &[(
    "npu_container_info",
    "its containerID label is the runtime's container id, which the kubelet's PodResources (ours) does not carry; \
     the pod, namespace and container are on every chip series of both",
)];
const OURS_ONLY: &[(&str, &str)] = &[(
    "npu_chip_info_process_info",
    "ours labels a chip's processes with the chip's holder; Huawei's matches each process id to a container's tasks \
     in containerd, and the simulated host's processes run in no container, so Huawei's labels them as the host's",
)];

/// (metric name, chip) of every series carrying the pod's labels; the labels of any other holder are an error.
fn held_series(scrape: &[Sample]) -> Result<BTreeSet<(String, String)>, String> {
    let mut held = BTreeSet::new();
    for sample in scrape.iter().filter(|s| !s.label("pod_name").is_empty()) {
        let holder = (sample.label("namespace"), sample.label("pod_name"), sample.label("container_name"));
        if holder != (NAMESPACE, POD, CONTAINER) {
            return Err(format!("{} names another holder {holder:?}: {:?}", sample.name, sample.labels));
        }
        // The chip: `id` on the chip series, `npuID` on Huawei's npu_container_info.
        let chip = [sample.label("id"), sample.label("npuID")].into_iter().find(|id| !id.is_empty()).unwrap_or("");
        held.insert((sample.name.clone(), chip.to_owned()));
    }
    Ok(held)
}

fn scrape(forward: &PortForward) -> Result<Vec<Sample>, String> {
    samples(&forward.get("/metrics")?)
}

#[tokio::test]
async fn huaweis_exporter_and_ours_name_the_same_pod_on_the_same_chips() {
    if !image_present("huawei_exporter") {
        return;
    }
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("Huawei's exporter beside ours");
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;
    edit_device_plugin_args(&cluster, |args| {
        args.retain(|arg| !arg.starts_with("--allocate-mode"));
        args.push("--allocate-mode=runtime-env".to_owned());
    });
    edit_daemon_args(&cluster, SYSTEM, OUR_EXPORTER, |args| {
        args.retain(|arg| !arg.starts_with("--metrics.naming"));
        args.push("--metrics.naming=huawei".to_owned());
    });
    cluster.wait_allocatable("huawei.com/Ascend910", "8", Duration::from_secs(60)).await;
    cluster.label_node(WORKER_LABEL.0, Some(WORKER_LABEL.1));
    huawei_exporter::apply(&cluster);
    let theirs = huawei_exporter::edit_command(&cluster, |command| {
        command.retain(|flag| {
            !flag.starts_with("-containerMode") && !flag.starts_with("-containerd") && !flag.starts_with("-endpoint")
        });
        command.extend(
            [
                "-containerMode=containerd",
                "-containerd=unix:///run/containerd/containerd.sock",
                "-endpoint=unix:///run/containerd/containerd.sock",
            ]
            .map(str::to_owned),
        );
    })
    .await;
    timer.mark("ours in runtime-env mode with Huawei's names, Huawei's exporter reading containerd");
    start_pod(&cluster, POD, 2).await;
    timer.mark("a pod holding two chips");

    let ours = daemon_pod(&cluster, OUR_SELECTOR).await;
    let (their_forward, our_forward) = (
        cluster.port_forward(huawei_exporter::NAMESPACE, &theirs, huawei_exporter::PORT),
        cluster.port_forward(SYSTEM, &ours, OUR_PORT),
    );
    // Both have read the pod once each names it on two chips (Huawei's reads containers on its own period).
    let (their_held, our_held) =
        wait_until("both exporters naming the pod on two chips", Duration::from_secs(90), || async {
            let their_held = held_series(&scrape(&their_forward)?)?;
            let our_held = held_series(&scrape(&our_forward)?)?;
            let chips =
                |held: &BTreeSet<(String, String)>| held.iter().map(|(_, id)| id.clone()).collect::<BTreeSet<_>>();
            if chips(&their_held).len() == 2 && chips(&our_held).len() == 2 {
                Ok((their_held, our_held))
            } else {
                Err(format!("chips named: Huawei's {their_held:?}, ours {our_held:?}"))
            }
        })
        .await;
    timer.mark("both name the pod");

    let only_theirs: BTreeMap<&str, Vec<&str>> = group(their_held.difference(&our_held));
    let only_ours: BTreeMap<&str, Vec<&str>> = group(our_held.difference(&their_held));
    let names = |list: &[(&'static str, &str)]| list.iter().map(|(name, _)| *name).collect::<BTreeSet<_>>();
    println!("Huawei's exporter names the pod on {} series, ours on {}", their_held.len(), our_held.len());
    println!("only Huawei's: {only_theirs:?}\nonly ours: {only_ours:?}");
    assert_eq!(
        only_theirs.keys().copied().collect::<BTreeSet<_>>(),
        names(HUAWEI_ONLY),
        "Huawei's names the pod where ours does not (each listed in HUAWEI_ONLY with why): {only_theirs:?}"
    );
    assert_eq!(
        only_ours.keys().copied().collect::<BTreeSet<_>>(),
        names(OURS_ONLY),
        "ours names the pod where Huawei's does not (each listed in OURS_ONLY with why): {only_ours:?}"
    );

    drop((their_forward, our_forward));
    delete_pod(&cluster, POD).await;
    huawei_exporter::remove(&cluster);
    cluster.label_node(WORKER_LABEL.0, None);
    // The pool's manifest again: our device plugin and exporter with their shipped flags.
    deploy_910b_pool(&cluster, &mut timer).await;
}

/// Series grouped by metric name: name -> chip ids.
fn group<'a>(series: impl Iterator<Item = &'a (String, String)>) -> BTreeMap<&'a str, Vec<&'a str>> {
    let mut grouped: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, id) in series {
        grouped.entry(name).or_default().push(id);
    }
    grouped
}
