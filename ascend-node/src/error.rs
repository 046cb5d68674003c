//! The crate's error type.

/// Result alias used throughout the crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Everything that can go wrong in the node layer.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The configuration is inconsistent (a rename that is not `Base=Public`, a zero poll interval ...).
    #[error("invalid configuration: {0}")]
    Config(String),
    /// The health monitor thread could not be started or has stopped.
    #[error("health monitor: {0}")]
    Monitor(String),
    /// The driver library could not be loaded or initialised.
    #[error("the Ascend driver (libdcmi.so): {source}; is the NPU driver installed and /usr/local/Ascend mounted?")]
    Driver {
        /// What DCMI said.
        #[source]
        source: ascend_dcmi::Error,
    },
    /// The thread that loads the driver failed (it panicked or the runtime is shutting down).
    #[error("the driver loading thread failed: {0}")]
    DriverThread(String),
    /// Connecting to the kubelet's PodResources socket or calling it failed (feature `pod-resources`).
    #[error("{operation} via {socket}: {detail}")]
    PodResources {
        /// What was being done, for example `"List"`.
        operation: &'static str,
        /// The socket.
        socket: std::path::PathBuf,
        /// What failed.
        detail: String,
    },
}
