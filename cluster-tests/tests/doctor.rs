//! ascend-doctor on the real node, run as an operator runs it (scripts/cluster/doctor.sh): after deploy/README.md's
//! steps (the toolkit installed by deploy/host/install.sh, the 910B pool's overlay applied) every check passes, and a
//! pod with `runtimeClassName: ascend` starts through our runtime. A RuntimeClass whose handler containerd does not
//! know is what the doctor then reports, and the real kubelet agrees: its pod never starts. `--pod` finds a running
//! container's root through containerd and judges the CANN inside it against the host's driver.

use std::process::{Command, Stdio};
use std::time::Duration;

use ascend_cluster_tests::{wait_until, Cluster, Timer};
use ascend_doctor::DoctorReport;
use ascend_doctor::Status;
use k8s_openapi::api::core::v1::Pod;
use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::{Api, DeleteParams, PostParams};

use ascend_cluster_tests::stack::{
    davinci_nodes, delete_pod, deploy_910b_pool, npu_pod, sleeping_container, start_pod, test_namespace, NAMESPACE,
};

/// A RuntimeClass made with the runtime's binary name as handler, the mistake
/// deploy/helm/ascend-npu/templates/runtime-class.yaml warns of: containerd registers the runtime as "ascend".
const MISTAKEN_CLASS: &str = "ascend-mistaken";
const MISTAKEN_HANDLER: &str = "ascend-runtime";

fn doctor(cluster: &Cluster, args: &[&str]) -> DoctorReport {
    let output = cluster.script_output("doctor.sh", &[&["--json"], args].concat());
    serde_json::from_slice(&output.stdout).unwrap_or_else(|error| {
        panic!(
            "doctor.sh --json ({}): {error}\n{}{}",
            output.status,
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    })
}

fn verdicts(report: &DoctorReport) -> String {
    report
        .checks
        .iter()
        .map(|check| format!("{:?} {}: {}", check.status, check.id, check.evidence.join("; ")))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The checks that neither passed nor were skipped because they do not apply: this node runs containerd, not
/// Docker (`container_runtime.docker` SKIPs without daemon.json), and the doctor is given no image to check
/// (`versions.cann_image` SKIPs without `--image-root`).
fn not_ok(report: &DoctorReport) -> Vec<String> {
    const NOT_APPLICABLE: [&str; 2] = ["container_runtime.docker", "versions.cann_image"];
    report
        .checks
        .iter()
        .filter(|check| check.status != Status::Ok)
        .filter(|check| !(check.status == Status::Skip && NOT_APPLICABLE.contains(&check.id.as_str())))
        .map(|check| check.id.clone())
        .collect()
}

async fn delete_mistaken_class(cluster: &Cluster) {
    let classes: Api<RuntimeClass> = Api::all(cluster.client());
    let _ = classes.delete(MISTAKEN_CLASS, &DeleteParams::default()).await;
    wait_until("the mistaken RuntimeClass gone", Duration::from_secs(30), || async {
        match classes.get_opt(MISTAKEN_CLASS).await {
            Ok(None) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    })
    .await;
}

#[tokio::test]
async fn every_check_passes_on_the_node_and_a_runtime_class_containerd_does_not_know_is_found() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("doctor");
    delete_mistaken_class(&cluster).await;
    deploy_910b_pool(&cluster, &mut timer).await;
    test_namespace(&cluster).await;

    // The node as deploy/README.md leaves it: every check of every section passes.
    let report = doctor(&cluster, &[]);
    timer.mark("doctor run");
    println!("{}", verdicts(&report));
    assert!(not_ok(&report).is_empty(), "checks not OK on the node: {:?}\n{}", not_ok(&report), verdicts(&report));
    assert_eq!(report.checks.len(), 28, "every check of the four sections ran:\n{}", verdicts(&report));

    // The RuntimeClass the doctor approved is the one containerd runs. The pod asks the scheduler for no chip and
    // names chip 3 in ASCEND_VISIBLE_DEVICES (Huawei's Ascend Docker Runtime contract): only ascend-runtime, run by
    // containerd for the handler, puts /dev/davinci3 in the container.
    let mut container = sleeping_container();
    container["env"] = serde_json::json!([{"name": "ASCEND_VISIBLE_DEVICES", "value": "3"}]);
    let pod: Pod = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "runtime-class", "namespace": NAMESPACE},
        "spec": {"runtimeClassName": "ascend", "terminationGracePeriodSeconds": 1, "containers": [container]},
    }))
    .expect("pod");
    delete_pod(&cluster, "runtime-class").await;
    let pods: Api<Pod> = Api::namespaced(cluster.client(), NAMESPACE);
    pods.create(&PostParams::default(), &pod).await.expect("create pod");
    cluster.wait_running(NAMESPACE, "runtime-class", Duration::from_secs(60)).await;
    timer.mark("pod with runtimeClassName ascend running");
    let devices = cluster.exec(NAMESPACE, "runtime-class", &["ls", "/dev"]).stdout;
    let chips = davinci_nodes(&devices);
    assert_eq!(chips, ["davinci3"], "the chip ascend-runtime injected: {devices}");
    delete_pod(&cluster, "runtime-class").await;

    // The handler named after the binary: the doctor fails the check, naming the class and the registered name.
    let class: RuntimeClass = serde_json::from_value(serde_json::json!({
        "metadata": {"name": MISTAKEN_CLASS}, "handler": MISTAKEN_HANDLER,
    }))
    .expect("runtime class");
    let classes: Api<RuntimeClass> = Api::all(cluster.client());
    classes.create(&PostParams::default(), &class).await.expect("create the mistaken RuntimeClass");
    let report = doctor(&cluster, &[]);
    timer.mark("doctor run with the mistaken RuntimeClass");
    assert_eq!(not_ok(&report), ["container_runtime.runtime_class"], "{}", verdicts(&report));
    let check = report.checks.iter().find(|check| check.id == "container_runtime.runtime_class").expect("the check");
    assert_eq!(check.status, Status::Fail, "{}", verdicts(&report));
    let evidence = check.evidence.join("\n");
    assert!(evidence.contains(MISTAKEN_CLASS) && evidence.contains(MISTAKEN_HANDLER), "{evidence}");
    assert!(
        check.fix.as_deref().is_some_and(|fix| fix.contains(&format!("kubectl delete runtimeclass {MISTAKEN_CLASS}"))),
        "{:?}",
        check.fix
    );

    // The real kubelet agrees: a pod of that class never starts, and says why.
    let mut pod = npu_pod("mistaken-class", 1);
    pod.spec.as_mut().expect("spec").runtime_class_name = Some(MISTAKEN_CLASS.to_owned());
    delete_pod(&cluster, "mistaken-class").await;
    let created = pods.create(&PostParams::default(), &pod).await.expect("create pod");
    // This pod's events only, by uid: an earlier run's pod of the same name left events of its own.
    let this_pod = format!("involvedObject.uid={}", created.metadata.uid.expect("uid"));
    let message = wait_until("the kubelet's refusal", Duration::from_secs(60), || async {
        let events = cluster.kubectl(&[
            "-n",
            NAMESPACE,
            "get",
            "events",
            "--field-selector",
            &this_pod,
            "-o",
            "jsonpath={range .items[*]}{.reason}: {.message}{\"\\n\"}{end}",
        ]);
        events.lines().find(|line| line.contains(MISTAKEN_HANDLER)).map(str::to_owned).ok_or(events)
    })
    .await;
    timer.mark("the kubelet refused the pod of the mistaken class");
    println!("kubelet: {message}");
    let phase = pods.get("mistaken-class").await.expect("pod").status.and_then(|status| status.phase);
    assert_eq!(phase.as_deref(), Some("Pending"), "the pod of the mistaken class must not run");
    delete_pod(&cluster, "mistaken-class").await;

    delete_mistaken_class(&cluster).await;
    let report = doctor(&cluster, &[]);
    assert!(not_ok(&report).is_empty(), "after the fix: {}", verdicts(&report));

    // `--pod`: the CANN a running container holds, against the host's driver. The test image has none, so the
    // host's CANN goes into the container as an image would carry it; then its runtime asks for a newer driver.
    start_pod(&cluster, "cann-in-image", 1).await;
    copy_host_cann_into(&cluster, "cann-in-image");
    let pod_argument = format!("{NAMESPACE}/cann-in-image");
    let image_check = |report: &DoctorReport| {
        let check = report.checks.iter().find(|check| check.id == "versions.cann_image").expect("versions.cann_image");
        (check.status, check.evidence.join("\n"))
    };
    let report = doctor(&cluster, &["--section", "versions", "--pod", &pod_argument]);
    let (status, evidence) = image_check(&report);
    assert_eq!(status, Status::Ok, "{}", verdicts(&report));
    assert!(evidence.contains("8.0.RC3"), "the container's CANN named: {evidence}");
    timer.mark("doctor --pod: the container's CANN fits the driver");
    cluster.exec(
        NAMESPACE,
        "cann-in-image",
        &[
            "busybox",
            "sed",
            "-i",
            "s/^required_driver_ascendhal_version=.*/required_driver_ascendhal_version=99.0.0/",
            RUNTIME_INFO,
        ],
    );
    let report = doctor(&cluster, &["--section", "versions", "--pod", &pod_argument]);
    let (status, evidence) = image_check(&report);
    assert_eq!(status, Status::Fail, "{}", verdicts(&report));
    assert!(evidence.contains("99.0.0") && evidence.contains("ascendhal"), "both sides named: {evidence}");
    timer.mark("doctor --pod: a container's CANN that needs a newer driver");
    delete_pod(&cluster, "cann-in-image").await;
}

/// The host's CANN runtime component's `version.info` (as `dcmi-sim fake-host` installs it), inside the container.
const RUNTIME_INFO: &str = "/usr/local/Ascend/ascend-toolkit/8.0.RC3/runtime/version.info";

/// Copies the host's /usr/local/Ascend/ascend-toolkit into the pod's container (tar through `kubectl exec -i`; the
/// test image links few applets, so busybox is called by name).
fn copy_host_cann_into(cluster: &Cluster, pod: &str) {
    let mut tar = Command::new("tar")
        .args(["-C", "/", "-cf", "-", "usr/local/Ascend/ascend-toolkit"])
        .stdout(Stdio::piped())
        .spawn()
        .expect("tar");
    let status = Command::new(cluster.kubectl_path())
        .args(["exec", "-i", "-n", NAMESPACE, pod, "--", "busybox", "tar", "-xf", "-", "-C", "/"])
        .stdin(tar.stdout.take().expect("tar's output"))
        .status()
        .expect("kubectl exec");
    assert!(status.success() && tar.wait().expect("tar").success(), "copying the CANN into {pod}: {status}");
}
