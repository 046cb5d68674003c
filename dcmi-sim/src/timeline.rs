//! The scripted timeline: at t seconds after `dcmi_init`, a state change on one chip.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde::{Deserialize, Serialize};

use crate::state_change::StateChange;

/// `[[timeline]]`: one scripted change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TimelineEntry {
    /// Seconds after `dcmi_init`.
    pub at_s: f64,
    /// The chip it applies to.
    pub logic_id: u32,
    /// What happens.
    pub action: TimelineAction,
    /// Fault code (`raise_fault`, `clear_fault`).
    #[serde(default)]
    pub code: Option<u32>,
    /// Severity 0..3 of a raised fault (default 2).
    #[serde(default)]
    pub severity: Option<u8>,
    /// New health value (`set_health`): 0..3.
    #[serde(default)]
    pub health: Option<u32>,
}

/// Kinds of scripted change.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TimelineAction {
    /// Raise fault `code` (subscribers get assertion 1).
    RaiseFault,
    /// Clear fault `code` (subscribers get assertion 0).
    ClearFault,
    /// Set the health value.
    SetHealth,
    /// The chip drops off the bus: calls return -8012.
    Drop,
    /// The chip comes back.
    Restore,
    /// A hot reset starts (boot status runs to 16 within `reset_duration_ms`).
    Reset,
}

impl TimelineAction {
    /// The name used in the file, e.g. `raise_fault`.
    pub fn name(self) -> &'static str {
        match self {
            TimelineAction::RaiseFault => "raise_fault",
            TimelineAction::ClearFault => "clear_fault",
            TimelineAction::SetHealth => "set_health",
            TimelineAction::Drop => "drop",
            TimelineAction::Restore => "restore",
            TimelineAction::Reset => "reset",
        }
    }
}

impl TimelineEntry {
    /// The state change this entry makes (fields were validated at load time).
    ///
    /// # Errors
    /// The name of the missing field when the entry lacks one its action needs.
    pub fn change(&self) -> Result<StateChange, &'static str> {
        Ok(match self.action {
            TimelineAction::RaiseFault => {
                StateChange::RaiseFault { code: self.code.ok_or("code")?, severity: self.severity.unwrap_or(2) }
            }
            TimelineAction::ClearFault => StateChange::ClearFault { code: self.code.ok_or("code")? },
            TimelineAction::SetHealth => StateChange::SetHealth(self.health.ok_or("health")?),
            TimelineAction::Drop => StateChange::SetDropped(true),
            TimelineAction::Restore => StateChange::SetDropped(false),
            TimelineAction::Reset => StateChange::Reset,
        })
    }
}

/// Timeline progress: entries sorted by time and a cursor of the next one due.
pub struct Timeline {
    entries: Vec<(u64, u32, StateChange)>,
    cursor: AtomicUsize,
}

impl Timeline {
    /// Sorts the valid `entries` by time (stable, so equal times keep file order).
    pub fn new(entries: &[TimelineEntry]) -> Timeline {
        let mut entries: Vec<(u64, u32, StateChange)> = entries
            .iter()
            .filter_map(|entry| {
                let at_ms = (entry.at_s.max(0.0) * 1000.0).round() as u64;
                entry.change().ok().map(|change| (at_ms, entry.logic_id, change))
            })
            .collect();
        entries.sort_by_key(|(at_ms, _, _)| *at_ms);
        Timeline { entries, cursor: AtomicUsize::new(0) }
    }

    /// When the next entry is due (ms since init), or `u64::MAX` when all ran.
    pub fn next_due_ms(&self) -> u64 {
        self.entries.get(self.cursor.load(Ordering::Acquire)).map_or(u64::MAX, |(at_ms, _, _)| *at_ms)
    }

    /// Takes the entries due at `elapsed_ms` (call under the refresh lock), as (logic id, change).
    pub fn take_due(&self, elapsed_ms: u64) -> Vec<(u32, StateChange)> {
        let start = self.cursor.load(Ordering::Acquire);
        let end = start + self.entries[start..].iter().take_while(|(at_ms, _, _)| *at_ms <= elapsed_ms).count();
        self.cursor.store(end, Ordering::Release);
        self.entries[start..end].iter().map(|(_, logic_id, change)| (*logic_id, change.clone())).collect()
    }
}
