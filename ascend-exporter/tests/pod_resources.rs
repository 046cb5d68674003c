//! A fake kubelet PodResources server proves the pod labels, the reconnect after a kubelet restart (new socket), and
//! that the exporter works without a kubelet.

mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use support::kubelet::{pod, FakeKubelet};
use support::{get, sample_value, write_topology, Exporter};

support::child_entry!();

const CHIPS: usize = 4;

/// Scrapes until `series` has `value` or 15 s pass; returns the last body.
fn wait_for(exporter: &Exporter, series: &str, value: f64) -> String {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
        if sample_value(&body, series) == Some(value) {
            return body;
        }
        assert!(Instant::now() < deadline, "{series} never became {value}; last scrape:\n{body}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The exporter in both namings on `topology`, asking the kubelet at `socket` every 200 ms, once healthy.
fn start_exporter(topology: &Path, socket: &Path) -> Exporter {
    let socket_flag = format!("--pod-resources.socket={}", socket.display());
    let exporter =
        Exporter::start(topology, &[&socket_flag, "--pod-resources.interval=200ms", "--metrics.naming=both"], &[]);
    exporter.wait_healthy();
    exporter
}

/// The simulated host's topology and the kubelet socket path inside its own directory (mounted as in a cluster).
fn topology_and_socket(dir: &Path) -> (PathBuf, PathBuf) {
    let socket_dir = dir.join("pod-resources");
    std::fs::create_dir(&socket_dir).expect("socket dir");
    (write_topology(dir, CHIPS, ""), socket_dir.join("kubelet.sock"))
}

#[test]
fn pod_labels_follow_the_kubelet_and_survive_its_restart() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (topology, socket) = topology_and_socket(dir.path());
    let kubelet = FakeKubelet::start(
        &socket,
        vec![
            pod("ml", "train-0", "worker", "huawei.com/Ascend910", &["Ascend910-0", "Ascend910-2"]),
            pod("infer", "svc-1", "server", "huawei.com/Ascend910-5c.1cpu.16g", &["Ascend910-5c.1cpu.16g-100-3"]),
            pod("gpu", "cuda-0", "main", "nvidia.com/gpu", &["GPU-1"]),
        ],
    );
    let exporter = start_exporter(&topology, &socket);

    wait_for(&exporter, "ascend_npu_pod_resources_up ", 1.0);
    let labelled = |chip: u32, ns: &str, pod: &str, c: &str| {
        format!("ascend_npu_temperature_celsius{{chip=\"{chip}\",namespace=\"{ns}\",pod=\"{pod}\",container=\"{c}\"}}")
    };
    let body = wait_for(&exporter, &labelled(0, "ml", "train-0", "worker"), 43.0);
    assert!(sample_value(&body, &labelled(2, "ml", "train-0", "worker")).is_some(), "{body}");
    assert!(sample_value(&body, &labelled(3, "infer", "svc-1", "server")).is_some(), "vNPU id maps to its chip");
    assert!(sample_value(&body, &labelled(1, "", "", "")).is_some(), "an unassigned chip has empty pod labels");
    assert_eq!(
        sample_value(&body, "ascend_npu_container_chips{namespace=\"ml\",pod=\"train-0\",container=\"worker\"}"),
        Some(2.0)
    );
    let huawei = "npu_chip_info_temperature{id=\"0\",model_name=\"910B3-Ascend-V1\"";
    let line = body.lines().find(|l| l.starts_with(huawei)).expect("Huawei-named series");
    assert!(line.contains("namespace=\"ml\",pod_name=\"train-0\",container_name=\"worker\""), "{line}");

    // The kubelet restarts: its socket disappears and comes back (a new inode) with other pods.
    drop(kubelet);
    wait_for(&exporter, "ascend_npu_pod_resources_up ", 0.0);
    let _kubelet =
        FakeKubelet::start(&socket, vec![pod("ml", "train-1", "worker", "huawei.com/Ascend910", &["Ascend910-1"])]);
    let body = wait_for(&exporter, &labelled(1, "ml", "train-1", "worker"), 42.0);
    assert!(sample_value(&body, &labelled(0, "", "", "")).is_some(), "chip 0 was released: {body}");
    assert_eq!(sample_value(&body, "ascend_npu_pod_resources_up "), Some(1.0));
}

#[test]
fn without_a_kubelet_labels_are_empty_and_metrics_flow() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), CHIPS, "");
    let missing = dir.path().join("no-kubelet").join("kubelet.sock");
    let exporter = Exporter::start(&topology, &[&format!("--pod-resources.socket={}", missing.display())], &[]);
    exporter.wait_healthy();
    let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
    assert_eq!(sample_value(&body, "ascend_npu_pod_resources_up "), Some(0.0));
    let series = "ascend_npu_temperature_celsius{chip=\"3\",namespace=\"\",pod=\"\",container=\"\"}";
    assert_eq!(sample_value(&body, series), Some(40.0), "{body}");
}

#[test]
fn a_renamed_resource_keeps_its_pod_labels() {
    // The device plugin runs with ASCEND_DP_RESOURCE_PREFIX=example.org and ASCEND_DP_RENAMES=Ascend910=train (from
    // one ConfigMap); the exporter reads the same variables and maps `train-<phy>` back to chips.
    let dir = tempfile::tempdir().expect("temp dir");
    let (topology, socket) = topology_and_socket(dir.path());
    let _kubelet = FakeKubelet::start(
        &socket,
        vec![
            pod("ml", "train-0", "worker", "example.org/train", &["train-2"]),
            pod("ml", "infer-0", "server", "example.org/train-5c.1cpu.16g", &["train-5c.1cpu.16g-100-3"]),
        ],
    );
    let exporter = Exporter::start(
        &topology,
        &[&format!("--pod-resources.socket={}", socket.display()), "--pod-resources.interval=200ms"],
        &[("ASCEND_DP_RESOURCE_PREFIX", Path::new("example.org")), ("ASCEND_DP_RENAMES", Path::new("Ascend910=train"))],
    );
    exporter.wait_healthy();
    let labelled = |chip: u32, pod: &str, c: &str| {
        format!("ascend_npu_temperature_celsius{{chip=\"{chip}\",namespace=\"ml\",pod=\"{pod}\",container=\"{c}\"}}")
    };
    let body = wait_for(&exporter, &labelled(2, "train-0", "worker"), 41.0);
    assert!(
        sample_value(&body, &labelled(3, "infer-0", "server")).is_some(),
        "renamed vNPU id maps to its chip: {body}"
    );
}

/// A 310P vNPU held by one container gets Huawei's `vnpu_pod_*` series with its own labels; a vNPU nobody holds is
/// served only under the native names (Huawei's exporter attributes a vNPU only to its one container).
#[test]
fn vnpus_of_a_310p_are_attributed_to_their_pods() {
    let dir = tempfile::tempdir().expect("temp dir");
    let socket_dir = dir.path().join("pod-resources");
    std::fs::create_dir(&socket_dir).expect("socket dir");
    let socket = socket_dir.join("kubelet.sock");
    let sample = dcmi_sim::samples::by_name("atlas-300i-duo").expect("sample").toml;
    // The sample's last chip (logic 7, physical 3) gets two vNPUs.
    let vnpus = "\n[[card.chip.vnpu]]\ntemplate = \"vir02\"\nvdev_id = 100\n\n[[card.chip.vnpu]]\ntemplate = \"vir02\"\nvdev_id = 101\n";
    let topology = dir.path().join("topology.toml");
    std::fs::write(&topology, format!("{sample}{vnpus}")).expect("write topology");
    let _kubelet = FakeKubelet::start(
        &socket,
        vec![pod("infer", "svc-0", "server", "huawei.com/Ascend310P-2c", &["Ascend310P-2c-100-3"])],
    );
    let exporter = start_exporter(&topology, &socket);
    wait_for(&exporter, "ascend_npu_pod_resources_up ", 1.0);
    let huawei = "vnpu_pod_total_memory{id=\"3\",model_name=\"310P3-Ascend-V1\",v_dev_id=\"100\",aicore_count=\"2.00\",namespace=\"infer\",pod_name=\"svc-0\",container_name=\"server\",is_virtual=\"true\"}";
    let deadline = Instant::now() + Duration::from_secs(15);
    let body = loop {
        let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
        if sample_value(&body, huawei).is_some() || Instant::now() > deadline {
            break body;
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    let vnpu_lines: Vec<&str> = body.lines().filter(|line| line.contains("vnpu")).collect();
    let total = sample_value(&body, huawei).unwrap_or_else(|| panic!("{huawei} missing in\n{}", vnpu_lines.join("\n")));
    let used = sample_value(&body, &huawei.replace("vnpu_pod_total_memory", "vnpu_pod_used_memory")).expect("used");
    assert!(total > 0.0 && used <= total, "total {total} KB, used {used} KB");
    assert!(body.contains("vnpu_pod_aicore_utilization{id=\"3\""), "{body}");
    assert!(!body.contains("v_dev_id=\"101\""), "a vNPU without a holder has no Huawei series");
    let native = "ascend_npu_vnpu_memory_total_bytes{chip=\"3\",vnpu=\"101\",namespace=\"\",pod=\"\",container=\"\"}";
    assert_eq!(sample_value(&body, native), Some(total * 1024.0), "both vNPUs come from one template");
}
