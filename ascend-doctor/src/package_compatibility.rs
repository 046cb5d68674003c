//! Whether installed packages fit each other, judged by what their `version.info` files declare (read by
//! `ascend_node::InstalledSoftware`), never by a table of our own:
//!
//! - firmware and driver: the firmware's `Version` inside one of the driver's `compatible_version_fw` ranges, or,
//!   failing that, the driver's `Version` inside one of the firmware's `compatible_version_drv` ranges. This is the
//!   test of DCMI's `dcmi_get_device_compatibility` (Huawei's driver sources, `dcmi_basic_info_intf.c`), which also
//!   refuses every firmware older than 6.4. A range's ends compare as prefixes too: `[24.1,24.1.]` holds `24.1.rc2`.
//! - CANN and driver: every `required_driver_<interface>_version` of the CANN's components at most the driver's
//!   `<interface>_version`, and the line of the CANN's `innerversion` (`V100R001C19` of `V100R001C19SPC001B231`)
//!   among the driver's `compatible_version` lines (the driver packaging's "compatible_version in version.info for
//!   CANN"). When the driver does not list the line but the CANN's own `compatible_version` lists the driver's, the
//!   pairing is a warning: each side's list only names what was known when it was built.
//!
//! Each [`Finding`] names both files, the fields and their values, and what to install.

use ascend_node::version_info::bracketed_items;
use ascend_node::{CannInstallation, PackageFile};

use super::advice::{Advice, Fix};
use super::check::Status;
use super::compatibility::Version;

/// The oldest firmware DCMI accepts with any driver (`COMPAT_VERSION_START_FW`).
pub const OLDEST_COMPATIBLE_FIRMWARE: &str = "6.4";

/// What the runtime prints when a pairing is wrong, for fixes.
pub const MISMATCH_SYMPTOMS: &str = super::advice::MISMATCH_EN;

/// One judged constraint.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// OK when the constraint holds, WARN or FAIL when not, SKIP when it could not be judged.
    pub status: Status,
    /// What was compared: both files, the fields and their values.
    pub evidence: String,
    /// What to do, when it does not hold, in every language the doctor speaks.
    pub fix: Option<Fix>,
    /// The few words that say the same in a list of constraints that all hold (`ascendhal 4.0.0 <= 7.35.23`).
    pub summary: String,
}

impl Finding {
    fn new(status: Status, evidence: String) -> Finding {
        Finding { status, summary: evidence.clone(), evidence, fix: None }
    }

    fn summary(mut self, summary: String) -> Finding {
        self.summary = summary;
        self
    }

    fn fix(mut self, fix: Advice) -> Finding {
        self.fix = Some(fix.into());
        self
    }
}

/// Whether `version` lies in `[low, high]`, where each end also holds the versions it is a prefix of.
pub fn in_declared_range(version: &Version, low: &Version, high: &Version) -> bool {
    (version >= low || version.starts_with(low)) && (version <= high || version.starts_with(high))
}

/// The ranges of a `[low,high],[low,high]` value, as text and parsed; items that are not two versions are skipped.
fn ranges(value: &str) -> Vec<(String, Version, Version)> {
    bracketed_items(value)
        .into_iter()
        .filter_map(|item| match item.as_slice() {
            [low, high] => Some((format!("[{low},{high}]"), Version::parse(low)?, Version::parse(high)?)),
            _ => None,
        })
        .collect()
}

/// The line of an inner version: `V100R001C18` of `V100R001C18SPC001B233` (up to the digits after the `C` that
/// follows the `R` part); `None` when it does not have that shape.
pub fn inner_version_line(inner: &str) -> Option<&str> {
    let upper = inner.trim();
    let r = upper.find(['R', 'r'])?;
    let c = r + upper[r..].find(['C', 'c'])?;
    let digits = upper[c + 1..].chars().take_while(char::is_ascii_digit).count();
    (digits > 0 && upper.starts_with(['V', 'v'])).then(|| &upper[..c + 1 + digits])
}

/// The lines of a `compatible_version=[V100R001C17],[V100R001C18]` value.
fn lines(value: &str) -> Vec<String> {
    bracketed_items(value).into_iter().flatten().collect()
}

fn field(file: &PackageFile, key: &str) -> String {
    match file.info.entry(key) {
        Some(entry) => format!("{}={} ({}:{})", entry.key, entry.value, file.source, entry.line),
        None => format!("no {key} in {}", file.source),
    }
}

/// A firmware version to judge and where it was read.
struct FirmwareSide<'a> {
    /// The version as read.
    version: &'a str,
    /// How evidence names it: `Version=7.5.0.1.129 (/usr/local/Ascend/firmware/version.info:1)`.
    shown: String,
    /// Which chips run it, for fixes (`NPU 3`); `None` for the installed package's firmware.
    chips: Option<String>,
    /// The firmware package's file, whose `compatible_version_drv` DCMI also consults; `None` for a chip, which may
    /// run another firmware than the package installed.
    package: Option<&'a PackageFile>,
}

/// The firmware against the driver.
pub fn firmware_against_driver(driver: &PackageFile, firmware: &PackageFile) -> Finding {
    let Some(firmware_text) = firmware.version.as_deref() else {
        return Finding::new(Status::Skip, format!("{} declares no Version: firmware not judged", firmware.source));
    };
    let side = FirmwareSide {
        version: firmware_text,
        shown: field(firmware, "Version"),
        chips: None,
        package: Some(firmware),
    };
    judge_firmware(driver, &side)
        .unwrap_or_else(|| Finding::new(Status::Skip, format!("{}: Version is empty", firmware.source)))
}

/// The firmware some chips run, as DCMI reports it for each (`dcmi_get_version`), against the driver: the same
/// ranges as [`firmware_against_driver`], without the package's own list of drivers (the chips may not run what the
/// package installed). `phy_ids` are the chips that reported `reported`.
pub fn chip_firmware_against_driver(driver: &PackageFile, phy_ids: &[u32], reported: &str) -> Finding {
    let chips = npu_list(phy_ids);
    let side = FirmwareSide {
        version: reported,
        shown: format!("{reported} ({chips}, dcmi_get_version)"),
        chips: Some(chips.clone()),
        package: None,
    };
    judge_firmware(driver, &side).unwrap_or_else(|| {
        Finding::new(Status::Skip, format!("{chips}: dcmi_get_version reported {reported:?}, not a version"))
    })
}

/// Chips that run another firmware than the installed package's `Version`: a firmware upgrade that did not reach
/// them, or that waits for the reboot that activates it. `None` when they run the package's firmware (or either
/// version is unreadable).
pub fn chip_firmware_against_package(firmware: &PackageFile, phy_ids: &[u32], reported: &str) -> Option<Finding> {
    let installed = firmware.version.as_deref().and_then(Version::parse)?;
    let running = Version::parse(reported)?;
    if running == installed {
        return None;
    }
    let chips = npu_list(phy_ids);
    let runs = if phy_ids.len() == 1 { "runs" } else { "run" };
    Some(
        Finding::new(
            Status::Warn,
            format!(
                "{chips} {runs} firmware {reported} (dcmi_get_version), not the installed firmware package's {}",
                field(firmware, "Version")
            ),
        )
        .fix(Advice::FirmwareNotActivated { chips, several: phy_ids.len() > 1, reported: reported.to_owned() }),
    )
}

/// `NPU 3`, or `NPU 0, 1, 2` for several chips.
fn npu_list(phy_ids: &[u32]) -> String {
    let ids: Vec<String> = phy_ids.iter().map(u32::to_string).collect();
    format!("NPU {}", ids.join(", "))
}

/// DCMI's pairing test of a firmware and the driver; `None` when the firmware's version is not one.
fn judge_firmware(driver: &PackageFile, firmware: &FirmwareSide<'_>) -> Option<Finding> {
    let firmware_version = Version::parse(firmware.version)?;
    let firmware_side = &firmware.shown;
    let chips = firmware.chips.clone();
    let hdk_of_firmware = firmware.package.and_then(|package| package.info.value("package_version"));
    let driver_text = driver.version.as_deref().unwrap_or("(unknown)");
    let oldest = Version::parse(OLDEST_COMPATIBLE_FIRMWARE).expect("a version");
    if firmware_version < oldest {
        return Some(
            Finding::new(
                Status::Fail,
                format!(
                    "firmware {firmware_side} is older than {OLDEST_COMPATIBLE_FIRMWARE}, which DCMI pairs with no \
                     driver"
                ),
            )
            .fix(Advice::FirmwareTooOld { chips, driver: driver_text.to_owned() }),
        );
    }
    let declared = driver.info.value("compatible_version_fw").map(ranges).unwrap_or_default();
    let driver_field = field(driver, "compatible_version_fw");
    if declared.is_empty() {
        return Some(
            Finding::new(
                Status::Warn,
                format!("{driver_field}: the driver declares no firmware range; firmware {firmware_side} not judged"),
            )
            .fix(Advice::DriverLacksFirmwareRange),
        );
    }
    if let Some((range, ..)) = declared.iter().find(|(_, low, high)| in_declared_range(&firmware_version, low, high)) {
        return Some(Finding::new(
            Status::Ok,
            format!("firmware {firmware_side} is inside {range} of the driver's {driver_field}"),
        ));
    }
    // DCMI's second test: the firmware's own list of drivers.
    let package = firmware.package;
    let accepted_by_firmware = driver.version.as_deref().and_then(Version::parse).and_then(|driver_version| {
        let listed = package.and_then(|file| file.info.value("compatible_version_drv")).map(ranges).unwrap_or_default();
        listed.into_iter().find(|(_, low, high)| in_declared_range(&driver_version, low, high)).map(|(range, ..)| range)
    });
    if let (Some(range), Some(package)) = (accepted_by_firmware, package) {
        return Some(Finding::new(
            Status::Ok,
            format!(
                "firmware {firmware_side} is outside the driver's {driver_field}, but driver {driver_text} is inside \
                 {range} of the firmware's {} (DCMI accepts either)",
                field(package, "compatible_version_drv")
            ),
        ));
    }
    let newest = declared.iter().map(|(_, _, high)| high).max().expect("not empty");
    let declared_text: Vec<&str> = declared.iter().map(|(range, ..)| range.as_str()).collect();
    let (declared, driver) = (declared_text.join(" or "), driver_text.to_owned());
    let (direction, fix) = if &firmware_version > newest {
        let hdk = hdk_of_firmware.map(str::to_owned);
        ("newer than", Advice::FirmwareNewer { chips, hdk, declared, driver })
    } else {
        ("older than", Advice::FirmwareOlder { chips, declared, driver })
    };
    let firmware_list = match package {
        Some(file) if file.info.entry("compatible_version_drv").is_some() => {
            format!("; the firmware's {} does not list driver {driver_text}", field(file, "compatible_version_drv"))
        }
        _ => String::new(),
    };
    Some(
        Finding::new(
            Status::Fail,
            format!(
                "firmware {firmware_side} is {direction} every range of the driver's {driver_field}{firmware_list}"
            ),
        )
        .fix(fix),
    )
}

/// Each `required_driver_<interface>_version` of the installation's components against the driver.
pub fn required_driver_versions(driver: &PackageFile, cann: &CannInstallation) -> Vec<Finding> {
    let mut findings = Vec::new();
    for file in cann.files() {
        for (interface, required) in file.info.with_affixes("required_driver_", "_version") {
            let need = format!("{}={} ({}:{})", required.key, required.value, file.source, required.line);
            let driver_key = format!("{interface}_version");
            let Some(required_version) = Version::parse(&required.value) else {
                findings.push(Finding::new(Status::Warn, format!("{need}: not a version, not judged")));
                continue;
            };
            let Some(has) = driver.info.value(&driver_key).and_then(Version::parse) else {
                findings.push(
                    Finding::new(
                        Status::Warn,
                        format!("{need}, but the driver declares no {driver_key} ({})", driver.source),
                    )
                    .fix(Advice::InterfaceMissing { interface: interface.to_owned(), cann: cann.label() }),
                );
                continue;
            };
            let have = field(driver, &driver_key);
            if has >= required_version {
                findings.push(
                    Finding::new(Status::Ok, format!("{need} is met by the driver's {have}"))
                        .summary(format!("{interface} {} <= {has}", required.value)),
                );
            } else {
                findings.push(Finding::new(Status::Fail, format!("{need} is newer than the driver's {have}")).fix(
                    Advice::InterfaceTooOld {
                        driver_key,
                        required: required.value.clone(),
                        cann_version: cann.version.as_deref().unwrap_or("(this one)").to_owned(),
                        has: has.to_string(),
                    },
                ));
            }
        }
    }
    findings
}

/// The installation's inner version line against the driver's `compatible_version`.
pub fn inner_version_listed(driver: &PackageFile, cann: &CannInstallation) -> Finding {
    let Some(info) = &cann.install_info else {
        return Finding::new(Status::Skip, format!("{}: no *_install.info, inner version not judged", cann.label()));
    };
    let Some(line) = cann.inner_version.as_deref().and_then(inner_version_line) else {
        return Finding::new(
            Status::Skip,
            format!("{}: no inner version line, not judged", field(info, "innerversion")),
        );
    };
    let cann_side = field(info, "innerversion");
    let Some(listed) = driver.info.value("compatible_version").map(lines) else {
        return Finding::new(
            Status::Skip,
            format!("no compatible_version in {}: {cann_side} not judged", driver.source),
        );
    };
    let driver_field = field(driver, "compatible_version");
    if listed.iter().any(|item| item.eq_ignore_ascii_case(line)) {
        return Finding::new(Status::Ok, format!("line {line} of {cann_side} is in the driver's {driver_field}"))
            .summary(format!("inner version line {line} listed in the driver's compatible_version"));
    }
    let driver_line = driver.info.value("Innerversion").and_then(inner_version_line);
    let cann_lists_driver = driver_line.is_some_and(|driver_line| {
        info.info
            .value("compatible_version")
            .map(lines)
            .unwrap_or_default()
            .iter()
            .any(|item| item.eq_ignore_ascii_case(driver_line))
    });
    let (listed, line_text) = (listed.join(", "), line.to_owned());
    if cann_lists_driver {
        return Finding::new(
            Status::Warn,
            format!(
                "line {line} of {cann_side} is not in the driver's {driver_field}, though the CANN's {} lists the \
                 driver's line {}",
                field(info, "compatible_version"),
                driver_line.unwrap_or_default()
            ),
        )
        .fix(Advice::InnerLineOneSided { listed, line: line_text });
    }
    Finding::new(Status::Fail, format!("line {line} of {cann_side} is not in the driver's {driver_field}"))
        .fix(Advice::InnerLineMissing { listed, line: line_text })
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascend_node::version_info::VersionInfo;
    use ascend_node::CannComponent;

    fn file(source: &str, text: &str) -> PackageFile {
        let info = VersionInfo::parse(text.as_bytes());
        PackageFile {
            source: source.to_owned(),
            version: info.first_value(&["Version", "package_version"]).map(str::to_owned),
            error: None,
            info,
        }
    }

    const DRIVER: &str = "Version=24.1.rc2.2\nascendhal_version=7.35.23\ndvppkernels_version=1.1\n\
                          Innerversion=V100R001C18SPC001B233\n\
                          compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]\n\
                          compatible_version_fw=[6.4.0,6.4.99],[7.0.0,7.2.99]\npackage_version=24.1.rc2.2\n";

    fn driver() -> PackageFile {
        file("/usr/local/Ascend/driver/version.info", DRIVER)
    }

    fn firmware(text: &str) -> PackageFile {
        file("/usr/local/Ascend/firmware/version.info", text)
    }

    fn cann(inner: &str, cann_lists: &str, ascendhal: &str) -> CannInstallation {
        let base = "/usr/local/Ascend/ascend-toolkit/8.0.RC3";
        CannInstallation {
            package: "ascend-toolkit".to_owned(),
            directory: base.to_owned(),
            version: Some("8.0.RC3".to_owned()),
            inner_version: Some(inner.to_owned()),
            latest: true,
            install_info: Some(file(
                &format!("{base}/x86_64-linux/ascend_toolkit_install.info"),
                &format!("version=8.0.RC3\ninnerversion={inner}\ncompatible_version={cann_lists}\n"),
            )),
            components: vec![CannComponent {
                name: "runtime".to_owned(),
                file: file(
                    &format!("{base}/runtime/version.info"),
                    &format!("Version=7.5.0.1.129\nrequired_driver_ascendhal_version={ascendhal}\nrequired_driver_dvppkernels_version=1.1\n"),
                ),
            }],
        }
    }

    #[test]
    fn inner_version_lines() {
        assert_eq!(inner_version_line("V100R001C18SPC001B233"), Some("V100R001C18"));
        assert_eq!(inner_version_line("V100R001C23B888"), Some("V100R001C23"));
        assert_eq!(inner_version_line("dcmi-sim"), None);
        assert_eq!(inner_version_line("V100R001"), None);
    }

    #[test]
    fn declared_ranges_hold_longer_versions_of_both_ends() {
        let v = |text| Version::parse(text).expect("version");
        assert!(in_declared_range(&v("24.1.rc2.2"), &v("24.1"), &v("24.1.")));
        assert!(in_declared_range(&v("7.1.0.11.220"), &v("7.0.0"), &v("7.2.99")));
        assert!(!in_declared_range(&v("7.5.0.1.129"), &v("7.0.0"), &v("7.2.99")));
        assert!(!in_declared_range(&v("23.0.3"), &v("24.0"), &v("24.0.")));
    }

    #[test]
    fn firmware_inside_either_range_fits_and_outside_names_both_files() {
        let ok = firmware_against_driver(&driver(), &firmware("Version=7.1.0.11.220\n"));
        assert_eq!(ok.status, Status::Ok, "{ok:?}");
        assert!(ok.evidence.contains("inside [7.0.0,7.2.99]"), "{}", ok.evidence);

        let newer = firmware_against_driver(
            &driver(),
            &firmware("Version=7.7.0.1.231\npackage_version=25.0.rc1.1\ncompatible_version_drv=[25.0,25.0.]\n"),
        );
        assert_eq!(newer.status, Status::Fail);
        for wanted in [
            "Version=7.7.0.1.231 (/usr/local/Ascend/firmware/version.info:1)",
            "compatible_version_fw=[6.4.0,6.4.99],[7.0.0,7.2.99] (/usr/local/Ascend/driver/version.info:6)",
            "is newer than",
            "does not list driver 24.1.rc2.2",
        ] {
            assert!(newer.evidence.contains(wanted), "{wanted}: {}", newer.evidence);
        }
        let fix = newer.fix.expect("fix").en;
        assert!(fix.contains("upgrade the driver to the HDK release of the firmware (25.0.rc1.1"), "{fix}");

        let older = firmware_against_driver(&driver(), &firmware("Version=6.5.1\n"));
        assert_eq!(older.status, Status::Fail);
        assert!(older.fix.expect("fix").en.contains("upgrade the firmware to one in [6.4.0,6.4.99] or [7.0.0,7.2.99]"));

        let ancient = firmware_against_driver(&driver(), &firmware("Version=6.3.9\n"));
        assert_eq!(ancient.status, Status::Fail);
        assert!(ancient.evidence.contains("older than 6.4"), "{}", ancient.evidence);
    }

    #[test]
    fn chips_firmware_is_judged_by_the_same_ranges_and_named_by_physical_id() {
        let fits = chip_firmware_against_driver(&driver(), &[0, 3], "7.1.0.11.220");
        assert_eq!(fits.status, Status::Ok, "{fits:?}");
        assert!(
            fits.evidence.contains("7.1.0.11.220 (NPU 0, 3, dcmi_get_version) is inside [7.0.0,7.2.99]"),
            "{fits:?}"
        );

        let older = chip_firmware_against_driver(&driver(), &[5], "6.5.1");
        assert_eq!(older.status, Status::Fail);
        for wanted in [
            "firmware 6.5.1 (NPU 5, dcmi_get_version) is older than every range of the driver's",
            "compatible_version_fw=[6.4.0,6.4.99],[7.0.0,7.2.99] (/usr/local/Ascend/driver/version.info:6)",
        ] {
            assert!(older.evidence.contains(wanted), "{wanted}: {}", older.evidence);
        }
        let fix = older.fix.expect("fix").en;
        assert!(fix.contains("upgrade the firmware of NPU 5 to one in [6.4.0,6.4.99] or [7.0.0,7.2.99]"), "{fix}");

        let newer = chip_firmware_against_driver(&driver(), &[0], "7.7.0.1.231");
        assert_eq!(newer.status, Status::Fail);
        assert!(newer.fix.expect("fix").en.contains("upgrade the driver to the HDK release of the firmware of NPU 0"));

        let garbage = chip_firmware_against_driver(&driver(), &[0], "");
        assert_eq!(garbage.status, Status::Skip, "{garbage:?}");
    }

    #[test]
    fn chips_left_on_another_firmware_than_the_package_are_a_warning() {
        let package = firmware("Version=7.1.0.11.220\n");
        assert_eq!(chip_firmware_against_package(&package, &[0, 1], "7.1.0.11.220"), None);
        let behind = chip_firmware_against_package(&package, &[6], "7.0.0.5.100").expect("a finding");
        assert_eq!(behind.status, Status::Warn);
        assert!(
            behind.evidence.contains(
                "NPU 6 runs firmware 7.0.0.5.100 (dcmi_get_version), not the installed firmware package's \
                 Version=7.1.0.11.220 (/usr/local/Ascend/firmware/version.info:1)"
            ),
            "{}",
            behind.evidence
        );
        assert!(behind.fix.expect("fix").en.contains("reboot the node"));
    }

    #[test]
    fn the_firmwares_own_list_of_drivers_is_dcmis_second_test() {
        let found = firmware_against_driver(
            &driver(),
            &firmware("Version=7.5.0.1.129\ncompatible_version_drv=[23.0.0,23.0.0.],[24.1,24.1.]\n"),
        );
        assert_eq!(found.status, Status::Ok, "{found:?}");
        assert!(
            found.evidence.contains("inside [24.1,24.1.] of the firmware's compatible_version_drv"),
            "{}",
            found.evidence
        );
    }

    #[test]
    fn required_driver_interfaces_are_floors() {
        let findings = required_driver_versions(&driver(), &cann("V100R001C18SPC001B231", "[V100R001C18]", "4.0.0"));
        assert_eq!(findings.len(), 2);
        assert!(findings.iter().all(|f| f.status == Status::Ok), "{findings:?}");

        let findings = required_driver_versions(&driver(), &cann("V100R001C18SPC001B231", "[V100R001C18]", "7.36.0"));
        let failed = &findings[0];
        assert_eq!(failed.status, Status::Fail);
        assert!(failed.evidence.contains(
            "required_driver_ascendhal_version=7.36.0 (/usr/local/Ascend/ascend-toolkit/8.0.RC3/runtime/version.info:2) \
             is newer than the driver's ascendhal_version=7.35.23 (/usr/local/Ascend/driver/version.info:2)"
        ), "{}", failed.evidence);
        assert!(failed.fix.as_ref().expect("fix").en.contains("ascendhal_version is at least 7.36.0"));

        let mut without = driver();
        without.info = VersionInfo::parse(b"Version=24.1.rc2.2\ndvppkernels_version=1.1\n");
        let findings = required_driver_versions(&without, &cann("V100R001C18SPC001B231", "[V100R001C18]", "4.0.0"));
        assert_eq!(findings[0].status, Status::Warn, "{findings:?}");
    }

    #[test]
    fn the_inner_version_line_must_be_listed_by_the_driver() {
        let listed = inner_version_listed(&driver(), &cann("V100R001C17SPC002B100", "[V100R001C17]", "4.0.0"));
        assert_eq!(listed.status, Status::Ok, "{listed:?}");

        let unlisted = inner_version_listed(&driver(), &cann("V100R001C21SPC001B231", "[V100R001C21]", "4.0.0"));
        assert_eq!(unlisted.status, Status::Fail);
        assert!(
            unlisted.evidence.contains("line V100R001C21 of innerversion=V100R001C21SPC001B231"),
            "{}",
            unlisted.evidence
        );
        assert!(unlisted.evidence.contains("/usr/local/Ascend/driver/version.info:5"), "{}", unlisted.evidence);
        let fix = unlisted.fix.expect("fix").en;
        assert!(fix.contains("one of V100R001C30, V100R001C13, V100R001C15, V100R001C17, V100R001C18"), "{fix}");

        let one_sided =
            inner_version_listed(&driver(), &cann("V100R001C21SPC001B231", "[V100R001C18],[V100R001C21]", "4.0.0"));
        assert_eq!(one_sided.status, Status::Warn, "{one_sided:?}");
    }
}
