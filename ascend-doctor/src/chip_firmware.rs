//! driver.chip_firmware: the firmware each chip runs, as DCMI reports it (`dcmi_get_version`), against the driver's
//! `compatible_version_fw`, by the rules the firmware's `version.info` is judged by
//! ([`package_compatibility`](super::package_compatibility)). The file says what was installed; the chips say what
//! runs. After a partial upgrade, or before the reboot that activates a new firmware, the two differ, and a chip that
//! the driver refuses fails its jobs although the file looks right.

use std::collections::BTreeMap;

use ascend_node::DRIVER_VERSION_INFO;

use super::advice::{Advice, Fix};
use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};
use super::package_compatibility::{chip_firmware_against_driver, chip_firmware_against_package};
use super::version_checks::usable_driver;

/// driver.chip_firmware: every chip's firmware inside the driver's `compatible_version_fw`, and the same as the
/// installed firmware package's.
pub fn chip_firmware(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "driver.chip_firmware",
        Section::Driver,
        "Every chip's firmware matches the driver",
        Status::Ok,
    );
    let Some(manager) = facts.manager.clone() else {
        return check
            .evidence("not checked: the driver is not initialised (see driver.dcmi_init)")
            .with_status(Status::Skip);
    };
    let chips = match manager.chips() {
        Ok(chips) => chips,
        Err(error) => {
            return check
                .evidence(format!("the driver cannot list its chips: {error} (see driver.chips_healthy)"))
                .with_status(Status::Skip)
        }
    };
    // Chips by the firmware they report, each version judged once.
    let mut by_version: BTreeMap<String, Vec<u32>> = BTreeMap::new();
    let mut unsupported = Vec::new();
    let mut failed = Vec::new();
    for ids in &chips {
        match manager.firmware_version(ids.logic) {
            Ok(version) => by_version.entry(version).or_default().push(ids.phy.0),
            Err(error) if error.is_unsupported() => unsupported.push(format!("NPU {}: {error}", ids.phy.0)),
            Err(error) => failed.push(format!("NPU {}: {error}", ids.phy.0)),
        }
    }
    if by_version.is_empty() && failed.is_empty() {
        let reason = unsupported.first().cloned().unwrap_or_else(|| "the driver reports no chips".to_owned());
        return check
            .evidence(format!(
                "the driver reports no firmware per chip ({reason}): only the firmware's version.info is judged \
                 (driver.firmware)"
            ))
            .with_status(Status::Skip);
    }
    let software = facts.software(&options.host);
    let Some(driver) = usable_driver(software) else {
        let reported = by_version.iter().map(|(version, phys)| format!("{version} on {} chip(s)", phys.len()));
        return check
            .evidence(format!(
                "{DRIVER_VERSION_INFO} missing or without Version: the chips' firmware ({}) not judged (see \
                 versions.driver)",
                reported.collect::<Vec<_>>().join(", ")
            ))
            .with_status(Status::Skip);
    };
    let package = software.firmware.as_ref().filter(|file| file.error.is_none());
    let mut status = Status::Ok;
    let mut evidence = Vec::new();
    let mut fixes = Vec::new();
    for (version, phy_ids) in &mut by_version {
        phy_ids.sort_unstable();
        let mut findings = vec![chip_firmware_against_driver(driver, phy_ids, version)];
        findings.extend(package.and_then(|file| chip_firmware_against_package(file, phy_ids, version)));
        for finding in findings {
            status = status.max(finding.status);
            evidence.push(finding.evidence);
            fixes.extend(finding.fix);
        }
    }
    if !failed.is_empty() {
        status = status.max(Status::Warn);
        evidence.extend(failed);
        fixes.push(Advice::ChipFirmwareUnknown.into());
    }
    evidence.extend(unsupported);
    let check = check.evidence_lines(evidence).with_status(status);
    if fixes.is_empty() {
        check
    } else {
        check.advise(Fix::join(fixes, "\n"))
    }
}
