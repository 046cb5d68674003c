//! The Node condition `AscendNPUUnhealthy` (feature `node-events`): `True` while at least one of the node's NPUs is
//! unhealthy, with the chips and their reasons in the message; computed from each snapshot and written through
//! `ascend_kube::NodeConditionWriter` (which keeps the Node's other conditions and moves `lastTransitionTime` only when
//! the status flips).
//!
//! Nothing is written until every chip has had its first health check, so a starting plugin does not flip the
//! condition to `True` for chips it has not looked at yet. A failed write is logged and retried after the wait of
//! `ascend_kube::Backoff` (exponential with jitter, the server's `Retry-After` honoured) or at the next change; it
//! never touches health or Allocate (this runs in its own task).

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_kube::{Backoff, BackoffPolicy};

use ascend_kube::{ConditionWrite, NodeConditionWriter, NpuCondition, ALL_HEALTHY_REASON, UNHEALTHY_REASON};
use tokio::sync::watch;

use crate::node_events::{checked, chips};
use ascend_node::inventory::{Health, Snapshot};

/// The condition a snapshot describes; `None` while some chip awaits its first check, or when there is none.
pub fn condition_of(snapshot: &Snapshot) -> Option<NpuCondition> {
    let chips = chips(snapshot);
    if chips.is_empty() || chips.values().any(|chip| !checked(&chip.device.health)) {
        return None;
    }
    let unhealthy: Vec<String> = chips
        .values()
        .filter_map(|chip| match &chip.device.health {
            Health::Unhealthy(reason) => Some(format!("{}: {reason}", chip.device.chip_name)),
            Health::Healthy => None,
        })
        .collect();
    let total = chips.len();
    Some(if unhealthy.is_empty() {
        NpuCondition {
            unhealthy: false,
            reason: ALL_HEALTHY_REASON.to_owned(),
            message: format!("all {total} NPUs are healthy"),
        }
    } else {
        NpuCondition {
            unhealthy: true,
            reason: UNHEALTHY_REASON.to_owned(),
            message: format!("{} of {total} NPUs unhealthy: {}", unhealthy.len(), unhealthy.join("; ")),
        }
    })
}

/// Keeps the condition current until `shutdown` completes or the monitor stops.
pub async fn report(
    mut snapshots: watch::Receiver<Arc<Snapshot>>,
    mut writer: NodeConditionWriter,
    backoff: BackoffPolicy,
    shutdown: impl Future<Output = ()>,
) {
    tokio::pin!(shutdown);
    let mut backoff = Backoff::new(backoff);
    let mut retry_in = Duration::ZERO;
    loop {
        let snapshot = snapshots.borrow_and_update().clone();
        let mut failed = false;
        if let Some(condition) = condition_of(&snapshot) {
            match writer.write(&condition).await {
                Ok(ConditionWrite::Written { transition }) => {
                    backoff.reset();
                    tracing::info!(status = condition.status(), transition, message = %condition.message, "node condition AscendNPUUnhealthy written");
                }
                Ok(ConditionWrite::Unchanged) => backoff.reset(),
                Err(error) => {
                    retry_in = backoff.next_delay(&error);
                    tracing::warn!(%error, ?retry_in, "node condition AscendNPUUnhealthy not written");
                    failed = true;
                }
            }
        }
        tokio::select! {
            () = &mut shutdown => return,
            changed = snapshots.changed() => if changed.is_err() { return },
            () = tokio::time::sleep(retry_in), if failed => {}
        }
    }
}
