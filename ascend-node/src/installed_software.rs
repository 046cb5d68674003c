//! The Ascend software installed under a root directory, as its packages declare it in their `version.info` files:
//! the driver, the firmware, and every CANN installation side by side.
//!
//! Where the files are (Huawei's installation guides; the driver's own packaging writes the first):
//!
//! | file | what it declares |
//! |---|---|
//! | `/usr/local/Ascend/driver/version.info` | `Version`, the interface versions (`ascendhal_version`, `aicpu_version`, `tdt_version`, `dvppkernels_version`, `tsfw_version`...), `Innerversion`, `compatible_version` (the CANN inner version lines it works with), `compatible_version_fw` (the firmware ranges it accepts) |
//! | `/usr/local/Ascend/firmware/version.info` | `Version`, `package_version`, `compatible_version_drv` (the driver ranges it accepts) |
//! | `/usr/local/Ascend/<home>/<version>/<arch>-linux/ascend_<package>_install.info` | a CANN package's `version`, `innerversion`, `compatible_version` |
//! | `/usr/local/Ascend/<home>/<version>/<component>/version.info` | a CANN component's (`runtime`, `compiler`, `opp`...) `Version` and its `required_driver_<interface>_version` floors |
//!
//! `<home>` is one of [`CANN_HOMES`] (the toolkit, nnrt, nnae), each holding one directory per installed version
//! and a `latest` link to the one in use (`set_env.sh` points the environment at `latest`). Links are followed
//! inside the root, so the same reading works on `/`, on `/host` in a container and on an unpacked image.
//!
//! Every file is parsed with [`VersionInfo`], which keeps unknown keys and reports damaged lines; a file that cannot
//! be read is kept with the error.

use std::fs;
use std::io::Read;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::version_info::VersionInfo;

/// The driver's `version.info`, a host path.
pub const DRIVER_VERSION_INFO: &str = "/usr/local/Ascend/driver/version.info";

/// The firmware's `version.info`, a host path.
pub const FIRMWARE_VERSION_INFO: &str = "/usr/local/Ascend/firmware/version.info";

/// Where Huawei's packages install, a host path.
pub const ASCEND_HOME: &str = "/usr/local/Ascend";

/// The CANN homes below [`ASCEND_HOME`]: the development toolkit, the inference runtime (nnrt) and the training
/// runtime (nnae).
pub const CANN_HOMES: [&str; 3] = ["ascend-toolkit", "nnrt", "nnae"];

/// The most bytes read from one file.
const MAX_FILE_BYTES: u64 = 1024 * 1024;

/// One version file found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PackageFile {
    /// Its host path.
    pub source: String,
    /// The version it declares (`Version`, `version` or `package_version`).
    pub version: Option<String>,
    /// Why it could not be read, when it could not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Its entries and damaged lines.
    #[serde(skip)]
    pub info: VersionInfo,
}

/// A component of a CANN installation (`runtime`, `compiler`, `opp`...) and its `version.info`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CannComponent {
    /// The directory name.
    pub name: String,
    /// Its `version.info`.
    #[serde(flatten)]
    pub file: PackageFile,
}

/// One installed version of a CANN package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CannInstallation {
    /// The home it is in (`ascend-toolkit`, `nnrt`, `nnae`).
    pub package: String,
    /// The version directory, a host path.
    pub directory: String,
    /// The release (`8.0.RC3`): from the install info, else `version.cfg`, else the directory name.
    pub version: Option<String>,
    /// The inner version (`V100R001C19SPC001B231`) of the install info.
    pub inner_version: Option<String>,
    /// Whether the home's `latest` is this installation.
    pub latest: bool,
    /// The `<arch>-linux/ascend_<package>_install.info`, when there is one.
    pub install_info: Option<PackageFile>,
    /// The components with a `version.info`, by name.
    pub components: Vec<CannComponent>,
}

impl CannInstallation {
    /// Every file of the installation: the install info, then the components'.
    pub fn files(&self) -> impl Iterator<Item = &PackageFile> {
        self.install_info.iter().chain(self.components.iter().map(|component| &component.file))
    }

    /// `package version` for evidence: `ascend-toolkit 8.0.RC3 (latest)`.
    pub fn label(&self) -> String {
        let version = self.version.as_deref().unwrap_or("(version unknown)");
        let latest = if self.latest { " (latest)" } else { "" };
        format!("{} {version}{latest}", self.package)
    }
}

/// What is installed under a root.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstalledSoftware {
    /// The driver's `version.info`.
    pub driver: Option<PackageFile>,
    /// The firmware's `version.info`.
    pub firmware: Option<PackageFile>,
    /// Every CANN installation, by home and directory name.
    pub cann: Vec<CannInstallation>,
}

impl InstalledSoftware {
    /// Reads what is installed under `root` (`/` for this machine).
    pub fn read(root: &Path) -> InstalledSoftware {
        let below = Below { root };
        InstalledSoftware {
            driver: below.package_file(Path::new(DRIVER_VERSION_INFO)),
            firmware: below.package_file(Path::new(FIRMWARE_VERSION_INFO)),
            cann: CANN_HOMES.iter().flat_map(|home| below.cann_home(home)).collect(),
        }
    }

    /// Every file read, for reporting their damaged lines.
    pub fn files(&self) -> impl Iterator<Item = &PackageFile> {
        self.driver.iter().chain(self.firmware.iter()).chain(self.cann.iter().flat_map(CannInstallation::files))
    }
}

/// Host paths below a root.
struct Below<'a> {
    root: &'a Path,
}

/// `path` with `.` dropped and `..` applied, as an absolute host path.
fn normalised(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    for component in path.components() {
        match component {
            Component::Normal(part) => out.push(part),
            Component::ParentDir => {
                out.pop();
            }
            _ => {}
        }
    }
    out
}

impl Below<'_> {
    fn real(&self, host: &Path) -> PathBuf {
        let mut real = self.root.to_path_buf();
        for component in normalised(host).components() {
            if let Component::Normal(part) = component {
                real.push(part);
            }
        }
        real
    }

    fn package_file(&self, host: &Path) -> Option<PackageFile> {
        let real = self.real(host);
        fs::symlink_metadata(&real).ok()?;
        let source = host.display().to_string();
        let read = fs::File::open(&real).and_then(|file| {
            let mut bytes = Vec::new();
            file.take(MAX_FILE_BYTES).read_to_end(&mut bytes).map(|_| bytes)
        });
        Some(match read {
            Ok(bytes) => {
                let info = VersionInfo::parse(&bytes);
                let version = info.first_value(&["Version", "package_version"]).map(str::to_owned);
                PackageFile { source, version, error: None, info }
            }
            Err(error) => {
                PackageFile { source, version: None, error: Some(error.to_string()), info: VersionInfo::default() }
            }
        })
    }

    fn names(&self, host: &Path) -> Vec<String> {
        let mut names: Vec<String> = fs::read_dir(self.real(host))
            .map(|entries| {
                entries.filter_map(Result::ok).map(|e| e.file_name().to_string_lossy().into_owned()).collect()
            })
            .unwrap_or_default();
        names.sort();
        names
    }

    fn is_dir(&self, host: &Path) -> bool {
        fs::symlink_metadata(self.real(host)).is_ok_and(|metadata| metadata.is_dir())
    }

    /// Where the link at `host` points, as a host path (absolute targets are host paths too).
    fn link_target(&self, host: &Path) -> Option<PathBuf> {
        let target = fs::read_link(self.real(host)).ok()?;
        let base = host.parent().unwrap_or(Path::new("/"));
        Some(normalised(&if target.is_absolute() { target } else { base.join(target) }))
    }

    /// The directory name in `home` that `latest` is: the link's target, or, for a `latest` directory of links to
    /// the components of one version (older installers), the version they point into.
    fn latest_of(&self, home: &Path) -> Option<String> {
        let latest = home.join("latest");
        let in_home = |target: PathBuf| -> Option<String> {
            let relative = target.strip_prefix(home).ok()?;
            let first = relative.components().next()?;
            Some(first.as_os_str().to_string_lossy().into_owned())
        };
        if let Some(target) = self.link_target(&latest) {
            return in_home(target);
        }
        if !self.is_dir(&latest) {
            return None;
        }
        self.names(&latest)
            .iter()
            .filter_map(|name| self.link_target(&latest.join(name)))
            .find_map(in_home)
            .or_else(|| Some("latest".to_owned()))
    }

    fn cann_home(&self, name: &str) -> Vec<CannInstallation> {
        let home = Path::new(ASCEND_HOME).join(name);
        let latest = self.latest_of(&home);
        self.names(&home)
            .into_iter()
            .filter(|entry| {
                let path = home.join(entry);
                // `latest` is listed under the version it points to, unless it is the installation itself.
                (entry != "latest" || latest.as_deref() == Some("latest")) && self.is_dir(&path)
            })
            .filter_map(|entry| self.cann_installation(name, &home, &entry, latest.as_deref() == Some(entry.as_str())))
            .collect()
    }

    fn cann_installation(&self, package: &str, home: &Path, name: &str, latest: bool) -> Option<CannInstallation> {
        let directory = home.join(name);
        let children = self.names(&directory);
        let install_info = children
            .iter()
            .filter(|child| child.ends_with("-linux"))
            .flat_map(|child| {
                let dir = directory.join(child);
                self.names(&dir).into_iter().filter(|file| file.ends_with("_install.info")).map(move |f| dir.join(f))
            })
            .find_map(|path| self.package_file(&path))
            .map(|mut file| {
                file.version = file.info.value("version").map(str::to_owned);
                file
            });
        let components: Vec<CannComponent> = children
            .iter()
            .filter_map(|child| {
                let file = self.package_file(&directory.join(child).join("version.info"))?;
                Some(CannComponent { name: child.clone(), file })
            })
            .collect();
        let version_cfg = self.package_file(&directory.join("version.cfg"));
        if install_info.is_none() && components.is_empty() && version_cfg.is_none() {
            return None;
        }
        let version = install_info
            .as_ref()
            .and_then(|file| file.version.clone())
            .or_else(|| version_cfg.as_ref().and_then(|file| toolkit_cfg_version(&file.info)))
            .or_else(|| (name != "latest").then(|| name.to_owned()));
        let inner_version = install_info.as_ref().and_then(|file| file.info.value("innerversion")).map(str::to_owned);
        Some(CannInstallation {
            package: package.to_owned(),
            directory: directory.display().to_string(),
            version,
            inner_version,
            latest,
            install_info,
            components,
        })
    }
}

/// The release of a toolkit's `version.cfg`: `version=`, or the release after the colon of
/// `runtime_running_version=[<inner>:<release>]` in older toolkits.
fn toolkit_cfg_version(info: &VersionInfo) -> Option<String> {
    if let Some(version) = info.value("version") {
        return Some(version.to_owned());
    }
    let running = info.value("runtime_running_version")?;
    let inner = running.trim_start_matches('[').trim_end_matches(']');
    let release = inner.rsplit_once(':').map_or(inner, |(_, release)| release);
    (!release.is_empty()).then(|| release.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(root: &Path, host: &str, text: &str) {
        let path = root.join(host.trim_start_matches('/'));
        fs::create_dir_all(path.parent().expect("parent")).expect("directories");
        fs::write(path, text).expect("write");
    }

    #[test]
    fn two_toolkits_side_by_side_and_the_one_latest_points_to() {
        let dir = tempfile::tempdir().expect("temp");
        let root = dir.path();
        write(root, DRIVER_VERSION_INFO, "Version=24.1.rc2\nascendhal_version=7.35.23\n");
        write(root, FIRMWARE_VERSION_INFO, "Version=7.5.0.1.129\nbroken\n");
        let toolkit = "/usr/local/Ascend/ascend-toolkit";
        for version in ["8.0.RC3", "7.0.0"] {
            write(
                root,
                &format!("{toolkit}/{version}/x86_64-linux/ascend_toolkit_install.info"),
                &format!("package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion=V100R001C19SPC001B231\n"),
            );
            write(
                root,
                &format!("{toolkit}/{version}/runtime/version.info"),
                "Version=1\nrequired_driver_ascendhal_version=4.0.0\n",
            );
        }
        // An absolute link, as the installer writes it: followed inside the root.
        std::os::unix::fs::symlink(format!("{toolkit}/7.0.0"), root.join(&toolkit[1..]).join("latest")).expect("link");
        write(root, "/usr/local/Ascend/nnrt/latest/version.cfg", "runtime_running_version=[7.0.0.5.242:7.0.RC1]\n");

        let found = InstalledSoftware::read(root);
        assert_eq!(found.driver.as_ref().and_then(|d| d.version.as_deref()), Some("24.1.rc2"));
        let firmware = found.firmware.as_ref().expect("firmware");
        assert_eq!(firmware.info.problems[0].line, 2);
        let labels: Vec<String> = found.cann.iter().map(CannInstallation::label).collect();
        assert_eq!(labels, ["ascend-toolkit 7.0.0 (latest)", "ascend-toolkit 8.0.RC3", "nnrt 7.0.RC1 (latest)"]);
        let latest = &found.cann[0];
        assert_eq!(latest.directory, "/usr/local/Ascend/ascend-toolkit/7.0.0");
        assert_eq!(latest.inner_version.as_deref(), Some("V100R001C19SPC001B231"));
        assert_eq!(latest.components[0].name, "runtime");
        assert_eq!(latest.components[0].file.source, "/usr/local/Ascend/ascend-toolkit/7.0.0/runtime/version.info");
        assert_eq!(found.files().count(), 6);
    }

    #[test]
    fn a_latest_directory_of_component_links_names_its_version_and_links_do_not_leave_the_root() {
        let dir = tempfile::tempdir().expect("temp");
        let root = dir.path();
        let toolkit = root.join("usr/local/Ascend/ascend-toolkit");
        write(root, "/usr/local/Ascend/ascend-toolkit/8.0.0/runtime/version.info", "Version=8.0.0.1\n");
        fs::create_dir_all(toolkit.join("latest")).expect("latest");
        std::os::unix::fs::symlink("../8.0.0/runtime", toolkit.join("latest/runtime")).expect("link");
        // A link that climbs above the root stays below it.
        std::os::unix::fs::symlink("../../../../../../../../etc", toolkit.join("escape")).expect("link");
        let found = InstalledSoftware::read(root);
        assert_eq!(found.cann.len(), 1, "{:?}", found.cann);
        assert!(found.cann[0].latest);
        assert_eq!(found.cann[0].version.as_deref(), Some("8.0.0"));
        assert!(found.driver.is_none() && found.firmware.is_none());
    }
}
