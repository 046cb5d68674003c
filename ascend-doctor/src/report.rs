//! Running the checks in order, and the report in text and JSON (schema in `docs/ascend-doctor-json.md`).

use ascend_cli::Lang;
use serde::{Deserialize, Serialize};

use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts};
use super::{
    cdi_engine_checks, chip_firmware, dra_api, driver_checks, kubelet_feature_gates, kubelet_version,
    kubernetes_checks, migration_checks, recovery_checks, runtime_checks, version_checks,
};
use ascend_cli::text::wrap_hanging;

/// The version of the JSON schema of [`DoctorReport`]: 2 added `lang`, and `title_localized`, `fix_localized` and
/// `findings` to every check (version 1's fields are unchanged).
pub const SCHEMA_VERSION: u32 = 2;

/// A check function.
pub type CheckFn = fn(&DoctorOptions, &mut Facts) -> CheckResult;

/// Every check, in the order of the troubleshooting chain.
pub const CHECKS: [(Section, CheckFn); 28] = [
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
    (Section::Kubernetes, recovery_checks::held_out_chips),
    (Section::Kubernetes, migration_checks::migration),
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
    /// The language of the `*_localized` texts: `en` or `zh-CN` ([`Lang::tag`]).
    #[serde(default = "english")]
    pub lang: String,
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

    /// The language of the `*_localized` texts (English for a tag the doctor does not know).
    pub fn language(&self) -> Lang {
        self.lang.parse().unwrap_or_default()
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
            let mut result = check(options, &mut facts);
            result.localize(options.lang);
            checks.push(result);
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
        lang: options.lang.tag().to_owned(),
        host_root: options.host.root().display().to_string(),
        kernel_release: options.kernel_release.clone(),
        compatibility_table: options.compatibility.as_ref().map(|table| table.origin.clone()),
        checks,
        summary,
    }
}

/// Column where evidence and fixes start in the text output.
const DETAIL_COLUMN: usize = 9;

/// The words of the text report around the checks' own, in each language: the header's parts (with their
/// punctuation), the note when no site table is given, the fix's label and the summary's.
struct Labels {
    host_root: &'static str,
    kernel: &'static str,
    table: &'static str,
    no_table: &'static str,
    fix: &'static str,
    summary: &'static str,
}

fn labels(lang: Lang) -> Labels {
    match lang {
        Lang::En => Labels {
            host_root: ": host root ",
            kernel: ", kernel ",
            table: ", compatibility table: ",
            no_table: "none (the packages' version.info files)",
            fix: "fix: ",
            summary: "Summary: ",
        },
        Lang::ZhCn => Labels {
            host_root: "：主机根目录 ",
            kernel: "，内核 ",
            table: "，兼容性表：",
            no_table: "无（依据各软件包的 version.info 文件）",
            fix: "修复：",
            summary: "汇总：",
        },
    }
}

/// Lines of the text report: English wraps at spaces as `ascend-smi` does; Chinese, which has no spaces between
/// words, also between wide characters, counting each as two columns, and never cuts a long word.
fn wrap(text: &str, hang: usize, lang: Lang, lines: &mut Vec<String>) {
    match lang {
        Lang::En => wrap_hanging(text, hang, lines),
        Lang::ZhCn => wrap_wide(text, hang, lines),
    }
}

/// Whether a character takes two columns on a terminal (CJK ideographs and punctuation, full-width forms).
fn is_wide(c: char) -> bool {
    matches!(c as u32, 0x1100..=0x115F | 0x2E80..=0x303E | 0x3041..=0x33FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF
        | 0xA000..=0xA4CF | 0xAC00..=0xD7A3 | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFF60 | 0xFFE0..=0xFFE6)
}

fn wrap_wide(text: &str, hang: usize, lines: &mut Vec<String>) {
    let width = ascend_cli::text::WIDTH;
    let continuation = " ".repeat(hang.min(width / 2));
    let mut rest: Vec<char> = text.trim_end().chars().collect();
    loop {
        let columns = |chars: &[char]| chars.iter().map(|c| if is_wide(*c) { 2 } else { 1 }).sum::<usize>();
        if columns(&rest) <= width {
            lines.push(rest.iter().collect());
            return;
        }
        let lead = rest.iter().take_while(|c| **c == ' ').count();
        // The last break that fits: before a space, or between two characters either of which is wide.
        let fits = |index: usize| columns(&rest[..index]) <= width;
        // Never after an opening bracket, nor before closing punctuation.
        let breaks = |index: usize| {
            let (before, here) = (rest[index - 1], rest[index]);
            let wide = here == ' ' || is_wide(here) || is_wide(before);
            wide && !"（《“".contains(before) && !"，。；：、）》”".contains(here)
        };
        let cut = (lead + 1..rest.len()).rev().find(|index| fits(*index) && breaks(*index));
        // A word wider than a line stays whole, up to the next break.
        let Some(cut) = cut.or_else(|| (lead + 1..rest.len()).find(|index| breaks(*index))) else {
            lines.push(rest.iter().collect());
            return;
        };
        let head: String = rest[..cut].iter().collect();
        lines.push(head.trim_end().to_owned());
        let tail: String = rest[cut..].iter().collect();
        rest = format!("{continuation}{}", tail.trim_start()).chars().collect();
    }
}

/// The text report: per section, each check's status, id and title, its evidence, and its fix, in the report's
/// language ([`DoctorReport::lang`]).
pub fn render_text(report: &DoctorReport, host_root_label: &str) -> String {
    let lang = report.language();
    let labels = labels(lang);
    let table = report.compatibility_table.as_deref().unwrap_or(labels.no_table);
    let mut lines = vec![format!(
        "ascend-doctor {}{}{host_root_label}{}{}{}{table}",
        report.tool_version, labels.host_root, labels.kernel, report.kernel_release, labels.table
    )];
    let indent = " ".repeat(DETAIL_COLUMN);
    for section in Section::ALL {
        let checks: Vec<&CheckResult> = report.checks.iter().filter(|check| check.section == section).collect();
        if checks.is_empty() {
            continue;
        }
        lines.push(String::new());
        lines.push(section.title_in(lang).to_owned());
        for check in checks {
            let title = if check.title_localized.is_empty() { &check.title } else { &check.title_localized };
            lines.push(format!("  {:<6} {title} ({})", format!("[{}]", check.status.label()), check.id));
            for evidence in &check.evidence {
                for (index, part) in evidence.lines().enumerate() {
                    let prefix = if index == 0 { "" } else { "  " };
                    wrap(&format!("{indent}{prefix}{part}"), DETAIL_COLUMN + 2, lang, &mut lines);
                }
            }
            if let Some(fix) = check.fix_localized.as_ref().or(check.fix.as_ref()) {
                for (index, part) in fix.lines().enumerate() {
                    let label = if index == 0 { labels.fix } else { "     " };
                    wrap(&format!("{indent}{label}{part}"), DETAIL_COLUMN + 5, lang, &mut lines);
                }
            }
        }
    }
    let summary = report.summary;
    lines.push(String::new());
    lines.push(format!(
        "{}{} OK, {} WARN, {} FAIL, {} SKIP",
        labels.summary, summary.ok, summary.warn, summary.fail, summary.skip
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

fn english() -> String {
    Lang::En.tag().to_owned()
}

#[cfg(test)]
mod tests {
    use crate::advice::tests::has_han;

    // Here rather than in advice.rs: running the checks needs the whole crate, which the catalogue must not import.
    #[test]
    fn every_check_has_both_titles() {
        let root = tempfile::tempdir().expect("tempdir");
        let mut options =
            crate::DoctorOptions::for_root(root.path(), std::time::Duration::from_secs(1)).expect("options");
        options.cluster_api = None;
        let report = crate::run(&options);
        assert_eq!(report.checks.len(), crate::CHECKS.len());
        for check in &report.checks {
            let (en, zh_cn) =
                crate::advice::title(&check.id).unwrap_or_else(|| panic!("{}: no title in the catalogue", check.id));
            assert_eq!(en, check.title, "{}: the catalogue's English title differs from the check's", check.id);
            assert!(has_han(zh_cn) && !has_han(en), "{}: no Chinese title: {zh_cn:?}", check.id);
        }
    }
}
