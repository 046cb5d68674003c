//! One check's outcome: an id, the section of the troubleshooting chain it belongs to, a status, the evidence it saw
//! and, when something is wrong, the fix.

use std::fmt;

use ascend_cli::Lang;
use serde::{Deserialize, Serialize};

use super::advice::{self, Fix};

/// How a check came out, least serious first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    /// Not applicable here, or its input is not available (the evidence says why).
    Skip,
    /// Fine.
    Ok,
    /// Works now, but will bite (the fix says how to avoid it).
    Warn,
    /// Broken: NPUs will not work until it is fixed.
    Fail,
}

impl Status {
    /// The upper-case label of the text output.
    pub const fn label(self) -> &'static str {
        match self {
            Status::Skip => "SKIP",
            Status::Ok => "OK",
            Status::Warn => "WARN",
            Status::Fail => "FAIL",
        }
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// The sections, in the order the operator diagnoses: a node that cannot see its cards is a driver problem, a node
/// whose allocatable lacks NPUs a device-plugin problem, a pod without devices a runtime problem.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    /// Driver and firmware: PCI devices, kernel, module, device nodes, libdcmi, chips.
    Driver,
    /// Driver, firmware and CANN versions against the compatibility table.
    Versions,
    /// Docker / containerd runtime registration, RuntimeClass, CDI.
    ContainerRuntime,
    /// Device plugin, node resources, stale allocations.
    Kubernetes,
}

impl Section {
    /// Every section in diagnosis order.
    pub const ALL: [Section; 4] = [Section::Driver, Section::Versions, Section::ContainerRuntime, Section::Kubernetes];

    /// The heading of the text output.
    pub const fn title(self) -> &'static str {
        self.title_in(Lang::En)
    }

    /// The heading of the text output in `lang`.
    pub const fn title_in(self, lang: Lang) -> &'static str {
        match (self, lang) {
            (Section::Driver, Lang::En) => "1. Driver and firmware",
            (Section::Driver, Lang::ZhCn) => "1. 驱动和固件",
            (Section::Versions, Lang::En) => "2. Versions",
            (Section::Versions, Lang::ZhCn) => "2. 版本配套",
            (Section::ContainerRuntime, Lang::En) => "3. Container runtime",
            (Section::ContainerRuntime, Lang::ZhCn) => "3. 容器运行时",
            (Section::Kubernetes, Lang::En) => "4. Kubernetes",
            (Section::Kubernetes, Lang::ZhCn) => "4. Kubernetes",
        }
    }

    /// The name used on the command line and in JSON.
    pub const fn name(self) -> &'static str {
        match self {
            Section::Driver => "driver",
            Section::Versions => "versions",
            Section::ContainerRuntime => "container_runtime",
            Section::Kubernetes => "kubernetes",
        }
    }
}

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CheckResult {
    /// A stable id, `<section>.<what>` (for example `driver.kernel_headers`).
    pub id: String,
    /// The section.
    pub section: Section,
    /// What was checked, in a few words (English, stable).
    pub title: String,
    /// The title in the report's language ([`crate::DoctorReport::lang`]); equal to `title` in English.
    #[serde(default)]
    pub title_localized: String,
    /// The outcome.
    pub status: Status,
    /// What the check saw: paths, values, command output.
    pub evidence: Vec<String>,
    /// What to do, when the status is WARN or FAIL (and for SKIP when the operator can enable the check); English,
    /// stable.
    pub fix: Option<String>,
    /// The fix in the report's language; equal to `fix` in English.
    #[serde(default)]
    pub fix_localized: Option<String>,
    /// The stable ids of the findings the fix answers (`driver.loaded.not_loaded`), in the order of its parts; empty
    /// without a fix, and for a fix given as plain text ([`CheckResult::fix`]).
    #[serde(default)]
    pub findings: Vec<String>,
    /// The Chinese fix, until [`CheckResult::localize`] picks the report's language.
    #[serde(skip)]
    fix_zh_cn: Option<String>,
}

impl CheckResult {
    /// A result with no evidence yet.
    pub fn new(id: &str, section: Section, title: &str, status: Status) -> Self {
        Self {
            id: id.to_owned(),
            section,
            title: title.to_owned(),
            title_localized: title.to_owned(),
            status,
            evidence: Vec::new(),
            fix: None,
            fix_localized: None,
            findings: Vec::new(),
            fix_zh_cn: None,
        }
    }

    /// Adds a line of evidence.
    #[must_use]
    pub fn evidence(mut self, line: impl Into<String>) -> Self {
        self.evidence.push(line.into());
        self
    }

    /// Adds several lines of evidence.
    #[must_use]
    pub fn evidence_lines(mut self, lines: impl IntoIterator<Item = String>) -> Self {
        self.evidence.extend(lines);
        self
    }

    /// Sets the fix as plain text, in English only (the doctor's own checks give theirs in every language).
    #[must_use]
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        let fix = fix.into();
        self.fix_localized = Some(fix.clone());
        self.fix = Some(fix);
        self.fix_zh_cn = None;
        self.findings.clear();
        self
    }

    /// Sets the fix from the doctor's catalogue: its text in every language and the ids of its findings.
    #[must_use]
    pub(crate) fn advise(mut self, fix: impl Into<Fix>) -> Self {
        let fix = fix.into();
        self.findings = fix.ids;
        self.fix_localized = Some(fix.en.clone());
        self.fix = Some(fix.en);
        self.fix_zh_cn = Some(fix.zh_cn);
        self
    }

    /// The fix set with [`CheckResult::advise`], to fold into another check's.
    pub(crate) fn advice(&self) -> Option<Fix> {
        let (en, zh_cn) = (self.fix.clone()?, self.fix_zh_cn.clone()?);
        Some(Fix { ids: self.findings.clone(), en, zh_cn })
    }

    /// Sets `title_localized` and `fix_localized` to `lang`'s texts. A check the catalogue does not know, or a fix
    /// given as plain text, keeps its English.
    pub fn localize(&mut self, lang: Lang) {
        let title = advice::title(&self.id).filter(|(en, _)| *en == self.title);
        self.title_localized = match title {
            Some((en, zh_cn)) => lang.pick(en, zh_cn).to_owned(),
            None => self.title.clone(),
        };
        self.fix_localized = match lang {
            Lang::En => self.fix.clone(),
            Lang::ZhCn => self.fix_zh_cn.clone().or_else(|| self.fix.clone()),
        };
    }

    /// The same result with another status.
    #[must_use]
    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }
}
