//! The root file system of a pod's running container, found on this host (`--pod NAMESPACE/NAME[/CONTAINER]`), so
//! that the CANN inside it is judged against the host's driver as `--image-root` judges an unpacked image: the
//! combination that actually runs.
//!
//! The API server names the container (`status.containerStatuses[].containerID`, `<runtime>://<id>`); the runtime's
//! state directory on the host gives its init process, and `/proc/<pid>/root` is the container's root as that
//! process sees it (mounts included). Every path is read below the host root ([`HostRoot`]):
//!
//! | runtime | where the init process's pid is |
//! |---|---|
//! | `containerd://` | `/run/containerd/io.containerd.runtime.v2.task/k8s.io/<id>/init.pid`, the shim's bundle (containerd's `core/runtime/v2/README.md`: the bundle is `<state>/<namespace>/<id>`; the bundle's `rootfs` is tried as well) |
//! | `cri-o://` | `/run/containers/storage/overlay-containers/<id>/userdata/pidfile` (CRI-O starts conmon with `-p <runroot>/overlay-containers/<id>/userdata/pidfile`; containers/storage's default runroot is `/run/containers/storage`) |
//! | `docker://` | `/run/containerd/io.containerd.runtime.v2.task/moby/<id>/init.pid`, or `/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/<id>/init.pid` (Docker runs its containers through containerd in namespace `moby`) |

use std::fmt;
use std::path::PathBuf;
use std::str::FromStr;

use super::cluster_api::ClusterApi;
use super::error::{Error, Result};
use super::host::HostRoot;

/// A pod, and optionally one of its containers, as `--pod` names them: `NAMESPACE/NAME[/CONTAINER]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodRef {
    /// The namespace.
    pub namespace: String,
    /// The pod's name.
    pub name: String,
    /// The container; `None` takes the pod's only container.
    pub container: Option<String>,
}

impl FromStr for PodRef {
    type Err = Error;

    /// # Errors
    /// [`Error::InvalidPodRef`].
    fn from_str(text: &str) -> Result<Self> {
        let parts: Vec<&str> = text.split('/').collect();
        let usage = || Error::InvalidPodRef { text: text.to_owned() };
        // DNS labels and subdomains, as Kubernetes names are: never `.` or `..`, which a URL would resolve.
        let name_like = |part: &&str| {
            let alphanumeric = |byte: u8| byte.is_ascii_lowercase() || byte.is_ascii_digit();
            let bytes = part.as_bytes();
            bytes.first().is_some_and(|first| alphanumeric(*first))
                && bytes.last().is_some_and(|last| alphanumeric(*last))
                && bytes.len() <= 253
                && bytes.iter().all(|byte| alphanumeric(*byte) || b"-.".contains(byte))
        };
        if !(2..=3).contains(&parts.len()) || !parts.iter().all(name_like) {
            return Err(usage());
        }
        Ok(PodRef {
            namespace: parts[0].to_owned(),
            name: parts[1].to_owned(),
            container: parts.get(2).map(|container| (*container).to_owned()),
        })
    }
}

impl fmt::Display for PodRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.namespace, self.name)?;
        match &self.container {
            Some(container) => write!(f, "/{container}"),
            None => Ok(()),
        }
    }
}

/// The container runtimes whose containers the doctor can find on the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContainerRuntime {
    /// `containerd://`.
    Containerd,
    /// `cri-o://`.
    CriO,
    /// `docker://`.
    Docker,
}

impl ContainerRuntime {
    /// The `containerID` prefix, without `://`.
    pub const fn scheme(self) -> &'static str {
        match self {
            ContainerRuntime::Containerd => "containerd",
            ContainerRuntime::CriO => "cri-o",
            ContainerRuntime::Docker => "docker",
        }
    }

    /// The host files that hold the container's init pid, in the order tried.
    fn pid_files(self, id: &str) -> Vec<String> {
        match self {
            ContainerRuntime::Containerd => vec![format!("{CONTAINERD_TASKS}/k8s.io/{id}/init.pid")],
            ContainerRuntime::CriO => vec![format!("/run/containers/storage/overlay-containers/{id}/userdata/pidfile")],
            ContainerRuntime::Docker => vec![
                format!("{CONTAINERD_TASKS}/moby/{id}/init.pid"),
                format!("/run/docker/containerd/daemon/io.containerd.runtime.v2.task/moby/{id}/init.pid"),
            ],
        }
    }
}

/// containerd's state directory of runtime v2 tasks.
const CONTAINERD_TASKS: &str = "/run/containerd/io.containerd.runtime.v2.task";

/// A `containerID` as the kubelet reports it: `<runtime>://<id>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerId {
    /// The runtime.
    pub runtime: ContainerRuntime,
    /// The runtime's id of the container (64 hex digits for containerd, CRI-O and Docker).
    pub id: String,
}

impl FromStr for ContainerId {
    type Err = Error;

    /// # Errors
    /// [`Error::InvalidContainerId`].
    fn from_str(text: &str) -> Result<Self> {
        let invalid = |problem: String| Error::InvalidContainerId { text: text.to_owned(), problem };
        let (scheme, id) = text.split_once("://").ok_or_else(|| invalid("not <runtime>://<id>".to_owned()))?;
        let runtime = [ContainerRuntime::Containerd, ContainerRuntime::CriO, ContainerRuntime::Docker]
            .into_iter()
            .find(|runtime| runtime.scheme() == scheme)
            .ok_or_else(|| {
                invalid(format!("runtime {scheme:?} is not one the doctor can look into (containerd, cri-o, docker)"))
            })?;
        // The id becomes part of host paths: only the characters runtimes use, never a separator or `..`.
        if id.is_empty() || id.len() > 128 || !id.bytes().all(|byte| byte.is_ascii_alphanumeric()) {
            return Err(invalid(format!("{id:?} is not a container id")));
        }
        Ok(ContainerId { runtime, id: id.to_owned() })
    }
}

impl fmt::Display for ContainerId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}://{}", self.runtime.scheme(), self.id)
    }
}

/// Where a running container's root file system is on the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerRoot {
    /// The real path to read it through (below the host root): `/proc/<pid>/root`, or the bundle's `rootfs`.
    pub path: PathBuf,
    /// How it was found, for evidence (`/proc/4242/root (pid from /run/containerd/.../init.pid)`).
    pub found_by: String,
}

/// The running container's root file system, from the runtime's state on the host.
///
/// # Errors
/// [`Error::ContainerNotOnHost`], with what was looked at and why none of it led to the container (not running on
/// this host, or its runtime's state elsewhere).
pub fn container_root(host: &HostRoot, container: &ContainerId) -> Result<ContainerRoot> {
    let mut tried = Vec::new();
    for pid_file in container.runtime.pid_files(&container.id) {
        let pid = match host.read_to_string(&pid_file) {
            Ok(text) => text.trim().parse::<u32>().ok().filter(|pid| *pid > 0),
            Err(error) => {
                tried.push(format!("{pid_file}: {error}"));
                continue;
            }
        };
        let Some(pid) = pid else {
            tried.push(format!("{pid_file}: not a process id"));
            continue;
        };
        let root = format!("/proc/{pid}/root");
        if host.path(&root).is_dir() {
            return Ok(ContainerRoot { path: host.path(&root), found_by: format!("{root} (pid from {pid_file})") });
        }
        tried.push(format!("{root} (pid from {pid_file}): no such process on this host, or /proc not readable"));
    }
    if container.runtime == ContainerRuntime::Containerd {
        let bundle = format!("{CONTAINERD_TASKS}/k8s.io/{}/rootfs", container.id);
        if !host.list(&bundle).is_empty() {
            return Ok(ContainerRoot { path: host.path(&bundle), found_by: format!("{bundle} (the task's bundle)") });
        }
        tried.push(format!("{bundle}: absent or empty"));
    }
    Err(Error::ContainerNotOnHost { container: container.to_string(), tried })
}

/// A pod's container found running on this node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodContainerRoot {
    /// The container's name.
    pub container: String,
    /// Its id.
    pub container_id: ContainerId,
    /// Its root file system.
    pub root: ContainerRoot,
}

/// Asks the API server for `pod`, requires it to run on `node` (this host) with the container running, and finds
/// that container's root file system below the host root: what `--pod` checks, for tools that want the same.
///
/// # Errors
/// [`Error::PodRequest`] when the API server gave no answer, [`Error::PodNotFound`], [`Error::PodNotOnThisNode`] (on
/// another node, or none), [`Error::ContainerNotChosen`] (no such container, or several and none named),
/// [`Error::ContainerNotRunning`], [`Error::InvalidContainerId`] for a runtime the doctor cannot look into, or
/// [`Error::ContainerNotOnHost`].
pub fn pod_container_root(api: &dyn ClusterApi, host: &HostRoot, node: &str, pod: &PodRef) -> Result<PodContainerRoot> {
    let PodRef { namespace, name, .. } = pod;
    let pod_name = || format!("{namespace}/{name}");
    let found = api
        .pod(namespace, name)
        .map_err(|source| Error::PodRequest { pod: pod_name(), source: Box::new(source) })?
        .ok_or_else(|| Error::PodNotFound { pod: pod_name() })?;
    if found.node_name.as_deref() != Some(node) {
        return Err(Error::PodNotOnThisNode {
            pod: pod_name(),
            scheduled: found.node_name,
            node: node.to_owned(),
            phase: found.phase,
        });
    }
    let not_chosen = || Error::ContainerNotChosen {
        pod: pod_name(),
        wanted: pod.container.clone(),
        containers: found.containers.iter().map(|status| status.name.clone()).collect(),
        phase: found.phase.clone(),
    };
    let status = match &pod.container {
        Some(wanted) => found.containers.iter().find(|status| &status.name == wanted).ok_or_else(not_chosen)?,
        None => match found.containers.as_slice() {
            [only] => only,
            _ => return Err(not_chosen()),
        },
    };
    let container = &status.name;
    let id_text = status
        .container_id
        .as_deref()
        .filter(|id| !id.is_empty() && status.running)
        .ok_or_else(|| Error::ContainerNotRunning { pod: pod_name(), container: container.clone() })?;
    let container_id: ContainerId = id_text.parse()?;
    let root = container_root(host, &container_id)?;
    Ok(PodContainerRoot { container: container.clone(), container_id, root })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pod_references_are_namespace_name_and_an_optional_container() {
        let pod: PodRef = "team-a/train-0".parse().expect("valid");
        assert_eq!((pod.namespace.as_str(), pod.name.as_str(), pod.container), ("team-a", "train-0", None));
        let pod: PodRef = "team-a/train-0/worker".parse().expect("valid");
        assert_eq!(pod.container.as_deref(), Some("worker"));
        assert_eq!(pod.to_string(), "team-a/train-0/worker");
        for bad in ["train-0", "a/b/c/d", "a//b", "/a/b", "A/b", "a/b/../c", "a/b c", "../b", "a/-b", "a/b."] {
            assert!(bad.parse::<PodRef>().is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn container_ids_name_a_known_runtime_and_a_plain_id() {
        let id: ContainerId = "containerd://0123abcd".parse().expect("valid");
        assert_eq!((id.runtime, id.id.as_str()), (ContainerRuntime::Containerd, "0123abcd"));
        assert_eq!("cri-o://ff".parse::<ContainerId>().expect("valid").runtime, ContainerRuntime::CriO);
        assert_eq!("docker://ff".parse::<ContainerId>().expect("valid").to_string(), "docker://ff");
        let unknown = "rkt://abc".parse::<ContainerId>().expect_err("unknown runtime");
        assert!(unknown.to_string().contains("runtime \"rkt\" is not one the doctor can look into"), "{unknown}");
        for bad in ["containerd://", "containerd://../etc", "containerd://a/b", "abc", "containerd://a b"] {
            assert!(bad.parse::<ContainerId>().is_err(), "{bad:?} accepted");
        }
    }
}
