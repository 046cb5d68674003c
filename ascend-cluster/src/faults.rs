//! `kubectl ascend faults`: the chips unhealthy now, and the recent fault Events, newest first.
//!
//! Current faults come from the per-node accounting ([`crate::node_npus`]): DRA device taints, the device-info
//! `-Fault` entries and unhealthy lists, or the `AscendNPUUnhealthy` condition of a plain device-plugin node. The
//! Events are the device plugin's Node Events (`--node-events`): reasons [`FAULT_EVENT_REASONS`], in namespace
//! `default` where Node Events live.

use k8s_openapi::api::events::v1::Event;
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use crate::error::Result;
use crate::node_npus::{node_npus, unhealthy_since, NodeNpus};
use crate::objects::{ClusterObjects, Wanted};

/// The reasons of the device plugin's fault Events (warnings, then the recoveries), and of its recovery's resets
/// (`--recovery-mode`: a reset started, done, failed or not started, a chip held out;
/// [`ascend_kube::RECOVERY_EVENT_REASONS`], which the device plugin and the DRA driver record).
pub const FAULT_EVENT_REASONS: [&str; 11] = [
    "NpuFaultRaised",
    "NpuCardDropped",
    "NpuChipHung",
    "NpuUnhealthy",
    "NpuFaultRecovered",
    "NpuRecovered",
    "NpuResetStarted",
    "NpuReset",
    "NpuResetFailed",
    "NpuResetAborted",
    "NpuHeldOut",
];

/// A chip unhealthy now.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CurrentFault {
    /// The node.
    pub node: String,
    /// The chip (`npu-3`, `Ascend910-3`), or `-` when the source names none (the node condition).
    pub chip: String,
    /// Why.
    pub reason: String,
    /// Since when, when the source says.
    pub since: Option<Timestamp>,
}

/// One fault Event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultEvent {
    /// When it was last seen.
    pub time: Option<Timestamp>,
    /// The node.
    pub node: String,
    /// `Warning` or `Normal`.
    pub kind: String,
    /// The reason ([`FAULT_EVENT_REASONS`]).
    pub reason: String,
    /// The chip (the Event's action).
    pub chip: String,
    /// The message.
    pub note: String,
    /// How often it happened (a series folds repeats).
    pub count: i32,
}

/// The report of `kubectl ascend faults`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FaultsReport {
    /// Chips unhealthy now, newest fault first (faults without a time last), then by node and chip.
    pub current: Vec<CurrentFault>,
    /// Fault Events, newest first.
    pub events: Vec<FaultEvent>,
}

impl FaultsReport {
    /// The report for objects already read.
    pub fn from_objects(objects: &ClusterObjects) -> FaultsReport {
        let mut current: Vec<CurrentFault> =
            node_npus(objects).iter().flat_map(|npus| current_faults(npus, objects)).collect();
        current.sort_by(|a, b| (b.since, &a.node, &a.chip).cmp(&(a.since, &b.node, &b.chip)));
        let mut events: Vec<FaultEvent> = objects.events.iter().filter_map(fault_event).collect();
        events.sort_by(|a, b| (b.time, &a.node, &a.chip).cmp(&(a.time, &b.node, &b.chip)));
        FaultsReport { current, events }
    }
}

fn current_faults(npus: &NodeNpus, objects: &ClusterObjects) -> Vec<CurrentFault> {
    if npus.chips.is_empty() {
        if npus.unhealthy == 0 && npus.unhealthy_reasons.is_empty() {
            return Vec::new();
        }
        let node = objects.nodes.iter().find(|node| node.metadata.name.as_deref() == Some(npus.node.as_str()));
        let reason = npus.unhealthy_reasons.join("; ");
        return vec![CurrentFault {
            node: npus.node.clone(),
            chip: "-".into(),
            reason: if reason.is_empty() { format!("{} chips unhealthy", npus.unhealthy) } else { reason },
            since: node.and_then(unhealthy_since),
        }];
    }
    npus.chips
        .iter()
        .filter_map(|chip| {
            Some(CurrentFault {
                node: npus.node.clone(),
                chip: chip.name.clone(),
                reason: chip.unhealthy.clone()?,
                since: chip.unhealthy_since,
            })
        })
        .collect()
}

fn fault_event(event: &Event) -> Option<FaultEvent> {
    let reason = event.reason.as_deref()?;
    let regarding = event.regarding.as_ref()?;
    if !FAULT_EVENT_REASONS.contains(&reason) || regarding.kind.as_deref() != Some("Node") {
        return None;
    }
    let series = event.series.as_ref();
    let time = series
        .map(|series| series.last_observed_time.0)
        .or_else(|| event.event_time.as_ref().map(|time| time.0))
        .or_else(|| event.deprecated_last_timestamp.as_ref().map(|time| time.0))
        .or_else(|| event.metadata.creation_timestamp.as_ref().map(|time| time.0));
    Some(FaultEvent {
        time,
        node: regarding.name.clone().unwrap_or_default(),
        kind: event.type_.clone().unwrap_or_default(),
        reason: reason.to_owned(),
        chip: event.action.clone().unwrap_or_default(),
        note: event.note.clone().unwrap_or_default(),
        count: series.map_or(1, |series| series.count.max(1)),
    })
}

/// Reads the cluster (the five lists of [`crate::nodes_report`] and the Node Events) and reports the faults.
///
/// # Errors
/// [`crate::Error::Kube`] when a list fails.
pub async fn faults_report(client: &kube::Client) -> Result<FaultsReport> {
    let wanted = Wanted { events: true, ..Wanted::chip_accounting() };
    let objects = ClusterObjects::read(client, &wanted).await?;
    Ok(FaultsReport::from_objects(&objects))
}

#[cfg(test)]
mod tests {
    use super::FAULT_EVENT_REASONS;

    #[test]
    fn every_recovery_event_reason_is_listed() {
        for reason in ascend_kube::RECOVERY_EVENT_REASONS {
            assert!(FAULT_EVENT_REASONS.contains(&reason), "{reason} is not in FAULT_EVENT_REASONS");
        }
    }
}
