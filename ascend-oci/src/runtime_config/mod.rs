//! Registering our runtime with Docker, containerd and CRI-O, preserving everything else in
//! their configuration files, idempotently, with a diff for `--dry-run` and a backup of the
//! original; and the RuntimeClass whose `handler` must match the registered name.

mod configure_options;
mod containerd;
mod crio;
mod diff;
mod docker;
mod runtime_class;

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

pub use configure_options::ConfigureOptions;
pub use containerd::{configure_containerd, cri_plugin_key};
pub use crio::configure_crio;
pub use diff::unified_diff;
pub use docker::configure_docker;
pub use runtime_class::{parse_runtime_classes, runtime_class_manifest, RuntimeClassRef};

use crate::atomic_file::write_atomically;
use crate::error::{Error, Result};

/// The name we register unless told otherwise.
pub const DEFAULT_RUNTIME_NAME: &str = "ascend";

/// A container engine whose configuration we edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RuntimeKind {
    /// Docker (`/etc/docker/daemon.json`).
    Docker,
    /// containerd (`/etc/containerd/config.toml`, config versions 1, 2 and 3).
    Containerd,
    /// CRI-O (a drop-in in `/etc/crio/crio.conf.d/`).
    Crio,
}

impl RuntimeKind {
    /// The file edited by default.
    pub fn default_config_path(self) -> &'static Path {
        Path::new(match self {
            RuntimeKind::Docker => "/etc/docker/daemon.json",
            RuntimeKind::Containerd => "/etc/containerd/config.toml",
            RuntimeKind::Crio => "/etc/crio/crio.conf.d/99-ascend.conf",
        })
    }
}

impl FromStr for RuntimeKind {
    type Err = Error;

    fn from_str(text: &str) -> Result<Self> {
        match text {
            "docker" => Ok(RuntimeKind::Docker),
            "containerd" => Ok(RuntimeKind::Containerd),
            "crio" | "cri-o" => Ok(RuntimeKind::Crio),
            other => Err(Error::InvalidRequest {
                variable: "--runtime",
                token: other.to_owned(),
                reason: "expected docker, containerd or crio".to_owned(),
            }),
        }
    }
}

impl fmt::Display for RuntimeKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            RuntimeKind::Docker => "docker",
            RuntimeKind::Containerd => "containerd",
            RuntimeKind::Crio => "crio",
        })
    }
}

/// The result of editing one configuration file, not yet written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigEdit {
    /// The file.
    pub path: PathBuf,
    /// Its content before (None: it did not exist).
    pub original: Option<String>,
    /// Its content after.
    pub updated: String,
    /// The runtime handlers the engine will know after the edit.
    pub handlers: Vec<String>,
}

impl ConfigEdit {
    /// Whether the edit changes the file.
    pub fn changes_file(&self) -> bool {
        self.original.as_deref() != Some(self.updated.as_str())
    }

    /// The unified diff of the edit (empty when nothing changes).
    pub fn diff(&self) -> String {
        unified_diff(&self.path.to_string_lossy(), self.original.as_deref().unwrap_or(""), &self.updated)
    }

    /// Writes the new content atomically. Before the first change of an existing file its
    /// original is copied to `<file>.ascend-ctk.bak` (kept on later runs, so it stays the
    /// pre-ascend original). Returns the backup path when one exists.
    ///
    /// # Errors
    /// [`Error::Io`] naming the file.
    pub fn write(&self) -> Result<Option<PathBuf>> {
        if !self.changes_file() {
            return Ok(None);
        }
        let mut backup = None;
        if let Some(original) = &self.original {
            let mut name = self.path.as_os_str().to_owned();
            name.push(".ascend-ctk.bak");
            let backup_path = PathBuf::from(name);
            if !backup_path.exists() {
                write_atomically(&backup_path, original.as_bytes(), 0o600)?;
            }
            backup = Some(backup_path);
        } else if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io("create directory", dir, e))?;
        }
        write_atomically(&self.path, self.updated.as_bytes(), 0o644)?;
        Ok(backup)
    }
}

/// Reads the current file (absent is fine) and computes the edit.
///
/// # Errors
/// [`Error::Io`] if the file exists but cannot be read, and the parse errors of each engine.
pub fn configure(kind: RuntimeKind, path: &Path, options: &ConfigureOptions) -> Result<ConfigEdit> {
    let original = match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        Err(e) => return Err(Error::io("read", path, e)),
    };
    let (updated, handlers) = match kind {
        RuntimeKind::Docker => configure_docker(path, original.as_deref(), options)?,
        RuntimeKind::Containerd => configure_containerd(path, original.as_deref(), options)?,
        RuntimeKind::Crio => configure_crio(path, original.as_deref(), options)?,
    };
    Ok(ConfigEdit { path: path.to_path_buf(), original, updated, handlers })
}

/// Warnings for RuntimeClasses whose handler is not among `handlers`: each of these makes every
/// pod using it fail at sandbox creation, long after the RuntimeClass was accepted.
pub fn runtime_class_warnings(classes: &[RuntimeClassRef], handlers: &[String]) -> Vec<String> {
    classes
        .iter()
        .filter(|class| !handlers.contains(&class.handler))
        .map(|class| {
            format!(
                "RuntimeClass {:?} names handler {:?}, which is not registered (registered: {})",
                class.name,
                class.handler,
                handlers.join(", ")
            )
        })
        .collect()
}
