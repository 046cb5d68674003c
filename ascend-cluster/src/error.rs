//! The one error type of the crate: each variant names what failed.

/// Everything that can go wrong while reading the cluster or running the doctor.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request to the API server failed; the error names the verb and the object.
    #[error(transparent)]
    Kube(#[from] ascend_kube::Error),
    /// The kubeconfig (or the context named in it) could not be loaded.
    #[error("loading the kubeconfig{context}: {source}", context = context_note(.context.as_deref()))]
    Kubeconfig {
        /// The context asked for, if one was.
        context: Option<String>,
        /// kube-rs's reason.
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },
    /// No Ascend daemon pod runs on the node, so the doctor has nowhere to run.
    #[error(
        "no running ascend-device-plugin or ascend-dra-driver pod on node {node:?} (pods labelled \
         app.kubernetes.io/name in ({labels})); is the node's name right, and is the DaemonSet scheduled there?"
    )]
    NoDaemonPod {
        /// The node.
        node: String,
        /// The label values searched for.
        labels: String,
    },
    /// The exec request into the daemon pod failed.
    #[error("exec {command:?} in pods/{namespace}/{pod} (container {container}): {reason}")]
    Exec {
        /// The pod's namespace.
        namespace: String,
        /// The pod.
        pod: String,
        /// The container.
        container: String,
        /// The command.
        command: String,
        /// What went wrong.
        reason: String,
    },
    /// A report could not be written as JSON or YAML.
    #[error("writing the report as {format}: {reason}")]
    Encode {
        /// `JSON` or `YAML`.
        format: &'static str,
        /// The encoder's reason.
        reason: String,
    },
}

fn context_note(context: Option<&str>) -> String {
    context.map(|context| format!(" (context {context:?})")).unwrap_or_default()
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;
