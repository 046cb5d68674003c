//! Chips that heal, in the device plugin: the node layer's recovery runner (`ascend_node::recovery`) with the chips
//! running pods hold as the kubelet's PodResources lists them, and what it did as Node Events and the daemon's
//! metrics.
//!
//! A chip being reset is listed Unhealthy to the kubelet through the monitor (the cause `Recovering`), so the
//! kubelet stops choosing it before the last check of its holders; after the boot it follows the monitor's verdict
//! again. Not in Volcano mode: there the kubelet's ids are slots and the pods' annotations say which chips they hold,
//! which this holder list does not read, so the daemon refuses the combination.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
#[cfg(feature = "node-events")]
use std::time::Duration;

#[cfg(feature = "node-events")]
use ascend_dcmi::ChipIds;
use ascend_dcmi::PhyId;
#[cfg(feature = "node-events")]
use ascend_kube::{NodeEvent, NodeEvents};
use ascend_node::recovery::Holders;
#[cfg(feature = "node-events")]
use ascend_node::recovery::{HeldOut, RecoveryObserver};
use ascend_node::Snapshot;
use tokio::sync::watch;

use crate::held::{Holdings, HoldingsTracker};

/// The chips running pods hold, read from the kubelet's PodResources at every call.
#[derive(Debug)]
pub struct PodResourcesHolders {
    tracker: Arc<HoldingsTracker>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
}

impl PodResourcesHolders {
    /// Holders read through `tracker` (the daemon's one PodResources reader, read afresh at each call), mapped to
    /// chips by the monitor's `snapshots`.
    pub fn new(tracker: Arc<HoldingsTracker>, snapshots: watch::Receiver<Arc<Snapshot>>) -> Self {
        PodResourcesHolders { tracker, snapshots }
    }
}

impl Holders for PodResourcesHolders {
    fn held(&self) -> Pin<Box<dyn Future<Output = Result<BTreeSet<PhyId>, String>> + Send + '_>> {
        Box::pin(async move {
            self.tracker.refresh().await.map_err(|error| error.to_string())?;
            let holdings = self.tracker.subscribe().borrow().clone();
            let snapshot = self.snapshots.borrow().clone();
            Ok(held_chips(&holdings, &snapshot))
        })
    }
}

/// The physical ids of the chips any pod holds, whatever the resource or device id it holds them under.
pub fn held_chips(holdings: &Holdings, snapshot: &Snapshot) -> BTreeSet<PhyId> {
    let mut held = BTreeSet::new();
    for resource in snapshot.resources() {
        let names = holdings.held_chips(resource, |_| false);
        held.extend(
            resource.devices.values().filter(|device| names.contains_key(&device.chip_name)).map(|d| d.chip.phy),
        );
    }
    held
}

/// What recovery did, as Node Events (when the daemon records them) and in the daemon's metrics.
#[cfg(feature = "node-events")]
#[cfg_attr(docsrs, doc(cfg(feature = "node-events")))]
pub struct RecoveryReporter {
    events: Option<NodeEvents>,
    metrics: Arc<dyn RecoveryObserver>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
}

#[cfg(feature = "node-events")]
impl std::fmt::Debug for RecoveryReporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryReporter").field("events", &self.events.is_some()).finish_non_exhaustive()
    }
}

/// The reasons of recovery's Node Events.
pub const RECOVERY_EVENT_REASONS: [&str; 5] =
    ["NpuResetStarted", "NpuReset", "NpuResetFailed", "NpuResetAborted", "NpuHeldOut"];

#[cfg(feature = "node-events")]
impl RecoveryReporter {
    /// Reports to `events` (if any) and `metrics`, naming chips as the monitor's `snapshots` do (`Ascend910-3`).
    pub fn new(
        events: Option<NodeEvents>,
        metrics: Arc<dyn RecoveryObserver>,
        snapshots: watch::Receiver<Arc<Snapshot>>,
    ) -> Self {
        RecoveryReporter { events, metrics, snapshots }
    }

    fn record(&self, warning: bool, reason: &str, chip: ChipIds, note: String) {
        let Some(events) = &self.events else { return };
        // The chip's name as the fault Events give it, so that `kubectl ascend faults` groups them together.
        let name = self
            .snapshots
            .borrow()
            .resources()
            .flat_map(|resource| resource.devices.values())
            .find(|device| device.chip.phy == chip.phy)
            .map_or_else(|| format!("chip-{}", chip.phy), |device| device.chip_name.clone());
        events.record(NodeEvent {
            warning,
            reason: reason.to_owned(),
            note: format!("NPU {name} ({chip}): {note}"),
            action: name,
        });
    }
}

#[cfg(feature = "node-events")]
impl RecoveryObserver for RecoveryReporter {
    fn reset_started(&self, chip: ChipIds, group: &[ChipIds]) {
        let phys: Vec<String> = group.iter().map(|ids| ids.phy.to_string()).collect();
        self.record(
            false,
            "NpuResetStarted",
            chip,
            format!("hot reset to clear its fault; withdrawn with its reset group (physical ids {})", phys.join(",")),
        );
        self.metrics.reset_started(chip, group);
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
        self.metrics.reset_finished(chip, outcome);
    }

    fn reset_aborted(&self, chip: ChipIds, taken: &[ChipIds]) {
        let phys: Vec<String> = taken.iter().map(|ids| ids.phy.to_string()).collect();
        self.record(
            false,
            "NpuResetAborted",
            chip,
            format!("reset not started: chips {} were taken meanwhile", phys.join(",")),
        );
        self.metrics.reset_aborted(chip, taken);
    }

    fn held_out(&self, chip: ChipIds, why: &HeldOut) {
        let why_text = match why {
            HeldOut::BudgetUsed => "it has used its resets for now".to_owned(),
            HeldOut::ResetFailed(error) => format!("its reset failed ({error})"),
            HeldOut::FaultedAgain { after } => format!("it faulted again {} s after its reset", after.as_secs()),
        };
        self.record(true, "NpuHeldOut", chip, format!("stays out of service until an operator acts: {why_text}"));
        self.metrics.held_out(chip, why);
    }
}
