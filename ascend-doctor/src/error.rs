//! The one error type of the crate. Each variant names what failed: the file, the socket, the request to the API
//! server, the pod and container, the driver library. Where a check turns an error into a report line, the line is
//! the error's message (with the check's own prefix, such as `Node object not read: `).

use std::io;
use std::path::PathBuf;

use super::compatibility::TableError;

/// Everything that can go wrong in the doctor's library functions. Checks never fail: they report these as the
/// evidence of a SKIP, WARN or FAIL.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A file or directory below the host root could not be read (opened, its metadata, a symlink, resolved).
    #[error("{path}: {source}", path = .path.display())]
    Io {
        /// The path, as a host path where the doctor knows one (`/usr/bin/kubelet`).
        path: PathBuf,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A binary is larger than the doctor scans for its build settings.
    #[error("{path}: {size} bytes, larger than any binary the doctor reads (at most {limit})", path = .path.display())]
    BinaryTooLarge {
        /// The binary, a host path.
        path: PathBuf,
        /// Its size in bytes.
        size: u64,
        /// The largest size scanned (512 MiB).
        limit: u64,
    },
    /// A path leads through more symlinks than the doctor follows (a loop, most likely).
    #[error("{path}: more than {hops} symlinks", path = .path.display())]
    SymlinkLoop {
        /// The host path that was resolved.
        path: PathBuf,
        /// How many symlinks were followed.
        hops: usize,
    },
    /// A path resolves to a file outside the host root, which the library-safety rule cannot judge (and the doctor
    /// does not load).
    #[error("{path} resolves to {resolved}, outside the host root", path = .path.display(), resolved = .resolved.display())]
    OutsideHostRoot {
        /// The host path that was resolved.
        path: PathBuf,
        /// The real path it resolves to.
        resolved: PathBuf,
    },
    /// `--root` is not a usable directory.
    #[error("--root {path}: {source}", path = .path.display())]
    Root {
        /// The path given.
        path: PathBuf,
        /// Why it cannot be used (missing, not a directory).
        #[source]
        source: io::Error,
    },
    /// A site's compatibility table (`--compatibility FILE`, or the host's) could not be read; the error names the
    /// file and the row and field.
    #[error(transparent)]
    CompatibilityTable(#[from] TableError),
    /// The driver library could not be loaded or initialised ([`crate::DriverConnector`]).
    #[error("{library}: {source}", library = .library.display())]
    Driver {
        /// The library, a real path.
        library: PathBuf,
        /// DCMI's error, naming the call (`dcmi_init failed with code -8005: internal error`).
        #[source]
        source: ascend_dcmi::Error,
    },
    /// The small async runtime a synchronous call runs on could not be started.
    #[error("cannot start an async runtime for {purpose}: {source}")]
    AsyncRuntime {
        /// What it was for: `"the API client"`, `"the PodResources client"`.
        purpose: &'static str,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// Connecting to the kubelet's PodResources socket, or its `List`, failed; the error names the socket.
    #[error(transparent)]
    PodResources(ascend_node::Error),
    /// Neither the kubelet's PodResources socket nor its device-plugin checkpoint is there to say what it allocated.
    #[error(
        "neither {socket} nor {checkpoint} is there: the kubelet's allocations cannot be read",
        socket = .socket.display(),
        checkpoint = .checkpoint.display()
    )]
    AllocationsUnavailable {
        /// The PodResources socket, a host path.
        socket: PathBuf,
        /// The checkpoint file, a host path.
        checkpoint: PathBuf,
    },
    /// No API server can be asked: the doctor was built without its `kube` feature, or no cluster is configured (not
    /// in a pod, no kubeconfig), or its configuration could not be read in time.
    #[error("API server not asked: {reason}")]
    NoCluster {
        /// Why, as the API client says it (`no API client (cargo feature `kube` of ascend-doctor)`, or kube-rs's
        /// reason for finding no configuration).
        reason: String,
    },
    /// A request to the API server through kube-rs failed (feature `kube`); the error names the verb and the object
    /// (`get nodes/worker-1: HTTP 403 Forbidden: ...`).
    #[cfg(feature = "kube")]
    #[cfg_attr(docsrs, doc(cfg(feature = "kube")))]
    #[error(transparent)]
    Kube(#[from] ascend_kube::Error),
    /// A request of another [`ClusterApi`](crate::ClusterApi) implementation failed (a tool's own client,
    /// a test's), or the implementation does not serve the request.
    #[error("{request}: {reason}")]
    ApiRequest {
        /// The request, as `<verb> <resource>/<name>` (`get nodes/worker-1`, `list runtimeclasses`).
        request: String,
        /// The client's reason, as it gives it.
        reason: String,
    },
    /// The node's name is needed (to find a pod on this node) but neither `--node` nor the host's hostname gives it.
    #[error("this node's name is unknown (pass --node)")]
    UnknownNodeName,
    /// Text that is not a pod reference `NAMESPACE/NAME[/CONTAINER]` (`--pod`).
    #[error("{text:?}: expected NAMESPACE/NAME or NAMESPACE/NAME/CONTAINER")]
    InvalidPodRef {
        /// The text given.
        text: String,
    },
    /// A `containerID` the API server reports that the doctor cannot look into, or that is not `<runtime>://<id>`.
    #[error("containerID {text:?}: {problem}")]
    InvalidContainerId {
        /// The `containerID` as reported.
        text: String,
        /// What is wrong with it (an unknown runtime, an id that could not be part of a path).
        problem: String,
    },
    /// Asking the API server for a pod (`--pod`) failed.
    #[error("asking the API server for pod {pod}: {source}")]
    PodRequest {
        /// `namespace/name`.
        pod: String,
        /// The API client's error.
        #[source]
        source: Box<Error>,
    },
    /// The API server has no such pod.
    #[error("pod {pod} not found")]
    PodNotFound {
        /// `namespace/name`.
        pod: String,
    },
    /// The pod does not run on this node: it is scheduled to another one, or to none yet.
    #[error("{}", pod_elsewhere(.pod, .scheduled.as_deref(), .node, .phase))]
    PodNotOnThisNode {
        /// `namespace/name`.
        pod: String,
        /// The node it is scheduled to (`spec.nodeName`); `None` while it is not scheduled.
        scheduled: Option<String>,
        /// This node's name.
        node: String,
        /// The pod's `status.phase`.
        phase: String,
    },
    /// The pod's container cannot be chosen: the one named is not there, the pod reports none yet, or it has several
    /// and none was named.
    #[error("{}", container_choice(.pod, .wanted.as_deref(), .containers, .phase))]
    ContainerNotChosen {
        /// `namespace/name`.
        pod: String,
        /// The container asked for (`--pod NAMESPACE/NAME/CONTAINER`).
        wanted: Option<String>,
        /// The containers the pod reports, in its order.
        containers: Vec<String>,
        /// The pod's `status.phase`.
        phase: String,
    },
    /// The API server says the container is not running (or gives it no `containerID` yet).
    #[error("container {container} of pod {pod} is not running")]
    ContainerNotRunning {
        /// `namespace/name`.
        pod: String,
        /// The container's name.
        container: String,
    },
    /// The container runtime's state on this host leads to no running container of that id.
    #[error("container {container} is not running on this host ({})", .tried.join("; "))]
    ContainerNotOnHost {
        /// The `containerID` (`containerd://<id>`).
        container: String,
        /// What was looked at, and why it did not lead to the container, in the order tried.
        tried: Vec<String>,
    },
    /// A `--feature-gates` list holds an entry that is not `Name=true|false`.
    #[error("{}", feature_gate(.entry, .value.as_deref()))]
    FeatureGate {
        /// The entry.
        entry: String,
        /// Its value when the entry is `Name=value` with a value other than `true` or `false`; `None` when it is not
        /// `Name=value` at all.
        value: Option<String>,
    },
    /// Text that is not a KubeletConfiguration (not YAML or JSON, or a `featureGates` that is not a map of booleans).
    #[error("not a KubeletConfiguration: {source}")]
    KubeletConfiguration {
        /// The parser's error, with line and column.
        #[source]
        source: serde_yaml_ng::Error,
    },
}

impl Error {
    /// A file that could not be read.
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> Self {
        Error::Io { path: path.into(), source }
    }
}

/// Why a pod is not on this node.
fn pod_elsewhere(pod: &str, scheduled: Option<&str>, node: &str, phase: &str) -> String {
    match scheduled {
        Some(other) => format!("pod {pod} runs on node {other}, not on this node ({node})"),
        None => format!("pod {pod} is not scheduled to a node yet (phase {phase})"),
    }
}

/// What is wrong with a `--feature-gates` entry.
fn feature_gate(entry: &str, value: Option<&str>) -> String {
    match value {
        Some(_) => format!("{entry:?}: a gate's value is true or false"),
        None => format!("{entry:?} is not Name=true|false"),
    }
}

/// Why no container of a pod was chosen.
fn container_choice(pod: &str, wanted: Option<&str>, containers: &[String], phase: &str) -> String {
    let names = containers.join(", ");
    match (wanted, containers) {
        (Some(wanted), _) => format!("pod {pod} has no container {wanted} (its containers: {names})"),
        (None, []) => format!("pod {pod} reports no container yet (phase {phase})"),
        (None, _) => format!("pod {pod} has several containers ({names}): name one, --pod {pod}/CONTAINER"),
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_name_what_failed() {
        let root = Error::Root { path: "/srv/host".into(), source: io::ErrorKind::NotADirectory.into() };
        assert_eq!(root.to_string(), "--root /srv/host: not a directory");
        let request = Error::ApiRequest { request: "get nodes/worker-1".into(), reason: "connection refused".into() };
        assert_eq!(request.to_string(), "get nodes/worker-1: connection refused");
        let pod = Error::PodRequest { pod: "team-a/train-0".into(), source: Box::new(request) };
        assert_eq!(
            pod.to_string(),
            "asking the API server for pod team-a/train-0: get nodes/worker-1: connection refused"
        );
        assert!(std::error::Error::source(&pod).is_some(), "the request's error is the source");
        let choice = |wanted: Option<&str>, containers: &[&str]| {
            Error::ContainerNotChosen {
                pod: "team-a/two".into(),
                wanted: wanted.map(str::to_owned),
                containers: containers.iter().map(|name| (*name).to_owned()).collect(),
                phase: "Pending".into(),
            }
            .to_string()
        };
        assert_eq!(choice(Some("x"), &["main"]), "pod team-a/two has no container x (its containers: main)");
        assert_eq!(choice(None, &[]), "pod team-a/two reports no container yet (phase Pending)");
        assert_eq!(
            choice(None, &["main", "sidecar"]),
            "pod team-a/two has several containers (main, sidecar): name one, --pod team-a/two/CONTAINER"
        );
        let gate = Error::FeatureGate { entry: "A=yes".into(), value: Some("yes".into()) };
        assert_eq!(gate.to_string(), "\"A=yes\": a gate's value is true or false");
        assert_eq!(Error::FeatureGate { entry: "A".into(), value: None }.to_string(), "\"A\" is not Name=true|false");
    }
}
