//! Finding the built `libdcmi_sim.so` for tests and tools: [`library_path`] says where cargo puts it.

use std::path::{Path, PathBuf};

use crate::error::Error;
pub use crate::library_file::{LIBRARY_ENV, LIBRARY_FILE};

/// The path of the built `libdcmi_sim.so`: `$DCMI_SIM_LIBRARY` if set (it must exist), else the
/// current executable's directory, its `deps/` directory, and parent directories up to the cargo
/// target directory.
///
/// Where cargo puts the cdylib (checked with cargo 1.95): built as a requested package (`cargo build -p dcmi-sim`,
/// `cargo test -p dcmi-sim`) it is in `target/<profile>/deps/` and uplifted to `target/<profile>/libdcmi_sim.so`;
/// built only as a (dev-)dependency of another package it is in `target/<profile>/deps/libdcmi_sim.so` alone (no hash
/// in the name, no uplifted copy). Test binaries run from `target/<profile>/deps/`, examples from
/// `target/<profile>/examples/`, bins from `target/<profile>/`, so the search ([`library_near`]) takes the most
/// recently built copy (an uplifted copy can be older than the one in `deps/`).
///
/// # Errors
/// [`Error`] listing the places searched.
pub fn library_path() -> Result<PathBuf, Error> {
    if let Some(explicit) = std::env::var_os(LIBRARY_ENV) {
        let explicit = PathBuf::from(explicit);
        return if explicit.is_file() {
            Ok(explicit)
        } else {
            Err(Error::LibraryNotFound { searched: vec![explicit] })
        };
    }
    let executable = std::env::current_exe().map_err(|_| Error::LibraryNotFound { searched: Vec::new() })?;
    let start = executable.parent().unwrap_or(Path::new("."));
    library_near(start)
}

/// Searches `start`, `start/deps`, then each parent (and its `deps/`) up to and including the
/// directory that contains `CACHEDIR.TAG` (the cargo target directory), at most five levels, and
/// returns the most recently modified library found.
///
/// # Errors
/// [`Error`] listing the places searched.
pub fn library_near(start: &Path) -> Result<PathBuf, Error> {
    let mut searched = Vec::new();
    let mut found: Vec<(std::time::SystemTime, PathBuf)> = Vec::new();
    let mut directory = Some(start);
    for _ in 0..5 {
        let Some(current) = directory else { break };
        for candidate in [current.join(LIBRARY_FILE), current.join("deps").join(LIBRARY_FILE)] {
            match std::fs::metadata(&candidate) {
                Ok(metadata) if metadata.is_file() => {
                    found.push((metadata.modified().unwrap_or(std::time::UNIX_EPOCH), candidate));
                }
                _ => searched.push(candidate),
            }
        }
        if current.join("CACHEDIR.TAG").is_file() {
            break;
        }
        directory = current.parent();
    }
    found
        .into_iter()
        .max_by_key(|(modified, _)| *modified)
        .map(|(_, path)| path)
        .ok_or(Error::LibraryNotFound { searched })
}
