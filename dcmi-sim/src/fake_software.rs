//! The version files of a fake host's driver, firmware and CANN packages ([`FakeSoftware`], public in
//! [`crate::fake_host`]).

/// The driver's interface versions (`<interface>_version=`), as a 24.1 driver declares them.
pub const DRIVER_INTERFACES: [(&str, &str); 7] = [
    ("ascendhal", "7.35.23"),
    ("aicpu", "1.0"),
    ("tdt", "1.0"),
    ("log", "1.0"),
    ("prof", "2.0"),
    ("dvppkernels", "1.1"),
    ("tsfw", "1.0"),
];

/// The driver's `Innerversion`.
pub const DRIVER_INNER_VERSION: &str = "V100R001C19SPC001B124";

/// The CANN inner version lines the driver lists in `compatible_version`.
pub const DRIVER_COMPATIBLE_LINES: [&str; 4] = ["V100R001C15", "V100R001C17", "V100R001C18", "V100R001C19"];

/// The firmware range the driver declares in `compatible_version_fw`.
pub const DRIVER_FIRMWARE_RANGE: (&str, &str) = ("7.0.0", "7.7.99");

/// The firmware version written unless the options say otherwise (inside [`DRIVER_FIRMWARE_RANGE`]).
pub const DEFAULT_FIRMWARE_VERSION: &str = "7.5.0.1.129";

/// The CANN toolkit version written unless the options say otherwise.
pub const DEFAULT_CANN_VERSION: &str = "8.0.RC3";

/// The inner version line of every CANN written unless the options say otherwise (one the driver lists).
pub const DEFAULT_CANN_INNER_LINE: &str = "V100R001C19";

/// What each CANN's runtime requires of the driver's ascendhal unless the options say otherwise.
pub const DEFAULT_REQUIRED_ASCENDHAL: &str = "4.0.0";

/// Where the CANN toolkit's versions live, relative to the root.
pub const TOOLKIT_HOME: &str = "usr/local/Ascend/ascend-toolkit";

/// The driver, firmware and CANN packages of a fake host: their version files, as Huawei's packages write them, so
/// that the tools that read them (the doctor, `ascend-smi info`) meet the real layout and field sets.
///
/// By default the set fits together: the firmware is inside the driver's `compatible_version_fw`, every CANN's
/// `required_driver_*_version` is at most the driver's interface version, and each CANN's inner version line is in the
/// driver's `compatible_version`. Its fields make each kind of mismatch:
///
/// | file (below the root) | written from |
/// |---|---|
/// | `usr/local/Ascend/driver/version.info` | the topology's `driver_version`, [`DRIVER_INTERFACES`], [`DRIVER_INNER_VERSION`], [`DRIVER_COMPATIBLE_LINES`], [`DRIVER_FIRMWARE_RANGE`] |
/// | `usr/local/Ascend/firmware/version.info` | [`FakeSoftware::firmware_version`]; its `compatible_version_drv` holds the driver's release family when the driver accepts the firmware, else only the next family |
/// | `usr/local/Ascend/ascend-toolkit/<version>/<arch>-linux/ascend_toolkit_install.info` | each CANN version: `version`, `innerversion`, `compatible_version` |
/// | `usr/local/Ascend/ascend-toolkit/<version>/{runtime,opp}/version.info` | the components and their `required_driver_*_version` |
/// | `usr/local/Ascend/ascend-toolkit/<version>/version.cfg` | the toolkit's release (`version=`) |
/// | `usr/local/Ascend/ascend-toolkit/latest` | a link to [`FakeSoftware::cann_version`] |
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FakeSoftware {
    /// The CANN toolkit version `latest` points to; `None` writes no CANN at all.
    pub cann_version: Option<String>,
    /// More CANN toolkit versions installed beside it, each fitting the driver.
    pub other_cann_versions: Vec<String>,
    /// The firmware's `Version`; `None` writes no firmware file. One outside [`DRIVER_FIRMWARE_RANGE`] is a mismatch.
    pub firmware_version: Option<String>,
    /// The `required_driver_ascendhal_version` of the runtime of the CANN `latest` points to; one above the driver's
    /// ascendhal ([`DRIVER_INTERFACES`]) is a mismatch.
    pub required_ascendhal: String,
    /// The inner version line of the CANN `latest` points to; one not in [`DRIVER_COMPATIBLE_LINES`] is a mismatch
    /// (its own `compatible_version` then names only itself, so neither side lists the other).
    pub cann_inner_line: String,
}

impl Default for FakeSoftware {
    fn default() -> Self {
        Self {
            cann_version: Some(DEFAULT_CANN_VERSION.to_owned()),
            other_cann_versions: Vec::new(),
            firmware_version: Some(DEFAULT_FIRMWARE_VERSION.to_owned()),
            required_ascendhal: DEFAULT_REQUIRED_ASCENDHAL.to_owned(),
            cann_inner_line: DEFAULT_CANN_INNER_LINE.to_owned(),
        }
    }
}

/// One thing to lay out, relative to the root.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SoftwareEntry {
    /// A file and its text.
    File {
        /// Relative path.
        path: String,
        /// Contents.
        text: String,
    },
    /// A symbolic link.
    Link {
        /// Relative path of the link.
        path: String,
        /// What it points to (relative to its directory).
        target: String,
    },
}

fn bracketed(items: &[&str]) -> String {
    items.iter().map(|item| format!("[{item}]")).collect::<Vec<_>>().join(",")
}

/// `major.minor` of a release (`24.1` of `24.1.rc3`), for ranges that hold a whole release family.
fn family(version: &str) -> String {
    version.split('.').take(2).collect::<Vec<_>>().join(".")
}

/// The family after a release's (`25.1` of `24.1.rc3`).
fn next_family(version: &str) -> String {
    let mut parts = version.split('.');
    let major = parts.next().and_then(|part| part.parse::<u64>().ok()).unwrap_or(0);
    format!("{}.{}", major + 1, parts.next().unwrap_or("0"))
}

impl FakeSoftware {
    /// The driver's `version.info` for a driver release.
    pub fn driver_version_info(&self, driver_version: &str) -> String {
        let mut text = format!("Version={driver_version}\n");
        for (interface, version) in DRIVER_INTERFACES {
            text.push_str(&format!("{interface}_version={version}\n"));
        }
        let (low, high) = DRIVER_FIRMWARE_RANGE;
        text.push_str(&format!(
            "Innerversion={DRIVER_INNER_VERSION}\ncompatible_version={}\ncompatible_version_fw=[{low},{high}]\n\
             package_version={driver_version}\n",
            bracketed(&DRIVER_COMPATIBLE_LINES)
        ));
        text
    }

    /// Every file and link to write for a driver release.
    pub fn entries(&self, driver_version: &str) -> Vec<SoftwareEntry> {
        let mut entries = vec![SoftwareEntry::File {
            path: "usr/local/Ascend/driver/version.info".to_owned(),
            text: self.driver_version_info(driver_version),
        }];
        if let Some(firmware) = &self.firmware_version {
            // A firmware the driver accepts lists the driver's release family; any other lists only the next family,
            // as the firmware of a later HDK release would, so that neither side accepts the other.
            let (low, high) = DRIVER_FIRMWARE_RANGE;
            let accepted =
                [low, high].map(|end| end.split('.').map(|part| part.parse::<u64>().unwrap_or(0)).collect::<Vec<_>>());
            let ours: Vec<u64> = firmware.split('.').map(|part| part.parse::<u64>().unwrap_or(0)).collect();
            let inside = ours >= accepted[0] && ours <= accepted[1];
            let (driver_family, package) = if inside {
                (family(driver_version), driver_version.to_owned())
            } else {
                let next = next_family(driver_version);
                let package = format!("{next}.rc1");
                (next, package)
            };
            entries.push(SoftwareEntry::File {
                path: "usr/local/Ascend/firmware/version.info".to_owned(),
                text: format!(
                    "Version={firmware}\nfirmware_version=1.0\npackage_version={package}\n\
                     compatible_version_drv=[{driver_family},{driver_family}.]\n"
                ),
            });
        }
        let Some(latest) = &self.cann_version else { return entries };
        for version in &self.other_cann_versions {
            entries.extend(cann_entries(version, DEFAULT_CANN_INNER_LINE, DEFAULT_REQUIRED_ASCENDHAL));
        }
        entries.extend(cann_entries(latest, &self.cann_inner_line, &self.required_ascendhal));
        entries.push(SoftwareEntry::Link { path: format!("{TOOLKIT_HOME}/latest"), target: latest.clone() });
        entries.push(SoftwareEntry::File {
            path: format!("{TOOLKIT_HOME}/set_env.sh"),
            text: "# CANN environment (dcmi-sim fake host)\nexport ASCEND_TOOLKIT_HOME=/usr/local/Ascend/ascend-toolkit/latest\n"
                .to_owned(),
        });
        entries
    }
}

/// One CANN toolkit version's files.
fn cann_entries(version: &str, inner_line: &str, required_ascendhal: &str) -> Vec<SoftwareEntry> {
    let arch = std::env::consts::ARCH;
    let directory = format!("{TOOLKIT_HOME}/{version}");
    // A line the driver lists names the driver's lines as its own compatible ones; any other names only itself.
    let compatible = if DRIVER_COMPATIBLE_LINES.contains(&inner_line) {
        bracketed(&DRIVER_COMPATIBLE_LINES)
    } else {
        bracketed(&[inner_line])
    };
    let build = format!("{}.0.0.201", family(version));
    let file = |relative: &str, text: String| SoftwareEntry::File { path: format!("{directory}/{relative}"), text };
    vec![
        file(
            &format!("{arch}-linux/ascend_toolkit_install.info"),
            format!(
                "package_name=Ascend-cann-toolkit\nversion={version}\ninnerversion={inner_line}SPC001B231\n\
                 compatible_version={compatible}\narch={arch}\nos=linux\npath=/{directory}/{arch}-linux\n"
            ),
        ),
        file(
            "runtime/version.info",
            format!(
                "Version={build}\nversion_dir={version}\nrequired_driver_ascendhal_version={required_ascendhal}\n\
                 required_driver_dvppkernels_version=1.1\nrequired_driver_tsfw_version=1.0\n"
            ),
        ),
        file(
            "opp/version.info",
            format!(
                "Version={build}\nversion_dir={version}\nrequired_package_runtime_version=\"{}\"\n\
                 required_driver_aicpu_version=1.0\nrequired_driver_tdt_version=1.0\n",
                family(version)
            ),
        ),
        file(
            "version.cfg",
            format!(
                "# CANN toolkit version (dcmi-sim fake host)\nversion={version}\n\
                 runtime_running_version=[{build}:{version}]\ncompiler_running_version=[{build}:{version}]\n"
            ),
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text_of<'a>(entries: &'a [SoftwareEntry], suffix: &str) -> &'a str {
        entries
            .iter()
            .find_map(|entry| match entry {
                SoftwareEntry::File { path, text } if path.ends_with(suffix) => Some(text.as_str()),
                _ => None,
            })
            .unwrap_or_else(|| panic!("no {suffix} in {entries:?}"))
    }

    #[test]
    fn the_default_set_fits_together() {
        let entries = FakeSoftware::default().entries("24.1.rc3");
        let driver = text_of(&entries, "driver/version.info");
        assert!(driver.contains("ascendhal_version=7.35.23\n"), "{driver}");
        assert!(driver.contains("compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19]\n"));
        assert!(driver.contains("compatible_version_fw=[7.0.0,7.7.99]\n"));
        let firmware = text_of(&entries, "firmware/version.info");
        assert!(firmware.starts_with("Version=7.5.0.1.129\n") && firmware.contains("[24.1,24.1.]"), "{firmware}");
        let install = text_of(&entries, "-linux/ascend_toolkit_install.info");
        assert!(install.contains("version=8.0.RC3\ninnerversion=V100R001C19SPC001B231\n"), "{install}");
        assert!(text_of(&entries, "8.0.RC3/runtime/version.info").contains("required_driver_ascendhal_version=4.0.0\n"));
        assert!(entries.contains(&SoftwareEntry::Link {
            path: "usr/local/Ascend/ascend-toolkit/latest".to_owned(),
            target: "8.0.RC3".to_owned()
        }));
    }

    #[test]
    fn each_mismatch_changes_only_its_file() {
        let software = FakeSoftware {
            cann_version: Some("8.2.RC1".to_owned()),
            other_cann_versions: vec!["8.0.RC3".to_owned()],
            firmware_version: Some("7.8.0.1.100".to_owned()),
            required_ascendhal: "7.36.0".to_owned(),
            cann_inner_line: "V100R001C22".to_owned(),
        };
        let entries = software.entries("24.1.rc3");
        let firmware = text_of(&entries, "firmware/version.info");
        assert!(firmware.starts_with("Version=7.8.0.1.100\n") && firmware.contains("[25.1,25.1.]"), "{firmware}");
        assert!(
            text_of(&entries, "8.2.RC1/runtime/version.info").contains("required_driver_ascendhal_version=7.36.0\n")
        );
        assert!(text_of(&entries, "8.0.RC3/runtime/version.info").contains("required_driver_ascendhal_version=4.0.0\n"));
        let install = text_of(
            &entries,
            "8.2.RC1/x86_64-linux/ascend_toolkit_install.info".replace("x86_64", std::env::consts::ARCH).as_str(),
        );
        assert!(
            install.contains("innerversion=V100R001C22SPC001B231\ncompatible_version=[V100R001C22]\n"),
            "{install}"
        );
        assert!(
            FakeSoftware { cann_version: None, firmware_version: None, ..FakeSoftware::default() }
                .entries("24.1.rc3")
                .len()
                == 1
        );
    }
}
