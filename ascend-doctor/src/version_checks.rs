//! Section 2: the driver, firmware and CANN toolkit versions, against each other and the compatibility table.
//! Mismatches show up at run time as `aclrtSetDevice failed, error code: 10070`, `E10004` or "toolkit version
//! mismatch", so these files are read before anyone suspects the hardware.

use std::path::{Path, PathBuf};

use super::check::{CheckResult, Section, Status};
use super::compatibility::{CompatibilityTable, Placement, Version, VersionRange};
use super::context::{DoctorOptions, Facts};
use ascend_smi::version_files::{
    compatible_firmware_range, driver_version as parse_driver_version, firmware_version, toolkit_version,
    DRIVER_VERSION_FILE, FIRMWARE_VERSION_FILE, TOOLKIT_VERSION_FILE,
};

const MISMATCH_SYMPTOMS: &str =
    "a mismatch shows as `aclrtSetDevice failed, error code: 10070`, `E10004` or \"toolkit version mismatch\"";

/// versions.driver: the driver's `version.info`.
pub fn driver(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("versions.driver", Section::Versions, "Driver version readable", Status::Ok);
    match options.host.read_to_string(DRIVER_VERSION_FILE) {
        Err(error) => check
            .evidence(format!("{DRIVER_VERSION_FILE}: {error}"))
            .fix("the driver is not installed (or not at /usr/local/Ascend/driver): install the Ascend HDK driver package")
            .with_status(Status::Fail),
        Ok(text) => match parse_driver_version(&text) {
            Some(version) => {
                facts.driver_version = Some(version.clone());
                check.evidence(format!("{DRIVER_VERSION_FILE}: Version={version}"))
            }
            None => check
                .evidence(format!("{DRIVER_VERSION_FILE} has no Version= line"))
                .fix("the file is damaged: reinstall the driver package")
                .with_status(Status::Fail),
        },
    }
}

/// versions.firmware: the firmware version, against the range the driver declares and the table.
pub fn firmware(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("versions.firmware", Section::Versions, "Firmware matches the driver", Status::Ok);
    let Some(firmware) =
        options.host.read_to_string(FIRMWARE_VERSION_FILE).ok().and_then(|text| firmware_version(&text))
    else {
        return check
            .evidence(format!("{FIRMWARE_VERSION_FILE} not found or without Version=; firmware not checked"))
            .fix("read the firmware version with `npu-smi info -t board -i <card>` and compare it with the driver's release notes")
            .with_status(Status::Skip);
    };
    let Some(version) = Version::parse(&firmware) else {
        return check.evidence(format!("firmware version {firmware:?} is empty")).with_status(Status::Skip);
    };
    let mut check = check.evidence(format!("{FIRMWARE_VERSION_FILE}: Version={firmware}"));
    let Some(driver) = facts.driver_version.as_deref().and_then(Version::parse) else {
        return check
            .evidence("driver version unknown (see versions.driver): pairing not checked")
            .with_status(Status::Skip);
    };
    let mut problems = Vec::new();
    let declared =
        options.host.read_to_string(DRIVER_VERSION_FILE).ok().and_then(|text| compatible_firmware_range(&text));
    if let Some((low, high)) = declared {
        if let (Some(min), Some(max)) = (Version::parse(&low), Version::parse(&high)) {
            let range = VersionRange { min, max };
            check = check.evidence(format!("driver {driver} declares firmware {range} (compatible_version_fw)"));
            if !range.contains(&version) {
                problems.push(format!("firmware {version} is outside the driver's declared range {range}"));
            }
        }
    }
    let ranges: Vec<(String, VersionRange)> = options
        .compatibility
        .rows_for_driver(&driver)
        .into_iter()
        .filter_map(|row| row.firmware.clone().map(|range| (row.name.clone(), range)))
        .collect();
    if !ranges.is_empty() {
        if ranges.iter().any(|(_, range)| range.contains(&version)) {
            check = check.evidence(format!(
                "table {}: firmware {version} goes with driver {driver}",
                options.compatibility.origin
            ));
        } else {
            let wanted: Vec<String> = ranges.iter().map(|(name, range)| format!("{range} ({name})")).collect();
            problems.push(format!("the table pairs driver {driver} with firmware {}", wanted.join(" or ")));
        }
    }
    if problems.is_empty() {
        return check;
    }
    check
        .evidence_lines(problems)
        .fix(format!(
            "driver and firmware must be a matched pair: install the firmware package of the same HDK release as the \
             driver (Ascend-hdk-<chip>-npu-firmware_<version>.run --full), then reboot; {MISMATCH_SYMPTOMS}"
        ))
        .with_status(Status::Fail)
}

/// The outcome of comparing a toolkit with the driver.
fn toolkit_against_driver(
    check: CheckResult,
    table: &CompatibilityTable,
    driver: Option<&str>,
    toolkit: &str,
    whose: &str,
) -> CheckResult {
    let Some(cann) = Version::parse(toolkit) else {
        return check.evidence(format!("{whose} toolkit version is empty")).with_status(Status::Skip);
    };
    let Some(driver) = driver.and_then(Version::parse) else {
        return check
            .evidence("driver version unknown (see versions.driver): pairing not checked")
            .with_status(Status::Skip);
    };
    let rows = table.rows_for_driver(&driver);
    if rows.is_empty() {
        return check
            .evidence(format!("driver {driver} is in no row of the compatibility table ({})", table.origin))
            .fix(format!(
                "add a row for driver {driver} to your compatibility table (from the HDK and CANN release notes) and \
                 pass it with --compatibility; the built-in table is only an example"
            ))
            .with_status(Status::Warn);
    }
    if let Some(row) = rows.iter().find(|row| row.cann.contains(&cann)) {
        return check.evidence(format!("table row {}: driver {} runs CANN {}", row.label(), row.driver, row.cann));
    }
    let supported: Vec<String> = rows.iter().map(|row| format!("{} ({})", row.cann, row.name)).collect();
    let sources: Vec<String> = rows.iter().map(|row| format!("table {}: row {}", table.origin, row.label())).collect();
    let newer = rows.iter().all(|row| row.cann.place(&cann) == Placement::Above);
    let drivers_for_cann: Vec<String> =
        table.rows_for_cann(&cann).iter().map(|row| format!("{} ({})", row.driver, row.name)).collect();
    let upgrade = if drivers_for_cann.is_empty() {
        format!("no row of the table lists CANN {cann}; check its release notes for the driver it needs")
    } else {
        format!("the table pairs CANN {cann} with driver {}", drivers_for_cann.join(" or "))
    };
    let (evidence, fix) = if newer {
        (
            format!("{whose} CANN {cann} is newer than driver {driver} supports (CANN {})", supported.join(", ")),
            format!(
                "upgrade the driver and firmware ({upgrade}), or use a CANN the driver supports ({}); {MISMATCH_SYMPTOMS}",
                supported.join(", ")
            ),
        )
    } else {
        (
            format!("{whose} CANN {cann} is older than driver {driver} supports (CANN {})", supported.join(", ")),
            format!(
                "upgrade the toolkit to a CANN the driver supports ({}); {MISMATCH_SYMPTOMS}",
                supported.join(", ")
            ),
        )
    };
    check.evidence(evidence).evidence_lines(sources).fix(fix).with_status(Status::Fail)
}

/// versions.cann_host: the host's CANN toolkit against the driver.
pub fn cann_host(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("versions.cann_host", Section::Versions, "Host CANN toolkit matches the driver", Status::Ok);
    let Ok(text) = options.host.read_to_string(TOOLKIT_VERSION_FILE) else {
        return check
            .evidence(format!("{TOOLKIT_VERSION_FILE} not found: no CANN toolkit on the host (images bring their own)"))
            .with_status(Status::Skip);
    };
    let Some(version) = toolkit_version(&text) else {
        return check
            .evidence(format!("{TOOLKIT_VERSION_FILE} has no version= line"))
            .fix("the toolkit installation is damaged: reinstall it (Ascend-cann-toolkit_<version>_linux-<arch>.run --install)")
            .with_status(Status::Fail);
    };
    let check = check.evidence(format!("{TOOLKIT_VERSION_FILE}: version={version}"));
    toolkit_against_driver(check, &options.compatibility, facts.driver_version.as_deref(), &version, "host")
}

/// The `version.cfg` of a toolkit given as a file, a toolkit directory, or an image root directory.
pub fn image_toolkit_file(given: &Path) -> Option<PathBuf> {
    if given.is_file() {
        return Some(given.to_path_buf());
    }
    ["latest/version.cfg", "version.cfg", "usr/local/Ascend/ascend-toolkit/latest/version.cfg"]
        .iter()
        .map(|relative| given.join(relative))
        .find(|candidate| candidate.is_file())
}

/// versions.cann_image: a container image's CANN toolkit (`--image-toolkit`) against the host driver.
pub fn cann_image(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("versions.cann_image", Section::Versions, "Image CANN toolkit matches the driver", Status::Ok);
    let Some(given) = &options.image_toolkit else {
        return check
            .evidence("no image toolkit given")
            .fix("pass --image-toolkit <unpacked image>/usr/local/Ascend/ascend-toolkit to check the CANN an image brings")
            .with_status(Status::Skip);
    };
    let Some(file) = image_toolkit_file(given) else {
        return check
            .evidence(format!(
                "{}: no version.cfg there (looked for latest/version.cfg and version.cfg)",
                given.display()
            ))
            .fix("point --image-toolkit at the image's ascend-toolkit directory or its version.cfg")
            .with_status(Status::Fail);
    };
    let Some(version) = std::fs::read_to_string(&file).ok().and_then(|text| toolkit_version(&text)) else {
        return check
            .evidence(format!("{}: unreadable or without version=", file.display()))
            .fix("rebuild the image with a complete CANN toolkit")
            .with_status(Status::Fail);
    };
    let check = check.evidence(format!("{}: version={version}", file.display()));
    let result =
        toolkit_against_driver(check, &options.compatibility, facts.driver_version.as_deref(), &version, "image");
    match result.status {
        Status::Fail => {
            let fix = result.fix.clone().unwrap_or_default();
            result.fix(format!("{fix}; pin the CANN version in the image build to one the node's driver supports"))
        }
        _ => result,
    }
}
