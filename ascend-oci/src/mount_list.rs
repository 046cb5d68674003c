//! Mount lists in the vendor's `.list` format: one absolute path per line, `#` comments, blank
//! lines ignored, at most 128 entries; a `*` or `?` wildcard may appear in the last component.
//! `base.list` falls back to the built-in defaults of Huawei's runtime when the file is absent.

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use crate::bounded_read::read_limited;
use crate::error::{Error, Result};
use rustix::fs::{Mode, OFlags};

use crate::secure_path::{
    checked_relative, directory_entries, resolve_trusted, resolve_trusted_through, CheckedDirs, HostRoot, TrustedSource,
};

/// Where mount lists live on the host, beneath the host root.
pub const DEFAULT_MOUNT_LIST_DIR: &str = "/etc/ascend-docker-runtime.d";

/// The defaults of `base.list` when no file is installed.
pub const BASE_LIST_DEFAULTS: [&str; 5] = [
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/Ascend/driver/include",
    "/usr/local/dcmi",
    "/usr/local/bin/npu-smi",
    "/var/queue_schedule",
];

/// The most entries a list may hold.
pub const MAX_LIST_ENTRIES: usize = 128;
/// The largest list file read.
const MAX_LIST_BYTES: u64 = 64 * 1024;

/// A parsed mount list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountList {
    /// Its name (the file stem).
    pub name: String,
    /// Absolute container paths, possibly with a wildcard in the last component.
    pub entries: Vec<PathBuf>,
}

impl MountList {
    /// Parses the text of a list.
    ///
    /// # Errors
    /// [`Error::InvalidConfig`] naming the list and line for a relative path, a `..`, a
    /// wildcard outside the last component, or more than 128 entries.
    pub fn parse(name: &str, text: &str) -> Result<Self> {
        let mut entries = Vec::new();
        let source = PathBuf::from(format!("{name}.list"));
        for (index, line) in text.lines().enumerate() {
            let line = line.trim();
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let invalid = |reason: String| Error::InvalidConfig {
                path: source.clone(),
                reason: format!("line {}: {line:?}: {reason}", index + 1),
            };
            let path = PathBuf::from(line);
            checked_relative(&path).map_err(|e| invalid(e.to_string()))?;
            if let Some(parent) = path.parent() {
                if has_wildcard(&parent.to_string_lossy()) {
                    return Err(invalid("wildcards are allowed in the last component only".to_owned()));
                }
            }
            if entries.len() == MAX_LIST_ENTRIES {
                return Err(invalid(format!("more than {MAX_LIST_ENTRIES} entries")));
            }
            if !entries.contains(&path) {
                entries.push(path);
            }
        }
        Ok(MountList { name: name.to_owned(), entries })
    }

    /// The built-in `base` list.
    pub fn base_defaults() -> Self {
        MountList { name: "base".to_owned(), entries: BASE_LIST_DEFAULTS.iter().map(PathBuf::from).collect() }
    }

    /// Loads `<list_dir>/<name>.list` beneath the host root. The file and its directories must
    /// pass the same ownership checks as mount sources. A missing `base.list` yields the defaults.
    ///
    /// # Errors
    /// [`Error::Io`] (missing list other than `base`), the errors of [`resolve_trusted`], and
    /// those of [`MountList::parse`].
    pub fn load(root: &HostRoot, list_dir: &Path, name: &str) -> Result<Self> {
        let container_path = list_dir.join(format!("{name}.list"));
        let source = match resolve_trusted(root, &container_path, false) {
            Ok(source) => source,
            Err(Error::Io { source, .. }) if name == "base" && source.kind() == std::io::ErrorKind::NotFound => {
                return Ok(Self::base_defaults())
            }
            Err(other) => return Err(other),
        };
        let text = read_small(&source.host_path, &source.fd)?;
        Self::parse(name, &text)
    }
}

fn read_small(host_path: &Path, fd: &std::os::fd::OwnedFd) -> Result<String> {
    // Reopen the checked O_PATH descriptor for reading through its /proc link, so the file read
    // is the one that was checked.
    let link = format!("/proc/self/fd/{}", std::os::fd::AsRawFd::as_raw_fd(fd));
    let readable = rustix::fs::open(link.as_str(), OFlags::RDONLY | OFlags::CLOEXEC, Mode::empty())
        .map_err(|e| Error::errno("open", host_path, e))?;
    let bytes = read_limited(std::fs::File::from(readable), MAX_LIST_BYTES, "mount list")?;
    String::from_utf8(bytes)
        .map_err(|_| Error::InvalidConfig { path: host_path.to_path_buf(), reason: "is not UTF-8 text".to_owned() })
}

fn has_wildcard(text: &str) -> bool {
    text.contains('*') || text.contains('?')
}

/// Shell-style match of `*` (any run) and `?` (one character) against a file name.
pub fn wildcard_match(pattern: &str, name: &str) -> bool {
    let pattern: Vec<char> = pattern.chars().collect();
    let name: Vec<char> = name.chars().collect();
    let (mut p, mut n) = (0, 0);
    let mut backtrack: Option<(usize, usize)> = None;
    while n < name.len() {
        match pattern.get(p) {
            Some('*') => {
                backtrack = Some((p, n));
                p += 1;
            }
            Some(&c) if c == '?' || c == name[n] => {
                p += 1;
                n += 1;
            }
            _ => match backtrack {
                Some((star, matched)) => {
                    p = star + 1;
                    n = matched + 1;
                    backtrack = Some((star, matched + 1));
                }
                None => return false,
            },
        }
    }
    pattern[p..].iter().all(|&c| c == '*')
}

/// A checked mount: a host source and its container destination.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountEntry {
    /// Where it appears in the container.
    pub container_path: PathBuf,
    /// The host path (host root included), checked by [`resolve_trusted`].
    pub host_path: PathBuf,
    /// Directory or file.
    pub is_dir: bool,
}

/// Expands the lists' entries against the host and checks each source, keeping each open.
/// Entries that do not exist are skipped (as Huawei's runtime does); wildcards match names in
/// the entry's directory; a destination listed twice is mounted once.
///
/// # Errors
/// The first source failing [`resolve_trusted`] aborts with its error: a container must not
/// start with a half-checked driver.
pub fn resolve_sources(root: &HostRoot, lists: &[MountList], allow_link: bool) -> Result<Vec<TrustedSource>> {
    let mut sources = CheckedSources::default();
    for list in lists {
        for entry in &list.entries {
            for path in expand(root, entry)? {
                sources.add(root, &path, allow_link)?;
            }
        }
    }
    Ok(sources.sources)
}

/// Checks each of `paths` (absolute paths as the container sees them, taken literally: no wildcard is expanded) as
/// [`resolve_sources`] checks what the lists name, keeping each open: what the hook does with the mounts the
/// runtime resolved when it wrote the hook into the spec. A path that does not exist is skipped and a path given
/// twice is mounted once, as with the lists.
///
/// # Errors
/// As [`resolve_sources`]: a relative path or one with `..` gives [`Error::UnsafePath`], and the first source
/// failing [`resolve_trusted`] aborts with its error.
pub fn resolve_given_sources(root: &HostRoot, paths: &[PathBuf], allow_link: bool) -> Result<Vec<TrustedSource>> {
    let mut sources = CheckedSources::default();
    for path in paths {
        sources.add(root, path, allow_link)?;
    }
    Ok(sources.sources)
}

/// The sources of one resolution pass, and the directories it has checked on the way.
#[derive(Default)]
struct CheckedSources {
    sources: Vec<TrustedSource>,
    dirs: CheckedDirs,
}

impl CheckedSources {
    /// Checks `path` and keeps it, unless it is already kept or does not exist.
    fn add(&mut self, root: &HostRoot, path: &Path, allow_link: bool) -> Result<()> {
        if self.sources.iter().any(|s| s.container_path == path) {
            return Ok(());
        }
        match resolve_trusted_through(root, path, allow_link, &mut self.dirs) {
            Ok(source) => self.sources.push(source),
            Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {}
            Err(other) => return Err(other),
        }
        Ok(())
    }
}

/// [`resolve_sources`] without the descriptors.
///
/// # Errors
/// As [`resolve_sources`].
pub fn resolve_mounts(root: &HostRoot, lists: &[MountList], allow_link: bool) -> Result<Vec<MountEntry>> {
    Ok(resolve_sources(root, lists, allow_link)?
        .into_iter()
        .map(|source| MountEntry {
            container_path: source.container_path,
            host_path: source.host_path,
            is_dir: source.is_dir,
        })
        .collect())
}

fn expand(root: &HostRoot, entry: &Path) -> Result<Vec<PathBuf>> {
    let (Some(parent), Some(pattern)) = (entry.parent(), entry.file_name()) else {
        return Ok(vec![entry.to_path_buf()]);
    };
    let pattern = pattern.to_string_lossy();
    if !has_wildcard(&pattern) {
        return Ok(vec![entry.to_path_buf()]);
    }
    let parent_host = root.host_path(parent);
    let dir = match root.open_no_symlinks(parent) {
        Ok(dir) => dir,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(other) => return Err(other),
    };
    let mut matches = Vec::new();
    for item in directory_entries(dir.as_fd(), &parent_host)? {
        let item = item.map_err(|e| Error::errno("read directory", &parent_host, e))?;
        let name = String::from_utf8_lossy(item.file_name().to_bytes()).into_owned();
        if name != "." && name != ".." && wildcard_match(&pattern, &name) {
            matches.push(parent.join(name));
        }
    }
    matches.sort();
    Ok(matches)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_skips_comments_and_rejects_bad_lines() -> Result<()> {
        let list = MountList::parse("x", "# c\n\n/usr/a\n /usr/b \n/usr/a\n")?;
        assert_eq!(list.entries, [PathBuf::from("/usr/a"), PathBuf::from("/usr/b")]);
        for bad in ["usr/a", "/usr/../etc", "/usr/*/x"] {
            assert!(MountList::parse("x", bad).is_err(), "{bad}");
        }
        let long: String = (0..=MAX_LIST_ENTRIES).map(|i| format!("/f{i}\n")).collect();
        assert!(MountList::parse("x", &long).is_err());
        Ok(())
    }

    #[test]
    fn wildcards() {
        assert!(wildcard_match("libummu*", "libummu.so.1"));
        assert!(wildcard_match("lib?.so", "liba.so"));
        assert!(!wildcard_match("lib?.so", "libab.so"));
        assert!(wildcard_match("*", "x"));
        assert!(!wildcard_match("a*b", "acbd"));
    }
}
