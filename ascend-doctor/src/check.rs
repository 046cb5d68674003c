//! One check's outcome: an id, the section of the troubleshooting chain it belongs to, a status, the evidence it saw
//! and, when something is wrong, the fix.

use std::fmt;

use serde::{Deserialize, Serialize};

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
        match self {
            Section::Driver => "1. Driver and firmware",
            Section::Versions => "2. Versions",
            Section::ContainerRuntime => "3. Container runtime",
            Section::Kubernetes => "4. Kubernetes",
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
    /// What was checked, in a few words.
    pub title: String,
    /// The outcome.
    pub status: Status,
    /// What the check saw: paths, values, command output.
    pub evidence: Vec<String>,
    /// What to do, when the status is WARN or FAIL (and for SKIP when the operator can enable the check).
    pub fix: Option<String>,
}

impl CheckResult {
    /// A result with no evidence yet.
    pub fn new(id: &str, section: Section, title: &str, status: Status) -> Self {
        Self { id: id.to_owned(), section, title: title.to_owned(), status, evidence: Vec::new(), fix: None }
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

    /// Sets the fix.
    #[must_use]
    pub fn fix(mut self, fix: impl Into<String>) -> Self {
        self.fix = Some(fix.into());
        self
    }

    /// The same result with another status.
    #[must_use]
    pub fn with_status(mut self, status: Status) -> Self {
        self.status = status;
        self
    }
}
