//! A fake Atlas host with everything a working NPU node has (driver, runtime, RuntimeClass, CDI spec, kubelet,
//! device plugin), its cluster on a fake API server, and the options to run the doctor on it; tests then break one
//! thing each.

use std::cell::{Ref, RefCell};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_doctor::default_pod_resources_socket;
use ascend_doctor::HostRoot;
use ascend_doctor::KubeClusterApi;
use ascend_doctor::Section;
use ascend_doctor::{ClusterApi, DoctorOptions, DriverConnector};
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions, FakeSoftware};
use fake_apiserver::FakeApiServer;
use serde_json::json;

use super::mock_host::{healthy_910b, manager, MockChip};

/// The kernel release the fake host pretends to run.
pub const KERNEL: &str = "6.1.0-test";

/// A connector that hands out a mock instead of loading the library.
pub struct MockConnector(pub Arc<dyn DeviceManager>);

impl DriverConnector for MockConnector {
    fn connect(&self, _library: &Path) -> ascend_doctor::Result<Arc<dyn DeviceManager>> {
        Ok(Arc::clone(&self.0))
    }
}

/// A connector whose `dcmi_init` fails.
pub struct FailingConnector;

impl DriverConnector for FailingConnector {
    fn connect(&self, library: &Path) -> ascend_doctor::Result<Arc<dyn DeviceManager>> {
        let source = ascend_dcmi::Error::InitFailed { code: -8005, meaning: ascend_dcmi::code_meaning(-8005) };
        Err(ascend_doctor::Error::Driver { library: library.to_path_buf(), source })
    }
}

/// The node's name in its cluster.
pub const NODE: &str = "node-1";

/// The fake host and its surroundings.
pub struct DoctorHost {
    /// Holds everything.
    pub dir: tempfile::TempDir,
    /// The host root.
    pub root: PathBuf,
    /// What the fake host laid out.
    pub fake: FakeHost,
    /// The node's cluster; [`DoctorHost::cluster_answers`] replaces it.
    cluster: RefCell<FakeApiServer>,
    /// Serves the fake API server; declared last, so the server is dropped first.
    runtime: tokio::runtime::Runtime,
}

fn write(path: &Path, text: &str) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("parent directory");
    }
    std::fs::write(path, text).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
}

fn bind_socket(path: &Path) {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).expect("socket directory");
    }
    // The socket file stays after the listener is dropped: enough for checks that look at the file.
    drop(std::os::unix::net::UnixListener::bind(path).expect("bind socket"));
}

/// A fake API server of the node's cluster that answers with a RuntimeClass `ascend` of this handler (none when
/// empty), the node's `huawei.com/Ascend910` capacity and allocatable (no such entry when 0) and kubelet v1.31.4,
/// and the pods bound to the node (uid, namespace, name, phase).
pub fn start_cluster(
    runtime: &tokio::runtime::Runtime,
    handler: &str,
    capacity: usize,
    allocatable: usize,
    pods: &[(&str, &str, &str, &str)],
) -> FakeApiServer {
    let server = runtime.block_on(FakeApiServer::start()).expect("fake API server");
    let resources = |count: usize| {
        let mut list = json!({"cpu": "96"});
        if count > 0 {
            list["huawei.com/Ascend910"] = json!(count.to_string());
        }
        list
    };
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE},
        "status": {"capacity": resources(capacity), "allocatable": resources(allocatable),
            "nodeInfo": {"kubeletVersion": "v1.31.4", "architecture": "amd64", "bootID": "",
                "containerRuntimeVersion": "containerd://1.7.20", "kernelVersion": KERNEL, "kubeProxyVersion": "",
                "machineID": "", "operatingSystem": "linux", "osImage": "", "systemUUID": ""}}}));
    if !handler.is_empty() {
        server.seed(json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "ascend"},
            "handler": handler}));
    }
    for (uid, namespace, name, phase) in pods {
        server.seed(json!({"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": namespace, "uid": uid},
            "spec": {"nodeName": NODE, "containers": []}, "status": {"phase": phase}}));
    }
    server
}

impl DoctorHost {
    /// A healthy host of a sample topology.
    pub fn healthy(sample: &str) -> DoctorHost {
        DoctorHost::with_software(sample, FakeSoftware::default())
    }

    /// A host of a sample topology, healthy but for what `software` makes mismatch.
    pub fn with_software(sample: &str, software: FakeSoftware) -> DoctorHost {
        DoctorHost::with_fake_host_options(sample, FakeHostOptions { software, ..FakeHostOptions::default() })
    }

    /// A host of a sample topology laid out with these options (the simulator library is filled in).
    pub fn with_fake_host_options(sample: &str, options: FakeHostOptions) -> DoctorHost {
        let dir = tempfile::tempdir().expect("temp dir");
        let root = std::fs::canonicalize(dir.path()).expect("canonical").join("host");
        let topology = dcmi_sim::samples::by_name(sample).expect("sample").topology().expect("valid sample");
        let library = dcmi_sim::library_path().expect("libdcmi_sim.so is built");
        let options = FakeHostOptions { library: Some(library), ..options };
        let fake = FakeHost::build(&topology, &root, &options).expect("fake host");
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .enable_all()
            .build()
            .expect("runtime of the fake API server");
        let devices: Vec<String> = fake.phy_ids.iter().map(|phy| format!("\"Ascend910-{phy}\"")).collect();
        let pods = [("uid-live", "default", "train-0", "Running")];
        let cluster = RefCell::new(start_cluster(&runtime, "ascend", devices.len(), devices.len(), &pods));
        let host = DoctorHost { dir, root, fake, cluster, runtime };
        // Only the pretended kernel's headers, so evidence does not depend on the machine's kernel.
        std::fs::remove_dir_all(host.path("lib/modules")).expect("remove the real kernel's headers");
        host.write(&format!("lib/modules/{KERNEL}/build/Makefile"), "# headers\n");
        host.write(
            "etc/docker/daemon.json",
            "{\n  \"features\": { \"cdi\": true },\n  \"runtimes\": {\n    \"ascend\": { \"path\": \"/usr/local/bin/ascend-runtime\", \"runtimeArgs\": [] }\n  }\n}\n",
        );
        host.write("usr/local/bin/ascend-runtime", "#!/bin/sh\n");
        // A kubelet binary as the doctor reads one: its recorded build settings carry the version.
        host.write(
            "usr/bin/kubelet",
            "\u{7f}ELF\nbuild\t-ldflags=\"all=-X 'k8s.io/component-base/version.gitVersion=v1.31.4'\"\n",
        );
        host.write_cdi_spec(&host.fake.phy_ids.clone());
        bind_socket(&host.path("var/lib/kubelet/device-plugins/kubelet.sock"));
        bind_socket(&host.path("var/lib/kubelet/device-plugins/ascend-Ascend910.sock"));
        host.write(
            "var/lib/kubelet/device-plugins/kubelet_internal_checkpoint",
            &format!(
                "{{\"Data\":{{\"PodDeviceEntries\":[{{\"PodUID\":\"uid-live\",\"ContainerName\":\"main\",\
                 \"ResourceName\":\"huawei.com/Ascend910\",\"DeviceIDs\":{{\"0\":[\"Ascend910-0\"]}}}}],\
                 \"RegisteredDevices\":{{\"huawei.com/Ascend910\":[{}]}}}},\"Checksum\":1}}",
                devices.join(",")
            ),
        );
        host
    }

    /// A path below the root.
    pub fn path(&self, relative: &str) -> PathBuf {
        self.root.join(relative)
    }

    /// Writes a file below the root.
    pub fn write(&self, relative: &str, text: &str) {
        write(&self.path(relative), text);
    }

    /// Writes the CDI spec listing these physical ids.
    pub fn write_cdi_spec(&self, phy_ids: &[u32]) {
        let devices: Vec<String> = phy_ids
            .iter()
            .map(|phy| format!("{{\"name\":\"{phy}\",\"containerEdits\":{{\"deviceNodes\":[{{\"path\":\"/dev/davinci{phy}\"}}]}}}}"))
            .collect();
        self.write(
            "var/run/cdi/huawei.com-npu.json",
            &format!("{{\"cdiVersion\":\"0.5.0\",\"kind\":\"huawei.com/npu\",\"devices\":[{}]}}\n", devices.join(",")),
        );
    }

    /// Gives the node a fresh cluster: see [`start_cluster`].
    pub fn cluster_answers(
        &self,
        handler: &str,
        capacity: usize,
        allocatable: usize,
        pods: &[(&str, &str, &str, &str)],
    ) {
        *self.cluster.borrow_mut() = start_cluster(&self.runtime, handler, capacity, allocatable, pods);
    }

    /// The node's cluster.
    pub fn cluster(&self) -> Ref<'_, FakeApiServer> {
        self.cluster.borrow()
    }

    /// The doctor's kube-rs client of the node's cluster.
    pub fn cluster_api(&self) -> Box<dyn ClusterApi> {
        Box::new(KubeClusterApi::with_config(self.cluster().config(), Duration::from_secs(10)))
    }

    /// Doctor options for this host with mocked chips and its cluster.
    pub fn options(&self, chips: Vec<MockChip>) -> DoctorOptions {
        DoctorOptions {
            host: HostRoot::new(&self.root),
            kernel_release: KERNEL.to_owned(),
            compatibility: None,
            image_root: None,
            pod: None,
            runtime_class_manifest: None,
            node_name: Some(NODE.to_owned()),
            connector: Box::new(MockConnector(manager(chips))),
            chip_deadline: Duration::from_secs(5),
            sections: Section::ALL.to_vec(),
            pod_resources_socket: default_pod_resources_socket(),
            cluster_api: Some(self.cluster_api()),
            lang: ascend_doctor::Lang::En,
        }
    }

    /// Options with one healthy mocked chip.
    pub fn default_options(&self) -> DoctorOptions {
        self.options(vec![healthy_910b()])
    }
}
