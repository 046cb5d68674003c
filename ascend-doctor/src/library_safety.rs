//! The ownership and permission rule for `libdcmi.so`, bounded at the host root.
//!
//! The rule is the vendor's (Huawei's `Ascend/mind-cluster`, `component/ascend-common`, before it loads
//! `libdcmi.so`; also enforced by `ascend_dcmi::check_library` before loading):
//! a symlink must be owned by root; the file it resolves to, and every directory above it, must be owned by root and
//! not writable by group or others. The rule itself is `ascend_dcmi::ownership_violations`, the code the loader
//! enforces: the loader walks up to the machine's `/` and stops at the first violation; the doctor walks up to the
//! host root instead (a fake host in `/tmp` would otherwise always fail on `/tmp`), resolves the library's symlinks
//! inside that root, and reports every violation, because the operator wants the whole list of `chown`/`chmod` to run.

use std::fs;
use std::path::{Path, PathBuf};

use ascend_dcmi::{ownership_violations, OwnershipViolation};

use super::error::{Error, Result};
use super::host::HostRoot;

const MAX_SYMLINK_HOPS: usize = 40;

/// The result of checking one library path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryVerdict {
    /// The host path that was checked.
    pub host_path: PathBuf,
    /// The host path it resolves to.
    pub resolved: PathBuf,
    /// Every violation (its path shown as a host path), file first, then directories upwards.
    pub violations: Vec<OwnershipViolation>,
}

/// Resolves symlinks of the final component inside the host root: an absolute link target is a host path.
fn resolve(host: &HostRoot, host_path: &Path) -> Result<PathBuf> {
    let failed = |source| Error::io(host_path, source);
    let mut current = host.path(host_path);
    for _ in 0..MAX_SYMLINK_HOPS {
        let metadata = fs::symlink_metadata(&current).map_err(failed)?;
        if !metadata.file_type().is_symlink() {
            return fs::canonicalize(&current).map_err(failed);
        }
        let target = fs::read_link(&current).map_err(failed)?;
        current = if target.is_absolute() {
            host.path(&target)
        } else {
            current.parent().map_or_else(|| target.clone(), |parent| parent.join(&target))
        };
    }
    Err(Error::SymlinkLoop { path: host_path.to_path_buf(), hops: MAX_SYMLINK_HOPS })
}

/// Checks a library given by its host path with the loader's own rule ([`ascend_dcmi::ownership_violations`]),
/// every directory up to the host root.
///
/// # Errors
/// [`Error::Io`] when the path cannot be resolved or its owners read (missing, unreadable), [`Error::SymlinkLoop`],
/// or [`Error::OutsideHostRoot`] when it resolves outside the host root. Violations of the rule are no error: they
/// are the verdict's [`LibraryVerdict::violations`].
pub fn check(host: &HostRoot, host_path: &Path) -> Result<LibraryVerdict> {
    let real = resolve(host, host_path)?;
    let root = fs::canonicalize(host.root()).map_err(|source| Error::io(host.root(), source))?;
    let as_host_path = |path: &Path| path.strip_prefix(&root).map(|relative| Path::new("/").join(relative));
    let resolved = as_host_path(&real)
        .map_err(|_| Error::OutsideHostRoot { path: host_path.to_path_buf(), resolved: real.clone() })?;
    let mut violations =
        ownership_violations(&host.path(host_path), &real, &root).map_err(|source| Error::io(host_path, source))?;
    for violation in &mut violations {
        if let Ok(shown) = as_host_path(&violation.path) {
            violation.path = shown;
        }
    }
    Ok(LibraryVerdict { host_path: host_path.to_path_buf(), resolved, violations })
}
