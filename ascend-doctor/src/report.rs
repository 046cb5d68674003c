//! Running the checks in order, and the report in text and JSON (schema in `docs/ascend-doctor-json.md`).

use serde::{Deserialize, Serialize};

use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};
use super::{
    cdi_engine_checks, chip_firmware, dra_api, driver_checks, kubelet_feature_gates, kubelet_version,
    kubernetes_checks, runtime_checks, version_checks,
};
use ascend_smi::table::wrap_hanging;

/// The version of the JSON schema of [`DoctorReport`].
pub const SCHEMA_VERSION: u32 = 1;

/// A check function.
pub type CheckFn = fn(&DoctorOptions, &mut Facts) -> CheckResult;

/// Every check, in the order of the troubleshooting chain.
pub const CHECKS: [(Section, CheckFn); 26] = [
    (Section::Driver, driver_checks::pci_devices),
    (Section::Driver, driver_checks::kernel_headers),
    (Section::Driver, driver_checks::secure_boot),
    (Section::Driver, driver_checks::driver_loaded),
    (Section::Driver, driver_checks::device_nodes),
    (Section::Driver, driver_checks::libdcmi),
    (Section::Driver, driver_checks::dcmi_init),
    (Section::Driver, driver_checks::chips_healthy),
    (Section::Driver, driver_checks::firmware),
    (Section::Driver, chip_firmware::chip_firmware),
    (Section::Versions, version_checks::driver),
    (Section::Versions, version_checks::cann_host),
    (Section::Versions, version_checks::cann_image),
    (Section::ContainerRuntime, runtime_checks::docker),
    (Section::ContainerRuntime, runtime_checks::containerd),
    (Section::ContainerRuntime, runtime_checks::runtime_class),
    (Section::ContainerRuntime, runtime_checks::cdi),
    (Section::ContainerRuntime, cdi_engine_checks::cdi_engine),
    (Section::ContainerRuntime, cdi_engine_checks::cdi_version),
    (Section::Kubernetes, kubernetes_checks::kubelet_socket),
    (Section::Kubernetes, kubelet_version::kubelet_version),
    (Section::Kubernetes, kubelet_feature_gates::cdi_devices_gate),
    (Section::Kubernetes, dra_api::dra_api),
    (Section::Kubernetes, kubernetes_checks::device_plugin),
    (Section::Kubernetes, kubernetes_checks::node_resources),
    (Section::Kubernetes, kubernetes_checks::stale_allocations),
];

/// How many checks ended in each status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Summary {
    /// OK.
    pub ok: usize,
    /// WARN.
    pub warn: usize,
    /// FAIL.
    pub fail: usize,
    /// SKIP.
    pub skip: usize,
}

/// A whole doctor run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DoctorReport {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The `ascend-doctor` version.
    pub tool_version: String,
    /// The host root the checks ran against.
    pub host_root: String,
    /// The running kernel.
    pub kernel_release: String,
    /// The site's compatibility table, when one was given; `null` when every verdict comes from the installed
    /// packages' `version.info` files.
    pub compatibility_table: Option<String>,
    /// The checks, in order.
    pub checks: Vec<CheckResult>,
    /// Counts per status.
    pub summary: Summary,
}

impl DoctorReport {
    /// Whether any check failed (the exit status is 1 then).
    pub fn has_failures(&self) -> bool {
        self.summary.fail > 0
    }

    /// The check with this id.
    pub fn check(&self, id: &str) -> Option<&CheckResult> {
        self.checks.iter().find(|check| check.id == id)
    }
}

/// Runs the checks of the selected sections in order. Facts later sections need (PCI functions, device nodes) are
/// gathered even when the driver section is not selected.
pub fn run(options: &DoctorOptions) -> DoctorReport {
    let mut facts = Facts::default();
    let mut checks = Vec::new();
    let driver_selected = options.sections.contains(&Section::Driver);
    if !driver_selected {
        driver_checks::pci_devices(options, &mut facts);
        driver_checks::device_nodes(options, &mut facts);
    }
    for (section, check) in CHECKS {
        if options.sections.contains(&section) {
            checks.push(check(options, &mut facts));
        }
    }
    let mut summary = Summary::default();
    for check in &checks {
        match check.status {
            Status::Ok => summary.ok += 1,
            Status::Warn => summary.warn += 1,
            Status::Fail => summary.fail += 1,
            Status::Skip => summary.skip += 1,
        }
    }
    DoctorReport {
        schema_version: SCHEMA_VERSION,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        host_root: options.host.root().display().to_string(),
        kernel_release: options.kernel_release.clone(),
        compatibility_table: options.compatibility.as_ref().map(|table| table.origin.clone()),
        checks,
        summary,
    }
}

/// Column where evidence and fixes start in the text output.
const DETAIL_COLUMN: usize = 9;

/// The text report: per section, each check's status, id and title, its evidence, and its fix.
pub fn render_text(report: &DoctorReport, host_root_label: &str) -> String {
    let table = report.compatibility_table.as_deref().unwrap_or("none (the packages' version.info files)");
    let mut lines = vec![format!(
        "ascend-doctor {}: host root {host_root_label}, kernel {}, compatibility table: {table}",
        report.tool_version, report.kernel_release
    )];
    let indent = " ".repeat(DETAIL_COLUMN);
    for section in Section::ALL {
        let checks: Vec<&CheckResult> = report.checks.iter().filter(|check| check.section == section).collect();
        if checks.is_empty() {
            continue;
        }
        lines.push(String::new());
        lines.push(section.title().to_owned());
        for check in checks {
            lines.push(format!("  {:<6} {} ({})", format!("[{}]", check.status.label()), check.title, check.id));
            for evidence in &check.evidence {
                for (index, part) in evidence.lines().enumerate() {
                    let prefix = if index == 0 { "" } else { "  " };
                    wrap_hanging(&format!("{indent}{prefix}{part}"), DETAIL_COLUMN + 2, &mut lines);
                }
            }
            if let Some(fix) = &check.fix {
                for (index, part) in fix.lines().enumerate() {
                    let label = if index == 0 { "fix: " } else { "     " };
                    wrap_hanging(&format!("{indent}{label}{part}"), DETAIL_COLUMN + 5, &mut lines);
                }
            }
        }
    }
    let summary = report.summary;
    lines.push(String::new());
    lines.push(format!(
        "Summary: {} OK, {} WARN, {} FAIL, {} SKIP",
        summary.ok, summary.warn, summary.fail, summary.skip
    ));
    lines.into_iter().map(|line| line + "\n").collect()
}

/// The JSON report, pretty-printed, with a final newline.
///
/// # Errors
/// Serialisation failed (it does not for these types).
pub fn render_json(report: &DoctorReport) -> serde_json::Result<String> {
    serde_json::to_string_pretty(report).map(|text| text + "\n")
}
