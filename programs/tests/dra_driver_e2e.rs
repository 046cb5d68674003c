//! The real `ascend-dra-driver` binary end to end on the simulated driver (dcmi-sim), with the in-process DRA
//! kubelet peer over the real unix sockets and the fake API server holding the Node, the ResourceClaims (their
//! allocation written as the scheduler would) and the published ResourceSlices:
//! - the slices carry the chips' attributes; a claim for one chip is prepared over `v1`, and podman starts a real
//!   container from the CDI spec the driver wrote, seeing exactly `/dev/davinci<phy>` and
//!   `ASCEND_RT_VISIBLE_DEVICES=0`;
//! - bad claims in the same call each get their own error, and the good claim beside them is prepared;
//! - the driver is killed (SIGKILL) between prepare and unprepare; restarted, it answers both from its checkpoint
//!   even after the claim was deleted, and unprepare removes the spec;
//! - a kubelet that knows only `v1beta1` prepares and unprepares too;
//! - a scripted fault taints the chip in the published slice within a second, and recovery removes the taint.
//!
//! All of it on a DCMI V1 host (Atlas 800T A2) and on an Atlas 950 node (DCMI V2: chips by logic id, no card/device
//! pair, no `devmm_svm`, the unified-bus nodes in every container). The two cases take turns: each holds the
//! machine's CPUs for its one-second fault-to-taint bound.
//!
//! Podman 4.3 reads CDI specs only from /var/run/cdi and /etc/cdi, so the driver writes there under a driver name
//! unique to this run, and the test removes what is left. Needs root (device nodes, podman); CI runs as root.

mod ctk_support;
mod daemon_support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ctk_support::podman::Podman;
use ctk_support::sim_host::SimHost;
use ctk_support::{atlas_950_shared_nodes, describe, expected_npu_nodes, Probe, V1_SHARED_NODES};
use daemon_support::{kubeconfig, Daemon};
use dcmi_sim::{write_overlay, ChipOverlay, Overlay, OVERLAY_SETTLE};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::{ClaimRef, DRA_V1, DRA_V1BETA1};
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::resource::v1::{Device, ResourceSlice};
use serde_json::{json, Value};

const NODE: &str = "worker-1";
const CDI_DIR: &str = "/var/run/cdi";
const WAIT: Duration = Duration::from_secs(15);
const POLL: Duration = Duration::from_millis(100);

fn spawn_driver(args: &[String], envs: &[(&str, &Path)]) -> Daemon {
    Daemon::spawn(env!("CARGO_BIN_EXE_ascend-dra-driver"), args, envs)
}

/// Removes this run's specs from the shared CDI directory even when an assertion fails.
struct RunSpecs(String);

impl RunSpecs {
    fn files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(CDI_DIR) else { return Vec::new() };
        entries
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| path.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with(&self.0)))
            .collect()
    }
}

impl Drop for RunSpecs {
    fn drop(&mut self) {
        for file in self.files() {
            let _ = std::fs::remove_file(file);
        }
    }
}

/// A claim allocated as the scheduler would write it: `devices` of `driver` in this node's pool.
fn seed_claim(server: &FakeApiServer, name: &str, driver: &str, devices: &[&str], config: Option<Value>) -> ClaimRef {
    let results: Vec<Value> = devices
        .iter()
        .map(|device| json!({"request": "npu", "driver": driver, "pool": NODE, "device": device}))
        .collect();
    let mut allocation = json!({"devices": {"results": results}});
    if let Some(parameters) = config {
        allocation["devices"]["config"] =
            json!([{"source": "FromClaim", "opaque": {"driver": driver, "parameters": parameters}}]);
    }
    let stored = server.seed(json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"devices": {"requests": [{"name": "npu", "exactly": {"deviceClassName": "npu.huawei.com"}}]}},
        "status": {"allocation": allocation},
    }));
    let uid = stored["metadata"]["uid"].as_str().expect("the server gives a UID").to_owned();
    ClaimRef { namespace: "default".into(), name: name.into(), uid }
}

/// The driver's opaque configuration with `env`.
fn npu_config(env: Value) -> Value {
    json!({"apiVersion": "npu.huawei.com/v1alpha1", "kind": "NpuConfig", "env": env})
}

fn our_devices(server: &FakeApiServer, driver: &str) -> Vec<Device> {
    let slices: Vec<ResourceSlice> = server.list();
    let mut devices: Vec<Device> = slices
        .into_iter()
        .filter(|slice| slice.spec.driver == driver && slice.spec.node_name.as_deref() == Some(NODE))
        .flat_map(|slice| slice.spec.devices.unwrap_or_default())
        .collect();
    devices.sort_by(|a, b| a.name.cmp(&b.name));
    devices
}

async fn wait_for(what: &str, driver: &Daemon, mut condition: impl FnMut() -> bool) -> Duration {
    let started = Instant::now();
    while !condition() {
        assert!(started.elapsed() < WAIT, "{what}: not within {WAIT:?}; driver log:\n{}", driver.log());
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    started.elapsed()
}

fn int_attribute(device: &Device, name: &str) -> Option<i64> {
    device.attributes.as_ref()?.get(name)?.int
}

fn taint_of(server: &FakeApiServer, driver: &str, device: &str) -> Option<(String, String)> {
    let found = our_devices(server, driver).into_iter().find(|d| d.name == device)?;
    let taint = found.taints?.into_iter().next()?;
    Some((taint.effect, taint.value.unwrap_or_default()))
}

fn overlay_fault(path: &Path, logic_id: u32, faults: Vec<u32>, health: u32) {
    let chip = ChipOverlay {
        logic_id,
        health: Some(health),
        faults: Some(faults.into_iter().map(dcmi_sim::topology::FaultSpec::Code).collect()),
        ..ChipOverlay::default()
    };
    write_overlay(path, &Overlay { chips: vec![chip], injections: Vec::new() }).expect("overlay written");
}

/// One end-to-end case at a time (see the module docs).
static ONE_CASE_AT_A_TIME: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_prepares_claims_for_real_containers_survives_a_kill_and_taints_faults() {
    end_to_end("atlas-800t-a2", "Ascend910B", &V1_SHARED_NODES.map(str::to_owned)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_driver_does_the_same_on_an_atlas_950_node() {
    end_to_end("atlas-950-8", "Ascend950", &atlas_950_shared_nodes(8)).await;
}

/// The whole run on the `sample` host, whose chips are published with the type `chip_type` and whose containers
/// get the `shared` nodes besides their chips.
async fn end_to_end(sample: &str, chip_type: &str, shared: &[String]) {
    let _turn = ONE_CASE_AT_A_TIME.lock().await;
    let driver_name = format!("npu-e2e-{}-{sample}.example.com", std::process::id());
    let specs = RunSpecs(format!("k8s.{driver_name}-npu_"));
    let work = tempfile::tempdir().expect("work directory");
    let server = FakeApiServer::start().await.expect("fake API server");
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
    let kubeconfig = kubeconfig(work.path(), &server.url());
    let host = SimHost::sample(sample);
    let overlay = work.path().join("overlay.toml");
    let registry = work.path().join("plugins_registry");
    let port = std::net::TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("free port").port();
    let args = vec![
        format!("--node-name={NODE}"),
        format!("--driver-name={driver_name}"),
        format!("--registry-dir={}", registry.display()),
        format!("--plugins-dir={}", work.path().join("plugins").display()),
        format!("--cdi-dir={CDI_DIR}"),
        format!("--host-root={}", host.root().display()),
        format!("--dcmi-library={}", host.fake.library.display()),
        "--skip-library-ownership-check".into(),
        format!("--poll-interval={}ms", POLL.as_millis()),
        "--health-deadline=2s".into(),
        format!("--listen=127.0.0.1:{port}"),
    ];
    let envs = [
        ("KUBECONFIG", kubeconfig.as_path()),
        ("DCMI_SIM_CONFIG", host.fake.topology.as_path()),
        ("DCMI_SIM_OVERLAY", overlay.as_path()),
    ];
    let mut kubelet = FakeKubelet::start(&registry);
    let mut driver = spawn_driver(&args, &envs);

    // Registration over v1, and the node's eight chips published with their attributes.
    let registered =
        kubelet.wait_registered(&driver_name, WAIT).await.unwrap_or_else(|e| panic!("{e}\n{}", driver.log()));
    assert_eq!(registered.service, DRA_V1);
    wait_for("eight published chips", &driver, || our_devices(&server, &driver_name).len() == 8).await;
    // Its requests say who sends them; while nothing changes it sends none (the chips are read every POLL).
    let agent = format!("ascend-dra-driver/{}", env!("CARGO_PKG_VERSION"));
    let agents: std::collections::BTreeSet<Option<String>> =
        server.requests().into_iter().map(|request| request.user_agent).collect();
    assert_eq!(agents, std::collections::BTreeSet::from([Some(agent)]));
    tokio::time::sleep(Duration::from_millis(300)).await;
    server.clear_requests();
    tokio::time::sleep(POLL * 20).await;
    assert!(server.requests().is_empty(), "an idle driver asks: {:?}\n{}", server.request_counts(), driver.log());
    let devices = our_devices(&server, &driver_name);
    // The chip's /dev/davinci<N>: N is the physical id, on Ascend950 the logic id.
    let (phy, logic, node) = {
        let chip = host.topology.chips().find(|found| found.chip.phy_id != found.chip.logic_id).expect("phy != logic");
        (chip.chip.phy_id, chip.chip.logic_id, dcmi_sim::fake_host::device_node_number(chip.chip))
    };
    let device_name = format!("npu-{phy}");
    let published = devices.iter().find(|d| d.name == device_name).expect("the chip is published");
    assert_eq!(int_attribute(published, "physicalId"), Some(i64::from(phy)));
    assert_eq!(int_attribute(published, "logicId"), Some(i64::from(logic)));
    let attributes = published.attributes.as_ref().expect("attributes");
    assert_eq!(attributes["type"].string.as_deref(), Some(chip_type), "{attributes:?}");
    assert!(published.capacity.as_ref().is_some_and(|c| c.contains_key("aiCores")), "{published:?}");

    // One chip for a real container, beside five bad claims: each bad one gets its own error.
    let good = seed_claim(&server, "train", &driver_name, &[&device_name], Some(npu_config(json!({"HCCL_TEST": "1"}))));
    let other_driver = seed_claim(&server, "foreign", "gpu.example.com", &["gpu-0"], None);
    let unknown = seed_claim(&server, "unknown", &driver_name, &["npu-99"], None);
    let malformed = seed_claim(&server, "malformed", &driver_name, &["npu-0"], Some(npu_config(json!("not a map"))));
    let replaced = ClaimRef {
        uid: "uid-of-an-older-claim".into(),
        ..seed_claim(&server, "replaced", &driver_name, &["npu-1"], None)
    };
    let deleted = ClaimRef { namespace: "default".into(), name: "deleted".into(), uid: "uid-deleted".into() };
    let claims =
        [good.clone(), other_driver.clone(), unknown.clone(), malformed.clone(), replaced.clone(), deleted.clone()];
    let answers = kubelet.prepare(&driver_name, &claims).await.unwrap_or_else(|e| panic!("{e}\n{}", driver.log()));
    let error_of = |claim: &ClaimRef| answers[&claim.uid].clone().expect_err(&format!("{} must fail", claim.name));
    assert!(error_of(&other_driver).contains("no device allocated to driver"), "{}", error_of(&other_driver));
    assert!(error_of(&unknown).contains("npu-99"), "{}", error_of(&unknown));
    assert!(error_of(&malformed).contains("opaque configuration"), "{}", error_of(&malformed));
    assert!(error_of(&replaced).contains("deleted and created again"), "{}", error_of(&replaced));
    assert!(error_of(&deleted).contains("does not exist"), "{}", error_of(&deleted));
    let prepared = answers[&good.uid].clone().unwrap_or_else(|e| panic!("the good claim failed: {e}"));
    let cdi_id = format!("k8s.{driver_name}/npu={}", good.uid);
    assert_eq!(prepared.len(), 1);
    assert_eq!(
        (prepared[0].device.as_str(), prepared[0].cdi_device_ids.clone()),
        (device_name.as_str(), vec![cdi_id.clone()])
    );
    let files = specs.files();
    assert_eq!(files.len(), 1, "one spec, for the good claim only");
    let spec = std::fs::read_to_string(&files[0]).expect("spec readable");
    assert!(spec.contains("HCCL_TEST=1"), "the claim's opaque configuration reaches the spec:\n{spec}");

    let podman = Podman::new();
    podman.import_busybox("localhost/ascend-dra-busybox");
    let output = podman.run_with_devices("localhost/ascend-dra-busybox", std::slice::from_ref(&cdi_id));
    let context = describe(&output);
    assert!(output.status.success(), "podman run failed\n{context}");
    let probe = Probe::parse(&output.stdout);
    assert_eq!(probe.npu_devices, expected_npu_nodes(&[node], shared), "{context}");
    assert_eq!(probe.rt_visible, "0", "{context}");
    probe.assert_devices_allowed(&context);

    // Killed between prepare and unprepare; the claim is deleted meanwhile. The restarted driver answers a repeated
    // prepare from its checkpoint, and unprepare removes the spec. A spec of a prepare that died before its checkpoint
    // record (planted here) is swept at the start, before the driver serves.
    driver.kill_hard();
    let orphan = std::path::Path::new(CDI_DIR).join(format!("{}died-mid-prepare.json", specs.0));
    std::fs::write(&orphan, "{}").expect("plant an orphaned spec");
    let mut driver = spawn_driver(&args, &envs);
    kubelet
        .wait_until("re-registration", WAIT, |k| k.registered(&driver_name).is_some_and(|r| r.at > registered.at))
        .await
        .unwrap_or_else(|e| panic!("{e}\n{}", driver.log()));
    assert!(!orphan.exists(), "the restarted driver removes a spec its checkpoint does not list\n{}", driver.log());
    assert_eq!(specs.files().len(), 1, "the prepared claim's spec stays: {:?}", specs.files());
    delete_claim(&server, "train").await;
    let again = kubelet.prepare(&driver_name, std::slice::from_ref(&good)).await.expect("prepare after restart");
    assert_eq!(
        again[&good.uid].as_ref().map(|d| d[0].cdi_device_ids.clone()),
        Ok(vec![cdi_id.clone()]),
        "{}",
        driver.log()
    );
    let unprepared = kubelet.unprepare(&driver_name, &[good.clone(), deleted.clone()]).await.expect("unprepare");
    assert_eq!(unprepared[&good.uid], Ok(()));
    assert_eq!(unprepared[&deleted.uid], Ok(()), "an unknown claim is already unprepared");
    assert!(specs.files().is_empty(), "unprepare removes the spec: {:?}", specs.files());

    // A kubelet 1.33 (v1beta1 only) prepares and unprepares through the same driver.
    kubelet.shutdown();
    drop(kubelet);
    let kubelet = FakeKubelet::start_knowing(&registry, &[DRA_V1BETA1]);
    let old = kubelet.wait_registered(&driver_name, WAIT).await.unwrap_or_else(|e| panic!("{e}\n{}", driver.log()));
    assert_eq!(old.service, DRA_V1BETA1);
    let beta = seed_claim(&server, "beta", &driver_name, &["npu-0", "npu-1"], None);
    let answers = kubelet.prepare(&driver_name, std::slice::from_ref(&beta)).await.expect("v1beta1 prepare");
    assert_eq!(answers[&beta.uid].as_ref().map(Vec::len), Ok(2));
    assert_eq!(specs.files().len(), 1);
    assert_eq!(
        kubelet.unprepare(&driver_name, std::slice::from_ref(&beta)).await.expect("v1beta1 unprepare")[&beta.uid],
        Ok(())
    );
    assert!(specs.files().is_empty());

    // A scripted fault: the chip is tainted in the published slice within a second; recovery removes the taint.
    let started = Instant::now();
    overlay_fault(&overlay, logic, vec![0x80E0_1801], 2);
    wait_for("the taint", &driver, || taint_of(&server, &driver_name, &device_name).is_some()).await;
    let to_taint = started.elapsed();
    let (effect, _level) = taint_of(&server, &driver_name, &device_name).expect("tainted");
    assert!(effect == "NoSchedule" || effect == "NoExecute", "{effect}");
    let others_tainted = our_devices(&server, &driver_name).iter().filter(|d| d.taints.is_some()).count();
    assert_eq!(others_tainted, 1, "only the faulty chip is tainted");
    let started = Instant::now();
    overlay_fault(&overlay, logic, Vec::new(), 0);
    wait_for("the taint removed", &driver, || taint_of(&server, &driver_name, &device_name).is_none()).await;
    let to_clear = started.elapsed();
    eprintln!("fault to taint {to_taint:?}, recovery to untaint {to_clear:?} (overlay settle {OVERLAY_SETTLE:?})");
    assert!(to_taint < Duration::from_secs(1), "fault to taint took {to_taint:?}");
    assert!(to_clear < Duration::from_secs(1), "recovery took {to_clear:?}");
    driver.kill_hard();
}

async fn delete_claim(server: &FakeApiServer, name: &str) {
    let claims: kube::Api<k8s_openapi::api::resource::v1::ResourceClaim> =
        kube::Api::namespaced(server.client(), "default");
    claims.delete(name, &Default::default()).await.expect("claim deleted");
}

fn run_to_exit(args: &[&str], envs: &[(&str, &Path)]) -> std::process::Output {
    let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_ascend-dra-driver"));
    command.args(args).args(["--node-name=worker-1", "--listen=127.0.0.1:0"]).env_remove("KUBERNETES_SERVICE_HOST");
    for (name, value) in envs {
        command.env(name, value);
    }
    command.output().expect("the driver runs")
}

#[test]
fn a_missing_driver_library_or_cluster_is_named() {
    let output = run_to_exit(&["--dcmi-library=/nonexistent/libdcmi.so"], &[]);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("/nonexistent/libdcmi.so") && stderr.contains("Ascend driver"), "{stderr}");

    let host = SimHost::sample("atlas-300i-pro");
    let library = format!("--dcmi-library={}", host.fake.library.display());
    let envs =
        [("DCMI_SIM_CONFIG", host.fake.topology.as_path()), ("KUBECONFIG", Path::new("/nonexistent/kubeconfig"))];
    let output = run_to_exit(&[&library, "--skip-library-ownership-check"], &envs);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(!output.status.success());
    assert!(stderr.contains("Kubernetes API") && stderr.contains("KUBECONFIG"), "{stderr}");
}
