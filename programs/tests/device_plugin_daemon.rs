//! The real `ascend-device-plugin` binary on the simulated driver (dcmi-sim), driven by the in-process fake
//! kubelet over unix sockets: registration, ListAndWatch, a scripted fault and its recovery, a kubelet restart,
//! Allocate, preferred allocation, /metrics, SIGTERM; a node without a driver; and an Atlas 950 node (DCMI V2) in
//! Volcano mode.

mod daemon_support;
mod device_plugin_support;

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ascend_deviceplugin::api::v1beta1::{
    AllocateRequest, ContainerAllocateRequest, ContainerPreferredAllocationRequest, PreferredAllocationRequest,
};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use daemon_support::kubeconfig;
use dcmi_sim::{write_overlay, Overlay, OVERLAY_SETTLE};
use device_plugin_support::{
    free_port, health_list_of, is, overlay_fault, overlay_hang, sim_args, sim_host, spawn_plugin, unhealthy_count,
    wait_health_of, wait_http, WAIT,
};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::ConfigMap;
use serde_json::json;

const RESOURCE: &str = "huawei.com/Ascend310P";

fn health_list(kubelet: &FakeKubelet) -> Vec<(String, String)> {
    health_list_of(kubelet, RESOURCE)
}

async fn wait_health(kubelet: &FakeKubelet, what: &str, condition: impl Fn(&[(String, String)]) -> bool) -> Duration {
    wait_health_of(kubelet, RESOURCE, what, condition).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_on_the_simulated_duo_server() {
    let root = tempfile::tempdir().expect("host root");
    let plugins = tempfile::tempdir().expect("plugin dir");
    let hang = Duration::from_millis(1500);
    let host = sim_host("atlas-300i-duo.toml", root.path(), hang);
    let overlay = root.path().join("overlay.toml");
    let mut kubelet = FakeKubelet::start(plugins.path()).await.expect("fake kubelet");
    let port = free_port();
    let poll = Duration::from_millis(200);
    let deadline = Duration::from_millis(500);
    let args = sim_args(
        plugins.path(),
        &host,
        port,
        &["--poll-interval=200ms", "--health-deadline=500ms", "--log-format=json"],
    );
    let mut daemon =
        spawn_plugin(&args, &[("DCMI_SIM_CONFIG", host.topology.as_path()), ("DCMI_SIM_OVERLAY", overlay.as_path())]);

    // Registration and the advertised list: the topology's physical ids 0..7, all healthy, each with a NUMA node.
    wait_health(&kubelet, "eight healthy chips", |d| d.len() == 8 && d.iter().all(|(_, h)| h == "Healthy")).await;
    let registrations = kubelet.registrations();
    assert_eq!(registrations.len(), 1, "log:\n{}", daemon.log());
    assert_eq!(registrations[0].request.endpoint, "ascend-Ascend310P.sock");
    let ids: Vec<String> = health_list(&kubelet).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, (0..8).map(|p| format!("Ascend310P-{p}")).collect::<Vec<_>>());
    assert!(kubelet.devices(RESOURCE).unwrap_or_default().iter().all(|d| d.topology.is_some()));

    // A fault on logic 0 (physical 4), then its recovery: each seen within a poll interval or two (+ overlay settle).
    overlay_fault(&overlay, 0, vec![0x80E0_1801], 2);
    let to_unhealthy = wait_health(&kubelet, "chip 4 unhealthy", |d| {
        d.iter().any(|(id, h)| id == "Ascend310P-4" && h == "Unhealthy")
            && d.iter().filter(|(_, h)| h == "Unhealthy").count() == 1
    })
    .await;
    overlay_fault(&overlay, 0, Vec::new(), 0);
    let to_healthy = wait_health(&kubelet, "chip 4 healthy", |d| d.iter().all(|(_, h)| h == "Healthy")).await;
    // One poll, or two when the change lands just after a poll that a loaded machine delayed (a CI run measured a
    // recovery at 467 ms under load); a plugin that did not poll at this interval would still miss it.
    let bound = poll * 2 + OVERLAY_SETTLE + Duration::from_millis(150);
    eprintln!("duo, polling every {poll:?}: fault seen after {to_unhealthy:?}, recovery after {to_healthy:?}");
    assert!(to_unhealthy <= bound, "fault took {to_unhealthy:?}");
    assert!(to_healthy <= bound, "recovery took {to_healthy:?}");

    // A hung health call on logic 1 (physical 5): Unhealthy once the deadline passed, the other chips unaffected;
    // healthy again once the call returns (the simulator's hang lasts 1.5 s here) and the hang is lifted.
    overlay_hang(&overlay, 1);
    let to_hung = wait_health(&kubelet, "chip 5 unhealthy", |d| is(d, "Ascend310P-5", "Unhealthy")).await;
    assert!(to_hung >= deadline, "unhealthy before the deadline: {to_hung:?}");
    assert!(to_hung <= deadline + poll + OVERLAY_SETTLE + Duration::from_millis(300), "hang noticed after {to_hung:?}");
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(unhealthy_count(&health_list(&kubelet)), 1, "{:?}", health_list(&kubelet));
    write_overlay(&overlay, &Overlay::default()).expect("overlay cleared");
    let back = wait_health(&kubelet, "chip 5 back", |d| d.iter().all(|(_, h)| h == "Healthy")).await;
    assert!(back <= hang + poll * 2 + OVERLAY_SETTLE, "recovered after {back:?}");

    // Kubelet restart: sockets deleted, new kubelet.sock; the daemon serves and registers again within a second.
    let restarted = Instant::now();
    kubelet.restart().await.expect("kubelet restarts");
    kubelet.wait_until("re-registration", WAIT, |k| k.registrations().len() == 2).await.expect("re-registers");
    let delay = kubelet.registrations()[1].at.duration_since(restarted);
    eprintln!("duo: re-registered {delay:?} after the kubelet restart; hung call noticed after {to_hung:?}");
    assert!(delay < Duration::from_secs(1), "re-registered after {delay:?}");
    wait_health(&kubelet, "list after restart", |d| d.len() == 8).await;

    // Allocate (default CDI mode) and preferred allocation (both chips of the card holding chips 4 and 5).
    let mut client = kubelet.plugin_client(RESOURCE).await.expect("client");
    let allocation = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest {
                devices_ids: vec!["Ascend310P-4".into(), "Ascend310P-1".into()],
            }],
        })
        .await
        .expect("allocates")
        .into_inner();
    let response = &allocation.container_responses[0];
    let names: Vec<&str> = response.cdi_devices.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["huawei.com/npu=1", "huawei.com/npu=4"]);
    assert_eq!(response.envs.get("ASCEND_RT_VISIBLE_DEVICES").map(String::as_str), Some("0,1"));
    assert_eq!(
        response.annotations.get("huawei.com/AscendReal").map(String::as_str),
        Some("Ascend310P-1,Ascend310P-4")
    );
    let preferred = client
        .get_preferred_allocation(PreferredAllocationRequest {
            container_requests: vec![ContainerPreferredAllocationRequest {
                available_device_i_ds: ids.clone(),
                must_include_device_i_ds: vec!["Ascend310P-5".into()],
                allocation_size: 2,
            }],
        })
        .await
        .expect("preferred")
        .into_inner();
    let mut chosen = preferred.container_responses[0].device_i_ds.clone();
    chosen.sort();
    assert_eq!(chosen, ["Ascend310P-4", "Ascend310P-5"], "the two chips of card 2");
    let rejected = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["Ascend310P-42".into()] }],
        })
        .await
        .expect_err("unknown id");
    assert_eq!(rejected.code(), tonic::Code::InvalidArgument);

    // The daemon's own endpoint.
    assert_eq!(wait_http(port, "/healthz", &daemon), "ok\n");
    let metrics = wait_http(port, "/metrics", &daemon);
    for expected in [
        "ascend_device_plugin_registrations_total{resource=\"huawei.com/Ascend310P\"} 2",
        "ascend_device_plugin_allocations_total{resource=\"huawei.com/Ascend310P\"} 1",
        "ascend_device_plugin_allocation_failures_total{resource=\"huawei.com/Ascend310P\"} 1",
        "ascend_device_plugin_health_transitions_total{id=\"4\",to=\"unhealthy\"} 1",
        "ascend_device_plugin_health_transitions_total{id=\"5\",to=\"healthy\"} 2",
        "ascend_device_plugin_driver_loaded 1",
        "# EOF",
    ] {
        assert!(metrics.contains(expected), "missing {expected:?} in\n{metrics}");
    }

    // SIGTERM: clean exit, socket removed.
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
    assert!(!plugins.path().join("ascend-Ascend310P.sock").exists(), "socket removed on shutdown");
    assert!(daemon.log().contains("\"level\":\"INFO\""), "JSON logs: {}", daemon.log());
    kubelet.shutdown().await;
}

#[test]
fn without_a_driver_the_daemon_says_so_and_keeps_retrying() {
    let plugins = tempfile::tempdir().expect("plugin dir");
    let port = free_port();
    let args: Vec<String> = vec![
        format!("--plugin-dir={}", plugins.path().display()),
        "--dcmi-library=/nonexistent/libdcmi.so".into(),
        "--driver-retry=200ms".into(),
        format!("--listen=127.0.0.1:{port}"),
    ];
    let mut daemon = spawn_plugin(&args, &[]);
    assert_eq!(wait_http(port, "/healthz", &daemon), "ok: waiting for the Ascend driver\n");
    let started = Instant::now();
    while daemon.log().matches("no usable Ascend driver").count() < 3 {
        assert!(started.elapsed() < WAIT, "no retries logged:\n{}", daemon.log());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(daemon.child.try_wait().expect("wait").is_none(), "still running");
    assert!(daemon.log().contains("/nonexistent/libdcmi.so"), "names the library:\n{}", daemon.log());
    let metrics = wait_http(port, "/metrics", &daemon);
    assert!(metrics.contains("ascend_device_plugin_driver_loaded 0"), "{metrics}");
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_on_the_simulated_eight_chip_910b_server() {
    const ASCEND910: &str = "huawei.com/Ascend910";
    let root = tempfile::tempdir().expect("host root");
    let plugins = tempfile::tempdir().expect("plugin dir");
    let host = sim_host("atlas-800t-a2.toml", root.path(), Duration::from_secs(5));
    let overlay = root.path().join("overlay.toml");
    let kubelet = FakeKubelet::start(plugins.path()).await.expect("fake kubelet");
    let port = free_port();
    // Polling every 5 s: a change seen within a fraction of that came through the driver's fault events.
    let args = sim_args(plugins.path(), &host, port, &["--poll-interval=5s", "--allocate-mode=device-specs"]);
    let mut daemon =
        spawn_plugin(&args, &[("DCMI_SIM_CONFIG", host.topology.as_path()), ("DCMI_SIM_OVERLAY", overlay.as_path())]);

    wait_health_of(&kubelet, ASCEND910, "eight healthy chips", |d| d.len() == 8 && unhealthy_count(d) == 0).await;
    // The topology's NUMA nodes: phys 4,5 on node 0; 6,7 on 1; 0,1 on 2; 2,3 on 3.
    let expected_numa = [(0, 2), (1, 2), (2, 3), (3, 3), (4, 0), (5, 0), (6, 1), (7, 1)];
    let devices = kubelet.devices(ASCEND910).unwrap_or_default();
    for (phy, node) in expected_numa {
        let device = devices.iter().find(|d| d.id == format!("Ascend910-{phy}")).expect("device listed");
        let nodes: Vec<i64> =
            device.topology.as_ref().map(|t| t.nodes.iter().map(|n| n.id).collect()).unwrap_or_default();
        assert_eq!(nodes, [node], "NUMA node of Ascend910-{phy}");
    }

    overlay_fault(&overlay, 2, vec![0x80E0_1801], 2);
    let to_unhealthy =
        wait_health_of(&kubelet, ASCEND910, "chip 6 unhealthy", |d| is(d, "Ascend910-6", "Unhealthy")).await;
    overlay_fault(&overlay, 2, Vec::new(), 0);
    let to_healthy = wait_health_of(&kubelet, ASCEND910, "chip 6 healthy", |d| unhealthy_count(d) == 0).await;
    let bound = OVERLAY_SETTLE + Duration::from_millis(150);
    eprintln!("910B, fault events: fault seen after {to_unhealthy:?}, recovery after {to_healthy:?}");
    assert!(to_unhealthy <= bound, "fault event took {to_unhealthy:?}");
    assert!(to_healthy <= bound, "recovery event took {to_healthy:?}");

    let mut client = kubelet.plugin_client(ASCEND910).await.expect("client");
    let all: Vec<String> = (0..8).map(|phy| format!("Ascend910-{phy}")).collect();
    let preferring = client.clone();
    let prefer = |must: &[&str], size: i32| {
        let request = PreferredAllocationRequest {
            container_requests: vec![ContainerPreferredAllocationRequest {
                available_device_i_ds: all.clone(),
                must_include_device_i_ds: must.iter().map(|id| (*id).to_owned()).collect(),
                allocation_size: size,
            }],
        };
        let mut client = preferring.clone();
        async move {
            let response = client.get_preferred_allocation(request).await.expect("preferred").into_inner();
            let mut ids = response.container_responses[0].device_i_ds.clone();
            ids.sort();
            ids
        }
    };
    assert_eq!(prefer(&[], 4).await, ["Ascend910-0", "Ascend910-1", "Ascend910-2", "Ascend910-3"], "HCCS group 0-3");
    assert_eq!(prefer(&["Ascend910-5"], 4).await, ["Ascend910-4", "Ascend910-5", "Ascend910-6", "Ascend910-7"]);
    assert_eq!(prefer(&["Ascend910-6"], 2).await, ["Ascend910-6", "Ascend910-7"], "same NUMA node");

    let allocation = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["Ascend910-6".into()] }],
        })
        .await
        .expect("allocates")
        .into_inner();
    let response = &allocation.container_responses[0];
    let nodes: Vec<(&str, &str, &str)> = response
        .devices
        .iter()
        .map(|d| (d.container_path.as_str(), d.host_path.as_str(), d.permissions.as_str()))
        .collect();
    assert_eq!(
        nodes,
        [
            ("/dev/davinci6", "/dev/davinci6", "rw"),
            ("/dev/davinci_manager", "/dev/davinci_manager", "rw"),
            ("/dev/devmm_svm", "/dev/devmm_svm", "rw"),
            ("/dev/hisi_hdc", "/dev/hisi_hdc", "rw"),
            ("/dev/dvpp_cmdlist", "/dev/dvpp_cmdlist", "rw"),
        ]
    );
    let mounts: Vec<(&str, bool)> = response.mounts.iter().map(|m| (m.host_path.as_str(), m.read_only)).collect();
    assert_eq!(
        mounts,
        [
            ("/usr/local/Ascend/driver/lib64", true),
            ("/usr/local/Ascend/driver/include", true),
            ("/usr/local/Ascend/driver/version.info", true),
            ("/usr/local/dcmi", true),
            ("/usr/local/bin/npu-smi", true),
        ],
        "the fake host has every default driver path"
    );
    assert!(response.cdi_devices.is_empty());
    assert_eq!(response.envs.get("ASCEND_RT_VISIBLE_DEVICES").map(String::as_str), Some("0"));
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}

/// The `huawei.com/npu` keys of the Volcano device-info ConfigMap of `node`, if it was written.
fn npu_device_list(server: &FakeApiServer, node: &str) -> Option<BTreeMap<String, String>> {
    let map: ConfigMap = server.get(Some("kube-system"), &format!("mindx-dl-deviceinfo-{node}"))?;
    let info: serde_json::Value = serde_json::from_str(map.data?.get("DeviceInfoCfg")?).ok()?;
    let list = info.pointer("/DeviceInfo/DeviceList")?.as_object()?;
    Some(
        list.iter()
            .filter(|(key, _)| key.starts_with("huawei.com/npu"))
            .map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned()))
            .collect(),
    )
}

async fn wait_device_list(
    server: &FakeApiServer,
    node: &str,
    what: &str,
    done: impl Fn(&BTreeMap<String, String>) -> bool,
) {
    let started = Instant::now();
    while !npu_device_list(server, node).is_some_and(|list| done(&list)) {
        assert!(started.elapsed() < WAIT, "device info: {what}; last {:?}", npu_device_list(server, node));
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// An Atlas 950 node (DCMI V2: `dcmi_init` fails, every call is keyed by logic id) in Volcano mode: the daemon
/// advertises `huawei.com/npu` with ids `npu-<phy>`, writes the device-info keys under `huawei.com/npu`, sees a fault
/// through the V2 fault subscription, and allocates the NPU Volcano chose with its V2 manager and unified-bus nodes.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn daemon_on_the_simulated_atlas_950_node_in_volcano_mode() {
    const NPU: &str = "huawei.com/npu";
    const NODE: &str = "worker-950";
    let root = tempfile::tempdir().expect("host root");
    let plugins = tempfile::tempdir().expect("plugin dir");
    let host = sim_host("atlas-950-8.toml", root.path(), Duration::from_secs(5));
    let overlay = root.path().join("overlay.toml");
    let server = FakeApiServer::start().await.expect("fake API server");
    let kubeconfig = kubeconfig(root.path(), &server.url());
    let kubelet = FakeKubelet::start(plugins.path()).await.expect("fake kubelet");
    let port = free_port();
    // Polling every 5 s: a change seen within a fraction of that came through dcmiv2_subscribe_fault_event.
    let extra = ["--poll-interval=5s", "--allocate-mode=device-specs", "--volcano", "--node-name", NODE];
    let args = sim_args(plugins.path(), &host, port, &extra);
    let envs = [
        ("DCMI_SIM_CONFIG", host.topology.as_path()),
        ("DCMI_SIM_OVERLAY", overlay.as_path()),
        ("KUBECONFIG", kubeconfig.as_path()),
    ];
    let mut daemon = spawn_plugin(&args, &envs);

    wait_health_of(&kubelet, NPU, "eight healthy NPUs", |d| d.len() == 8 && unhealthy_count(d) == 0).await;
    assert_eq!(kubelet.registrations()[0].request.endpoint, "ascend-npu.sock");
    let ids: Vec<String> = health_list_of(&kubelet, NPU).into_iter().map(|(id, _)| id).collect();
    assert_eq!(ids, (0..8).map(|phy| format!("npu-{phy}")).collect::<Vec<_>>());
    let all = ids.join(",");
    wait_device_list(&server, NODE, "eight free NPUs", |list| list.get(NPU) == Some(&all)).await;
    let keys: Vec<String> = npu_device_list(&server, NODE).unwrap_or_default().into_keys().collect();
    assert_eq!(keys, ["", "-Fault", "-NetworkUnhealthy", "-Recovering", "-Unhealthy"].map(|s| format!("{NPU}{s}")));

    // Logic 2 is physical 6 on this board.
    overlay_fault(&overlay, 2, vec![0x80E0_1801], 2);
    let to_unhealthy = wait_health_of(&kubelet, NPU, "npu 6 unhealthy", |d| is(d, "npu-6", "Unhealthy")).await;
    let bound = OVERLAY_SETTLE + Duration::from_millis(150);
    eprintln!("950, V2 fault events: fault seen after {to_unhealthy:?}");
    assert!(to_unhealthy <= bound, "fault event took {to_unhealthy:?}");
    let unhealthy = format!("{NPU}-Unhealthy");
    wait_device_list(&server, NODE, "npu 6 unhealthy", |list| {
        list.get(&unhealthy).map(String::as_str) == Some("npu-6")
    })
    .await;
    let faults: serde_json::Value =
        serde_json::from_str(&npu_device_list(&server, NODE).unwrap_or_default()[&format!("{NPU}-Fault")])
            .expect("fault list");
    assert_eq!((faults[0]["npu_name"].as_str(), faults[0]["fault_code"].as_str()), (Some("npu-6"), Some("80E01801")));
    overlay_fault(&overlay, 2, Vec::new(), 0);
    wait_health_of(&kubelet, NPU, "npu 6 healthy", |d| unhealthy_count(d) == 0).await;
    wait_device_list(&server, NODE, "every NPU free again", |list| list.get(NPU) == Some(&all)).await;

    // Volcano chose npu-6 for the pod and, on an Ascend950 node, names it by its logic id from the node's
    // baseDeviceInfos, npu-2 (Huawei's SetNPUTopologyToPodFn); the kubelet asks for npu-0.
    server.seed(json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": "train", "namespace": "jobs", "annotations": {NPU: "npu-2", "predicate-time": "100"}},
        "spec": {"nodeName": NODE, "schedulerName": "volcano", "containers": [{"name": "train", "image": "x",
            "resources": {"limits": {NPU: "1"}}}]},
        "status": {"phase": "Pending"},
    }));
    let mut client = kubelet.plugin_client(NPU).await.expect("client");
    let allocation = client
        .allocate(AllocateRequest {
            container_requests: vec![ContainerAllocateRequest { devices_ids: vec!["npu-0".into()] }],
        })
        .await
        .unwrap_or_else(|status| panic!("allocates: {status}; log:\n{}", daemon.log()))
        .into_inner();
    let response = &allocation.container_responses[0];
    let nodes: Vec<&str> = response.devices.iter().map(|d| d.container_path.as_str()).collect();
    let unified_bus = ["uburma", "ummu"].map(|kind| (0..8).map(move |phy| format!("/dev/{kind}/{kind}{phy}")));
    // npu-6 is logic 2: its node is /dev/davinci2, as Huawei's plugin gives it for Volcano's npu-2.
    let expected: Vec<String> = ["/dev/davinci2", "/dev/davinci_manager", "/dev/hisi_hdc"]
        .map(str::to_owned)
        .into_iter()
        .chain(unified_bus.into_iter().flatten())
        .collect();
    assert_eq!(nodes, expected, "the NPU, the V2 manager nodes (no devmm_svm) and every unified-bus node");
    assert!(response.devices.iter().all(|d| d.host_path == d.container_path && d.permissions == "rw"));
    assert_eq!(response.annotations.get("huawei.com/AscendReal").map(String::as_str), Some("npu-6"));
    let status = daemon.terminate();
    assert!(status.success(), "exit status {status:?}; log:\n{}", daemon.log());
}
