//! The ownership and permission check the vendor's tools make before loading `libdcmi.so`.
//!
//! A management library runs with root's rights inside every agent that loads it; a library (or a directory above
//! it) that someone other than root can write is a way to run code as root. The rules (those Huawei's
//! `Ascend/mind-cluster` applies before loading the library, `component/ascend-common`):
//!
//! * if the path is a symlink, the link itself must be owned by root;
//! * the file it resolves to must be owned by root and have no group or other write bit (mask `0o022`);
//! * so must every directory above the resolved file, up to `/` (at most 20 levels).
//!
//! The sticky bit does not excuse a writable directory: a library under `/tmp` is refused.

use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Group and other write bits.
const GROUP_OTHER_WRITE: u32 = 0o022;

/// The deepest directory chain that is checked, as in the vendor's tools.
const MAX_DEPTH: usize = 20;

/// The owner a trusted library must have.
const ROOT_UID: u32 = 0;

/// What is wrong with one file or directory on the way to the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum OwnershipProblem {
    /// The library's path is a symlink that someone other than root owns.
    SymlinkNotRootOwned,
    /// The file or directory is not owned by root.
    NotRootOwned,
    /// The file or directory is writable by its group or by others.
    WritableByGroupOrOthers,
}

impl OwnershipProblem {
    /// The problem in a few words.
    pub fn describe(self) -> &'static str {
        match self {
            OwnershipProblem::SymlinkNotRootOwned => "symlink not owned by root",
            OwnershipProblem::NotRootOwned => "not owned by root",
            OwnershipProblem::WritableByGroupOrOthers => "writable by group or others",
        }
    }
}

/// One violation of the rule: the path, its owner and mode, and what is wrong.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OwnershipViolation {
    /// The offending file, directory or symlink.
    pub path: PathBuf,
    /// Its owner.
    pub uid: u32,
    /// Its permission bits.
    pub mode: u32,
    /// What is wrong.
    pub problem: OwnershipProblem,
}

impl OwnershipViolation {
    /// The command that removes the violation.
    pub fn fix_command(&self) -> String {
        match self.problem {
            OwnershipProblem::SymlinkNotRootOwned | OwnershipProblem::NotRootOwned => {
                format!("chown -h root:root {}", self.path.display())
            }
            OwnershipProblem::WritableByGroupOrOthers => format!("chmod go-w {}", self.path.display()),
        }
    }
}

/// Every violation of the rule by `library` (the path as named, perhaps a symlink) that resolves to `resolved`: the
/// link's owner, then `resolved` and each directory above it up to `top` (included) or `/`, at most 20 levels as in
/// the vendor's tools. Both the loader ([`check_library`], which stops at the first) and `ascend-doctor` (which lists
/// them all, bounded at the host root it inspects) apply the rule through this function.
///
/// # Errors
/// The I/O error of reading a path's metadata (a missing path).
pub fn ownership_violations(library: &Path, resolved: &Path, top: &Path) -> std::io::Result<Vec<OwnershipViolation>> {
    violations_for_owner(library, resolved, top, ROOT_UID)
}

fn violations_for_owner(
    library: &Path,
    resolved: &Path,
    top: &Path,
    trusted_uid: u32,
) -> std::io::Result<Vec<OwnershipViolation>> {
    let mut violations = Vec::new();
    let link = fs::symlink_metadata(library)?;
    if link.file_type().is_symlink() && link.uid() != trusted_uid {
        violations.push(violation(library, &link, OwnershipProblem::SymlinkNotRootOwned));
    }
    let mut current = Some(resolved);
    for _ in 0..=MAX_DEPTH {
        let Some(path) = current else { break };
        let metadata = fs::metadata(path)?;
        if metadata.uid() != trusted_uid {
            violations.push(violation(path, &metadata, OwnershipProblem::NotRootOwned));
        }
        if metadata.mode() & GROUP_OTHER_WRITE != 0 {
            violations.push(violation(path, &metadata, OwnershipProblem::WritableByGroupOrOthers));
        }
        if path == top {
            break;
        }
        current = path.parent();
    }
    Ok(violations)
}

fn violation(path: &Path, metadata: &fs::Metadata, problem: OwnershipProblem) -> OwnershipViolation {
    OwnershipViolation { path: path.to_path_buf(), uid: metadata.uid(), mode: metadata.mode() & 0o7777, problem }
}

/// Checks `library` as the vendor's tools do and returns the path it resolves to (the path to load, so that a
/// symlink swapped after the check does not matter).
///
/// # Errors
/// [`Error::UnsafeLibrary`] naming the first offending file or directory, its owner and mode, and the fix;
/// [`Error::LibraryNotFound`] if the path cannot be resolved.
pub fn check_library(library: &Path) -> Result<PathBuf> {
    check_library_owned_by(library, ROOT_UID)
}

/// [`check_library`] with another trusted owner, so that the rules can be tested without root.
pub(crate) fn check_library_owned_by(library: &Path, trusted_uid: u32) -> Result<PathBuf> {
    let not_found = || Error::LibraryNotFound { searched: vec![library.to_path_buf()] };
    let resolved = fs::canonicalize(library).map_err(|_| not_found())?;
    let violations = violations_for_owner(library, &resolved, Path::new("/"), trusted_uid).map_err(|_| not_found())?;
    match violations.into_iter().next() {
        None => Ok(resolved),
        Some(first) => Err(Error::UnsafeLibrary {
            library: library.to_path_buf(),
            problem: format!(
                "{} (root must own the library and every directory above it, none writable by group or others); \
                 fix with `{}`, or load it with `DcmiBuilder::verify_library_ownership(false)` if you trust it",
                first.problem.describe(),
                first.fix_command()
            ),
            path: first.path,
            uid: first.uid,
            mode: first.mode,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{symlink, PermissionsExt};

    /// A directory tree owned by the test's user, below a directory whose ancestors are not all trusted; the test
    /// trusts only what it creates by checking a path relative to a root it owns.
    fn chmod(path: &Path, mode: u32) {
        fs::set_permissions(path, fs::Permissions::from_mode(mode)).expect("chmod in a temporary directory");
    }

    fn own_uid(path: &Path) -> u32 {
        fs::metadata(path).expect("metadata of a file just created").uid()
    }

    #[test]
    fn group_writable_parent_is_named_with_its_mode() {
        let root = tempfile::tempdir().expect("temporary directory");
        let dir = root.path().join("driver");
        fs::create_dir(&dir).expect("create dir");
        let library = dir.join("libdcmi.so");
        fs::write(&library, b"not really a library").expect("write file");
        chmod(&library, 0o644);
        chmod(&dir, 0o775);
        let uid = own_uid(&library);
        let error = check_library_owned_by(&library, uid).expect_err("group-writable directory must be refused");
        match &error {
            Error::UnsafeLibrary { path, mode, .. } => {
                assert_eq!(path, &fs::canonicalize(&dir).expect("resolve"));
                assert_eq!(*mode, 0o775);
            }
            other => panic!("unexpected error {other}"),
        }
        let message = error.to_string();
        assert!(message.contains("0775") && message.contains("driver") && message.contains("chmod go-w"), "{message}");
    }

    #[test]
    fn writable_file_and_foreign_owner_are_refused() {
        let root = tempfile::tempdir().expect("temporary directory");
        let library = root.path().join("libdcmi.so");
        fs::write(&library, b"x").expect("write file");
        chmod(&library, 0o666);
        let uid = own_uid(&library);
        let error = check_library_owned_by(&library, uid).expect_err("world-writable file");
        assert!(matches!(&error, Error::UnsafeLibrary { path, mode: 0o666, .. } if path.ends_with("libdcmi.so")));
        chmod(&library, 0o644);
        let error = check_library_owned_by(&library, uid.wrapping_add(1)).expect_err("foreign owner");
        assert!(error.to_string().contains("not owned by root"), "{error}");
    }

    #[test]
    fn symlink_rules_apply_to_the_link_and_the_target() {
        let root = tempfile::tempdir().expect("temporary directory");
        let real = root.path().join("libdcmi.so.24");
        fs::write(&real, b"x").expect("write file");
        chmod(&real, 0o666);
        let link = root.path().join("libdcmi.so");
        symlink(&real, &link).expect("symlink");
        let uid = own_uid(&real);
        let error = check_library_owned_by(&link, uid).expect_err("target is world-writable");
        assert!(matches!(&error, Error::UnsafeLibrary { path, .. } if path.ends_with("libdcmi.so.24")), "{error}");
        let error = check_library_owned_by(&link, uid.wrapping_add(1)).expect_err("link has a foreign owner");
        assert!(error.to_string().contains("symlink"), "{error}");
    }

    #[test]
    fn every_violation_up_to_the_top_is_listed_with_its_fix() {
        let root = tempfile::tempdir().expect("temporary directory");
        let top = fs::canonicalize(root.path()).expect("resolve");
        let dir = top.join("driver");
        fs::create_dir(&dir).expect("create dir");
        let library = dir.join("libdcmi.so");
        fs::write(&library, b"x").expect("write file");
        chmod(&library, 0o666);
        chmod(&dir, 0o777);
        let uid = own_uid(&library);
        // The temporary directory's parent (/tmp, mode 1777) is above the top: not listed.
        let violations = violations_for_owner(&library, &library, &top, uid).expect("metadata");
        let listed: Vec<(&Path, OwnershipProblem)> = violations.iter().map(|v| (v.path.as_path(), v.problem)).collect();
        assert_eq!(
            listed,
            [
                (library.as_path(), OwnershipProblem::WritableByGroupOrOthers),
                (dir.as_path(), OwnershipProblem::WritableByGroupOrOthers)
            ]
        );
        assert_eq!(violations[1].fix_command(), format!("chmod go-w {}", dir.display()));
        let foreign = violations_for_owner(&library, &library, &top, uid.wrapping_add(1)).expect("metadata");
        assert_eq!(foreign[0].problem, OwnershipProblem::NotRootOwned);
        assert_eq!(foreign[0].fix_command(), format!("chown -h root:root {}", library.display()));
    }

    #[test]
    fn missing_file_is_not_found() {
        let error = check_library(Path::new("/nonexistent/dir/libdcmi.so")).expect_err("missing");
        assert!(matches!(error, Error::LibraryNotFound { .. }));
    }
}
