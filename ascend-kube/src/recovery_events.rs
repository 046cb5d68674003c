//! What recovery did, as Events on the Node: every daemon that resets chips (the device plugin, the DRA driver)
//! reports the same reasons, which `kubectl ascend faults` lists beside the fault Events.

use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::ChipIds;
use ascend_node::recovery::{HeldOut, RecoveryObserver};
use ascend_node::Snapshot;
use tokio::sync::watch;

use crate::node_events::{NodeEvent, NodeEvents};

/// The reasons of recovery's Node Events: a reset starts, the chip booted, the reset failed, the reset did not start
/// because a chip of its group was taken, the chip stays out until an operator acts.
pub const RECOVERY_EVENT_REASONS: [&str; 5] =
    ["NpuResetStarted", "NpuReset", "NpuResetFailed", "NpuResetAborted", "NpuHeldOut"];

/// A [`RecoveryObserver`] that records each call as a Node Event (through [`NodeEvents`]: rate-limited, never
/// blocking the runner), naming the chip as the monitor's snapshots do (`Ascend910-3`), as the fault Events do.
pub struct RecoveryEvents {
    events: NodeEvents,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    names: Option<fn(u32) -> String>,
}

impl std::fmt::Debug for RecoveryEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryEvents").finish_non_exhaustive()
    }
}

impl RecoveryEvents {
    /// Records to `events`, naming chips from the monitor's `snapshots`.
    pub fn new(events: NodeEvents, snapshots: watch::Receiver<Arc<Snapshot>>) -> Self {
        RecoveryEvents { events, snapshots, names: None }
    }

    /// Names chips by physical id with `name` instead (the DRA driver's device names, `npu-3`, which its slices and
    /// taints show).
    #[must_use]
    pub fn with_names(mut self, name: fn(u32) -> String) -> Self {
        self.names = Some(name);
        self
    }

    fn record(&self, warning: bool, reason: &str, chip: ChipIds, note: String) {
        // The chip's name as the program shows it elsewhere (the device plugin's fault Events, the DRA driver's
        // devices), so that `kubectl ascend faults` groups them together.
        let name = match self.names {
            Some(name) => name(chip.phy.get()),
            None => self
                .snapshots
                .borrow()
                .resources()
                .flat_map(|resource| resource.devices.values())
                .find(|device| device.chip.phy == chip.phy)
                .map_or_else(|| format!("chip-{}", chip.phy), |device| device.chip_name.clone()),
        };
        self.events.record(NodeEvent {
            warning,
            reason: reason.to_owned(),
            note: format!("NPU {name} ({chip}): {note}"),
            action: name,
        });
    }
}

impl RecoveryObserver for RecoveryEvents {
    fn reset_started(&self, chip: ChipIds, group: &[ChipIds]) {
        let phys: Vec<String> = group.iter().map(|ids| ids.phy.to_string()).collect();
        self.record(
            false,
            "NpuResetStarted",
            chip,
            format!("hot reset to clear its fault; withdrawn with its reset group (physical ids {})", phys.join(",")),
        );
    }

    fn reset_finished(&self, chip: ChipIds, outcome: &Result<Duration, String>) {
        match outcome {
            Ok(took) => self.record(
                false,
                "NpuReset",
                chip,
                format!("reset and booted in {:.1} s; offered again once it reads healthy", took.as_secs_f64()),
            ),
            Err(error) => self.record(true, "NpuResetFailed", chip, format!("reset failed: {error}; it stays out")),
        }
    }

    fn reset_aborted(&self, chip: ChipIds, taken: &[ChipIds]) {
        let phys: Vec<String> = taken.iter().map(|ids| ids.phy.to_string()).collect();
        self.record(
            false,
            "NpuResetAborted",
            chip,
            format!("reset not started: chips {} were taken meanwhile", phys.join(",")),
        );
    }

    fn held_out(&self, chip: ChipIds, why: &HeldOut) {
        self.record(true, "NpuHeldOut", chip, held_out_note(why));
    }
}

/// The note of an `NpuHeldOut` Event after the chip's name: that the chip stays out and why. `ascend-doctor`'s
/// `kubernetes.held_out_chips` tells the reasons apart by these words.
pub fn held_out_note(why: &HeldOut) -> String {
    let why_text = match why {
        HeldOut::BudgetUsed => "it has used its resets for now".to_owned(),
        HeldOut::ResetFailed(error) => format!("its reset failed ({error})"),
        HeldOut::FaultedAgain { after } => format!("it faulted again {} s after its reset", after.as_secs()),
    };
    format!("stays out of service until an operator acts: {why_text}")
}
