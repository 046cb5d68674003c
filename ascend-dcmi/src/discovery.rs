//! Where `libdcmi.so` may be: the ordered list of candidate paths, and the parsing of the `ldconfig` cache.
//!
//! The order is: an explicit path; the file named by `ASCEND_DCMI_LIBRARY`; `libdcmi.so` in each directory of
//! `LD_LIBRARY_PATH`; the `ldconfig` cache; the standard driver directories. A path given explicitly or through
//! `ASCEND_DCMI_LIBRARY` is a decision, not a hint: when one is given it is the only candidate.
//!
//! A host root (for example `/host`, where a containerised tool mounts the host's `/`) is put in front of the places
//! that describe the host's installation: the `ldconfig` cache (read from `<root>/etc/ld.so.cache`, its targets
//! prefixed) and the standard directories. `LD_LIBRARY_PATH` and the two explicit forms are this process's own paths
//! and are used as they are.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The file name of the DCMI library.
pub const LIBRARY_FILE_NAME: &str = "libdcmi.so";

/// The environment variable naming the library file to load.
pub const LIBRARY_ENV: &str = "ASCEND_DCMI_LIBRARY";

/// Directories the vendor installs the library into, searched last (after the host root, if any, is put in front).
pub const STANDARD_DIRECTORIES: [&str; 4] = [
    "/usr/local/dcmi",
    "/usr/local/Ascend/driver/lib64/driver",
    "/usr/local/Ascend/driver/lib64/common",
    "/usr/local/Ascend/driver/lib64",
];

/// `LD_LIBRARY_PATH` values longer than this are ignored, as the vendor's loader ignores them.
const MAX_ENV_LEN: usize = 1024;

/// Candidate paths longer than this are skipped, as the vendor's loader skips them.
const MAX_PATH_LEN: usize = 1024;

/// The inputs of discovery, gathered from the process environment or given by tests.
#[derive(Debug, Clone, Default)]
pub(crate) struct SearchInputs {
    /// `Dcmi::builder().library_path(..)`.
    pub explicit: Option<PathBuf>,
    /// The value of `ASCEND_DCMI_LIBRARY`.
    pub env_library: Option<OsString>,
    /// The value of `LD_LIBRARY_PATH`.
    pub ld_library_path: Option<OsString>,
    /// Library paths found in the `ldconfig` cache (already as host paths, before the host root is applied).
    pub ldconfig: Vec<PathBuf>,
    /// The host root, if the host's `/` is mounted somewhere else.
    pub host_root: Option<PathBuf>,
}

impl SearchInputs {
    /// Reads the environment and the `ldconfig` cache of this process (or of the host root).
    pub fn from_environment(explicit: Option<PathBuf>, host_root: Option<PathBuf>) -> Self {
        let env_library = std::env::var_os(LIBRARY_ENV).filter(|value| !value.is_empty());
        let needs_search = explicit.is_none() && env_library.is_none();
        let ldconfig = if needs_search { read_ldconfig_cache(host_root.as_deref()) } else { Vec::new() };
        Self { explicit, env_library, ld_library_path: std::env::var_os("LD_LIBRARY_PATH"), ldconfig, host_root }
    }
}

/// The candidate library paths, in the order they are tried, without duplicates.
pub(crate) fn candidates(inputs: &SearchInputs) -> Vec<PathBuf> {
    if let Some(explicit) = &inputs.explicit {
        return vec![explicit.clone()];
    }
    if let Some(named) = &inputs.env_library {
        return vec![PathBuf::from(named)];
    }
    let mut found: Vec<PathBuf> = Vec::new();
    let mut push = |path: PathBuf| {
        if path.as_os_str().len() <= MAX_PATH_LEN && !found.contains(&path) {
            found.push(path);
        }
    };
    if let Some(value) = inputs.ld_library_path.as_deref().filter(|v| v.len() <= MAX_ENV_LEN) {
        for directory in std::env::split_paths(value).filter(|d| !d.as_os_str().is_empty()) {
            push(directory.join(LIBRARY_FILE_NAME));
        }
    }
    for path in &inputs.ldconfig {
        push(under_root(inputs.host_root.as_deref(), path));
    }
    for directory in STANDARD_DIRECTORIES {
        push(under_root(inputs.host_root.as_deref(), &Path::new(directory).join(LIBRARY_FILE_NAME)));
    }
    found
}

/// `path` seen through the host root: `/usr/lib/x` under `/host` is `/host/usr/lib/x`.
pub(crate) fn under_root(root: Option<&Path>, path: &Path) -> PathBuf {
    match root {
        Some(root) => root.join(path.strip_prefix("/").unwrap_or(path)),
        None => path.to_path_buf(),
    }
}

/// Parses the output of `ldconfig -p` (`--print-cache`) and returns the targets of the entries whose library name is
/// exactly `libdcmi.so`, in the order listed.
///
/// Lines look like `\tlibdcmi.so (libc6,x86-64) => /usr/local/dcmi/libdcmi.so`; other lines (the header, other
/// libraries, `libdcmi.so.1`) are ignored.
pub fn parse_ldconfig_cache(output: &str) -> Vec<PathBuf> {
    output
        .lines()
        .filter_map(|line| {
            let (left, target) = line.split_once("=>")?;
            let name = left.split_whitespace().next()?;
            let target = target.trim();
            (name == LIBRARY_FILE_NAME && !target.is_empty()).then(|| PathBuf::from(target))
        })
        .collect()
}

/// Runs `ldconfig -p` (on the host root's cache file when there is a host root). A missing `ldconfig` or cache only
/// means that this source has nothing to add.
fn read_ldconfig_cache(host_root: Option<&Path>) -> Vec<PathBuf> {
    let programs = ["/sbin/ldconfig", "/usr/sbin/ldconfig", "ldconfig"];
    for program in programs {
        let mut command = Command::new(program);
        command.arg("--print-cache");
        if let Some(root) = host_root {
            let cache = under_root(Some(root), Path::new("/etc/ld.so.cache"));
            if !cache.exists() {
                return Vec::new();
            }
            command.arg("-C").arg(cache);
        }
        if let Ok(output) = command.output() {
            if output.status.success() {
                return parse_ldconfig_cache(&String::from_utf8_lossy(&output.stdout));
            }
        }
    }
    Vec::new()
}

/// Whether a candidate exists as a file (following symlinks).
pub(crate) fn exists(path: &Path) -> bool {
    path.is_file()
}

#[cfg(test)]
mod tests {
    use super::*;

    const LDCONFIG_OUTPUT: &str = "1234 libs found in cache `/etc/ld.so.cache'\n\
        \tlibdrvdsmi_host.so (libc6,x86-64) => /usr/local/Ascend/driver/lib64/driver/libdrvdsmi_host.so\n\
        \tlibdcmi.so.1 (libc6,x86-64) => /opt/old/libdcmi.so.1\n\
        \tlibdcmi.so (libc6,x86-64) => /usr/local/dcmi/libdcmi.so\n\
        \tlibdcmi.so (libc6) => /usr/lib32/libdcmi.so\n\
        Cache generated by: ldconfig (GNU libc) stable release version 2.36\n";

    #[test]
    fn ldconfig_output_yields_exact_name_matches_in_order() {
        assert_eq!(
            parse_ldconfig_cache(LDCONFIG_OUTPUT),
            [PathBuf::from("/usr/local/dcmi/libdcmi.so"), PathBuf::from("/usr/lib32/libdcmi.so")]
        );
        assert!(parse_ldconfig_cache("").is_empty());
        assert!(parse_ldconfig_cache("libdcmi.so =>   \n").is_empty());
    }

    #[test]
    fn explicit_path_and_environment_variable_are_exclusive() {
        let inputs = SearchInputs {
            explicit: Some(PathBuf::from("/opt/x/libdcmi.so")),
            env_library: Some("/opt/y/libdcmi.so".into()),
            ld_library_path: Some("/a:/b".into()),
            ..SearchInputs::default()
        };
        assert_eq!(candidates(&inputs), [PathBuf::from("/opt/x/libdcmi.so")]);
        let inputs = SearchInputs { explicit: None, ..inputs };
        assert_eq!(candidates(&inputs), [PathBuf::from("/opt/y/libdcmi.so")]);
    }

    #[test]
    fn search_order_is_ld_library_path_then_ldconfig_then_standard_directories() {
        let inputs = SearchInputs {
            ld_library_path: Some("/first::/second".into()),
            ldconfig: vec![PathBuf::from("/cache/libdcmi.so"), PathBuf::from("/first/libdcmi.so")],
            ..SearchInputs::default()
        };
        let found = candidates(&inputs);
        let expected: Vec<PathBuf> = ["/first/libdcmi.so", "/second/libdcmi.so", "/cache/libdcmi.so"]
            .iter()
            .map(PathBuf::from)
            .chain(STANDARD_DIRECTORIES.iter().map(|d| Path::new(d).join(LIBRARY_FILE_NAME)))
            .collect();
        assert_eq!(found, expected);
    }

    #[test]
    fn host_root_prefixes_the_cache_and_standard_directories_only() {
        let inputs = SearchInputs {
            ld_library_path: Some("/container/lib".into()),
            ldconfig: vec![PathBuf::from("/cache/libdcmi.so")],
            host_root: Some(PathBuf::from("/host")),
            ..SearchInputs::default()
        };
        let found = candidates(&inputs);
        assert_eq!(found[0], PathBuf::from("/container/lib/libdcmi.so"));
        assert_eq!(found[1], PathBuf::from("/host/cache/libdcmi.so"));
        assert_eq!(found[2], PathBuf::from("/host/usr/local/dcmi/libdcmi.so"));
        assert_eq!(found.last(), Some(&PathBuf::from("/host/usr/local/Ascend/driver/lib64/libdcmi.so")));
    }

    #[test]
    fn overlong_ld_library_path_is_ignored() {
        let long = format!("/{}", "x".repeat(MAX_ENV_LEN + 1));
        let inputs = SearchInputs { ld_library_path: Some(long.into()), ..SearchInputs::default() };
        assert_eq!(candidates(&inputs).len(), STANDARD_DIRECTORIES.len());
    }
}
