//! The crate's error type.

use std::path::PathBuf;

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What can go wrong in the driver. Per-claim problems reach the kubelet as text through
/// [`dra_kubelet_plugin::ClaimError`], so every message names the claim, device or file concerned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration cannot work.
    #[error("invalid configuration: {0}")]
    Config(String),
    /// A file operation failed.
    #[error("{operation} {path}: {source}")]
    Io {
        /// What was being done.
        operation: &'static str,
        /// The file.
        path: PathBuf,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// A file holds something other than what the driver wrote.
    #[error("{path}: {reason}")]
    Corrupt {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
    /// Writing a CDI spec failed.
    #[error("CDI: {0}")]
    Cdi(#[from] ascend_oci::Error),
    /// A call to the API server failed; the error names the verb and the object.
    #[error(transparent)]
    Kube(#[from] ascend_kube::Error),
    /// The claim cannot be prepared as allocated.
    #[error("{0}")]
    Claim(String),
}

impl Error {
    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { operation, path: path.into(), source }
    }
}
