//! `--pod`: a pod's running container found through the fake API server and a host tree laid out as containerd's,
//! CRI-O's and Docker's state directories are, and every bad input named instead of a panic.
#![cfg(feature = "kube")]

use std::path::Path;
use std::time::Duration;

use ascend_doctor::ClusterApi;
use ascend_doctor::HostRoot;
use ascend_doctor::KubeClusterApi;
use ascend_doctor::{container_root, pod_container_root, ContainerId, PodRef};
use fake_apiserver::FakeApiServer;
use serde_json::json;

const NODE: &str = "node-1";
const CONTAINERD_ID: &str = "6a1f0c3b9e2d4f5a8b7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b9c8d7e6f5a";
const CRIO_ID: &str = "b2c3d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a1b2c3";

fn write(root: &Path, relative: &str, text: &str) {
    let path = root.join(relative);
    std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
    std::fs::write(path, text).expect("write");
}

/// A pod seeded into the fake API server: containers as (name, containerID, running).
fn seed_pod(server: &FakeApiServer, name: &str, node: Option<&str>, containers: &[(&str, &str, bool)]) {
    let statuses: Vec<_> = containers
        .iter()
        .map(|(container, id, running)| {
            let state = if *running {
                json!({"running": {"startedAt": "2025-01-01T00:00:00Z"}})
            } else {
                json!({"waiting": {"reason": "ContainerCreating"}})
            };
            json!({"name": container, "containerID": id, "ready": running, "restartCount": 0, "image": "cann:8.0",
                "imageID": "", "state": state})
        })
        .collect();
    let spec_containers: Vec<_> =
        containers.iter().map(|(container, ..)| json!({"name": container, "image": "cann"})).collect();
    let mut spec = json!({"containers": spec_containers});
    if let Some(node) = node {
        spec["nodeName"] = json!(node);
    }
    server.seed(json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-a"},
        "spec": spec, "status": {"phase": "Running", "containerStatuses": statuses}}));
}

struct Fixture {
    host_dir: tempfile::TempDir,
    server: FakeApiServer,
    _runtime: tokio::runtime::Runtime,
}

impl Fixture {
    fn new() -> Fixture {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        let server = runtime.block_on(FakeApiServer::start()).expect("fake API server");
        let host_dir = tempfile::tempdir().expect("host root");
        let root = host_dir.path();
        // containerd: the task's pid file, and the process's root with a file of the image in it.
        write(root, &format!("run/containerd/io.containerd.runtime.v2.task/k8s.io/{CONTAINERD_ID}/init.pid"), "4242");
        write(root, "proc/4242/root/etc/image-name", "cann-8.0\n");
        // CRI-O: conmon's pid file in the container's userdata.
        write(root, &format!("run/containers/storage/overlay-containers/{CRIO_ID}/userdata/pidfile"), "5151\n");
        write(root, "proc/5151/root/etc/image-name", "cann-8.2\n");
        seed_pod(&server, "train-0", Some(NODE), &[("main", &format!("containerd://{CONTAINERD_ID}"), true)]);
        seed_pod(&server, "infer-0", Some(NODE), &[("main", &format!("cri-o://{CRIO_ID}"), true)]);
        seed_pod(&server, "elsewhere", Some("node-2"), &[("main", &format!("containerd://{CONTAINERD_ID}"), true)]);
        seed_pod(&server, "pending", None, &[]);
        seed_pod(&server, "starting", Some(NODE), &[("main", "", false)]);
        seed_pod(&server, "odd-runtime", Some(NODE), &[("main", "rkt://0123", true)]);
        seed_pod(&server, "gone", Some(NODE), &[("main", "containerd://00ff00ff", true)]);
        seed_pod(
            &server,
            "two",
            Some(NODE),
            &[("main", &format!("containerd://{CONTAINERD_ID}"), true), ("sidecar", "containerd://0abc", true)],
        );
        Fixture { host_dir, server, _runtime: runtime }
    }

    fn api(&self) -> KubeClusterApi {
        KubeClusterApi::with_config(self.server.config(), Duration::from_secs(5))
    }

    /// The container found, or the error's message.
    fn find(&self, pod: &str) -> Result<String, String> {
        let pod: PodRef = pod.parse().map_err(|error: ascend_doctor::Error| error.to_string())?;
        let api = self.api();
        let host = HostRoot::new(self.host_dir.path());
        let found =
            pod_container_root(&api as &dyn ClusterApi, &host, NODE, &pod).map_err(|error| error.to_string())?;
        let marker = std::fs::read_to_string(found.root.path.join("etc/image-name")).expect("the container's file");
        Ok(format!("{} {} {} {}", found.container, found.container_id, found.root.found_by, marker.trim()))
    }
}

#[test]
fn a_running_containers_root_is_found_through_its_runtimes_state() {
    let fixture = Fixture::new();
    let found = fixture.find("team-a/train-0").expect("found");
    assert_eq!(
        found,
        format!(
            "main containerd://{CONTAINERD_ID} /proc/4242/root (pid from \
             /run/containerd/io.containerd.runtime.v2.task/k8s.io/{CONTAINERD_ID}/init.pid) cann-8.0"
        )
    );
    let found = fixture.find("team-a/infer-0/main").expect("found");
    assert!(
        found.ends_with(&format!("/run/containers/storage/overlay-containers/{CRIO_ID}/userdata/pidfile) cann-8.2")),
        "{found}"
    );
    let found = fixture.find("team-a/two/main").expect("found by name");
    assert!(found.starts_with("main containerd://"), "{found}");
}

#[test]
fn every_bad_input_is_named() {
    let fixture = Fixture::new();
    for (pod, wanted) in [
        ("team-a/absent", "pod team-a/absent not found"),
        ("team-a/elsewhere", "pod team-a/elsewhere runs on node node-2, not on this node (node-1)"),
        ("team-a/pending", "pod team-a/pending is not scheduled to a node yet (phase Running)"),
        ("team-a/starting", "container main of pod team-a/starting is not running"),
        ("team-a/odd-runtime", "runtime \"rkt\" is not one the doctor can look into"),
        ("team-a/gone", "container containerd://00ff00ff is not running on this host"),
        ("team-a/two", "pod team-a/two has several containers (main, sidecar): name one"),
        ("team-a/train-0/sidecar", "pod team-a/train-0 has no container sidecar (its containers: main)"),
        ("train-0", "expected NAMESPACE/NAME or NAMESPACE/NAME/CONTAINER"),
    ] {
        let error = fixture.find(pod).expect_err(pod);
        assert!(error.contains(wanted), "{pod}: {error}");
    }
    fixture.server.stop_listening();
    let error = fixture.find("team-a/train-0").expect_err("no API server");
    assert!(error.contains("asking the API server for pod team-a/train-0"), "{error}");
}

#[test]
fn a_containerd_bundle_rootfs_serves_when_the_pid_is_gone() {
    let host_dir = tempfile::tempdir().expect("host root");
    let bundle = format!("run/containerd/io.containerd.runtime.v2.task/k8s.io/{CONTAINERD_ID}");
    write(host_dir.path(), &format!("{bundle}/init.pid"), "999999");
    write(host_dir.path(), &format!("{bundle}/rootfs/etc/image-name"), "cann\n");
    let id: ContainerId = format!("containerd://{CONTAINERD_ID}").parse().expect("id");
    let found = container_root(&HostRoot::new(host_dir.path()), &id).expect("the bundle's rootfs");
    assert_eq!(found.path, host_dir.path().join(&bundle).join("rootfs"));
    assert!(found.found_by.contains("the task's bundle"), "{}", found.found_by);
}
