//! Section 1: can the node see its cards? PCI devices, kernel headers, Secure Boot, the driver module, device nodes,
//! `libdcmi.so`, `dcmi_init`, the health of every chip, and whether the firmware is one the driver accepts.

use std::path::{Path, PathBuf};

use super::advice::{Advice, Fix};
use super::check::{CheckResult, Section, Status};
use super::compatibility::{Version, VersionRange};
use super::context::{DoctorOptions, Facts};
use super::host::EntryKind;
use super::library_safety;
use super::package_compatibility::firmware_against_driver;
use super::version_checks;
use ascend_node::host_report::ChipStatus;
use ascend_node::{CollectOptions, Collector};
use ascend_node::{DRIVER_VERSION_INFO, FIRMWARE_VERSION_INFO};

/// Huawei's PCI vendor id.
pub const HUAWEI_VENDOR_ID: u32 = 0x19e5;

/// PCI device ids of Ascend NPUs and the chip family each one is.
pub const NPU_DEVICE_IDS: [(u32, &str); 7] = [
    (0xd100, "Ascend 310"),
    (0xd105, "Ascend 310B"),
    (0xd500, "Ascend 310P"),
    (0xd801, "Ascend 910"),
    (0xd802, "Ascend 910B"),
    (0xd803, "Ascend 910 A3"),
    (0xd806, "Ascend 950"),
];

/// Kernel modules whose presence in `/sys/module` means the driver is loaded (name prefixes: the `_host` suffix
/// differs between driver generations).
pub const DRIVER_MODULE_PREFIXES: [&str; 3] = ["drv_davinci_intf", "drv_devmng", "drv_pcie_host"];

/// The shared device nodes every NPU container needs.
pub const MANAGER_NODES: [&str; 3] = ["/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"];

/// The shared device nodes of an Ascend950 node (no `devmm_svm` there).
pub const MANAGER_NODES_ASCEND950: [&str; 2] = ["/dev/davinci_manager", "/dev/hisi_hdc"];

/// The PCI device id of Ascend950, whose driver serves the DCMI V2 API.
pub const ASCEND950_DEVICE_ID: u32 = 0xd806;

/// Whether the PCI functions found are Ascend950 cards.
fn is_ascend950_node(facts: &Facts) -> bool {
    !facts.npu_functions.is_empty() && facts.npu_functions.iter().all(|(_, device)| *device == ASCEND950_DEVICE_ID)
}

/// Where `libdcmi.so` is looked for, in order: the driver's directories (the vendor images' `LD_LIBRARY_PATH`).
pub const LIBRARY_DIRECTORIES: [&str; 4] = [
    "/usr/local/Ascend/driver/lib64/driver",
    "/usr/local/Ascend/driver/lib64/common",
    "/usr/local/Ascend/driver/lib64",
    "/usr/local/dcmi",
];

const SECURE_BOOT_VARIABLE: &str = "/sys/firmware/efi/efivars/SecureBoot-8be4df61-93ca-11d2-aa0d-00e098032b8c";

fn parse_hex(text: &str) -> Option<u32> {
    let text = text.trim();
    u32::from_str_radix(text.strip_prefix("0x").unwrap_or(text), 16).ok()
}

/// driver.pci_devices: Huawei NPU functions in `/sys/bus/pci/devices`.
pub fn pci_devices(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.pci_devices", Section::Driver, "Huawei NPU PCI devices present", Status::Ok);
    let host = &options.host;
    let mut other_huawei = Vec::new();
    for bdf in host.list("/sys/bus/pci/devices") {
        let base = PathBuf::from("/sys/bus/pci/devices").join(&bdf);
        let vendor = host.read_to_string(base.join("vendor")).ok().and_then(|text| parse_hex(&text));
        if vendor != Some(HUAWEI_VENDOR_ID) {
            continue;
        }
        match host.read_to_string(base.join("device")).ok().and_then(|text| parse_hex(&text)) {
            Some(device) if NPU_DEVICE_IDS.iter().any(|(id, _)| *id == device) => {
                facts.npu_functions.push((bdf, device))
            }
            Some(device) => other_huawei.push(format!("{bdf} (19e5:{device:04x}, not an NPU)")),
            None => other_huawei.push(format!("{bdf} (device id unreadable)")),
        }
    }
    if facts.npu_functions.is_empty() {
        return check
            .evidence("no PCI function with vendor 19e5 and an Ascend device id under /sys/bus/pci/devices")
            .evidence_lines(other_huawei)
            .advise(Advice::PciNoCards)
            .with_status(Status::Fail);
    }
    let lines = facts.npu_functions.iter().map(|(bdf, device)| {
        let family = NPU_DEVICE_IDS.iter().find(|(id, _)| id == device).map_or("?", |(_, name)| *name);
        format!("{bdf} 19e5:{device:04x} {family}")
    });
    check
        .evidence(format!("{} NPU PCI function(s)", facts.npu_functions.len()))
        .evidence_lines(lines.collect::<Vec<_>>())
}

/// driver.kernel_headers: headers for the running kernel, which building the driver's modules needs.
pub fn kernel_headers(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("driver.kernel_headers", Section::Driver, "Kernel headers match `uname -r`", Status::Ok);
    let release = &options.kernel_release;
    let host = &options.host;
    let candidates = [
        format!("/lib/modules/{release}/build"),
        format!("/usr/src/linux-headers-{release}"),
        format!("/usr/src/kernels/{release}"),
    ];
    if let Some(found) = candidates.iter().find(|path| host.path(path).join("Makefile").exists()) {
        return check.evidence(format!("running kernel {release}; headers at {found}"));
    }
    let mut installed: Vec<String> = host
        .list("/lib/modules")
        .into_iter()
        .filter(|version| host.path(format!("/lib/modules/{version}/build")).join("Makefile").exists())
        .collect();
    installed.extend(
        host.list("/usr/src").into_iter().filter_map(|name| name.strip_prefix("linux-headers-").map(str::to_owned)),
    );
    installed.extend(host.list("/usr/src/kernels"));
    installed.sort();
    installed.dedup();
    let seen = if installed.is_empty() { "none".to_owned() } else { installed.join(", ") };
    let check = check
        .evidence(format!("running kernel {release}; no headers for it in {}", candidates.join(", ")))
        .evidence(format!("headers installed for: {seen}"))
        .advise(Advice::KernelHeaders { release: release.clone() });
    if !loaded_driver_modules(host).is_empty() {
        // The loaded modules keep working; the next driver install or upgrade is what will fail.
        check
            .evidence("the driver is loaded now, so only the next driver install or upgrade will fail")
            .with_status(Status::Warn)
    } else {
        check.with_status(Status::Fail)
    }
}

/// The driver's modules that are loaded: names in `/sys/module`, else in `/proc/modules`.
pub fn loaded_driver_modules(host: &super::host::HostRoot) -> Vec<String> {
    let is_driver = |name: &str| DRIVER_MODULE_PREFIXES.iter().any(|prefix| name.starts_with(prefix));
    let modules: Vec<String> = host.list("/sys/module").into_iter().filter(|name| is_driver(name)).collect();
    if !modules.is_empty() {
        return modules;
    }
    host.read_to_string("/proc/modules")
        .map(|text| {
            text.lines()
                .filter_map(|line| line.split_whitespace().next())
                .filter(|name| is_driver(name))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// driver.loaded: one of the driver's modules in `/sys/module` (or `/proc/modules`).
pub fn driver_loaded(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.loaded", Section::Driver, "Driver kernel modules loaded", Status::Ok);
    let modules = loaded_driver_modules(&options.host);
    facts.driver_loaded = Some(!modules.is_empty());
    if modules.is_empty() {
        return check
            .evidence(format!(
                "no module named {}* in /sys/module or /proc/modules",
                DRIVER_MODULE_PREFIXES.join("*, ")
            ))
            .advise(Advice::DriverNotLoaded)
            .with_status(Status::Fail);
    }
    check.evidence(format!("loaded: {}", modules.join(", ")))
}

/// driver.secure_boot: Secure Boot makes the kernel refuse unsigned driver modules.
pub fn secure_boot(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("driver.secure_boot", Section::Driver, "Secure Boot does not block the driver", Status::Ok);
    let host = &options.host;
    if !host.exists("/sys/firmware/efi") {
        return check.evidence("not booted through EFI (/sys/firmware/efi absent): Secure Boot does not apply");
    }
    let enabled = match host.read(SECURE_BOOT_VARIABLE) {
        // Four attribute bytes, then the value.
        Ok(bytes) if bytes.len() >= 5 => bytes[4] == 1,
        Ok(_) => {
            return check
                .evidence(format!("{SECURE_BOOT_VARIABLE} is too short to hold a value"))
                .with_status(Status::Skip)
        }
        Err(_) => return check.evidence(format!("{SECURE_BOOT_VARIABLE} absent: Secure Boot is off")),
    };
    if !enabled {
        return check.evidence("Secure Boot is off");
    }
    if !loaded_driver_modules(host).is_empty() {
        return check
            .evidence("Secure Boot is on, and the driver modules are loaded: they are signed with an enrolled key");
    }
    check
        .evidence(
            "Secure Boot is on and the driver is not loaded: the kernel refuses modules without an enrolled signature",
        )
        .advise(Advice::SecureBoot)
        .with_status(Status::Fail)
}

/// driver.device_nodes: `/dev/davinci<N>` for each chip and the shared manager nodes.
pub fn device_nodes(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("driver.device_nodes", Section::Driver, "Device nodes /dev/davinci* present", Status::Ok);
    let host = &options.host;
    let mut not_char = Vec::new();
    for name in host.list("/dev") {
        let Some(id) = name.strip_prefix("davinci").and_then(|rest| rest.parse::<u32>().ok()) else { continue };
        facts.davinci_ids.push(id);
        if host.kind(format!("/dev/{name}")) != Some(EntryKind::CharDevice) {
            not_char.push(format!("/dev/{name}"));
        }
    }
    facts.davinci_ids.sort_unstable();
    let manager_nodes: &[&str] = if is_ascend950_node(facts) { &MANAGER_NODES_ASCEND950 } else { &MANAGER_NODES };
    let missing: Vec<&str> = manager_nodes.iter().copied().filter(|node| !host.exists(node)).collect();
    for node in manager_nodes.iter().copied() {
        if host.exists(node) && host.kind(node) != Some(EntryKind::CharDevice) {
            not_char.push(node.to_owned());
        }
    }
    let ids: Vec<String> = facts.davinci_ids.iter().map(u32::to_string).collect();
    let check = check.evidence(if ids.is_empty() {
        "no /dev/davinci<N>".to_owned()
    } else {
        format!("/dev/davinci{{{}}}", ids.join(","))
    });
    if facts.davinci_ids.is_empty() || !missing.is_empty() {
        let check = if missing.is_empty() { check } else { check.evidence(format!("missing: {}", missing.join(", "))) };
        return check.advise(Advice::DeviceNodesMissing).with_status(Status::Fail);
    }
    let check = check.evidence(format!("present: {}", manager_nodes.join(", ")));
    if not_char.is_empty() {
        return check;
    }
    check
        .evidence(format!("not character devices: {}", not_char.join(", ")))
        .advise(Advice::DeviceNodesNotChar)
        .with_status(Status::Warn)
}

/// driver.libdcmi: `libdcmi.so` found and passing the ownership rule.
pub fn libdcmi(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.libdcmi", Section::Driver, "libdcmi.so found and safe to load", Status::Ok);
    let host = &options.host;
    let candidates: Vec<PathBuf> =
        LIBRARY_DIRECTORIES.iter().map(|dir| Path::new(dir).join(ascend_dcmi::LIBRARY_FILE_NAME)).collect();
    let Some(found) = candidates.iter().find(|path| host.path(path).exists()) else {
        facts.library_problem = Some("libdcmi.so not found".to_owned());
        return check
            .evidence(format!("not found in {}", LIBRARY_DIRECTORIES.join(", ")))
            .advise(Advice::LibdcmiMissing)
            .with_status(Status::Fail);
    };
    match library_safety::check(host, found) {
        Err(problem) => {
            facts.library_problem = Some(problem.to_string());
            check.evidence(problem.to_string()).advise(Advice::LibdcmiNotRegular).with_status(Status::Fail)
        }
        Ok(verdict) if verdict.violations.is_empty() => {
            facts.library = Some(host.path(&verdict.resolved));
            let shown = if verdict.resolved == *found {
                found.display().to_string()
            } else {
                format!("{} -> {}", found.display(), verdict.resolved.display())
            };
            check.evidence(format!(
                "{shown}: owned by root and not writable by group or others, nor is any directory above it"
            ))
        }
        Ok(verdict) => {
            facts.library_problem = Some(format!("{} failed the ownership rule", found.display()));
            let evidence: Vec<String> = verdict
                .violations
                .iter()
                .map(|v| format!("{}: {} (uid {}, mode {:04o})", v.path.display(), v.problem.describe(), v.uid, v.mode))
                .collect();
            let mut commands: Vec<String> =
                verdict.violations.iter().map(ascend_dcmi::OwnershipViolation::fix_command).collect();
            commands.dedup();
            check
                .evidence(format!("{} -> {}", found.display(), verdict.resolved.display()))
                .evidence_lines(evidence)
                .advise(Advice::LibdcmiOwnership { commands: commands.join(" && ") })
                .with_status(Status::Fail)
        }
    }
}

/// driver.dcmi_init: the library loads and initialises (`dcmi_init`, or `dcmiv2_init` on Ascend950), and its API
/// family fits the cards: Ascend950 cards need a driver that serves DCMI V2, the others DCMI V1.
pub fn dcmi_init(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.dcmi_init", Section::Driver, "DCMI initialises", Status::Ok);
    let Some(library) = facts.library.clone() else {
        let reason = facts.library_problem.clone().unwrap_or_else(|| "no library".to_owned());
        return check.evidence(format!("not tried: {reason} (see driver.libdcmi)")).with_status(Status::Skip);
    };
    match options.connector.connect(&library) {
        Ok(manager) => {
            let version = manager
                .driver_version()
                .map_or_else(|error| format!("version unknown: {error}"), |v| format!("DCMI version {v}"));
            let family = manager.api_family();
            facts.manager = Some(manager);
            let shown = options.host.host_path_of(&library).unwrap_or(library).display().to_string();
            let check = check.evidence(format!("{shown} loaded; API {family}; {version}"));
            api_family_fits_the_cards(check, family, facts)
        }
        Err(error) => check.evidence(error.to_string()).advise(Advice::DcmiInitFailed).with_status(Status::Fail),
    }
}

/// Fails when the driver's API family does not fit the cards on the PCI bus: Ascend950 needs DCMI V2, every older
/// family DCMI V1 (a driver package for the wrong generation initialises one family and sees no usable card).
fn api_family_fits_the_cards(check: CheckResult, family: ascend_dcmi::ApiFamily, facts: &Facts) -> CheckResult {
    if facts.npu_functions.is_empty() {
        return check;
    }
    let expected = if is_ascend950_node(facts) { ascend_dcmi::ApiFamily::V2 } else { ascend_dcmi::ApiFamily::V1 };
    if family == expected {
        return check;
    }
    let cards = if expected == ascend_dcmi::ApiFamily::V2 { "Ascend950" } else { "pre-Ascend950" };
    check
        .evidence(format!("the PCI bus shows {cards} cards, which need {expected}, but the driver serves {family}"))
        .advise(Advice::ApiFamily { expected: expected.to_string() })
        .with_status(Status::Fail)
}

/// driver.chips_healthy: every chip answers and is healthy.
pub fn chips_healthy(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.chips_healthy", Section::Driver, "Every chip healthy", Status::Ok);
    let Some(manager) = facts.manager.clone() else {
        return check
            .evidence("not checked: the driver is not initialised (see driver.dcmi_init)")
            .with_status(Status::Skip);
    };
    let collector =
        Collector::new(manager, CollectOptions { deadline: options.chip_deadline, ..CollectOptions::default() });
    let report = match collector.collect() {
        Ok(report) => report,
        Err(error) => return check.evidence(error.to_string()).advise(Advice::ChipsUnlisted).with_status(Status::Fail),
    };
    for chip in &report.chips {
        if let Some(chip_type) = chip.chip_type.as_deref().and_then(|t| t.parse::<ascend_dcmi::ChipType>().ok()) {
            facts.chip_types.push((chip.ids.phy_id, chip_type));
        }
    }
    if report.chips.is_empty() {
        return check.evidence("the driver reports no chips").advise(Advice::NoChips).with_status(Status::Fail);
    }
    let mut bad = Vec::new();
    let mut evidence = Vec::new();
    for chip in &report.chips {
        let name = chip.name.as_deref().unwrap_or("?");
        let health = chip.health.as_ref();
        let level = health.map_or("-", |h| h.level.as_str());
        let faults: Vec<&str> = health.map(|h| h.faults.iter().map(|f| f.code.as_str()).collect()).unwrap_or_default();
        let place = match (chip.ids.card_id, chip.ids.device_id) {
            (Some(card), Some(device)) => format!("card {card} device {device}"),
            _ => format!("logic {}", chip.ids.logic_id),
        };
        let mut line = format!("NPU {} ({name}, {place}): {}", chip.ids.phy_id, chip.status.label());
        if chip.status != ChipStatus::Ok {
            line.push_str(&format!(", level {level}"));
            if !faults.is_empty() {
                line.push_str(&format!(", faults {}", faults.join(" ")));
            }
            if let Some(error) = chip.errors.first() {
                line.push_str(&format!(", {}", error.message));
            }
            bad.push(chip);
        }
        evidence.push(line);
    }
    let check = check.evidence_lines(evidence);
    if bad.is_empty() {
        return check;
    }
    let resets: Vec<String> = bad
        .iter()
        .map(|chip| match (chip.ids.card_id, chip.ids.device_id) {
            (Some(card), Some(device)) => format!("npu-smi set -t reset -i {card} -c {device}"),
            // The DCMI V2 API (Ascend950) addresses a chip by logic id; there is no card to name.
            _ => format!("reset NPU {} (logic id {}) with the vendor's tool", chip.ids.phy_id, chip.ids.logic_id),
        })
        .collect();
    check.advise(Advice::ChipsUnhealthy { resets: resets.join("; ") }).with_status(Status::Fail)
}

/// driver.firmware: the firmware's `version.info` against the ranges the driver's declares (and the firmware's own
/// list of drivers, DCMI's second test), plus the rows of a site's compatibility table when one is given.
pub fn firmware(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new("driver.firmware", Section::Driver, "Firmware matches the driver", Status::Ok);
    let software = facts.software(&options.host);
    let Some(firmware) = &software.firmware else {
        return check
            .evidence(format!("{FIRMWARE_VERSION_INFO} not found: firmware not checked"))
            .advise(Advice::FirmwareUnknown)
            .with_status(Status::Skip);
    };
    if let Some(error) = &firmware.error {
        return check.evidence(format!("{FIRMWARE_VERSION_INFO}: {error}")).with_status(Status::Skip);
    }
    let Some(driver) = version_checks::usable_driver(software) else {
        return check
            .evidence(format!(
                "{DRIVER_VERSION_INFO} missing or without Version: pairing not checked (see versions.driver)"
            ))
            .with_status(Status::Skip);
    };
    let finding = firmware_against_driver(driver, firmware);
    let mut status = finding.status;
    let mut check = check.evidence(finding.evidence);
    let mut fixes: Vec<Fix> = finding.fix.into_iter().collect();
    let damaged = version_checks::damaged_lines(firmware);
    if !damaged.is_empty() {
        status = status.max(Status::Warn);
        check = check.evidence_lines(damaged);
        fixes.push(Advice::FirmwareDamaged.into());
    }
    if let (Some(table), Some(driver_version), Some(firmware_version)) = (
        options.compatibility.as_ref(),
        driver.version.as_deref().and_then(Version::parse),
        firmware.version.as_deref().and_then(Version::parse),
    ) {
        let ranges: Vec<(String, VersionRange)> = table
            .rows_for_driver(&driver_version)
            .into_iter()
            .filter_map(|row| row.firmware.clone().map(|range| (row.name.clone(), range)))
            .collect();
        if ranges.iter().any(|(_, range)| range.contains(&firmware_version)) {
            check = check.evidence(format!(
                "table {}: firmware {firmware_version} goes with driver {driver_version}",
                table.origin
            ));
        } else if !ranges.is_empty() {
            let wanted: Vec<String> = ranges.iter().map(|(name, range)| format!("{range} ({name})")).collect();
            status = Status::Fail;
            check = check.evidence(format!(
                "table {}: driver {driver_version} goes with firmware {}",
                table.origin,
                wanted.join(" or ")
            ));
            fixes.push(
                Advice::TableFirmware { driver: driver_version.to_string(), firmware: wanted.join(" or ") }.into(),
            );
        }
    }
    let check = if fixes.is_empty() { check } else { check.advise(Fix::join(fixes, "\n")) };
    check.with_status(status)
}
