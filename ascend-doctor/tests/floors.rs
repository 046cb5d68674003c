//! The version floors the doctor checks on a node (docs/compatibility.md): the kubelet's version from the Node
//! object or from files, each container engine's CDI switch by its release, and the spec's `cdiVersion` against
//! what the engine loads. Hosts are temporary directories holding only the files a check reads; binaries are files
//! carrying the build settings a real Go binary records (`go version -m` prints them).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_doctor::Error;
use ascend_doctor::HostRoot;
use ascend_doctor::{run, DoctorReport};
use ascend_doctor::{CheckResult, Section, Status};
use ascend_doctor::{ClusterApi, ClusterPod, DoctorOptions, DriverConnector, NodeResources};
use ascend_oci::runtime_config::RuntimeClassRef;

struct NoDriver;

impl DriverConnector for NoDriver {
    fn connect(&self, library: &Path) -> ascend_doctor::Result<Arc<dyn DeviceManager>> {
        // No library is laid out on these hosts; were one found, loading it would fail like this.
        let source = ascend_dcmi::Error::LibraryNotFound { searched: vec![library.to_path_buf()] };
        Err(Error::Driver { library: library.to_path_buf(), source })
    }
}

/// A Node API that answers with a fixed result: the kubelet's version, or the reason the request failed.
struct FixedNodeApi(Result<Option<String>, &'static str>);

/// What this test's API says of the requests it does not serve.
fn not_served(request: &str) -> Error {
    Error::ApiRequest { request: request.to_owned(), reason: "not served by this test's API".to_owned() }
}

impl ClusterApi for FixedNodeApi {
    fn kubelet_version(&self, node: &str) -> ascend_doctor::Result<Option<String>> {
        self.0
            .clone()
            .map_err(|reason| Error::ApiRequest { request: format!("get nodes/{node}"), reason: reason.to_owned() })
    }

    fn served_versions(&self, _group: &str) -> ascend_doctor::Result<Option<Vec<String>>> {
        Err(not_served("get /apis"))
    }

    fn node_resources(&self, node: &str) -> ascend_doctor::Result<NodeResources> {
        Err(not_served(&format!("get nodes/{node}")))
    }

    fn pods(&self, _node: Option<&str>) -> ascend_doctor::Result<Vec<ClusterPod>> {
        Err(not_served("list pods"))
    }

    fn runtime_classes(&self) -> ascend_doctor::Result<Vec<RuntimeClassRef>> {
        Err(not_served("list runtimeclasses"))
    }
}

struct Host {
    _dir: tempfile::TempDir,
    root: PathBuf,
}

impl Host {
    fn new() -> Host {
        let dir = tempfile::tempdir().expect("temporary directory");
        let root = dir.path().join("host");
        std::fs::create_dir_all(&root).expect("root");
        Host { _dir: dir, root }
    }

    fn write(&self, host_path: &str, bytes: impl AsRef<[u8]>) -> &Host {
        let path = self.root.join(host_path.trim_start_matches('/'));
        std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
        std::fs::write(&path, bytes).unwrap_or_else(|error| panic!("{}: {error}", path.display()));
        self
    }

    /// A Go binary of a few hundred kilobytes whose build settings set `setting` to `version`.
    fn go_binary(&self, host_path: &str, setting: &str, version: &str) -> &Host {
        let mut bytes = vec![0x7fu8, b'E', b'L', b'F'];
        bytes.extend(std::iter::repeat_n(0x90u8, 300_000));
        bytes.extend(
            format!(
                "\u{ff} Go buildinf:\tpath\tk8s.io/kubernetes/cmd/x\nbuild\t-ldflags=\"all=-X '{setting}={version}' -X \
                 'k8s.io/component-base/version.gitCommit=abc'\"\n"
            )
            .into_bytes(),
        );
        bytes.extend(std::iter::repeat_n(0u8, 1000));
        self.write(host_path, bytes)
    }

    fn spec(&self, cdi_version: &str) -> &Host {
        self.write(
            "/var/run/cdi/huawei.com-npu.json",
            format!(
                "{{\"cdiVersion\":\"{cdi_version}\",\"kind\":\"huawei.com/npu\",\"devices\":[{{\"name\":\"0\",\
                 \"containerEdits\":{{\"deviceNodes\":[{{\"path\":\"/dev/davinci0\"}}]}}}}]}}\n"
            ),
        )
    }

    fn dpkg(&self, packages: &[(&str, &str)]) -> &Host {
        let paragraphs: Vec<String> = packages
            .iter()
            .map(|(name, version)| {
                format!("Package: {name}\nStatus: install ok installed\nArchitecture: amd64\nVersion: {version}\n")
            })
            .collect();
        self.write("/var/lib/dpkg/status", paragraphs.join("\n"))
    }

    fn run(&self, api: Option<FixedNodeApi>) -> DoctorReport {
        self.run_with(api.map(|api| Box::new(api) as Box<dyn ClusterApi>))
    }

    fn run_with(&self, cluster_api: Option<Box<dyn ClusterApi>>) -> DoctorReport {
        let options = DoctorOptions {
            host: HostRoot::new(&self.root),
            kernel_release: "6.1.0-test".to_owned(),
            compatibility: None,
            image_root: None,
            pod: None,
            runtime_class_manifest: None,
            node_name: Some("worker-1".to_owned()),
            connector: Box::new(NoDriver),
            chip_deadline: Duration::from_secs(1),
            sections: vec![Section::ContainerRuntime, Section::Kubernetes],
            pod_resources_socket: PathBuf::from("/var/lib/kubelet/pod-resources/kubelet.sock"),
            cluster_api,
            lang: ascend_doctor::Lang::En,
        };
        run(&options)
    }
}

const KUBELET_SETTING: &str = "k8s.io/component-base/version.gitVersion";
const CONTAINERD_SETTING: &str = "github.com/containerd/containerd/version.Version";

fn check<'a>(report: &'a DoctorReport, id: &str) -> &'a CheckResult {
    report.check(id).unwrap_or_else(|| panic!("no check {id}"))
}

fn assert_status(report: &DoctorReport, id: &str, status: Status, fix_has: &[&str], evidence_has: &[&str]) {
    let found = check(report, id);
    assert_eq!(found.status, status, "{id}: {found:#?}");
    let fix = found.fix.clone().unwrap_or_default();
    for wanted in fix_has {
        assert!(fix.contains(wanted), "{id}: fix {fix:?} lacks {wanted:?}");
    }
    let evidence = found.evidence.join("\n");
    for wanted in evidence_has {
        assert!(evidence.contains(wanted), "{id}: evidence lacks {wanted:?}:\n{evidence}");
    }
}

#[test]
fn the_node_objects_kubelet_version_comes_first_and_an_old_one_fails() {
    let host = Host::new();
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.30.2");
    let report = host.run(Some(FixedNodeApi(Ok(Some("v1.25.16".to_owned())))));
    assert_status(
        &report,
        "kubernetes.kubelet_version",
        Status::Fail,
        &["upgrade the kubelet to 1.26 or newer", "v1.25.16"],
        &[
            "kubelet v1.25.16 (from Node worker-1 status.nodeInfo.kubeletVersion)",
            "112597",
            "device plugin: needs 1.26+, NOT met",
        ],
    );
}

#[test]
fn without_an_api_answer_the_kubelet_binarys_build_settings_are_read() {
    let host = Host::new();
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.29.3");
    let report = host.run(Some(FixedNodeApi(Err("connection refused"))));
    assert_status(
        &report,
        "kubernetes.kubelet_version",
        Status::Ok,
        &[],
        &[
            "Node object not read: get nodes/worker-1: connection refused",
            "kubelet v1.29.3 (from /usr/bin/kubelet (build setting k8s.io/component-base/version.gitVersion))",
            "device plugin --cdi-delivery field: needs 1.29+, met",
            "DRA driver, resource.k8s.io/v1: needs 1.34+, NOT met",
        ],
    );
    assert!(check(&report, "kubernetes.kubelet_version").fix.is_none());
}

#[test]
fn a_stripped_kubelet_falls_back_to_the_package_and_no_kubelet_skips() {
    let host = Host::new();
    host.write("/usr/local/bin/kubelet", b"\x7fELF stripped, no build settings");
    host.dpkg(&[("kubelet", "1.24.17-1.1")]);
    let report = host.run(None);
    assert_status(
        &report,
        "kubernetes.kubelet_version",
        Status::Fail,
        &["1.26"],
        &[
            "/usr/local/bin/kubelet records no version",
            "kubelet 1.24.17-1.1 (from /var/lib/dpkg/status (package kubelet))",
        ],
    );

    let bare = Host::new();
    let report = bare.run(None);
    assert_status(&report, "kubernetes.kubelet_version", Status::Skip, &[], &["not a Kubernetes node"]);
}

#[test]
fn containerd_1_7_needs_enable_cdi_and_2_0_has_it_on() {
    let host = Host::new();
    host.spec("0.5.0").go_binary("/usr/bin/containerd", CONTAINERD_SETTING, "v1.7.20");
    host.write("/etc/containerd/config.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n");
    let report = host.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_engine",
        Status::Fail,
        &[
            "enable_cdi = true",
            "[plugins.\"io.containerd.grpc.v1.cri\"]",
            "ascend-ctk runtime configure --runtime containerd --cdi",
        ],
        &[
            "containerd v1.7.20 from /usr/bin/containerd",
            "enable_cdi not set; CDI is off by default in containerd v1.7.20",
        ],
    );
    assert_eq!(check(&report, "container_runtime.cdi_version").status, Status::Skip);

    host.write(
        "/etc/containerd/config.toml",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\nenable_cdi = true\ncdi_spec_dirs = [\"/etc/cdi\"]\n",
    );
    let report = host.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_engine",
        Status::Fail,
        &["add /var/run/cdi to containerd's cdi_spec_dirs"],
        &["containerd reads CDI specs from /etc/cdi only"],
    );

    host.go_binary("/usr/bin/containerd", CONTAINERD_SETTING, "v2.0.4");
    host.write("/etc/containerd/config.toml", "version = 3\n");
    let report = host.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_engine",
        Status::Ok,
        &[],
        &["CDI is on by default in containerd v2.0.4"],
    );
    assert_status(&report, "container_runtime.cdi_version", Status::Ok, &[], &["reads up to 0.8.0"]);
}

#[test]
fn an_engine_release_before_cdi_is_named_with_its_upgrade() {
    let host = Host::new();
    host.spec("0.5.0").go_binary("/usr/bin/containerd", CONTAINERD_SETTING, "1.6.20~ds1");
    let report = host.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_engine",
        Status::Fail,
        &["upgrade containerd to 1.7 or newer"],
        &["containerd 1.6.20~ds1: this release cannot load CDI devices"],
    );
    // Without a spec of ours the node was not set up for CDI: a warning, not a failure.
    std::fs::remove_file(host.root.join("var/run/cdi/huawei.com-npu.json")).expect("remove spec");
    assert_eq!(check(&host.run(None), "container_runtime.cdi_engine").status, Status::Warn);
}

#[test]
fn docker_needs_the_cdi_feature_before_28_2() {
    let host = Host::new();
    host.spec("0.5.0").write("/etc/docker/daemon.json", "{\"runtimes\": {}}");
    host.dpkg(&[("docker-ce", "5:27.3.1-1~debian.12~bookworm")]);
    let report = host.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_engine",
        Status::Fail,
        &["\"features\": {\"cdi\": true}", "/etc/docker/daemon.json"],
        &["features.cdi not set; CDI is off by default in Docker 5:27.3.1"],
    );
    host.dpkg(&[("docker-ce", "5:28.2.2-1~debian.12~bookworm")]);
    assert_eq!(check(&host.run(None), "container_runtime.cdi_engine").status, Status::Ok);
}

#[test]
fn a_spec_version_the_engine_does_not_load_fails_and_an_unknown_engine_warns() {
    let host = Host::new();
    host.spec("0.6.0").write("/usr/bin/podman", b"\x7fELF").dpkg(&[("podman", "4.3.1+ds1-8+deb12u1")]);
    let report = host.run(None);
    assert_status(&report, "container_runtime.cdi_engine", Status::Ok, &[], &["podman always loads CDI devices"]);
    assert_status(
        &report,
        "container_runtime.cdi_version",
        Status::Fail,
        &["podman 4.3.1+ds1-8+deb12u1 does not load cdiVersion 0.6.0", "ascend-ctk cdi generate"],
        &["reads up to 0.5.0 (measured: Debian 12's podman 4.3.1"],
    );
    host.spec("0.5.0");
    assert_eq!(check(&host.run(None), "container_runtime.cdi_version").status, Status::Ok);

    let crio = Host::new();
    crio.spec("0.7.0").write("/etc/crio/crio.conf", "[crio.runtime]\n");
    let report = crio.run(None);
    assert_status(
        &report,
        "container_runtime.cdi_version",
        Status::Warn,
        &["CRI-O (version unknown) may not load cdiVersion 0.7.0"],
        &["is not in the doctor's table of CDI readers"],
    );
}

#[test]
fn a_1_28_kubelet_needs_the_cdi_devices_gate_from_its_config_or_flags() {
    let host = Host::new();
    host.spec("0.5.0").go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.28.9");
    host.write("/var/lib/kubelet/config.yaml", "kind: KubeletConfiguration\nfeatureGates:\n  OtherGate: true\n");
    let report = host.run(None);
    assert_status(
        &report,
        "kubernetes.cdi_devices_gate",
        Status::Warn,
        &["featureGates: {DevicePluginCDIDevices: true}", "--cdi-delivery annotations"],
        &[
            "read: /var/lib/kubelet/config.yaml",
            "DevicePluginCDIDevices not set in the files read; alpha, off by default in kubelet v1.28.9",
        ],
    );

    host.write("/var/lib/kubelet/config.yaml", "featureGates:\n  DevicePluginCDIDevices: true\n");
    assert_status(
        &host.run(None),
        "kubernetes.cdi_devices_gate",
        Status::Ok,
        &[],
        &["DevicePluginCDIDevices=true in /var/lib/kubelet/config.yaml (featureGates)"],
    );

    // kubeadm's drop-in names another config file; a flag in KUBELET_EXTRA_ARGS overrides it, as in the kubelet.
    host.write(
        "/etc/systemd/system/kubelet.service.d/10-kubeadm.conf",
        "[Service]\nEnvironment=\"KUBELET_CONFIG_ARGS=--config=/etc/kubernetes/kubelet.yaml\"\n",
    );
    host.write("/etc/kubernetes/kubelet.yaml", "featureGates:\n  DevicePluginCDIDevices: true\n");
    host.write("/etc/default/kubelet", "KUBELET_EXTRA_ARGS=\"--feature-gates=DevicePluginCDIDevices=false\"\n");
    assert_status(
        &host.run(None),
        "kubernetes.cdi_devices_gate",
        Status::Warn,
        &["--feature-gates=DevicePluginCDIDevices=true"],
        &["DevicePluginCDIDevices=false in /etc/default/kubelet (--feature-gates)", "/etc/kubernetes/kubelet.yaml"],
    );
    host.write("/var/lib/kubelet/kubeadm-flags.env", "KUBELET_KUBEADM_ARGS=\"--feature-gates=Typo\"\n");
    host.write("/etc/default/kubelet", "KUBELET_EXTRA_ARGS=--feature-gates=DevicePluginCDIDevices=true\n");
    assert_status(
        &host.run(None),
        "kubernetes.cdi_devices_gate",
        Status::Ok,
        &[],
        &["/var/lib/kubelet/kubeadm-flags.env: --feature-gates \"Typo\" is not Name=true|false"],
    );
}

#[test]
fn the_cdi_devices_gate_is_on_by_default_from_1_29_and_a_miss_without_cdi_is_evidence_only() {
    let host = Host::new();
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.29.1");
    assert_status(&host.run(None), "kubernetes.cdi_devices_gate", Status::Ok, &[], &["beta, on by default"]);
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.31.0");
    host.write("/var/lib/kubelet/config.yaml", "featureGates: {DevicePluginCDIDevices: false}\n");
    assert_status(&host.run(None), "kubernetes.cdi_devices_gate", Status::Ok, &[], &["GA and always on from 1.31"]);
    // No Ascend CDI spec: the node does not use CDI delivery, so an off gate is reported without a warning.
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.28.0");
    assert_status(&host.run(None), "kubernetes.cdi_devices_gate", Status::Ok, &["enable the gate"], &["does not work"]);
    host.go_binary("/usr/bin/kubelet", KUBELET_SETTING, "v1.27.5");
    host.spec("0.5.0");
    assert_status(
        &host.run(None),
        "kubernetes.cdi_devices_gate",
        Status::Warn,
        &["upgrade the kubelet"],
        &["predates"],
    );
    assert_eq!(check(&Host::new().run(None), "kubernetes.cdi_devices_gate").status, Status::Skip);
}

/// The API server's DRA version, read through kube-rs from the fake API server's discovery.
#[cfg(feature = "kube")]
#[test]
fn the_api_servers_dra_version_comes_from_its_discovery() {
    use ascend_doctor::KubeClusterApi;
    use ascend_doctor::DRA_DRIVER_SOCKET;
    use fake_apiserver::{FakeApiServer, Kind};

    // The fake serves from a runtime of its own; the doctor's client runs its own, as in the binary.
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let start = |builder: fake_apiserver::Builder| runtime.block_on(builder.start()).expect("fake API server");
    let api = |server: &FakeApiServer| -> Option<Box<dyn ClusterApi>> {
        Some(Box::new(KubeClusterApi::with_config(server.config(), Duration::from_secs(5))))
    };
    let v1beta1 = || Kind::cluster("resource.k8s.io", "v1beta1", "resourceslices", "ResourceSlice");
    let host = Host::new();
    let current = start(FakeApiServer::builder().kind(v1beta1()));
    let id = "kubernetes.dra_api";
    assert_status(&host.run_with(api(&current)), id, Status::Ok, &[], &["serves resource.k8s.io v1, v1beta1"]);
    let older = start(FakeApiServer::builder().without_group_version("resource.k8s.io", "v1").kind(v1beta1()));
    assert_status(&host.run_with(api(&older)), id, Status::Warn, &["Kubernetes 1.34"], &["v1beta1 but not v1"]);
    let without = start(FakeApiServer::builder().without_group_version("resource.k8s.io", "v1"));
    assert_status(&host.run_with(api(&without)), id, Status::Ok, &[], &["does not serve resource.k8s.io"]);

    // With the Ascend DRA driver registered on the node, a missing v1 fails.
    host.write(DRA_DRIVER_SOCKET, "");
    assert_status(&host.run_with(api(&older)), id, Status::Fail, &["1.34"], &["driver is registered"]);
    assert_status(&host.run_with(api(&without)), id, Status::Fail, &["1.34"], &["DRA is off"]);
    assert_eq!(check(&host.run_with(api(&current)), id).status, Status::Ok);

    current.stop_listening();
    assert_status(&host.run_with(api(&current)), id, Status::Warn, &["access"], &["API discovery not read", "/apis"]);
    assert_eq!(check(&host.run(None), id).status, Status::Skip);
}
