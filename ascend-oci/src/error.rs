//! The one error type of this crate.

use std::path::PathBuf;

/// Everything that can go wrong while parsing a request, editing a spec, mounting, writing a CDI
/// spec or editing a container-runtime configuration. Each variant names what it was working on.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A request variable (`ASCEND_VISIBLE_DEVICES`, `ASCEND_RUNTIME_OPTIONS`, ...) holds a value
    /// outside its grammar.
    #[error("{variable}: invalid token {token:?}: {reason}")]
    InvalidRequest {
        /// The variable (or CDI name) being parsed.
        variable: &'static str,
        /// The offending token, verbatim.
        token: String,
        /// What is wrong with it.
        reason: String,
    },

    /// The request names a chip that the host does not have.
    #[error("{variable} requests chip {node_id} but {path} does not exist on this host (chips present: {available})")]
    ChipAbsent {
        /// The variable the request came from.
        variable: &'static str,
        /// The id that was asked for (the `N` of `/dev/davinciN`).
        node_id: u32,
        /// The host device node that is missing.
        path: PathBuf,
        /// The chips the host has, formatted as a request value.
        available: String,
    },

    /// The driver reports a chip whose `/dev/davinci<N>` node does not exist: the driver is
    /// loaded but the node was not created (or was removed).
    #[error(
        "{reported_by} reports chip {node_id} but its device node {path} does not exist: the driver is loaded \
         but the node is missing (reload the driver or check its udev rules); refusing to describe fewer chips \
         than the host has"
    )]
    DeviceNodeMissing {
        /// Where the chip list came from (`"DCMI"`).
        reported_by: &'static str,
        /// The chip's node number (the `N` of `/dev/davinciN`).
        node_id: u32,
        /// The missing node, including the host root.
        path: PathBuf,
    },

    /// A DCMI call failed while listing the host's chips.
    #[cfg(feature = "dcmi")]
    #[error("DCMI: {operation}: {source}")]
    Dcmi {
        /// What was asked (`list chips`, `chip type of chip 4` ...).
        operation: String,
        /// The error of `ascend-dcmi`.
        #[source]
        source: ascend_dcmi::Error,
    },

    /// A system call on a path failed.
    #[error("{operation} {path}: {source}")]
    Io {
        /// The operation (`open`, `stat`, `read`, `mount`, ...).
        operation: &'static str,
        /// The path it was applied to.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: std::io::Error,
    },

    /// A path is refused before it is used: `..`, a symlink where none is allowed, a relative
    /// path, a component escaping its allowed directory.
    #[error("refusing path {path}: {reason}")]
    UnsafePath {
        /// The path as given.
        path: PathBuf,
        /// Why it is refused.
        reason: String,
    },

    /// A mount source (or one of its parent directories) is writable by group/others or not
    /// owned by root, so an unprivileged user could swap what ends up in the container.
    #[error("refusing {path}: owner uid {uid}, mode {mode:04o}: {reason}")]
    InsecurePermissions {
        /// The file or directory that failed the check.
        path: PathBuf,
        /// Its owner.
        uid: u32,
        /// Its permission bits.
        mode: u32,
        /// Which rule it breaks.
        reason: &'static str,
    },

    /// A file is not what it must be (a device node that is not a character device, ...).
    #[error("{path}: {reason}")]
    WrongFileType {
        /// The file.
        path: PathBuf,
        /// What was expected.
        reason: String,
    },

    /// JSON could not be read or written.
    #[error("{what}: {source}")]
    Json {
        /// What was being (de)serialised, usually with its path.
        what: String,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },

    /// A TOML configuration could not be parsed.
    #[error("{path}: invalid TOML: {source}")]
    Toml {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        #[source]
        source: toml_edit::TomlError,
    },

    /// A configuration or spec is well-formed but its content cannot be used.
    #[error("{path}: {reason}")]
    InvalidConfig {
        /// The file (or `-` for stdin).
        path: PathBuf,
        /// What is wrong, naming the field.
        reason: String,
    },

    /// Input larger than the limit was refused before parsing.
    #[error("{what} exceeds the limit of {limit} bytes")]
    TooLarge {
        /// What was being read.
        what: &'static str,
        /// The limit in bytes.
        limit: u64,
    },

    /// The runtime command line could not be understood.
    #[error("runtime command line: {0}")]
    RuntimeArgs(String),
}

impl Error {
    /// Shorthand for [`Error::Io`].
    pub(crate) fn io(operation: &'static str, path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        Error::Io { operation, path: path.into(), source }
    }

    /// Shorthand for [`Error::Io`] from a raw `Errno`.
    pub(crate) fn errno(operation: &'static str, path: impl Into<PathBuf>, errno: rustix::io::Errno) -> Self {
        Self::io(operation, path, std::io::Error::from(errno))
    }

    /// Shorthand for [`Error::UnsafePath`].
    pub(crate) fn unsafe_path(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::UnsafePath { path: path.into(), reason: reason.into() }
    }
}

/// The result type of this crate.
pub type Result<T, E = Error> = std::result::Result<T, E>;
