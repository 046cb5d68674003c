//! The one error type of this crate: every message names the file, key, address or driver step at fault.

/// The configuration files the exporter reads, as they are named in error messages.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConfigFile {
    /// `--metrics.selection-file` (TOML).
    Selection,
    /// `--web.config.file` (the exporter-toolkit YAML).
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    WebConfig,
}

impl std::fmt::Display for ConfigFile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Self::Selection => "metric-selection file",
            #[cfg(feature = "cli")]
            Self::WebConfig => "web config file",
        })
    }
}

/// Why the exporter cannot start or serve.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A configuration file could not be read.
    #[error("cannot read {file} {path}: {source}")]
    Read {
        /// Which file.
        file: ConfigFile,
        /// Its path.
        path: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// A configuration file is malformed or has unknown keys.
    #[error("{file} {path} is not valid: {message}")]
    Syntax {
        /// Which file.
        file: ConfigFile,
        /// Its path.
        path: String,
        /// The parser's message (with line and column where it gives them).
        message: String,
    },
    /// A configuration value that parses but is not allowed.
    #[error("{file} {path}: {message}")]
    Invalid {
        /// Which file.
        file: ConfigFile,
        /// Its path.
        path: String,
        /// The key and what is wrong with it.
        message: String,
    },
    /// A PEM file of the TLS settings could not be read or holds nothing usable.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("cannot load {what} from {path}: {message}")]
    Pem {
        /// Certificate, key or CA bundle.
        what: &'static str,
        /// The file.
        path: String,
        /// Why.
        message: String,
    },
    /// rustls refused the TLS settings (for example a key that does not match the certificate).
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("TLS configuration rejected: {0}")]
    Tls(String),
    /// bcrypt could not prepare basic auth (an out-of-range cost in the hashes).
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("preparing basic auth: {0}")]
    BasicAuth(#[from] bcrypt::BcryptError),
    /// An extra response header of the web config is not a valid HTTP header.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("web config header {name:?}: {message}")]
    Header {
        /// The header name as written.
        name: String,
        /// What is wrong with the name or the value.
        message: String,
    },
    /// `--device-plugin.resource-prefix` or `--device-plugin.rename` is not a valid naming.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("device naming: {0}")]
    Naming(#[source] ascend_node::Error),
    /// A driver step at start-up failed.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("{step}: {source}")]
    Driver {
        /// What was being done, for example "loading the DCMI library".
        step: &'static str,
        /// The driver's error.
        #[source]
        source: ascend_dcmi::Error,
    },
    /// The start-up task that talks to the driver ended without an answer (it panicked).
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("the driver start-up task failed: {0}")]
    StartupTask(String),
    /// The listen address could not be bound.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("cannot listen on {address}: {source}")]
    Listen {
        /// The address.
        address: std::net::SocketAddr,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Accepting connections failed.
    #[cfg(feature = "cli")]
    #[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
    #[error("serving HTTP: {0}")]
    Serve(#[source] std::io::Error),
}

/// This crate's results.
pub type Result<T, E = Error> = std::result::Result<T, E>;
