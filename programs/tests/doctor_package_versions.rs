//! The doctor's driver, firmware and CANN verdicts on fake hosts whose packages' version files `dcmi-sim` writes:
//! a set that fits, and each single mismatch (firmware outside the driver's range, a CANN needing a newer ascendhal,
//! an inner version line the driver does not list, two CANN versions with `latest` on the bad one), each finding
//! naming the files and fields of both sides and the fix.

mod smi_doctor_support;

use std::path::Path;

use ascend_doctor::{run, DoctorReport};
use ascend_doctor::{CheckResult, Status};
use dcmi_sim::fake_host::{FakeSoftware, SoftwareEntry};
use smi_doctor_support::doctor_host::DoctorHost;

const DRIVER_FILE: &str = "/usr/local/Ascend/driver/version.info";
const FIRMWARE_FILE: &str = "/usr/local/Ascend/firmware/version.info";

fn check<'a>(report: &'a DoctorReport, id: &str) -> &'a CheckResult {
    report.check(id).unwrap_or_else(|| panic!("no check {id}"))
}

/// Asserts the status, and that the evidence and the fix hold every wanted piece.
fn assert_verdict(report: &DoctorReport, id: &str, status: Status, evidence_has: &[&str], fix_has: &[&str]) {
    let found = check(report, id);
    assert_eq!(found.status, status, "{id}: {found:#?}");
    let evidence = found.evidence.join("\n");
    for wanted in evidence_has {
        assert!(evidence.contains(wanted), "{id}: evidence lacks {wanted:?}:\n{evidence}");
    }
    let fix = found.fix.as_deref().unwrap_or("");
    for wanted in fix_has {
        assert!(fix.contains(wanted), "{id}: fix lacks {wanted:?}:\n{fix}");
    }
}

fn toolkit_file(version: &str, file: &str) -> String {
    format!("/usr/local/Ascend/ascend-toolkit/{version}/{file}")
}

#[test]
fn a_set_that_fits_passes_with_both_sides_named() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "driver.firmware",
        Status::Ok,
        &[&format!("firmware Version=7.5.0.1.129 ({FIRMWARE_FILE}:1) is inside [7.0.0,7.7.99] of the driver's compatible_version_fw=[7.0.0,7.7.99] ({DRIVER_FILE}:11)")],
        &[],
    );
    assert_verdict(
        &report,
        "driver.chip_firmware",
        Status::Ok,
        &[&format!("firmware 7.5.0.1.129 (NPU 4, dcmi_get_version) is inside [7.0.0,7.7.99] of the driver's compatible_version_fw=[7.0.0,7.7.99] ({DRIVER_FILE}:11)")],
        &[],
    );
    assert_verdict(&report, "versions.driver", Status::Ok, &["Version=24.1.rc2", "interfaces: ascendhal 7.35.23"], &[]);
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Ok,
        &["ascend-toolkit 8.0.RC3 (latest): fits the driver (/usr/local/Ascend/ascend-toolkit/8.0.RC3 against \
             /usr/local/Ascend/driver/version.info): aicpu 1.0 <= 1.0, tdt 1.0 <= 1.0, ascendhal 4.0.0 <= 7.35.23, \
             dvppkernels 1.1 <= 1.1, tsfw 1.0 <= 1.0, inner version line V100R001C19 listed in the driver's \
             compatible_version"],
        &[],
    );
    assert!(check(&report, "versions.cann_host").fix.is_none());
    assert_eq!(report.compatibility_table, None, "no table: the verdicts are the packages' own");
}

#[test]
fn firmware_outside_the_drivers_range_fails_naming_both_files() {
    let software = FakeSoftware { firmware_version: Some("7.8.0.1.100".to_owned()), ..FakeSoftware::default() };
    let host = DoctorHost::with_software("atlas-800t-a2", software);
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "driver.firmware",
        Status::Fail,
        &[
            &format!("firmware Version=7.8.0.1.100 ({FIRMWARE_FILE}:1) is newer than every range of the driver's compatible_version_fw=[7.0.0,7.7.99] ({DRIVER_FILE}:11)"),
            &format!("the firmware's compatible_version_drv=[25.1,25.1.] ({FIRMWARE_FILE}:4) does not list driver 24.1.rc2"),
        ],
        &["upgrade the driver to the HDK release of the firmware", "or install a firmware in [7.0.0,7.7.99]"],
    );
    assert!(report.has_failures());
    // The CANN checks do not depend on the firmware.
    assert_eq!(check(&report, "versions.cann_host").status, Status::Ok);
}

#[test]
fn a_cann_needing_a_newer_ascendhal_fails_naming_both_files() {
    let software = FakeSoftware { required_ascendhal: "7.36.0".to_owned(), ..FakeSoftware::default() };
    let host = DoctorHost::with_software("atlas-800t-a2", software);
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Fail,
        &[&format!(
            "ascend-toolkit 8.0.RC3 (latest): required_driver_ascendhal_version=7.36.0 ({}:3) is newer than the driver's ascendhal_version=7.35.23 ({DRIVER_FILE}:2)",
            toolkit_file("8.0.RC3", "runtime/version.info")
        )],
        &["upgrade the driver and firmware to an HDK release whose ascendhal_version is at least 7.36.0", "10070"],
    );
    assert_eq!(check(&report, "driver.firmware").status, Status::Ok);
}

#[test]
fn an_inner_version_line_the_driver_does_not_list_fails() {
    let software = FakeSoftware { cann_inner_line: "V100R001C23".to_owned(), ..FakeSoftware::default() };
    let host = DoctorHost::with_software("atlas-800t-a2", software);
    let report = run(&host.default_options());
    let arch = std::env::consts::ARCH;
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Fail,
        &[&format!(
            "line V100R001C23 of innerversion=V100R001C23SPC001B231 ({}:3) is not in the driver's compatible_version=[V100R001C15],[V100R001C17],[V100R001C18],[V100R001C19] ({DRIVER_FILE}:10)",
            toolkit_file("8.0.RC3", &format!("{arch}-linux/ascend_toolkit_install.info"))
        )],
        &["install a CANN whose inner version line is one of V100R001C15, V100R001C17, V100R001C18, V100R001C19"],
    );
}

#[test]
fn two_cann_versions_side_by_side_are_judged_by_the_one_latest_points_to() {
    // latest is the bad one: a failure naming it; the good one beside it is fine.
    let software = FakeSoftware {
        cann_version: Some("8.2.RC1".to_owned()),
        other_cann_versions: vec!["8.0.RC3".to_owned()],
        required_ascendhal: "9.0.0".to_owned(),
        ..FakeSoftware::default()
    };
    let host = DoctorHost::with_software("atlas-800t-a2", software);
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Fail,
        &[
            "ascend-toolkit 8.2.RC1 (latest): required_driver_ascendhal_version=9.0.0",
            "ascend-toolkit 8.0.RC3: fits the driver",
        ],
        &["ascend-toolkit 8.2.RC1 (latest): upgrade the driver and firmware"],
    );

    // Pointing latest at the good one leaves a warning about the other, which nothing uses.
    let link = host.path("usr/local/Ascend/ascend-toolkit/latest");
    std::fs::remove_file(&link).expect("remove latest");
    std::os::unix::fs::symlink("8.0.RC3", &link).expect("latest -> 8.0.RC3");
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Warn,
        &["ascend-toolkit 8.2.RC1: required_driver_ascendhal_version=9.0.0", "ascend-toolkit 8.0.RC3 (latest)"],
        &["ascend-toolkit 8.2.RC1 does not fit the driver but is not in use (`latest` is ascend-toolkit 8.0.RC3 (latest))"],
    );
    assert!(!report.has_failures());
}

fn lay_out(root: &Path, entries: Vec<SoftwareEntry>) {
    for entry in entries {
        match entry {
            SoftwareEntry::File { path, text } => {
                let path = root.join(path);
                std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
                std::fs::write(path, text).expect("write");
            }
            SoftwareEntry::Link { path, target } => std::os::unix::fs::symlink(target, root.join(path)).expect("link"),
        }
    }
}

#[test]
fn an_images_cann_is_judged_against_the_hosts_driver() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let image = host.dir.path().join("image-rootfs");
    // Only the image's CANN counts: it brings no driver of its own.
    let bad = FakeSoftware { required_ascendhal: "8.0.0".to_owned(), ..FakeSoftware::default() };
    lay_out(&image, bad.entries("24.1.rc2").into_iter().filter(|e| !matches!(e, SoftwareEntry::File { path, .. } if path.contains("driver/") || path.contains("firmware/"))).collect());
    let mut options = host.default_options();
    options.image_root = Some(image.clone());
    let report = run(&options);
    assert_verdict(
        &report,
        "versions.cann_image",
        Status::Fail,
        &[
            &format!("image root {}", image.display()),
            &format!("image ascend-toolkit 8.0.RC3 (latest): required_driver_ascendhal_version=8.0.0 ({}:3) is newer than the driver's ascendhal_version=7.35.23 ({DRIVER_FILE}:2)", toolkit_file("8.0.RC3", "runtime/version.info")),
        ],
        &["pin the CANN version in the image build"],
    );
    assert_eq!(check(&report, "versions.cann_host").status, Status::Ok, "the host's own CANN fits");

    options.image_root = Some(host.dir.path().join("not-an-image"));
    assert_verdict(
        &run(&options),
        "versions.cann_image",
        Status::Fail,
        &["no CANN under /usr/local/Ascend"],
        &["--image-root"],
    );
}

#[test]
fn damaged_lines_are_reported_with_file_and_line_and_the_rest_is_used() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let driver = std::fs::read_to_string(host.path("usr/local/Ascend/driver/version.info")).expect("driver file");
    host.write("usr/local/Ascend/driver/version.info", &driver.replacen("aicpu_version=1.0", "aicpu_version 1.0", 1));
    let report = run(&host.default_options());
    assert_verdict(
        &report,
        "versions.driver",
        Status::Warn,
        &[&format!("{DRIVER_FILE}:3: no `=` in \"aicpu_version 1.0\" (line ignored)")],
        &["reinstall the driver package"],
    );
    // The CANN's aicpu floor now meets a driver that declares no aicpu interface: a warning, not a guess.
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Warn,
        &["required_driver_aicpu_version=1.0", "but the driver declares no aicpu_version"],
        &[],
    );
    assert_eq!(check(&report, "driver.firmware").status, Status::Ok);
}

#[test]
fn a_sites_table_adds_its_verdict_to_the_packages_own() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let text = "format = 1\n[[release]]\nname = \"site pin\"\ndriver = [\"24.1.rc1\", \"24.1.99\"]\n\
                firmware = [\"7.3.0\", \"7.5.99\"]\ncann = [\"7.0.0\", \"7.0.99\"]\nsource = \"our release notes\"\n";
    let mut options = host.default_options();
    options.compatibility =
        Some(ascend_doctor::compatibility::CompatibilityTable::parse(text, "site.toml").expect("table"));
    let report = run(&options);
    assert_eq!(report.compatibility_table.as_deref(), Some("site.toml"));
    assert_verdict(
        &report,
        "versions.cann_host",
        Status::Fail,
        &["ascend-toolkit 8.0.RC3 (latest): fits the driver", "table site.toml: host CANN 8.0.RC3 is newer than driver 24.1.rc2 supports (CANN 7.0.0 to 7.0.99 (site pin))"],
        &["your table pairs driver 24.1.rc2 with CANN 7.0.0 to 7.0.99 (site pin)"],
    );
    assert_verdict(
        &report,
        "driver.firmware",
        Status::Ok,
        &["table site.toml: firmware 7.5.0.1.129 goes with driver 24.1.rc2"],
        &[],
    );
}
