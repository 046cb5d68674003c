//! The exit codes of `ascend-smi`, so scripts can tell a healthy host from a sick chip from a broken driver.
//!
//! | code | meaning |
//! |---|---|
//! | 0 | every chip is healthy (or, for `events`, the stream ended normally) |
//! | 1 | `ascend-smi` itself failed (writing the output, starting a thread) |
//! | 2 | bad command line |
//! | 3 | at least one chip is unhealthy: a fault level that forbids workloads, a dropped card, an absent chip |
//! | 4 | at least one chip did not answer in time or its health call failed |
//! | 5 | driver error: `libdcmi.so` not found or refused, `dcmi_init` failed, or the chips could not be listed |
//!
//! When several apply the highest wins: a driver error hides everything else, a chip that does not answer is worse
//! than one that answers "unhealthy".

use std::process::ExitCode;

use ascend_node::host_report::{ChipStatus, HostReport};

/// An `ascend-smi` outcome.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum SmiExit {
    /// 0: every chip healthy.
    Healthy = 0,
    /// 1: the tool failed.
    ToolFailure = 1,
    /// 2: bad command line.
    Usage = 2,
    /// 3: a chip is unhealthy.
    Unhealthy = 3,
    /// 4: a chip did not answer or its health call failed.
    NotResponding = 4,
    /// 5: the driver could not be loaded, initialised or asked for its chips.
    DriverError = 5,
}

impl SmiExit {
    /// The outcome a report calls for.
    pub fn for_report(report: &HostReport) -> SmiExit {
        report
            .chips
            .iter()
            .map(|chip| match chip.status {
                ChipStatus::Ok => SmiExit::Healthy,
                ChipStatus::Unhealthy => SmiExit::Unhealthy,
                ChipStatus::Timeout | ChipStatus::Error => SmiExit::NotResponding,
            })
            .max()
            .unwrap_or(SmiExit::Healthy)
    }

    /// The process exit status.
    pub fn code(self) -> u8 {
        self as u8
    }
}

impl From<SmiExit> for ExitCode {
    fn from(exit: SmiExit) -> Self {
        ExitCode::from(exit.code())
    }
}
