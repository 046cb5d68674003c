//! Replacing a file so that readers see the old or the new content, never a mix.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Writes `bytes` to a temporary file next to `path`, syncs it and renames it over `path`.
/// The mode of an existing file is kept; a new file gets `new_file_mode`.
///
/// # Errors
/// [`Error::Io`] naming the path and the step that failed.
pub fn write_atomically(path: &Path, bytes: &[u8], new_file_mode: u32) -> Result<()> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let file_name =
        path.file_name().ok_or_else(|| Error::unsafe_path(path, "has no file name"))?.to_string_lossy().into_owned();
    let mode = match std::fs::metadata(path) {
        Ok(meta) => meta.permissions().mode() & 0o7777,
        Err(_) => new_file_mode,
    };
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
        file.sync_all().map_err(|e| Error::io("fsync", &temporary, e))?;
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
}
