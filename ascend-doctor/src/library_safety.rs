//! The ownership and permission rule for `libdcmi.so`, bounded at the host root.
//!
//! The rule is the vendor's (Huawei's `Ascend/mind-cluster`, `component/ascend-common`, before it loads
//! `libdcmi.so`; also enforced by `ascend_dcmi::check_library` before loading):
//! a symlink must be owned by root; the file it resolves to, and every directory above it, must be owned by root and
//! not writable by group or others. `ascend_dcmi::check_library` walks up to the machine's `/` and stops at the first
//! violation; the doctor walks up to the host root instead (a fake host in `/tmp` would otherwise always fail on
//! `/tmp`) and reports every violation, because the operator wants the whole list of `chown`/`chmod` to run.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::host::HostRoot;

const GROUP_OTHER_WRITE: u32 = 0o022;
const MAX_SYMLINK_HOPS: usize = 40;

/// One violation of the rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// The offending host path.
    pub host_path: PathBuf,
    /// Its owner.
    pub uid: u32,
    /// Its permission bits.
    pub mode: u32,
    /// What is wrong.
    pub problem: &'static str,
}

impl Violation {
    /// The command that removes the violation.
    pub fn fix_command(&self) -> String {
        match self.problem {
            NOT_ROOT_OWNED | LINK_NOT_ROOT_OWNED => format!("chown -h root:root {}", self.host_path.display()),
            _ => format!("chmod go-w {}", self.host_path.display()),
        }
    }
}

const NOT_ROOT_OWNED: &str = "not owned by root";
const LINK_NOT_ROOT_OWNED: &str = "symlink not owned by root";
const WRITABLE: &str = "writable by group or others";

/// The result of checking one library path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LibraryVerdict {
    /// The host path that was checked.
    pub host_path: PathBuf,
    /// The host path it resolves to.
    pub resolved: PathBuf,
    /// Every violation, file first, then directories upwards.
    pub violations: Vec<Violation>,
}

/// Resolves symlinks of the final component inside the host root: an absolute link target is a host path.
fn resolve(host: &HostRoot, host_path: &Path) -> Result<PathBuf, String> {
    let mut current = host.path(host_path);
    for _ in 0..MAX_SYMLINK_HOPS {
        let metadata = fs::symlink_metadata(&current).map_err(|error| format!("{}: {error}", host_path.display()))?;
        if !metadata.file_type().is_symlink() {
            return fs::canonicalize(&current).map_err(|error| format!("{}: {error}", host_path.display()));
        }
        let target = fs::read_link(&current).map_err(|error| format!("{}: {error}", host_path.display()))?;
        current = if target.is_absolute() {
            host.path(&target)
        } else {
            current.parent().map_or_else(|| target.clone(), |parent| parent.join(&target))
        };
    }
    Err(format!("{}: more than {MAX_SYMLINK_HOPS} symlinks", host_path.display()))
}

/// Checks a library given by its host path.
///
/// # Errors
/// A message when the path cannot be resolved (missing, a loop) or resolves outside the host root.
pub fn check(host: &HostRoot, host_path: &Path) -> Result<LibraryVerdict, String> {
    let mut violations = Vec::new();
    let link =
        fs::symlink_metadata(host.path(host_path)).map_err(|error| format!("{}: {error}", host_path.display()))?;
    if link.file_type().is_symlink() && link.uid() != 0 {
        violations.push(Violation {
            host_path: host_path.to_path_buf(),
            uid: link.uid(),
            mode: link.mode() & 0o7777,
            problem: LINK_NOT_ROOT_OWNED,
        });
    }
    let real = resolve(host, host_path)?;
    let root = fs::canonicalize(host.root()).map_err(|error| format!("{}: {error}", host.root().display()))?;
    let resolved = real
        .strip_prefix(&root)
        .map(|relative| Path::new("/").join(relative))
        .map_err(|_| format!("{} resolves to {}, outside the host root", host_path.display(), real.display()))?;
    let mut current = Some(real.as_path());
    while let Some(path) = current {
        let metadata = fs::metadata(path).map_err(|error| format!("{}: {error}", path.display()))?;
        let shown = path
            .strip_prefix(&root)
            .map(|relative| Path::new("/").join(relative))
            .unwrap_or_else(|_| path.to_path_buf());
        let mode = metadata.mode() & 0o7777;
        if metadata.uid() != 0 {
            violations.push(Violation { host_path: shown.clone(), uid: metadata.uid(), mode, problem: NOT_ROOT_OWNED });
        }
        if mode & GROUP_OTHER_WRITE != 0 {
            violations.push(Violation { host_path: shown, uid: metadata.uid(), mode, problem: WRITABLE });
        }
        if path == root {
            break;
        }
        current = path.parent();
    }
    Ok(LibraryVerdict { host_path: host_path.to_path_buf(), resolved, violations })
}
