//! The crate's error type.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong while serving the kubelet (per-claim failures are [`crate::ClaimError`]s instead).
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot work, for example a driver name that is not a DNS subdomain.
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
        /// What was being done, for example `"GetInfo"`.
        operation: String,
        /// The socket.
        path: PathBuf,
        /// What tonic said.
        detail: String,
    },
}

impl Error {
    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { operation, path: path.into(), source }
    }

    pub(crate) fn grpc(operation: impl Into<String>, path: impl Into<PathBuf>, detail: impl ToString) -> Self {
        Error::Grpc { operation: operation.into(), path: path.into(), detail: detail.to_string() }
    }
}

impl From<kubelet_socket::Error> for Error {
    fn from(error: kubelet_socket::Error) -> Self {
        match error {
            kubelet_socket::Error::Io { operation, path, source } => Error::Io { operation, path, source },
            kubelet_socket::Error::Connect { path, detail } => {
                Error::Grpc { operation: "connecting".into(), path, detail }
            }
            other => Error::Grpc { operation: "socket".into(), path: PathBuf::new(), detail: other.to_string() },
        }
    }
}
