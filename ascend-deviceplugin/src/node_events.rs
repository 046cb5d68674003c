//! Chip faults as Kubernetes Events on the Node (feature `node-events`): each snapshot is compared with the last,
//! and what changed becomes an Event through `ascend_kube::NodeEvents`, which rate-limits, aggregates and never
//! blocks (an API server that fails only loses Events).
//!
//! Reasons: `NpuFaultRaised` and `NpuCardDropped`, `NpuChipHung`, `NpuUnhealthy` (Warning); `NpuFaultRecovered` and
//! `NpuRecovered` (Normal). The action is the chip (`Ascend910-3`), so a flapping chip's repeats fold into one Event
//! series; the message names the chip's ids, the fault codes and the level.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use ascend_dcmi::PhyId;
use ascend_kube::{NodeEvent, NodeEvents};
use tokio::sync::watch;

use ascend_node::{ChipCondition, Device, Health, Snapshot, UnhealthyCause};

/// One chip as the Events see it.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct ChipState<'a> {
    pub(crate) device: &'a Device,
    pub(crate) condition: Option<&'a ChipCondition>,
}

/// Each chip once (time-shared replicas and vNPUs share their chip), by physical id.
pub(crate) fn chips(snapshot: &Snapshot) -> BTreeMap<PhyId, ChipState<'_>> {
    let mut chips = BTreeMap::new();
    for device in snapshot.resources().flat_map(|resource| resource.devices.values()) {
        chips.entry(device.chip.phy).or_insert(ChipState { device, condition: snapshot.condition(device.chip.phy) });
    }
    chips
}

/// Whether the monitor has checked the chip at least once.
pub(crate) fn checked(health: &Health) -> bool {
    health.is_checked()
}

fn event(warning: bool, reason: &str, device: &Device, what: String) -> NodeEvent {
    NodeEvent {
        warning,
        reason: reason.to_owned(),
        action: device.chip_name.clone(),
        note: format!("NPU {} ({}): {what}", device.chip_name, device.chip),
    }
}

/// The Events that tell what changed from `previous` to `next`.
pub fn events_between(previous: &Snapshot, next: &Snapshot) -> Vec<NodeEvent> {
    let before = chips(previous);
    let mut events = Vec::new();
    for (phy, now) in chips(next) {
        let device = now.device;
        let level = now.condition.map_or("unknown".to_owned(), |condition| condition.level.name().to_owned());
        let codes_now: Vec<_> =
            now.condition.map(|c| c.faults.iter().map(|(code, _)| *code).collect()).unwrap_or_default();
        let was = before.get(&phy).filter(|was| checked(&was.device.health));
        let codes_before: Vec<_> = was
            .and_then(|was| was.condition)
            .map(|c| c.faults.iter().map(|(code, _)| *code).collect())
            .unwrap_or_default();
        let raised: Vec<String> =
            codes_now.iter().filter(|code| !codes_before.contains(code)).map(|c| c.to_string()).collect();
        let cleared: Vec<String> =
            codes_before.iter().filter(|code| !codes_now.contains(code)).map(|c| c.to_string()).collect();
        let dropped_now = now.condition.is_some_and(|c| c.card_dropped);
        let dropped_before = was.and_then(|was| was.condition).is_some_and(|c| c.card_dropped);
        if dropped_now && !dropped_before {
            events.push(event(true, "NpuCardDropped", device, format!("the card dropped off the bus, level {level}")));
        } else if !raised.is_empty() {
            events.push(event(
                true,
                "NpuFaultRaised",
                device,
                format!("fault {} raised, level {level}; {}", raised.join(","), device.health),
            ));
        }
        if !cleared.is_empty() {
            events.push(event(
                false,
                "NpuFaultRecovered",
                device,
                format!("fault {} cleared; {}", cleared.join(","), device.health),
            ));
        }
        let Some(was) = was else { continue };
        match (&was.device.health, &device.health) {
            (Health::Healthy, Health::Unhealthy(cause @ UnhealthyCause::Hung(_))) => {
                events.push(event(true, "NpuChipHung", device, cause.to_string()));
            }
            (Health::Healthy, Health::Unhealthy(cause)) if raised.is_empty() && !dropped_now => {
                events.push(event(true, "NpuUnhealthy", device, cause.to_string()));
            }
            (Health::Unhealthy(_), Health::Healthy) if cleared.is_empty() => {
                events.push(event(false, "NpuRecovered", device, "healthy again".to_owned()));
            }
            _ => {}
        }
    }
    events
}

/// Records the Events of every snapshot change until `shutdown` completes or the monitor stops.
pub fn report(
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    events: NodeEvents,
    shutdown: impl Future<Output = ()>,
) -> impl Future<Output = ()> {
    // The starting state is the snapshot at this call, not when the returned future first runs: a task spawned on a
    // loaded node can start after the next health poll, and a fault raised in between would otherwise be taken for
    // the starting state and never reported (seen once in 15 runs of tests/node_events.rs beside four busy loops).
    let mut previous = snapshots.borrow_and_update().clone();
    async move {
        tokio::pin!(shutdown);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                changed = snapshots.changed() => if changed.is_err() { return },
            }
            let next = snapshots.borrow_and_update().clone();
            for event in events_between(&previous, &next) {
                tracing::info!(reason = %event.reason, note = %event.note, "NPU event");
                events.record(event);
            }
            previous = next;
        }
    }
}
