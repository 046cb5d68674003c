//! Huawei's DRA driver (mind-cluster `component/ascend-dynamic-resource-allocation`, the comparison tier's build of
//! scripts/peers/build.sh) on the node, as the reference the test bed's benchmark compares ours with. Both drivers
//! are named [`DRA_DRIVER`] and keep their checkpoint at the same path, so the node runs one at a time, and the
//! other's checkpoint goes when the node switches ([`remove_checkpoint`]).
//!
//! Two ways to run it:
//! - [`try_daemon_set`]: as its installation deploys it (cluster-tests/manifests/huawei-dra-driver.yaml, the image
//!   scripts/cluster/up.sh packs) on the test node's simulated 910B host. There the API server rejects its
//!   ResourceSlice: it names a 910 device `Ascend910-<physical id>` (mind-cluster
//!   `component/ascend-dynamic-resource-allocation/internal/device/generation_910.go`,
//!   `Ascend910Generation.buildNpuDevice`), and a device name must be a lowercase RFC 1123 label; so no claim is ever
//!   allocated to it and it prepares nothing. The function says what the API server answered.
//! - [`HostDriver`]: as a process of this machine on a simulated Atlas 950 host of its own (scripts/peers/in-host.sh:
//!   the fake host's driver tree and device nodes in a private mount namespace; the kubelet's directories and
//!   /var/run/cdi are the machine's), which it names `npu-<physical id>` (`Ascend950Generation.buildNpuDevice`), a
//!   name the API server accepts: the one case where it publishes devices and the kubelet calls it.

use std::path::{Path, PathBuf};
use std::process::{Child, Command};
use std::time::Duration;

use crate::{wait_until, wait_until_empty, Cluster};

use super::{published_devices, wait_published, DRA_DRIVER, NAMESPACE, SYSTEM};

/// Our manifest of Huawei's DRA driver, under the repository root.
pub const MANIFEST: &str = "cluster-tests/manifests/huawei-dra-driver.yaml";
/// Its namespace (Huawei's, from its build/ascend-dra-driver.yaml).
pub const NAMESPACE_HUAWEI: &str = "ascend-dra-driver";
/// The selector of its pod.
pub const SELECTOR: &str = "app.kubernetes.io/name=ascend-dra-driver,app.kubernetes.io/component=kubeletplugin";
/// The DeviceClass the manifest gives Huawei's devices (every device of the driver, as Huawei's class selects).
pub const DEVICE_CLASS: &str = "mind-cluster.npu.huawei.com";
/// The image archive scripts/cluster/up.sh imports, below the cluster's state directory.
const IMAGE: &str = "images/huawei-dra-driver.tar";
/// The driver's log in the DaemonSet, on the host (the manifest's log directory).
const DAEMON_SET_LOG: &str = "/var/log/ascend-cluster/huawei-dra-driver/ascend-dra.log";

/// Why Huawei's DRA driver cannot be deployed from its manifest on the test bed, if it cannot: no image
/// (scripts/cluster/up.sh packs it where scripts/peers/build.sh finds a mind-cluster tree).
pub fn image_missing() -> Option<String> {
    let image = Cluster::state_dir().join(IMAGE);
    if image.exists() {
        return None;
    }
    Some(format!(
        "no image of Huawei's DRA driver ({}): scripts/cluster/up.sh packs it where scripts/peers/build.sh finds a \
         mind-cluster tree (give one with MIND_CLUSTER_TREE)",
        image.display()
    ))
}

/// Deploys Huawei's DRA driver from its manifest on a node running no other driver of chips, waits until its pod runs
/// and either the API server holds its 8 devices (`Ok`) or its log shows the API server rejecting its ResourceSlice
/// (`Err` with that answer), then removes it again.
pub async fn try_daemon_set(cluster: &Cluster) -> Result<(), String> {
    let _ = cluster.try_kubectl(&["delete", "namespace", SYSTEM, "--wait=true", "--timeout=120s"]);
    let _ = std::fs::remove_file(DAEMON_SET_LOG);
    cluster.apply(MANIFEST);
    cluster.wait_pods_running(NAMESPACE_HUAWEI, SELECTOR, 1, Duration::from_secs(120)).await;
    let outcome = wait_until("Huawei's devices published or rejected", Duration::from_secs(90), || async {
        if published_devices(cluster).await?.len() == 8 {
            return Ok(Ok(()));
        }
        let log = std::fs::read_to_string(DAEMON_SET_LOG).unwrap_or_default();
        match log.lines().find_map(|line| line.split_once("create resource slice: ")) {
            Some((_, rejected)) => Ok(Err(rejected.trim().to_owned())),
            None => Err("neither yet".to_owned()),
        }
    })
    .await;
    let path = cluster.repository().join(MANIFEST);
    let path = path.to_str().expect("path");
    let _ = cluster.try_kubectl(&["delete", "-f", path, "--ignore-not-found", "--wait=true", "--timeout=120s"]);
    wait_slices_gone(cluster).await;
    remove_checkpoint();
    outcome
}

/// Huawei's DRA driver running on this machine in a simulated host of its own (see the module's documentation),
/// registered with the test node's kubelet; stopped (SIGTERM, as the kubelet stops a pod) when dropped.
#[derive(Debug)]
pub struct HostDriver {
    child: Child,
    root: PathBuf,
}

impl HostDriver {
    /// Starts `program` (Huawei's `ascend-dra`) in the fake host `root` (made by `dcmi-sim fake-host`), with the
    /// admin's kubeconfig and its log at `log`, on a node running no other DRA driver; creates its DeviceClass and
    /// waits until the API server holds its 8 devices and its registration socket is in the kubelet's registry.
    pub async fn start(cluster: &Cluster, program: &Path, root: &Path, log: &Path) -> Self {
        let driver = "/usr/local/Ascend/driver";
        // What it prints besides its log goes beside the log.
        let output = std::fs::File::create(log.with_extension("out"))
            .unwrap_or_else(|error| panic!("cannot create {}: {error}", log.with_extension("out").display()));
        let errors = output.try_clone().expect("a second handle of the output file");
        let child = Command::new(cluster.repository().join("scripts/peers/in-host.sh"))
            .arg(root)
            .arg(program)
            .arg("--kubeconfig")
            .arg(Cluster::admin_kubeconfig())
            .arg(format!("-logFile={}", log.display()))
            .env("NODE_NAME", crate::NODE_NAME)
            .env("LD_LIBRARY_PATH", format!("{driver}/lib64:{driver}/lib64/driver:{driver}/lib64/common"))
            .stdout(output)
            .stderr(errors)
            .spawn()
            .unwrap_or_else(|error| panic!("cannot start {}: {error}", program.display()));
        let started = Self { child, root: root.to_owned() };
        let class = serde_json::json!({
            "metadata": {"name": DEVICE_CLASS},
            "spec": {"selectors": [{"cel": {"expression": format!("device.driver == '{DRA_DRIVER}'")}}]},
        });
        let classes: kube::Api<k8s_openapi::api::resource::v1::DeviceClass> = kube::Api::all(cluster.client());
        if classes.get_opt(DEVICE_CLASS).await.expect("get DeviceClass").is_none() {
            let class = serde_json::from_value(class).expect("a DeviceClass");
            classes.create(&Default::default(), &class).await.expect("create Huawei's DeviceClass");
        }
        wait_published(cluster, "Huawei's 8 devices published", Duration::from_secs(90)).await;
        let socket = format!("/var/lib/kubelet/plugins_registry/{DRA_DRIVER}-reg.sock");
        wait_until("Huawei's registration socket", Duration::from_secs(60), || async {
            if Path::new(&socket).exists() {
                Ok(())
            } else {
                Err(format!("no {socket}"))
            }
        })
        .await;
        started
    }

    /// The simulator's overlay of its fake host (faults raised there reach only it).
    pub fn overlay(&self) -> PathBuf {
        self.root.join(dcmi_sim::fake_host::beside_library(dcmi_sim::OVERLAY_FILE_NAME).trim_start_matches('/'))
    }

    /// Stops it with every claim of the test namespace first, and waits until the kubelet deleted its slices; then
    /// deletes its checkpoint, which our driver refuses.
    pub async fn stop(mut self, cluster: &Cluster) {
        let _ = cluster.try_kubectl(&[
            "delete",
            "pods,deployments,resourceclaims",
            "--all",
            "-n",
            NAMESPACE,
            "--wait=true",
        ]);
        self.terminate();
        wait_slices_gone(cluster).await;
        remove_checkpoint();
    }

    fn terminate(&mut self) {
        // in-host.sh execs the program in its namespace: the child is the driver itself.
        let _ = Command::new("kill").arg("-TERM").arg(self.child.id().to_string()).status();
        let _ = self.child.wait();
    }
}

impl Drop for HostDriver {
    fn drop(&mut self) {
        if matches!(self.child.try_wait(), Ok(None)) {
            self.terminate();
        }
    }
}

/// Waits until the node has no slice of [`DRA_DRIVER`] (the kubelet deletes a departed driver's after 30 s).
async fn wait_slices_gone(cluster: &Cluster) {
    wait_until_empty("Huawei's DRA slices deleted", Duration::from_secs(90), || published_devices(cluster)).await;
}

/// Deletes the claims' CDI specs Huawei's driver left in /var/run/cdi (`ascend.com-npu_<claim uid>.yaml`, its kind
/// `ascend.com/npu`), as when it was stopped before the kubelet unprepared a claim; not our driver's, nor the host's.
pub fn remove_claim_specs() {
    let Ok(entries) = std::fs::read_dir("/var/run/cdi") else { return };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with("ascend.com-npu_") {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Deletes the DRA drivers' shared checkpoint (`/var/lib/kubelet/plugins/npu.huawei.com/checkpoint.json`), once the
/// driver that wrote it is gone with every claim it prepared: Huawei's reuses any file of that name and then fails
/// every prepare (ours replaces Huawei's when it holds no claim and refuses to start while it does), mind-cluster
/// `component/ascend-dynamic-resource-allocation/internal/plugin/state.go`, `NewDeviceState` and
/// `DeviceState.Prepare`).
pub fn remove_checkpoint() {
    let path = format!("/var/lib/kubelet/plugins/{DRA_DRIVER}/checkpoint.json");
    match std::fs::remove_file(&path) {
        Ok(()) => {}
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
        Err(error) => panic!("cannot delete {path}: {error}"),
    }
}
