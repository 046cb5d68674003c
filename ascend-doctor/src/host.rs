//! File probes relative to a host root: `/` on the host itself, `/host` in a container that mounts the host, or a
//! temporary directory holding a fake host in tests.
//!
//! Every path a check names is the host's absolute path (`/usr/local/Ascend/driver/version.info`); the probes map
//! it below the root. Evidence shows the host path, so reports read the same wherever the root is.

use std::fs;
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt};
use std::path::{Component, Path, PathBuf};

/// The most a probe reads from one file; version and config files are tiny, anything bigger is not one of them.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A host root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostRoot {
    root: PathBuf,
}

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    /// A regular file.
    File,
    /// A directory.
    Directory,
    /// A character device.
    CharDevice,
    /// A Unix socket.
    Socket,
    /// A symlink (not followed).
    Symlink,
    /// Something else.
    Other,
}

impl HostRoot {
    /// A root directory.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        Self { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether this is the machine's own `/`.
    pub fn is_system_root(&self) -> bool {
        self.root == Path::new("/")
    }

    /// The real path of a host path: `host_path` with `..` and `.` dropped, below the root.
    pub fn path(&self, host_path: impl AsRef<Path>) -> PathBuf {
        let mut real = self.root.clone();
        for component in host_path.as_ref().components() {
            if let Component::Normal(part) = component {
                real.push(part);
            }
        }
        real
    }

    /// Whether the host path exists (a dangling symlink counts as existing).
    pub fn exists(&self, host_path: impl AsRef<Path>) -> bool {
        fs::symlink_metadata(self.path(host_path)).is_ok()
    }

    /// What the host path is, without following a final symlink; `None` when it does not exist.
    pub fn kind(&self, host_path: impl AsRef<Path>) -> Option<EntryKind> {
        let metadata = fs::symlink_metadata(self.path(host_path)).ok()?;
        let file_type = metadata.file_type();
        Some(if file_type.is_symlink() {
            EntryKind::Symlink
        } else if file_type.is_file() {
            EntryKind::File
        } else if file_type.is_dir() {
            EntryKind::Directory
        } else if file_type.is_char_device() {
            EntryKind::CharDevice
        } else if file_type.is_socket() {
            EntryKind::Socket
        } else {
            EntryKind::Other
        })
    }

    /// The text of a file (at most [`MAX_FILE_BYTES`]).
    ///
    /// # Errors
    /// The I/O error, or `InvalidData` for a file that is too large or not UTF-8.
    pub fn read_to_string(&self, host_path: impl AsRef<Path>) -> io::Result<String> {
        let real = self.path(host_path);
        let size = fs::metadata(&real)?.len();
        if size > MAX_FILE_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{size} bytes is too large")));
        }
        fs::read_to_string(real)
    }

    /// The raw bytes of a small file.
    ///
    /// # Errors
    /// As [`Self::read_to_string`].
    pub fn read(&self, host_path: impl AsRef<Path>) -> io::Result<Vec<u8>> {
        let real = self.path(host_path);
        let size = fs::metadata(&real)?.len();
        if size > MAX_FILE_BYTES {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("{size} bytes is too large")));
        }
        fs::read(real)
    }

    /// The names in a directory, sorted; an absent directory is empty.
    pub fn list(&self, host_path: impl AsRef<Path>) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.path(host_path))
            .map(|entries| {
                entries.filter_map(|entry| entry.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    /// Owner and mode of a host path, following symlinks.
    ///
    /// # Errors
    /// The I/O error.
    pub fn owner_and_mode(&self, host_path: impl AsRef<Path>) -> io::Result<(u32, u32)> {
        let metadata = fs::metadata(self.path(host_path))?;
        Ok((metadata.uid(), metadata.mode() & 0o7777))
    }

    /// The host path of a real path below the root (for evidence); `None` when it is outside the root.
    pub fn host_path_of(&self, real: &Path) -> Option<PathBuf> {
        let relative = real.strip_prefix(&self.root).ok()?;
        Some(Path::new("/").join(relative))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_paths_stay_below_the_root() {
        let root = HostRoot::new("/srv/host");
        assert_eq!(
            root.path("/etc/../../etc/docker/daemon.json"),
            PathBuf::from("/srv/host/etc/etc/docker/daemon.json")
        );
        assert_eq!(root.path("/dev/davinci0"), PathBuf::from("/srv/host/dev/davinci0"));
        assert_eq!(root.host_path_of(Path::new("/srv/host/dev/x")), Some(PathBuf::from("/dev/x")));
        assert_eq!(root.host_path_of(Path::new("/elsewhere")), None);
        assert!(HostRoot::new("/").is_system_root());
    }
}
