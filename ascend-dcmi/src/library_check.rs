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

/// Checks `library` as the vendor's tools do and returns the path it resolves to (the path to load, so that a
/// symlink swapped after the check does not matter).
///
/// # Errors
/// [`Error::UnsafeLibrary`] naming the offending file or directory, its owner and mode, and the fix;
/// [`Error::LibraryNotFound`] if the path cannot be resolved.
pub fn check_library(library: &Path) -> Result<PathBuf> {
    check_library_owned_by(library, ROOT_UID)
}

/// [`check_library`] with another trusted owner, so that the rules can be tested without root.
pub(crate) fn check_library_owned_by(library: &Path, trusted_uid: u32) -> Result<PathBuf> {
    let not_found = || Error::LibraryNotFound { searched: vec![library.to_path_buf()] };
    let link = fs::symlink_metadata(library).map_err(|_| not_found())?;
    if link.file_type().is_symlink() && link.uid() != trusted_uid {
        return Err(unsafe_library(
            library,
            library,
            &link,
            trusted_uid,
            "the symlink is not owned by the trusted user",
        ));
    }
    let resolved = fs::canonicalize(library).map_err(|_| not_found())?;
    let mut current: Option<&Path> = Some(resolved.as_path());
    let mut depth = 0;
    while let Some(path) = current {
        if depth > MAX_DEPTH {
            break;
        }
        let metadata = fs::metadata(path).map_err(|_| not_found())?;
        if metadata.uid() != trusted_uid {
            return Err(unsafe_library(library, path, &metadata, trusted_uid, "not owned by the trusted user"));
        }
        if metadata.mode() & GROUP_OTHER_WRITE != 0 {
            return Err(unsafe_library(library, path, &metadata, trusted_uid, "writable by group or others"));
        }
        current = path.parent();
        depth += 1;
    }
    Ok(resolved)
}

fn unsafe_library(library: &Path, path: &Path, metadata: &fs::Metadata, trusted_uid: u32, what: &str) -> Error {
    let mode = metadata.mode() & 0o7777;
    let owner = if trusted_uid == ROOT_UID { "root".to_owned() } else { format!("uid {trusted_uid}") };
    let fix = if what.starts_with("writable") {
        format!("fix with `chmod go-w {}`", path.display())
    } else {
        format!("fix with `chown {owner} {}`", path.display())
    };
    Error::UnsafeLibrary {
        library: library.to_path_buf(),
        path: path.to_path_buf(),
        uid: metadata.uid(),
        mode,
        problem: format!(
            "{what} ({owner} must own the library and every directory above it, none writable by group or \
             others); {fix}, or load it with `DcmiBuilder::verify_library_ownership(false)` if you trust it"
        ),
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
        assert!(error.to_string().contains("not owned by the trusted user"), "{error}");
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
    fn missing_file_is_not_found() {
        let error = check_library(Path::new("/nonexistent/dir/libdcmi.so")).expect_err("missing");
        assert!(matches!(error, Error::LibraryNotFound { .. }));
    }
}
