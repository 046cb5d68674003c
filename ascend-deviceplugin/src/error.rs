//! The crate's error type. The mapping to gRPC status codes lives in one `From` impl in `service.rs`.

use std::path::{Path, PathBuf};

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the device plugin.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request named device ids this resource does not advertise.
    #[error("{resource}: unknown device id(s) {}; advertised ids look like {example}", .ids.join(", "))]
    UnknownDevices {
        /// The resource the request was for.
        resource: String,
        /// The ids that are not advertised.
        ids: Vec<String>,
        /// One advertised id, to show the expected form (or "none" when nothing is advertised).
        example: String,
    },
    /// A request named devices that are advertised but unhealthy.
    #[error("{resource}: device(s) {} are unhealthy: {reasons}", .ids.join(", "))]
    UnhealthyDevices {
        /// The resource the request was for.
        resource: String,
        /// The unhealthy ids.
        ids: Vec<String>,
        /// Why, per device.
        reasons: String,
    },
    /// A request is malformed (empty device list, impossible allocation size ...).
    #[error("{resource}: invalid {rpc} request: {detail}")]
    InvalidRequest {
        /// The resource the request was for.
        resource: String,
        /// The RPC, for example `"Allocate"`.
        rpc: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The resource is no longer advertised (its chips disappeared).
    #[error("resource {0} is not advertised by this plugin")]
    UnknownResource(String),
    /// The configuration is inconsistent.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A file-system operation on a socket or directory failed.
    #[error("{operation} {path}: {source}")]
    Io {
        /// What was being done, for example `"binding socket"`.
        operation: &'static str,
        /// The path.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// Connecting to a socket or calling a gRPC method failed.
    #[error("{operation} via {path}: {detail}")]
    Grpc {
        /// What was being done, for example `"Register huawei.com/Ascend910"`.
        operation: String,
        /// The socket.
        path: PathBuf,
        /// What tonic said.
        detail: String,
    },
    /// The devices of a container could not be assigned (Volcano mode: no pod waits for them, or the chips its
    /// annotation names are not on this node, unhealthy or already in use).
    #[error("{resource}: {detail}")]
    Assignment {
        /// The resource the request was for.
        resource: String,
        /// Why, naming the pod and chips.
        detail: String,
    },
    /// A request named devices whose chips running pods hold under ids the kubelet does not count as this
    /// resource's (a node taken over from another device plugin: `crate::Holdings::held_back`).
    #[error("{resource}: device(s) {} are held by running pod(s): {holders}", .ids.join(", "))]
    HeldDevices {
        /// The resource the request was for.
        resource: String,
        /// The held ids.
        ids: Vec<String>,
        /// The pod holding each, `id by namespace/name`.
        holders: String,
    },
    /// The health monitor thread could not be started or has stopped.
    #[error("health monitor: {0}")]
    Monitor(String),
}

impl From<ascend_node::Error> for Error {
    fn from(error: ascend_node::Error) -> Self {
        match error {
            ascend_node::Error::Config(detail) => Error::Config(detail),
            ascend_node::Error::Monitor(detail) => Error::Monitor(detail),
            other => Error::Monitor(other.to_string()),
        }
    }
}

impl From<kubelet_socket::Error> for Error {
    fn from(error: kubelet_socket::Error) -> Self {
        match error {
            kubelet_socket::Error::Io { operation, path, source } => Error::Io { operation, path, source },
            kubelet_socket::Error::Connect { path, detail } => grpc_error("connecting", &path, detail),
            other => Error::Grpc { operation: "socket".to_owned(), path: PathBuf::new(), detail: other.to_string() },
        }
    }
}

/// An [`Error::Grpc`] naming the call, the socket and what failed.
pub(crate) fn grpc_error(operation: impl Into<String>, path: &Path, detail: String) -> Error {
    Error::Grpc { operation: operation.into(), path: PathBuf::from(path), detail }
}
