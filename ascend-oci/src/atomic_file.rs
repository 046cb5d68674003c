//! Replacing a file so that readers see the old or the new content, never a mix.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// How [`write_atomically_with`] writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteOptions {
    /// The mode of the new file (and of a replaced one unless `keep_existing_mode`).
    pub mode: u32,
    /// Keep the mode of the file being replaced.
    pub keep_existing_mode: bool,
    /// `fsync` the content before the rename, so that it survives a power loss. Readers never see a partial file
    /// either way; state that is rebuilt after a reboot (a bundle's `config.json`, files under `/run`) skips it.
    pub durable: bool,
}

impl WriteOptions {
    /// A durable write keeping an existing file's mode; `new_file_mode` for a new file.
    pub fn durable(new_file_mode: u32) -> Self {
        WriteOptions { mode: new_file_mode, keep_existing_mode: true, durable: true }
    }

    /// A write of transient state (no `fsync`) keeping an existing file's mode.
    pub fn transient(new_file_mode: u32) -> Self {
        WriteOptions { mode: new_file_mode, keep_existing_mode: true, durable: false }
    }
}

/// Writes `bytes` to a temporary file next to `path`, syncs it and renames it over `path`.
/// The mode of an existing file is kept; a new file gets `new_file_mode`.
///
/// # Errors
/// [`Error::Io`] naming the path and the step that failed.
pub fn write_atomically(path: &Path, bytes: &[u8], new_file_mode: u32) -> Result<()> {
    write_atomically_with(path, bytes, WriteOptions::durable(new_file_mode))
}

/// Writes `bytes` to a temporary file next to `path` and renames it over `path`, as `options` say.
///
/// # Errors
/// [`Error::Io`] naming the path and the step that failed.
pub fn write_atomically_with(path: &Path, bytes: &[u8], options: WriteOptions) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name =
        path.file_name().ok_or_else(|| Error::unsafe_path(path, "has no file name"))?.to_string_lossy().into_owned();
    let existing_mode = if options.keep_existing_mode {
        std::fs::metadata(path).ok().map(|meta| meta.permissions().mode())
    } else {
        None
    };
    let mode = existing_mode.map_or(options.mode, |mode| mode & 0o7777);
    let temporary = dir.join(format!(".{file_name}.tmp{}", std::process::id()));
    let result = (|| {
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(mode)
            .open(&temporary)
            .map_err(|e| Error::io("create", &temporary, e))?;
        file.write_all(bytes).map_err(|e| Error::io("write", &temporary, e))?;
        file.set_permissions(std::fs::Permissions::from_mode(mode)).map_err(|e| Error::io("chmod", &temporary, e))?;
        if options.durable {
            file.sync_all().map_err(|e| Error::io("fsync", &temporary, e))?;
        }
        std::fs::rename(&temporary, path).map_err(|e| Error::io("rename", path, e))
    })();
    if result.is_err() {
        // Best effort: the temporary file is ours and useless after a failure.
        let _ = std::fs::remove_file(&temporary);
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_content_and_keeps_mode() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", "/tmp", e))?;
        let path = dir.path().join("f.json");
        write_atomically(&path, b"one", 0o640)?;
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).ok();
        assert_eq!(mode, Some(0o640));
        write_atomically(&path, b"two", 0o600)?;
        assert_eq!(std::fs::read(&path).ok().as_deref(), Some(&b"two"[..]));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).ok();
        assert_eq!(mode, Some(0o640));
        Ok(())
    }

    #[test]
    fn a_fixed_mode_replaces_the_existing_one() -> Result<()> {
        let dir = tempfile::tempdir().map_err(|e| Error::io("tempdir", "/tmp", e))?;
        let path = dir.path().join("cache.json");
        write_atomically(&path, b"old", 0o666)?;
        let options = WriteOptions { mode: 0o644, keep_existing_mode: false, durable: false };
        write_atomically_with(&path, b"new", options)?;
        assert_eq!(std::fs::read(&path).ok().as_deref(), Some(&b"new"[..]));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777).ok();
        assert_eq!(mode, Some(0o644));
        Ok(())
    }
}
