//! A bundle's `config.json`: read as JSON (so fields this crate does not model survive) and as
//! a typed [`Spec`], written back atomically.

use std::path::{Path, PathBuf};

use oci_spec::runtime::Spec;
use serde_json::Value;

use crate::error::{Error, Result};

/// The largest `config.json` read.
const MAX_SPEC_BYTES: u64 = 16 * 1024 * 1024;

/// `config.json` as read: the JSON (kept for editing) and its typed view.
#[derive(Debug, Clone)]
pub struct BundleConfig {
    /// The file.
    pub path: PathBuf,
    /// The JSON, unknown fields and key order included.
    pub json: Value,
    /// The typed spec.
    pub spec: Spec,
}

/// Loads `config.json` (at most 16 MiB) both as JSON and as a typed [`Spec`].
///
/// # Errors
/// [`Error::Io`], [`Error::TooLarge`] or [`Error::Json`] naming the file.
pub fn load_bundle_config(path: &Path) -> Result<BundleConfig> {
    let bytes = crate::bounded_read::read_limited_file(path, MAX_SPEC_BYTES, "config.json")?;
    let parse_error = |source| Error::Json { what: format!("parse {}", path.display()), source };
    let json: Value = serde_json::from_slice(&bytes).map_err(parse_error)?;
    let spec: Spec = serde_json::from_value(json.clone()).map_err(parse_error)?;
    Ok(BundleConfig { path: path.to_path_buf(), json, spec })
}

/// Loads the typed spec of `config.json`.
///
/// # Errors
/// As [`load_bundle_config`].
pub fn load_spec(path: &Path) -> Result<Spec> {
    Ok(load_bundle_config(path)?.spec)
}

/// The part of `config.json` the hook needs when it is given its mounts: `root.path`.
#[derive(serde::Deserialize)]
struct RootOnly {
    root: Option<RootPath>,
}

#[derive(serde::Deserialize)]
struct RootPath {
    path: PathBuf,
}

/// Reads only `root.path` of `config.json` (at most 16 MiB, like [`load_bundle_config`]); every other field is
/// skipped without being built. `None` when the spec has no `root`.
///
/// # Errors
/// [`Error::Io`], [`Error::TooLarge`] or [`Error::Json`] naming the file (also for a `root` without its `path`).
pub fn load_root_path(path: &Path) -> Result<Option<PathBuf>> {
    let bytes = crate::bounded_read::read_limited_file(path, MAX_SPEC_BYTES, "config.json")?;
    let spec: RootOnly = serde_json::from_slice(&bytes)
        .map_err(|source| Error::Json { what: format!("parse {}", path.display()), source })?;
    Ok(spec.root.map(|root| root.path))
}

/// Writes `config.json` atomically (temporary file in the same directory, then rename),
/// keeping the original's permissions. No `fsync`: a bundle is the engine's transient state
/// (under `/run`, made again for every container), and the rename alone already keeps runc from
/// reading a partial file; syncing cost more than a millisecond per container start on disk.
///
/// # Errors
/// [`Error::Io`] or [`Error::Json`] naming the file.
pub fn save_json(path: &Path, config: &Value) -> Result<()> {
    let bytes = serde_json::to_vec(config)
        .map_err(|source| Error::Json { what: format!("serialise {}", path.display()), source })?;
    crate::atomic_file::write_atomically_with(path, &bytes, crate::atomic_file::WriteOptions::transient(0o600))
}

/// [`save_json`] for a typed spec.
///
/// # Errors
/// As [`save_json`].
pub fn save_spec(path: &Path, spec: &Spec) -> Result<()> {
    let json = serde_json::to_value(spec)
        .map_err(|source| Error::Json { what: format!("serialise {}", path.display()), source })?;
    save_json(path, &json)
}
