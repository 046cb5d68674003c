//! `ascend-smi events`: follows fault events live, one line (or one JSON document) per event.

use std::collections::HashMap;
use std::io::{self, Write};
use std::time::{Duration, Instant};

use ascend_dcmi::{Assertion, DeviceManager, EventSource, FaultEvent, FaultLevel, Severity};
use serde::{Deserialize, Serialize};

use super::time::utc_timestamp;
use ascend_node::host_report::SCHEMA_VERSION;
use ascend_node::FaultGrader;

/// One fault event in the `--json` output (one document per line).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EventReport {
    /// Always [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// When the host saw the event, RFC 3339 UTC.
    pub time: String,
    /// The chip's logic id (as the driver reports it).
    pub logic_id: u32,
    /// The chip's physical id, `null` if the chip was not in the list read at start.
    pub phy_id: Option<u32>,
    /// The fault code in upper-case hex.
    pub code: String,
    /// `"occur"`, `"recovery"`, `"one_off"` or `"other"`.
    pub assertion: String,
    /// `"warning"`, `"minor"`, `"major"`, `"critical"`, `"other"`; `null` for polled events.
    pub severity: Option<String>,
    /// The fault level the code grades to.
    pub level: String,
    /// The driver's event name, or the meaning of the code's level.
    pub meaning: String,
    /// `"subscription"` or `"polling"`.
    pub source: String,
}

fn severity_name(severity: Severity) -> &'static str {
    match severity {
        Severity::Warning => "warning",
        Severity::Minor => "minor",
        Severity::Major => "major",
        Severity::Critical => "critical",
        _ => "other",
    }
}

fn assertion_name(assertion: Assertion) -> &'static str {
    match assertion {
        Assertion::Occur => "occur",
        Assertion::Recovery => "recovery",
        Assertion::OneOff => "one_off",
        _ => "other",
    }
}

/// Huawei's rule for a code the policy does not list: more serious than minor, or of unknown severity, isolates the
/// chip; otherwise the fault needs no handling (Huawei's `Ascend/mind-cluster`,
/// `component/ascend-device-plugin`, its fault-code handling).
pub fn unlisted_code_level(severity: Option<Severity>) -> FaultLevel {
    match severity {
        Some(Severity::Warning | Severity::Minor) => FaultLevel::NotHandleFault,
        _ => FaultLevel::SeparateNpu,
    }
}

/// Builds the report of one event.
pub fn event_report(event: &FaultEvent, phy_ids: &HashMap<u32, u32>, grader: &FaultGrader) -> EventReport {
    let level = grader(event.code).unwrap_or_else(|| unlisted_code_level(event.severity));
    let meaning = if event.name.trim().is_empty() { event.code.meaning(level) } else { event.name.trim().to_owned() };
    EventReport {
        schema_version: SCHEMA_VERSION,
        time: utc_timestamp(event.seen_at),
        logic_id: event.logic.get(),
        phy_id: phy_ids.get(&event.logic.get()).copied(),
        code: event.code.to_string(),
        assertion: assertion_name(event.assertion).to_owned(),
        severity: event.severity.map(|s| severity_name(s).to_owned()),
        level: level.name().to_owned(),
        meaning,
        source: match event.source {
            EventSource::Subscription => "subscription",
            EventSource::Polling => "polling",
        }
        .to_owned(),
    }
}

/// The text line of one event.
pub fn event_line(report: &EventReport) -> String {
    let npu = report.phy_id.map_or_else(|| format!("logic {}", report.logic_id), |phy| format!("NPU {phy}"));
    format!(
        "{} {npu:<7} {} {:<8} {:<8} {}: {}",
        report.time,
        report.code,
        report.assertion,
        report.severity.as_deref().unwrap_or("-"),
        report.level,
        report.meaning
    )
}

/// When to stop following.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct FollowLimits {
    /// Stop after this many events.
    pub count: Option<u64>,
    /// Stop after this long.
    pub duration: Option<Duration>,
}

/// Follows the events of `manager` until a limit is reached or the stream ends.
///
/// # Errors
/// The driver refused the subscription and polling (as a message), or writing to `out` failed.
pub fn follow(
    manager: &dyn DeviceManager,
    poll_interval: Duration,
    limits: FollowLimits,
    json: bool,
    grader: &FaultGrader,
    out: &mut dyn Write,
) -> Result<u64, FollowError> {
    let phy_ids: HashMap<u32, u32> = manager
        .chips()
        .map_err(|error| FollowError::Driver(error.to_string()))?
        .into_iter()
        .map(|ids| (ids.logic.get(), ids.phy.get()))
        .collect();
    let stream = manager.fault_events(poll_interval).map_err(|error| FollowError::Driver(error.to_string()))?;
    let started = Instant::now();
    let mut seen = 0u64;
    loop {
        if limits.count.is_some_and(|count| seen >= count) {
            break;
        }
        let wait = match limits.duration {
            Some(duration) => match duration.checked_sub(started.elapsed()) {
                Some(left) if !left.is_zero() => left,
                _ => break,
            },
            None => Duration::from_secs(3600),
        };
        match stream.recv_timeout(wait) {
            Ok(event) => {
                let report = event_report(&event, &phy_ids, grader);
                let text =
                    if json { serde_json::to_string(&report).map_err(io::Error::from)? } else { event_line(&report) };
                writeln!(out, "{text}")?;
                out.flush()?;
                seen += 1;
            }
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break,
        }
    }
    Ok(seen)
}

/// Why following stopped early.
#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    /// The driver could not list chips or deliver events.
    #[error("{0}")]
    Driver(String),
    /// Writing the output failed.
    #[error("writing the events: {0}")]
    Output(#[from] io::Error),
}
