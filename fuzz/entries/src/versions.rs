//! The version files of the installed packages (driver, firmware, CANN), which the doctor and `ascend-smi` read from
//! the host and from container images: the tolerant parser, and the doctor's verdicts over whatever it returns.

use ascend_doctor::package_compatibility::{
    chip_firmware_against_driver, firmware_against_driver, inner_version_listed, required_driver_versions,
};
use ascend_doctor::Status;
use ascend_doctor::{ContainerId, PodContainers, PodRef};
use ascend_node::version_info::{bracketed_items, VersionInfo, MAX_LINES};
use ascend_node::{CannComponent, CannInstallation, PackageFile};

/// A `version.info`. Entries come in line order with unique keys and no blanks or quotes at the ends of a value;
/// each damaged line is reported once, never as an entry too; printed back as `key=value` lines, the entries parse to
/// the same keys and values; every list item is trimmed and non-empty.
pub fn version_info(data: &[u8]) {
    let info = VersionInfo::parse(data);
    let lines = data.split(|byte| *byte == b'\n').count().min(MAX_LINES + 1);
    let mut previous = 0;
    for entry in &info.entries {
        assert!(entry.line > previous && entry.line <= lines, "line {} after {previous} of {lines}", entry.line);
        previous = entry.line;
        assert!(!entry.key.is_empty() && entry.key.trim() == entry.key, "key {:?}", entry.key);
        let bare = entry.value.trim_matches(|c: char| c == '"' || c.is_whitespace());
        assert_eq!(bare, entry.value, "value ends not stripped");
        assert_eq!(info.entry(&entry.key).map(|first| first.line), Some(entry.line), "{} listed twice", entry.key);
        for item in bracketed_items(&entry.value) {
            assert!(!item.is_empty());
            for part in item {
                assert!(!part.is_empty() && part.trim() == part && !part.contains(','), "list part {part:?}");
            }
        }
    }
    for problem in &info.problems {
        assert!(problem.line >= 1 && problem.line <= lines, "problem line {} of {lines}", problem.line);
        assert!(
            info.entries.iter().all(|entry| entry.line != problem.line),
            "line {} both read and refused",
            problem.line
        );
    }
    let printed: String = info.entries.iter().map(|entry| format!("{}={}\n", entry.key, entry.value)).collect();
    let reparsed = VersionInfo::parse(printed.as_bytes());
    assert!(reparsed.problems.is_empty(), "printed entries refused: {:?}\n{printed}", reparsed.problems);
    let pairs = |info: &VersionInfo| info.entries.iter().map(|e| (e.key.clone(), e.value.clone())).collect::<Vec<_>>();
    assert_eq!(pairs(&reparsed), pairs(&info));
}

fn package_file(source: &str, bytes: &[u8]) -> PackageFile {
    let info = VersionInfo::parse(bytes);
    let version = info.first_value(&["Version", "package_version"]).map(str::to_owned);
    PackageFile { source: source.to_owned(), version, error: None, info }
}

/// A driver's and a firmware's `version.info` (split at the first NUL byte) judged against each other and against a
/// CANN that fits a real 24.1 driver: every failure comes with a fix and names the driver's or the firmware's file.
pub fn package_compatibility(data: &[u8]) {
    let (driver_bytes, firmware_bytes) = match data.iter().position(|byte| *byte == 0) {
        Some(split) => (&data[..split], &data[split + 1..]),
        None => (data, &b"Version=7.5.0.1.129\n"[..]),
    };
    let driver = package_file("/usr/local/Ascend/driver/version.info", driver_bytes);
    let firmware = package_file("/usr/local/Ascend/firmware/version.info", firmware_bytes);
    let base = "/usr/local/Ascend/ascend-toolkit/8.0.RC3";
    let cann = CannInstallation {
        package: "ascend-toolkit".to_owned(),
        directory: base.to_owned(),
        version: Some("8.0.RC3".to_owned()),
        inner_version: Some("V100R001C19SPC001B231".to_owned()),
        latest: true,
        install_info: Some(package_file(
            &format!("{base}/x86_64-linux/ascend_toolkit_install.info"),
            b"version=8.0.RC3\ninnerversion=V100R001C19SPC001B231\ncompatible_version=[V100R001C18],[V100R001C19]\n",
        )),
        components: vec![CannComponent {
            name: "runtime".to_owned(),
            file: package_file(
                &format!("{base}/runtime/version.info"),
                b"Version=8.0.0.0.201\nrequired_driver_ascendhal_version=4.0.0\nrequired_driver_tsfw_version=1.0\n",
            ),
        }],
    };
    let mut findings = vec![firmware_against_driver(&driver, &firmware), inner_version_listed(&driver, &cann)];
    findings.extend(required_driver_versions(&driver, &cann));
    for finding in findings {
        if finding.status == Status::Fail {
            assert!(finding.fix.is_some(), "a failure without a fix: {finding:?}");
            assert!(finding.evidence.contains("/usr/local/Ascend/"), "a failure naming no file: {finding:?}");
        }
    }
    // The firmware's Version as a chip would report it: judged alike, naming the chip.
    if let Some(reported) = firmware.version.as_deref() {
        let finding = chip_firmware_against_driver(&driver, &[3], reported);
        assert!(finding.status != Status::Fail || finding.fix.is_some(), "a failure without a fix: {finding:?}");
        assert!(finding.status == Status::Skip || finding.evidence.contains("NPU 3"), "the chip unnamed: {finding:?}");
    }
}

/// A Pod object's JSON as the API server sends it (`--pod`): its containers' statuses, each `containerID` parsed as
/// the doctor parses it before making it part of host paths, and the bytes as a `--pod` argument. A parsed id is
/// plain alphanumeric (never a separator or `..`) and prints back as it was read; so does a pod reference.
pub fn pod_container(data: &[u8]) {
    let Some(text) = crate::text(data) else { return };
    let mut ids = vec![text.to_owned()];
    if let Ok(pod) = serde_json::from_str::<serde_json::Value>(text) {
        let found = PodContainers::from_pod_json(&pod);
        ids.extend(found.containers.iter().filter_map(|status| status.container_id.clone()));
    }
    for id in ids {
        if let Ok(parsed) = id.parse::<ContainerId>() {
            assert!(parsed.id.bytes().all(|byte| byte.is_ascii_alphanumeric()), "a path-unsafe id: {parsed:?}");
            assert_eq!(parsed.to_string(), id, "{parsed:?} does not print back");
        }
    }
    if let Ok(pod) = text.parse::<PodRef>() {
        assert_eq!(pod.to_string(), text, "{pod:?} does not print back");
        let parts = [Some(&pod.namespace), Some(&pod.name), pod.container.as_ref()];
        assert!(parts.iter().flatten().all(|part| !part.contains('/') && !part.starts_with('.')), "{pod:?}");
    }
}
