//! Each command against a seeded cluster on the fake API server, through a real kube-rs client: a node per mode
//! (plain device plugin 310P, Volcano 910B, DRA 910 A3), a node without NPUs, pods holding chips, a chip fault in
//! each source, fault Events, and a node switched from the device plugin to the DRA driver.

#[path = "support/seeded_cluster.rs"]
mod seeded_cluster;

use serde_json::{json, Value};

use ascend_cluster::program::{exit, run, Args, Style};
use seeded_cluster::{event, seeded_cluster, switch_to_dra, NOW};

use ascend_cluster::{capacity_report, faults_report, nodes_report, pods_report, CapacityQuery, Mode, NodeNpus, Scope};

fn by_name<'a>(nodes: &'a [NodeNpus], name: &str) -> &'a NodeNpus {
    nodes.iter().find(|node| node.node == name).unwrap_or_else(|| panic!("{name} in the report"))
}

fn counts(node: &NodeNpus) -> [u32; 5] {
    [node.total, node.healthy, node.unhealthy, node.allocated, node.free]
}

#[tokio::test]
async fn nodes_show_each_sources_truth_and_follow_a_switch_to_dra() {
    let server = seeded_cluster().await;
    let client = server.client();

    let before = nodes_report(&client).await.expect("nodes").nodes;
    let names: Vec<&str> = before.iter().map(|node| node.node.as_str()).collect();
    assert_eq!(names, ["a3-1", "infer-1", "train-1"], "the CPU node is left out");
    let a3 = by_name(&before, "a3-1");
    assert_eq!((a3.modes.as_slice(), counts(a3)), ([Mode::DevicePlugin].as_slice(), [8, 8, 0, 0, 8]));

    let infer = by_name(&before, "infer-1");
    assert_eq!(counts(infer), [4, 3, 1, 2, 1]);
    assert_eq!(infer.modes, [Mode::DevicePlugin]);
    assert_eq!((infer.chip_type.as_deref(), infer.cann_version.as_deref()), (Some("310P"), Some("8.0.RC3")));
    assert_eq!(infer.unhealthy_reasons, ["1 of 4 NPUs unhealthy: Ascend310P-2: fault 80E01801 level SeparateNPU"]);
    assert!(infer.chips.is_empty(), "the plain device plugin publishes no chip names");

    let train = by_name(&before, "train-1");
    assert_eq!(train.modes, [Mode::DevicePlugin, Mode::Volcano]);
    assert_eq!(counts(train), [8, 7, 1, 2, 5]);
    assert_eq!(train.unhealthy_reasons, ["Ascend910-4: fault SeparateNPU (codes 80E01801)"]);
    assert_eq!(train.last_update.map(|t| t.as_second()), Some(NOW - 5), "the device info's UpdateTime");
    let held: Vec<(&str, &[String])> =
        train.chips.iter().filter(|c| !c.holders.is_empty()).map(|c| (c.name.as_str(), c.holders.as_slice())).collect();
    assert_eq!(
        held,
        [("Ascend910-6", &["train/job-0".to_owned()][..]), ("Ascend910-7", &["train/job-0".to_owned()][..])]
    );

    switch_to_dra(&server);
    let after = nodes_report(&client).await.expect("nodes after the switch").nodes;
    let a3 = by_name(&after, "a3-1");
    assert_eq!(a3.modes, [Mode::Dra]);
    assert_eq!(counts(a3), [8, 7, 1, 2, 5], "the newest generation only: chip 1 tainted, 4 and 5 claimed");
    assert_eq!(a3.unhealthy_reasons, ["npu-1: SeparateNPU (NoExecute)"]);
    assert_eq!(a3.driver_version.as_deref(), Some("25.2.0"));
    assert_eq!(a3.free_per_hccs_group().into_iter().collect::<Vec<_>>(), [(0, 3), (1, 2)]);
}

#[tokio::test]
async fn nodes_cost_one_list_call_per_kind_whatever_the_node_count() {
    let server = seeded_cluster().await;
    switch_to_dra(&server);
    server.clear_requests();
    nodes_report(&server.client()).await.expect("nodes");
    let mut paths: Vec<String> = server.requests().iter().map(|r| format!("{} {}", r.method, r.path)).collect();
    paths.sort();
    assert_eq!(
        paths,
        [
            "GET /api/v1/namespaces/kube-system/configmaps",
            "GET /api/v1/nodes",
            "GET /api/v1/pods",
            "GET /apis/resource.k8s.io/v1/resourceclaims",
            "GET /apis/resource.k8s.io/v1/resourceslices",
        ]
    );
}

#[tokio::test]
async fn pods_name_the_chips_each_pod_holds() {
    let server = seeded_cluster().await;
    switch_to_dra(&server);
    let client = server.client();
    let report = pods_report(&client, &Scope::AllNamespaces).await.expect("pods");
    let rows: Vec<(String, Option<&str>, Mode, String, u32)> = report
        .pods
        .iter()
        .map(|p| (format!("{}/{}", p.namespace, p.pod), p.node.as_deref(), p.mode, p.chips.join(","), p.count))
        .collect();
    assert_eq!(
        rows,
        [
            ("infer/svc-0".to_owned(), Some("infer-1"), Mode::DevicePlugin, String::new(), 2),
            ("train/job-0".to_owned(), Some("train-1"), Mode::Volcano, "Ascend910-6,Ascend910-7".to_owned(), 2),
            ("train/job-1".to_owned(), Some("a3-1"), Mode::Dra, "npu-4,npu-5".to_owned(), 2),
        ]
    );
    let infer_only = pods_report(&client, &Scope::Namespace("infer".into())).await.expect("pods -n infer");
    assert_eq!(infer_only.pods.iter().map(|p| p.pod.as_str()).collect::<Vec<_>>(), ["svc-0"]);
}

#[tokio::test]
async fn faults_list_current_faults_and_fault_events_newest_first() {
    let server = seeded_cluster().await;
    switch_to_dra(&server);
    // Recovery reset train-1's faulty chip a minute ago (the device plugin's --recovery-mode).
    server.seed(event("e4", "train-1", "Normal", "NpuResetStarted", "Ascend910-4", 60));
    let report = faults_report(&server.client()).await.expect("faults");
    let current: Vec<(&str, &str)> = report.current.iter().map(|f| (f.node.as_str(), f.chip.as_str())).collect();
    // Since: train-1's chip 120 s ago, a3-1's taint 300 s ago, infer-1's condition 3600 s ago.
    assert_eq!(current, [("train-1", "Ascend910-4"), ("a3-1", "npu-1"), ("infer-1", "-")]);
    let events: Vec<(&str, &str)> = report.events.iter().map(|e| (e.node.as_str(), e.reason.as_str())).collect();
    assert_eq!(
        events,
        [("train-1", "NpuResetStarted"), ("train-1", "NpuFaultRaised"), ("infer-1", "NpuFaultRecovered")],
        "the Starting Event is not a fault"
    );
}

#[tokio::test]
async fn capacity_finds_the_nodes_where_a_job_fits() {
    let server = seeded_cluster().await;
    switch_to_dra(&server);
    let client = server.client();
    let query = |chips, same_hccs| CapacityQuery { chips, same_hccs, chip_type: None };
    let fits = |report: ascend_cluster::CapacityReport| report.fits.into_iter().map(|fit| fit.node).collect::<Vec<_>>();
    assert_eq!(fits(capacity_report(&client, &query(5, false)).await.unwrap()), ["a3-1", "train-1"]);
    assert_eq!(fits(capacity_report(&client, &query(1, false)).await.unwrap()), ["infer-1", "a3-1", "train-1"]);
    // Only train-1's group 0 (chips 0-3) has 4 free chips; a3-1's groups have 3 and 2.
    assert_eq!(fits(capacity_report(&client, &query(4, true)).await.unwrap()), ["train-1"]);
    assert!(fits(capacity_report(&client, &query(6, false)).await.unwrap()).is_empty());
    let only_a3 = CapacityQuery { chips: 2, same_hccs: true, chip_type: Some("910A3".into()) };
    assert_eq!(fits(capacity_report(&client, &only_a3).await.unwrap()), ["a3-1"]);
}

fn args(line: &[&str]) -> Args {
    <Args as clap::Parser>::try_parse_from(std::iter::once("kubectl-ascend").chain(line.iter().copied())).expect("args")
}

fn style() -> Style {
    Style { colour: false, now: k8s_openapi::jiff::Timestamp::from_second(NOW).unwrap() }
}

#[tokio::test]
async fn the_command_line_prints_tables_and_exits_with_the_documented_codes() {
    let server = seeded_cluster().await;
    switch_to_dra(&server);
    let client = server.client();

    let nodes = run(&client, &args(&["nodes"]), "default", style()).await.expect("nodes");
    assert_eq!(nodes.exit_code, exit::OK);
    let lines: Vec<&str> = nodes.stdout.lines().collect();
    let words = |line: &str| line.split_whitespace().collect::<Vec<_>>().join(" ");
    assert_eq!(words(lines[0]), "NAME TYPE CHIPS HEALTHY UNHEALTHY ALLOCATED FREE DRIVER CANN MODE UPDATED REASON");
    // UPDATED: the AscendNPUUnhealthy condition's heartbeat (30 s ago), not the kubelet's (20 s ago).
    assert_eq!(
        words(lines[2]),
        "infer-1 310P 4 3 1 2 1 24.1.rc2 8.0.RC3 device-plugin 30s 1 of 4 NPUs unhealthy: Ascend310P-2: fault \
         80E01801 level SeparateNPU"
    );
    assert_eq!(
        words(lines[3]).split(' ').take(10).collect::<Vec<_>>().join(" "),
        "train-1 910B 8 7 1 2 5 24.1.rc2 - device-plugin,volcano"
    );

    let faults = run(&client, &args(&["faults"]), "default", style()).await.expect("faults");
    assert_eq!(faults.exit_code, exit::FOUND, "a chip is unhealthy");
    assert!(faults.stdout.contains("train-1   Ascend910-4   2m"), "{}", faults.stdout);

    let capacity = run(&client, &args(&["capacity", "--chips", "8"]), "default", style()).await.expect("capacity");
    assert_eq!(capacity.exit_code, exit::FOUND, "no node has 8 free chips");
    assert!(
        capacity.stdout.starts_with("No node has 8 chips free now (3 NPU nodes considered)."),
        "{}",
        capacity.stdout
    );

    // `pods` without -n reads the context's namespace, as kubectl does.
    let pods = run(&client, &args(&["pods"]), "infer", style()).await.expect("pods");
    assert_eq!(pods.stdout, "NAME    NODE      MODE            CHIPS\nsvc-0   infer-1   device-plugin   2 (unnamed)\n");

    let json = run(&client, &args(&["pods", "-A", "-o", "json"]), "default", style()).await.expect("pods json");
    let parsed: Value = serde_json::from_str(&json.stdout).expect("JSON");
    assert_eq!(parsed["pods"][2]["chips"], json!(["npu-4", "npu-5"]));
    let yaml = run(&client, &args(&["nodes", "-o", "yaml"]), "default", style()).await.expect("nodes yaml");
    assert!(yaml.stdout.contains("node: train-1"), "{}", yaml.stdout);

    // The doctor needs a daemon pod on the node; there is none here.
    let doctor = run(&client, &args(&["doctor", "train-1"]), "default", style()).await.expect_err("no daemon pod");
    assert_eq!(ascend_cluster::program::exit_code_of(&doctor), exit::DOCTOR_UNAVAILABLE);
    assert!(doctor
        .to_string()
        .contains("no running ascend-device-plugin or ascend-dra-driver pod on node \"train-1\""));
}

#[tokio::test]
async fn the_doctor_runs_in_the_device_plugin_pod_of_the_node() {
    let server = seeded_cluster().await;
    let daemon = |name: &str, app: &str, node: &str, container: &str| {
        json!({"apiVersion": "v1", "kind": "Pod",
               "metadata": {"namespace": "kube-system", "name": name, "labels": {"app.kubernetes.io/name": app}},
               "spec": {"nodeName": node, "containers": [{"name": "node-labeller"}, {"name": container}]},
               "status": {"phase": "Running"}})
    };
    server.seed(daemon("dra-x", "ascend-dra-driver", "train-1", "driver"));
    server.seed(daemon("dp-x", "ascend-device-plugin", "train-1", "device-plugin"));
    server.seed(daemon("dp-y", "ascend-device-plugin", "infer-1", "device-plugin"));
    let found = ascend_cluster::daemon_pod(&server.client(), "train-1").await.expect("daemon pod");
    assert_eq!((found.pod.as_str(), found.container.as_str()), ("dp-x", "device-plugin"));
    let dra_only = ascend_cluster::daemon_pod(&server.client(), "a3-1").await;
    assert!(matches!(dra_only, Err(ascend_cluster::Error::NoDaemonPod { .. })));
    let bad = ascend_cluster::daemon_pod(&server.client(), "Bad/Name").await;
    assert!(matches!(bad, Err(ascend_cluster::Error::Kube(ascend_kube::Error::InvalidNodeName(_)))));
}

#[tokio::test]
async fn the_doctor_execs_ascend_doctor_in_the_chosen_container() {
    let server = seeded_cluster().await;
    server.seed(json!({"apiVersion": "v1", "kind": "Pod",
        "metadata": {"namespace": "kube-system", "name": "dp-x", "labels": {"app.kubernetes.io/name": "ascend-device-plugin"}},
        "spec": {"nodeName": "train-1", "containers": [{"name": "node-labeller"}, {"name": "device-plugin"}]},
        "status": {"phase": "Running"}}));
    server.clear_requests();
    let args = vec!["--json".to_owned()];
    // The fake API server has no exec subresource: the request reaches it and is refused, which must come back as
    // an exec error naming the pod and container, not as a cluster read error.
    let error =
        ascend_cluster::doctor_report(&server.client(), "train-1", &args).await.expect_err("no exec in the fake");
    assert!(
        matches!(&error, ascend_cluster::Error::Exec { pod, container, command, .. }
            if pod == "dp-x" && container == "device-plugin" && command == "ascend-doctor --json"),
        "{error}"
    );
    assert_eq!(ascend_cluster::program::exit_code_of(&error), exit::DOCTOR_UNAVAILABLE);
    let exec = server.requests().into_iter().find(|r| r.path.ends_with("/exec")).expect("an exec request");
    assert_eq!(exec.path, "/api/v1/namespaces/kube-system/pods/dp-x/exec");
    let query: Vec<(&str, &str)> = exec.query.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect();
    for expected in
        [("container", "device-plugin"), ("command", "ascend-doctor"), ("command", "--json"), ("stdout", "true")]
    {
        assert!(query.contains(&expected), "{expected:?} in {query:?}");
    }
}
