//! The one error type of the crate. Each variant names what failed: the request and object, the file, the chip.

use std::time::Duration;

/// Everything that can go wrong on the Kubernetes API side.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// No API server is configured: neither in a pod nor with a kubeconfig.
    #[error(
        "connecting to the Kubernetes API: {source}; in a pod the kubelet sets KUBERNETES_SERVICE_HOST and mounts the \
         service-account token, outside one KUBECONFIG or ~/.kube/config names the cluster"
    )]
    Config {
        /// kube-rs's reason.
        #[source]
        source: Box<kube::Error>,
    },
    /// The API server answered with an error status; `message` is its own explanation.
    #[error("{verb} {object}: HTTP {code} {reason}: {message}{hint}", hint = status_hint(*.code, .object))]
    Api {
        /// `get`, `patch`, `create` ...
        verb: &'static str,
        /// `<resource>/<name>` or `<resource>/<namespace>/<name>`, for example `nodes/worker-1`.
        object: String,
        /// The HTTP status.
        code: u16,
        /// The `reason` of the API's Status object (`Forbidden`, `NotFound`, `Conflict` ...).
        reason: String,
        /// The `message` of the API's Status object.
        message: String,
        /// How long the server asked the client to wait before trying again (`Retry-After`, carried in the
        /// Status's `details.retryAfterSeconds`): with 429 when it throttles, with some 5xx answers.
        retry_after: Option<Duration>,
    },
    /// The API server could not be reached, or its answer could not be read.
    #[error("{verb} {object}: {source}")]
    Transport {
        /// The verb.
        verb: &'static str,
        /// The object.
        object: String,
        /// kube-rs's error.
        #[source]
        source: Box<kube::Error>,
    },
    /// No answer within the deadline.
    #[error("{verb} {object}: no answer from the API server within {timeout:?}")]
    Timeout {
        /// The verb.
        verb: &'static str,
        /// The object.
        object: String,
        /// The deadline.
        timeout: Duration,
    },
    /// A node name that cannot be a Kubernetes object name.
    #[error(
        "invalid node name {0:?}: a node name is a DNS subdomain (lower-case letters, digits, '-' and '.', at most \
         253 characters)"
    )]
    InvalidNodeName(String),
    /// The driver enumerates no chip. Labels are then left as they are: a driver that is still starting reports no
    /// chips, and removing `chip-type` would take the node out of its pool (and the labeller off the node).
    #[error("the driver reports no NPU chip on this node; node labels are left unchanged")]
    NoChips,
    /// A DCMI call failed; the error names the call and the chip.
    #[error("reading {what}: {source}")]
    Dcmi {
        /// What was being read, for example `"the chip list"` or `"the identity of chip logic 3"`.
        what: String,
        /// The DCMI error.
        #[source]
        source: ascend_dcmi::Error,
    },
    /// Reading the chips took longer than the deadline (a dropped card can block DCMI for long).
    #[error("reading the chips took longer than {0:?}; node labels are left unchanged")]
    DriverDeadline(Duration),
    /// The previous read of the chips is still blocked in the driver, so no new one was started.
    #[error("a previous read of the chips is still blocked in the driver; node labels are left unchanged")]
    DriverBusy,
    /// The thread reading the chips failed.
    #[error("the thread reading the chips failed: {0}")]
    DriverThread(String),
    /// The driver library could not be loaded.
    #[error(transparent)]
    Driver(#[from] ascend_node::Error),
}

impl ascend_node::RetryAfter for Error {
    fn retry_after(&self) -> Option<Duration> {
        Error::retry_after(self)
    }
}

impl Error {
    /// The HTTP status of an API error, if this is one.
    pub fn status_code(&self) -> Option<u16> {
        match self {
            Error::Api { code, .. } => Some(*code),
            _ => None,
        }
    }

    /// How long the API server asked to wait before the next attempt, when it said so (429 with `Retry-After`).
    pub fn retry_after(&self) -> Option<Duration> {
        match self {
            Error::Api { retry_after, .. } => *retry_after,
            _ => None,
        }
    }

    /// Whether the API server said the object does not exist.
    pub fn is_not_found(&self) -> bool {
        self.status_code() == Some(404)
    }

    /// Whether the API server refused a write because the object changed or exists (409).
    pub fn is_conflict(&self) -> bool {
        self.status_code() == Some(409)
    }

    /// Maps a kube-rs error of one request.
    pub(crate) fn from_kube(verb: &'static str, object: String, error: kube::Error) -> Error {
        match error {
            kube::Error::Api(status) => Error::Api {
                verb,
                object,
                code: status.code,
                reason: if status.reason.is_empty() { "Unknown".into() } else { status.reason.clone() },
                message: status.message.clone(),
                retry_after: status
                    .details
                    .as_ref()
                    .map(|details| details.retry_after_seconds)
                    .filter(|seconds| *seconds > 0)
                    .map(|seconds| Duration::from_secs(u64::from(seconds))),
            },
            other => Error::Transport { verb, object, source: Box::new(other) },
        }
    }
}

/// What to check for the common refusals: a hint an operator can act on.
fn status_hint(code: u16, object: &str) -> String {
    let resource = object.split('/').next().unwrap_or(object);
    match code {
        401 => " (the service-account token was rejected: is it mounted, and not expired?)".into(),
        403 => format!(
            " (the pod's ServiceAccount lacks a permission on {resource}: see the RBAC templates of the Helm chart deploy/helm/ascend-npu)"
        ),
        404 if resource == "nodes" => " (is NODE_NAME the node's name, from the downward API spec.nodeName?)".into(),
        _ => String::new(),
    }
}

/// The crate's result type.
pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Backoff, BackoffPolicy};

    #[test]
    fn the_backoff_honours_the_servers_retry_after() {
        let throttled = Error::Api {
            verb: "patch",
            object: "nodes/worker-1".into(),
            code: 429,
            reason: "TooManyRequests".into(),
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(30)),
        };
        let mut backoff = Backoff::new(BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(60) });
        assert_eq!(backoff.next_delay(&throttled), Duration::from_secs(30));
        assert!(backoff.next_delay(&Error::NoChips) < Duration::from_secs(4), "no Retry-After: the own wait");
    }
}
