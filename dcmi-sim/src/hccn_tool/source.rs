//! Where the simulated tool finds its topology and overlay: the variables the simulated library reads, or else the
//! files beside the library of the fake host the tool is installed in, so that a daemon running the unchanged
//! `/usr/local/Ascend/driver/tools/hccn_tool` of a fake host needs no variable (as `crate::library_home` does for
//! the library).

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::instance::{load_config, CONFIG_ENV};
use crate::library_home::{CONFIG_FILE_NAME, OVERLAY_FILE_NAME};
use crate::overlay::{Overlay, OVERLAY_ENV};
use crate::topology::Topology;

/// The library's directory relative to the driver directory, the tool's directory's parent (see
/// [`crate::fake_host::LIBRARY_PATH`] and [`crate::fake_host::HCCN_TOOL_PATH`]).
const LIBRARY_DIRECTORY_IN_DRIVER: &str = "lib64/driver";

/// The topology and the overlay file (which need not exist) for a tool installed at `program`.
///
/// # Errors
/// [`Error`] naming the file and problem when the topology cannot be read.
pub fn locate(program: &Path) -> Result<(Topology, Option<PathBuf>), Error> {
    if let Ok(config) = std::env::var(CONFIG_ENV) {
        let (topology, _) = load_config(&config)?;
        return Ok((topology, std::env::var_os(OVERLAY_ENV).map(PathBuf::from)));
    }
    let driver = program.parent().and_then(Path::parent).unwrap_or(Path::new("/"));
    let library_directory = driver.join(LIBRARY_DIRECTORY_IN_DRIVER);
    let topology = Topology::load(library_directory.join(CONFIG_FILE_NAME))?;
    let overlay =
        std::env::var_os(OVERLAY_ENV).map_or_else(|| library_directory.join(OVERLAY_FILE_NAME), PathBuf::from);
    Ok((topology, Some(overlay)))
}

/// The overlay at `path` and its modification time in ms since the Unix epoch; `None` when there is no file.
///
/// # Errors
/// [`Error`] for a file that cannot be read or is not a valid overlay.
pub fn read_overlay(path: &Path) -> Result<Option<(Overlay, u64)>, Error> {
    let Ok(metadata) = std::fs::metadata(path) else { return Ok(None) };
    let text = std::fs::read_to_string(path)
        .map_err(|error| Error::config(path, "(file)", format!("cannot read: {error}")))?;
    let written = metadata.modified().ok().and_then(|time| time.duration_since(std::time::UNIX_EPOCH).ok());
    let written_ms = written.map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX));
    Ok(Some((Overlay::from_toml_str(&text, path)?, written_ms)))
}
