//! Section 2: the driver's `version.info`, and every CANN installation on the host and in an image against what
//! the driver and the CANN packages declare ([`package_compatibility`](super::package_compatibility)). Mismatches
//! show up at run time as `aclrtSetDevice failed, error code: 10070`, `E10004` or "toolkit version mismatch", so these
//! files are read before anyone suspects the hardware.
//!
//! A site's compatibility table (`--compatibility FILE`, [`compatibility`](super::compatibility)) adds its rows'
//! verdicts; without one, every verdict comes from the installed files.

use ascend_node::{CannInstallation, InstalledSoftware, PackageFile, ASCEND_HOME, CANN_HOMES};

use super::advice::{Advice, Fix};
use super::check::{CheckResult, Section, Status};
use super::compatibility::{CompatibilityTable, Placement, Version};
use super::context::{DoctorOptions, Facts};
use super::error::{Error, Result};
use super::kubernetes_checks::node_name;
use super::package_compatibility::{inner_version_listed, required_driver_versions, Finding};
use super::pod_container::{pod_container_root, PodContainerRoot, PodRef};

/// The running container of `--pod` on this node, through the API server and the runtime's state on the host.
fn running_pod_root(options: &DoctorOptions, pod: &PodRef) -> Result<PodContainerRoot> {
    let api = options.cluster()?;
    let node = node_name(options).ok_or(Error::UnknownNodeName)?;
    pod_container_root(api, &options.host, &node, pod)
}

/// The damaged lines of a file, as `file:line: problem` evidence.
pub fn damaged_lines(file: &PackageFile) -> Vec<String> {
    file.info
        .problems
        .iter()
        .map(|problem| format!("{}:{}: {} (line ignored)", file.source, problem.line, problem.problem))
        .collect()
}

/// The driver's file when it was read and declares a version.
pub fn usable_driver(software: &InstalledSoftware) -> Option<&PackageFile> {
    software.driver.as_ref().filter(|driver| driver.error.is_none() && driver.version.is_some())
}

/// versions.driver: the driver's `version.info`.
pub fn driver(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("versions.driver", Section::Versions, "Driver version readable", Status::Ok);
    let software = facts.software(&options.host);
    let path = ascend_node::DRIVER_VERSION_INFO;
    let Some(driver) = &software.driver else {
        return check
            .evidence(format!("{path}: not found"))
            .advise(Advice::DriverNotInstalled)
            .with_status(Status::Fail);
    };
    if let Some(error) = &driver.error {
        return check.evidence(format!("{path}: {error}")).advise(Advice::DriverUnreadable).with_status(Status::Fail);
    }
    let Some(version) = driver.version.clone() else {
        return check
            .evidence(format!("{path} has no Version= line"))
            .advise(Advice::DriverNoVersion)
            .with_status(Status::Fail);
    };
    let mut check = check.evidence(format!("{path}: Version={version}"));
    for key in ["Innerversion", "compatible_version", "compatible_version_fw"] {
        if let Some(value) = driver.info.value(key) {
            check = check.evidence(format!("{key}={value}"));
        }
    }
    let interfaces: Vec<String> = driver
        .info
        .with_affixes("", "_version")
        .filter(|(name, _)| !matches!(name.to_ascii_lowercase().as_str(), "compatible" | "package"))
        .map(|(name, entry)| format!("{name} {}", entry.value))
        .collect();
    if !interfaces.is_empty() {
        check = check.evidence(format!("interfaces: {}", interfaces.join(", ")));
    }
    let damaged = damaged_lines(driver);
    facts.driver_version = Some(version);
    if damaged.is_empty() {
        return check;
    }
    check.evidence_lines(damaged).advise(Advice::DriverDamagedLines).with_status(Status::Warn)
}

/// Which installations a verdict is about: the host's or an image's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Whose {
    Host,
    Image,
}

/// Judges every installation against the driver into one check: the installations `latest` points to decide the
/// status; a failing installation beside them is a warning, since nothing uses it unless pointed at it.
fn judge(
    mut check: CheckResult,
    driver: &PackageFile,
    installations: &[CannInstallation],
    table: Option<&CompatibilityTable>,
    whose: Whose,
) -> CheckResult {
    let mut status = Status::Skip;
    let mut fixes: Vec<Fix> = Vec::new();
    for installation in installations {
        let in_use = installation.latest
            || !installations.iter().any(|other| other.latest && other.package == installation.package);
        let label = match whose {
            Whose::Host => installation.label(),
            Whose::Image => format!("image {}", installation.label()),
        };
        let mut findings = required_driver_versions(driver, installation);
        findings.push(inner_version_listed(driver, installation));
        for file in installation.files() {
            let damaged = damaged_lines(file);
            if !damaged.is_empty() {
                let evidence = damaged.join("\n");
                findings.push(Finding {
                    status: Status::Warn,
                    summary: evidence.clone(),
                    evidence,
                    fix: Some(
                        Advice::CannFileDamaged { package: installation.package.clone(), file: file.source.clone() }
                            .into(),
                    ),
                });
            }
        }
        let mut failed = false;
        let mut holding = Vec::new();
        let mut problems = false;
        for finding in findings {
            let finding_status = if !in_use && finding.status == Status::Fail {
                failed = true;
                Status::Warn
            } else {
                finding.status
            };
            status = status.max(finding_status);
            if finding_status == Status::Ok {
                // What holds is one line per installation; what does not is shown in full.
                holding.push(finding.summary);
                continue;
            }
            problems |= finding_status != Status::Skip;
            check = check.evidence(format!("{label}: {}", finding.evidence));
            if let Some(fix) = finding.fix.filter(|_| in_use) {
                let fix = fix.labelled(&label);
                if !fixes.contains(&fix) {
                    fixes.push(fix);
                }
            }
        }
        if !holding.is_empty() {
            let otherwise = if problems { "otherwise " } else { "" };
            check = check.evidence(format!(
                "{label}: {otherwise}fits the driver ({} against {}): {}",
                installation.directory,
                driver.source,
                holding.join(", ")
            ));
        }
        if failed {
            let latest = installations.iter().find(|other| other.latest && other.package == installation.package);
            fixes.push(
                Advice::CannNotInUse { label: label.clone(), latest: latest.map(CannInstallation::label) }.into(),
            );
        }
    }
    if let Some(table) = table {
        for installation in installations.iter().filter(|installation| installation.latest) {
            let row = table_verdict(table, driver, installation, whose);
            status = status.max(row.status);
            fixes.extend(row.advice());
            check = check.evidence_lines(row.evidence);
        }
    }
    if whose == Whose::Image && status == Status::Fail {
        fixes.push(Advice::PinImageCann.into());
    }
    let check = if fixes.is_empty() { check } else { check.advise(Fix::join(fixes, "\n")) };
    check.with_status(status)
}

/// The site table's verdict on an installation (only with `--compatibility FILE`).
fn table_verdict(
    table: &CompatibilityTable,
    driver: &PackageFile,
    installation: &CannInstallation,
    whose: Whose,
) -> CheckResult {
    let check = CheckResult::new("table", Section::Versions, "table", Status::Ok);
    let (Some(cann), Some(driver_version)) =
        (installation.version.as_deref().and_then(Version::parse), driver.version.as_deref().and_then(Version::parse))
    else {
        return check
            .evidence(format!("table {}: versions unknown, not looked up", table.origin))
            .with_status(Status::Skip);
    };
    let whose = match whose {
        Whose::Host => "host",
        Whose::Image => "image",
    };
    let rows = table.rows_for_driver(&driver_version);
    if rows.is_empty() {
        return check
            .evidence(format!("driver {driver_version} is in no row of the compatibility table ({})", table.origin))
            .advise(Advice::TableNoRow { driver: driver_version.to_string(), table: table.origin.clone() })
            .with_status(Status::Warn);
    }
    if let Some(row) = rows.iter().find(|row| row.cann.contains(&cann)) {
        return check.evidence(format!("table row {}: driver {} runs CANN {}", row.label(), row.driver, row.cann));
    }
    let supported: Vec<String> = rows.iter().map(|row| format!("{} ({})", row.cann, row.name)).collect();
    let newer = rows.iter().all(|row| row.cann.place(&cann) == Placement::Above);
    let relation = if newer { "newer" } else { "older" };
    check
        .evidence(format!(
            "table {}: {whose} CANN {cann} is {relation} than driver {driver_version} supports (CANN {})",
            table.origin,
            supported.join(", ")
        ))
        .advise(Advice::TableCann { driver: driver_version.to_string(), supported: supported.join(", ") })
        .with_status(Status::Fail)
}

/// versions.cann_host: every CANN installation on the host against the driver.
pub fn cann_host(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("versions.cann_host", Section::Versions, "Host CANN matches the driver", Status::Ok);
    let software = facts.software(&options.host);
    if software.cann.is_empty() {
        return check
            .evidence(format!(
                "no CANN under {ASCEND_HOME}/{{{}}}: none on the host (images bring their own)",
                CANN_HOMES.join(",")
            ))
            .with_status(Status::Skip);
    }
    let Some(driver) = usable_driver(software) else {
        return check
            .evidence("the driver's version.info is unusable (see versions.driver): not judged")
            .with_status(Status::Skip);
    };
    judge(check, driver, &software.cann, options.compatibility.as_ref(), Whose::Host)
}

/// versions.cann_image: the CANN of a container image's root file system (`--image-root`), or of a pod's running
/// container on this node (`--pod`, [`pod_container`](super::pod_container)), against the host driver: the
/// combination its containers run.
pub fn cann_image(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("versions.cann_image", Section::Versions, "Image CANN matches the driver", Status::Ok);
    let (image, check) = match (&options.image_root, &options.pod) {
        (Some(image), _) => (image.clone(), check.evidence(format!("image root {}", image.display()))),
        (None, Some(pod)) => match running_pod_root(options, pod) {
            Ok(found) => {
                let check = check.evidence(format!(
                    "pod {}/{} container {} ({}): root {}",
                    pod.namespace, pod.name, found.container, found.container_id, found.root.found_by
                ));
                (found.root.path, check)
            }
            Err(problem) => {
                return check
                    .evidence(format!("pod {pod} not checked: {problem}"))
                    .advise(Advice::PodNotChecked)
                    .with_status(Status::Skip)
            }
        },
        (None, None) => return check.evidence("no image given").advise(Advice::NoImage).with_status(Status::Skip),
    };
    let found = InstalledSoftware::read(&image);
    if found.cann.is_empty() {
        let fix = if options.image_root.is_some() { Advice::ImageRootNoCann } else { Advice::ContainerNoCann };
        return check
            .evidence(format!("no CANN under {ASCEND_HOME}/{{{}}} in the image", CANN_HOMES.join(",")))
            .advise(fix)
            .with_status(Status::Fail);
    }
    let software = facts.software(&options.host);
    let Some(driver) = usable_driver(software) else {
        return check
            .evidence("the driver's version.info is unusable (see versions.driver): not judged")
            .with_status(Status::Skip);
    };
    judge(check, driver, &found.cann, options.compatibility.as_ref(), Whose::Image)
}
