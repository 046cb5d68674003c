//! The version of a program installed on the host, read from files: never by running the program.
//!
//! The doctor diagnoses a tree it is pointed at (`--root`): the host itself, `/host` in a container, a mounted disk,
//! an unpacked image. Running `<root>/usr/bin/kubelet --version` would execute, as root, whatever file sits there,
//! and would fail anyway for a binary of another architecture or one whose libraries are not below the root. So the
//! doctor reads two kinds of files instead, bounded in size:
//!
//! - **the binary's build settings.** Go (1.18 and newer) records the build's `-ldflags` in every binary built
//!   without `-trimpath` (what `go version -m <binary>` prints). Kubernetes, containerd and Docker set their version
//!   with `-X <package>.<variable>=<version>`, so the version is the text after, for example,
//!   `k8s.io/component-base/version.gitVersion=`. This is what the file that runs says about itself.
//! - **the package database** (`/var/lib/dpkg/status`, Debian and Ubuntu): the version a package installed. It
//!   covers programs whose version is a compiled-in constant (CRI-O, podman) and builds that strip their settings.
//!
//! A binary scan streams the file in chunks (a kubelet is about 100 MB) and stops at the first match.

use std::fs::File;
use std::io::{self, Read};

use memchr::memmem;

use super::error::{Error, Result};
use super::host::HostRoot;

/// The package database of Debian-family hosts.
pub const DPKG_STATUS: &str = "/var/lib/dpkg/status";

/// The largest binary scanned (kubelet, dockerd and containerd are 50 to 150 MB).
pub const MAX_BINARY_BYTES: u64 = 512 * 1024 * 1024;

/// The longest version text accepted after a setting's `=`.
const MAX_VERSION_LENGTH: usize = 64;

const CHUNK_BYTES: usize = 1024 * 1024;

/// A version and where it was read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundVersion {
    /// The version text as written (`v1.29.3`, `1.7.20`, `4.3.1+ds1-8`).
    pub version: String,
    /// Where it came from, for evidence (`/usr/bin/kubelet (build setting k8s.io/...gitVersion)`).
    pub source: String,
}

fn is_version_byte(byte: u8) -> bool {
    byte.is_ascii_alphanumeric() || matches!(byte, b'.' | b'-' | b'+' | b'~' | b'_')
}

/// The version text at the start of `bytes`: version characters up to the first other byte.
fn version_at(bytes: &[u8]) -> Option<String> {
    let length = bytes.iter().take(MAX_VERSION_LENGTH + 1).take_while(|byte| is_version_byte(**byte)).count();
    if length == 0 || length > MAX_VERSION_LENGTH || !bytes[0].is_ascii_alphanumeric() {
        return None;
    }
    Some(String::from_utf8_lossy(&bytes[..length]).into_owned())
}

/// The value of the first `<setting>=<version>` in the stream, for any of `settings` (each without the `=`).
///
/// # Errors
/// The read error.
pub fn setting_in_stream(mut stream: impl Read, settings: &[&str]) -> io::Result<Option<String>> {
    let needles: Vec<Vec<u8>> = settings.iter().map(|setting| format!("{setting}=").into_bytes()).collect();
    let longest = needles.iter().map(Vec::len).max().unwrap_or(0);
    // A match may straddle two chunks: keep the tail of the previous chunk, long enough for a needle and its value.
    let keep = longest + MAX_VERSION_LENGTH + 1;
    let mut window: Vec<u8> = Vec::with_capacity(CHUNK_BYTES + keep);
    let mut chunk = vec![0u8; CHUNK_BYTES];
    loop {
        let read = stream.read(&mut chunk)?;
        window.extend_from_slice(&chunk[..read]);
        let at_end = read == 0;
        for needle in &needles {
            if let Some(position) = memmem::find(&window, needle) {
                let value_start = position + needle.len();
                let complete = at_end || window.len() - value_start > MAX_VERSION_LENGTH;
                if complete {
                    return Ok(version_at(&window[value_start..]));
                }
            }
        }
        if at_end {
            return Ok(None);
        }
        if window.len() > keep {
            window.drain(..window.len() - keep);
        }
    }
}

/// The version a build setting of the binary at `host_path` records (see the module docs).
///
/// # Errors
/// [`Error::Io`] naming the file when it cannot be read, [`Error::BinaryTooLarge`] when it is larger than
/// [`MAX_BINARY_BYTES`].
pub fn binary_setting(host: &HostRoot, host_path: &str, settings: &[&str]) -> Result<Option<FoundVersion>> {
    let real = host.path(host_path);
    let failed = |source| Error::io(host_path, source);
    let file = File::open(&real).map_err(failed)?;
    let size = file.metadata().map_err(failed)?.len();
    if size > MAX_BINARY_BYTES {
        return Err(Error::BinaryTooLarge { path: host_path.into(), size, limit: MAX_BINARY_BYTES });
    }
    let found = setting_in_stream(file, settings).map_err(failed)?;
    Ok(found.map(|version| FoundVersion {
        source: format!("{host_path} (build setting {})", settings.first().copied().unwrap_or("")),
        version,
    }))
}

/// The first of `host_paths` that exists (a file), with the version its build settings record, if any.
pub fn first_binary(host: &HostRoot, host_paths: &[&str], settings: &[&str]) -> Option<(String, Option<FoundVersion>)> {
    let path = host_paths.iter().find(|path| host.path(path).is_file())?;
    let found = binary_setting(host, path, settings).ok().flatten();
    Some(((*path).to_owned(), found))
}

/// The installed version of the first of `packages` in a dpkg status text.
pub fn dpkg_version_in(status: &str, packages: &[&str]) -> Option<(String, String)> {
    for paragraph in status.split("\n\n") {
        let field = |name: &str| {
            paragraph.lines().find_map(|line| line.strip_prefix(name).and_then(|rest| rest.strip_prefix(':')))
        };
        let Some(package) = field("Package").map(str::trim) else { continue };
        if !packages.contains(&package) {
            continue;
        }
        let installed = field("Status").is_some_and(|status| status.trim().ends_with(" installed"));
        if let (true, Some(version)) = (installed, field("Version")) {
            return Some((package.to_owned(), version.trim().to_owned()));
        }
    }
    None
}

/// The version dpkg installed for the first of `packages` found, if the host has a dpkg database.
pub fn dpkg_version(host: &HostRoot, packages: &[&str]) -> Option<FoundVersion> {
    let status = host.read_to_string(DPKG_STATUS).ok()?;
    let (package, version) = dpkg_version_in(&status, packages)?;
    Some(FoundVersion { version, source: format!("{DPKG_STATUS} (package {package})") })
}

/// `major.minor` of a version such as `v1.29.3`, `1.7.20`, `4.3.1+ds1-8` or `2:25.0.3-1` (a dpkg epoch is
/// skipped).
pub fn major_minor(version: &str) -> Option<(u32, u32)> {
    let without_epoch = version.split_once(':').map_or(version, |(_, rest)| rest);
    let trimmed = without_epoch.trim().trim_start_matches(['v', 'V']);
    let mut parts = trimmed.split(|c: char| !c.is_ascii_digit());
    let major = parts.next()?.parse().ok()?;
    let minor = parts.next()?.parse().ok()?;
    Some((major, minor))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KUBELET_SETTING: &str = "k8s.io/component-base/version.gitVersion";

    #[test]
    fn a_setting_is_found_across_chunk_boundaries() {
        for padding in [0, 17, CHUNK_BYTES - 30, CHUNK_BYTES - 3, CHUNK_BYTES + 5] {
            let mut bytes = vec![0xffu8; padding];
            bytes.extend_from_slice(b"build\t-ldflags=\"-X 'k8s.io/component-base/version.gitVersion=v1.25.16' -X x\"");
            bytes.extend(vec![0u8; 100]);
            let found = setting_in_stream(&bytes[..], &[KUBELET_SETTING]).expect("read");
            assert_eq!(found.as_deref(), Some("v1.25.16"), "padding {padding}");
        }
    }

    #[test]
    fn a_value_at_the_very_end_and_no_value_at_all() {
        let found = setting_in_stream(&b"xx k8s.io/component-base/version.gitVersion=v1.30.1"[..], &[KUBELET_SETTING]);
        assert_eq!(found.expect("read").as_deref(), Some("v1.30.1"));
        let found = setting_in_stream(&b"k8s.io/component-base/version.gitVersion='"[..], &[KUBELET_SETTING]);
        assert_eq!(found.expect("read"), None);
        assert_eq!(setting_in_stream(&b"nothing here"[..], &[KUBELET_SETTING]).expect("read"), None);
    }

    #[test]
    fn dpkg_paragraphs_of_installed_packages_only() {
        let status = "Package: kubelet\nStatus: deinstall ok config-files\nVersion: 1.24.0-00\n\n\
                      Package: containerd.io\nStatus: install ok installed\nArchitecture: amd64\nVersion: 1.7.20-1\n";
        assert_eq!(dpkg_version_in(status, &["kubelet"]), None);
        assert_eq!(
            dpkg_version_in(status, &["containerd", "containerd.io"]),
            Some(("containerd.io".to_owned(), "1.7.20-1".to_owned()))
        );
    }

    #[test]
    fn major_and_minor_of_the_usual_spellings() {
        assert_eq!(major_minor("v1.29.3+k3s1"), Some((1, 29)));
        assert_eq!(major_minor("1.7.20-1"), Some((1, 7)));
        assert_eq!(major_minor("5:25.0.3-1~debian.12~bookworm"), Some((25, 0)));
        assert_eq!(major_minor("4.3.1+ds1-8+deb12u1"), Some((4, 3)));
        assert_eq!(major_minor("devel"), None);
    }
}
