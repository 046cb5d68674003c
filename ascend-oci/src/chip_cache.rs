//! The runtime's memory of what DCMI said about the host's chips, so that starting a container
//! does not load and initialise the driver library every time.
//!
//! Asking DCMI costs a `dlopen` of `libdcmi.so`, `dcmi_init` and one call per chip: milliseconds on
//! the simulator, more on a real driver, and all of it on the path of every container start. The
//! answer (physical ids, chip type, product type) changes only when the driver is reinstalled or
//! reloaded or the machine reboots, so [`ChipCache`] keeps it in a small root-owned file (by
//! default [`DEFAULT_CHIP_CACHE`], on the `/run` tmpfs, gone at reboot) together with a fingerprint
//! of everything it depends on:
//!
//! * the boot id (`/proc/sys/kernel/random/boot_id`);
//! * the host root and the environment that steers the library search (`ASCEND_DCMI_LIBRARY`,
//!   `LD_LIBRARY_PATH`);
//! * every `/dev/davinci<N>` node under the host root (name, inode, device number, change time): a driver
//!   reload or a chip appearing or disappearing recreates them;
//! * the `libdcmi.so` that answered (device, inode, size, modification time).
//!
//! The fingerprint is taken before DCMI is asked, so a change while it answers makes the next
//! start ask again. Only an answer from DCMI is remembered, never the `/dev` scan that replaces
//! it when the driver cannot be used. A cache file that is not root-owned, is writable by group or
//! others, or does not parse is ignored with a note and replaced.

use std::os::unix::fs::{DirBuilderExt, FileTypeExt, MetadataExt};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::atomic_file::{write_atomically_with, WriteOptions};
use crate::bounded_read::read_limited_file;
use crate::chip_discovery::{discover_chips, ChipSource, DiscoveredChips};
use crate::error::{Error, Result};
use crate::host::{chip_node_entries, HostChip, HostChips};
use crate::secure_path::{check_trusted_file, HostRoot};

/// Where the runtime keeps the cache unless told otherwise.
pub const DEFAULT_CHIP_CACHE: &str = "/run/ascend-ctk/chips.json";

/// The version of the file's layout; a file of another version is a miss.
const FORMAT: u32 = 2;

/// The largest cache file read.
const MAX_CACHE_BYTES: u64 = 1024 * 1024;

/// The kernel's id of the current boot.
const BOOT_ID_PATH: &str = "/proc/sys/kernel/random/boot_id";

/// The environment variables that change which `libdcmi.so` is found.
const LIBRARY_SEARCH_ENV: [&str; 2] = ["ASCEND_DCMI_LIBRARY", "LD_LIBRARY_PATH"];

/// The chips of a host, remembered between container starts (see the module documentation).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChipCache {
    path: PathBuf,
}

/// What [`ChipCache::discover`] found, and anything the operator should hear about the cache.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CachedDiscovery {
    /// The chips and their source ([`ChipSource::DcmiCache`] when the cache answered).
    pub found: DiscoveredChips,
    /// Why the cache file was ignored or could not be written, when that is not the normal
    /// course of things (a missing file or a changed host is normal and gives no note).
    pub note: Option<String>,
}

/// The cache file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct CacheFile {
    format: u32,
    fingerprint: Fingerprint,
    library: PathBuf,
    library_file: FileIdentity,
    chip_type: Option<String>,
    product_type: Option<String>,
    node_ids: Vec<u32>,
}

/// What the answer depends on, apart from the library file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct Fingerprint {
    boot_id: String,
    host_root: PathBuf,
    environment: Vec<(String, Option<String>)>,
    device_nodes: Vec<NodeIdentity>,
}

/// One `/dev/davinci<N>` node. The change time tells a recreated node from the old one even where
/// the file system hands out the freed inode number again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct NodeIdentity {
    name: String,
    inode: u64,
    rdev: u64,
    changed_seconds: i64,
    changed_nanoseconds: i64,
}

/// The identity of a file's content as far as `stat` tells.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
struct FileIdentity {
    device: u64,
    inode: u64,
    size: u64,
    modified_seconds: i64,
    modified_nanoseconds: i64,
}

impl ChipCache {
    /// A cache kept in the file `path` (its directory is created, mode 0755, when first written).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        ChipCache { path: path.into() }
    }

    /// The cache file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The chips as [`discover_chips`] finds them, answered from the cache when its fingerprint
    /// still matches the host, else from DCMI (remembering the answer) or the `/dev` scan. An
    /// operator's chip type bypasses the cache, as it bypasses DCMI.
    ///
    /// # Errors
    /// The errors of [`discover_chips`]. Problems with the cache itself are not errors: they give
    /// a [`CachedDiscovery::note`] and the host is read as if there were no cache.
    pub fn discover(&self, root: &HostRoot, chip_type: Option<String>) -> Result<CachedDiscovery> {
        if chip_type.is_some() {
            return Ok(CachedDiscovery { found: discover_chips(root, chip_type)?, note: None });
        }
        let fingerprint = match Fingerprint::of(root) {
            Ok(fingerprint) => fingerprint,
            Err(error) => {
                let note = format!("chip cache not used: {error}");
                return Ok(CachedDiscovery { found: discover_chips(root, None)?, note: Some(note) });
            }
        };
        let mut note = None;
        match self.load() {
            Ok(Some(cached)) => {
                if let Some(found) = self.answer(&cached, &fingerprint) {
                    return Ok(CachedDiscovery { found, note: None });
                }
            }
            Ok(None) => {}
            Err(error) => note = Some(format!("chip cache {} ignored: {error}", self.path.display())),
        }
        let found = discover_chips(root, None)?;
        if let ChipSource::Dcmi { library } = &found.source {
            if let Err(error) = self.store(fingerprint, library, &found.chips) {
                note = Some(format!("chip cache {} not written: {error}", self.path.display()));
            }
        }
        Ok(CachedDiscovery { found, note })
    }

    /// The cached answer if the fingerprint and the library file still match.
    fn answer(&self, cached: &CacheFile, fingerprint: &Fingerprint) -> Option<DiscoveredChips> {
        if cached.format != FORMAT || &cached.fingerprint != fingerprint {
            return None;
        }
        if FileIdentity::of(&cached.library).ok()? != cached.library_file {
            return None;
        }
        let chips = HostChips {
            chip_type: cached.chip_type.clone(),
            product_type: cached.product_type.clone(),
            chips: cached.node_ids.iter().map(|&node_id| HostChip { node_id }).collect(),
        };
        Some(DiscoveredChips {
            chips,
            source: ChipSource::DcmiCache { library: cached.library.clone(), cache: self.path.clone() },
        })
    }

    /// The cache file: `None` when there is none (or of another format version).
    fn load(&self) -> Result<Option<CacheFile>> {
        match std::fs::symlink_metadata(&self.path) {
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(error) => return Err(Error::io("stat", &self.path, error)),
            Ok(_) => {}
        }
        // Whoever can write the file (or its directories) chooses the device nodes of every
        // container: only root may.
        let path = check_trusted_file(&self.path)?;
        let bytes = read_limited_file(&path, MAX_CACHE_BYTES, "chip cache")?;
        let value: serde_json::Value = serde_json::from_slice(&bytes)
            .map_err(|source| Error::Json { what: format!("parse {}", path.display()), source })?;
        if value.get("format").and_then(serde_json::Value::as_u64) != Some(u64::from(FORMAT)) {
            return Ok(None);
        }
        serde_json::from_value(value)
            .map(Some)
            .map_err(|source| Error::Json { what: format!("parse {}", path.display()), source })
    }

    /// Remembers DCMI's answer.
    fn store(&self, fingerprint: Fingerprint, library: &Path, chips: &HostChips) -> Result<()> {
        let file = CacheFile {
            format: FORMAT,
            fingerprint,
            library: library.to_path_buf(),
            library_file: FileIdentity::of(library)?,
            chip_type: chips.chip_type.clone(),
            product_type: chips.product_type.clone(),
            node_ids: chips.chips.iter().map(|chip| chip.node_id).collect(),
        };
        let bytes = serde_json::to_vec_pretty(&file)
            .map_err(|source| Error::Json { what: format!("serialise {}", self.path.display()), source })?;
        if let Some(directory) = self.path.parent().filter(|dir| !dir.as_os_str().is_empty()) {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o755)
                .create(directory)
                .map_err(|e| Error::io("create directory", directory, e))?;
        }
        // Rebuilt after a reboot anyway: no fsync. A replaced file gets 0644 whatever it had.
        write_atomically_with(
            &self.path,
            &bytes,
            WriteOptions { mode: 0o644, keep_existing_mode: false, durable: false },
        )
    }
}

impl Fingerprint {
    /// The fingerprint of the host as it is now.
    fn of(root: &HostRoot) -> Result<Self> {
        let boot_id = std::fs::read_to_string(BOOT_ID_PATH).map_err(|e| Error::io("read", BOOT_ID_PATH, e))?;
        let environment = LIBRARY_SEARCH_ENV
            .iter()
            .map(|name| ((*name).to_owned(), std::env::var_os(name).map(|value| value.to_string_lossy().into_owned())))
            .collect();
        Ok(Fingerprint {
            boot_id: boot_id.trim().to_owned(),
            host_root: root.path().to_path_buf(),
            environment,
            device_nodes: chip_nodes(root)?,
        })
    }
}

/// Every `/dev/davinci<N>` character device under the host root (its own `lstat`), sorted by name.
fn chip_nodes(root: &HostRoot) -> Result<Vec<NodeIdentity>> {
    let mut nodes = Vec::new();
    for entry in chip_node_entries(root)? {
        let meta = std::fs::symlink_metadata(&entry.host_path).map_err(|e| Error::io("stat", &entry.host_path, e))?;
        if meta.file_type().is_char_device() {
            nodes.push(NodeIdentity {
                name: entry.name,
                inode: meta.ino(),
                rdev: meta.rdev(),
                changed_seconds: meta.ctime(),
                changed_nanoseconds: meta.ctime_nsec(),
            });
        }
    }
    nodes.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(nodes)
}

impl FileIdentity {
    fn of(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io("stat", path, e))?;
        Ok(FileIdentity {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified_seconds: meta.mtime(),
            modified_nanoseconds: meta.mtime_nsec(),
        })
    }
}
