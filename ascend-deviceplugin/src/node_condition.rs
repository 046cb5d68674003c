//! The Node condition `AscendNPUUnhealthy` (feature `node-events`): `True` while at least one of the node's NPUs is
//! unhealthy, with the chips and their reasons in the message; computed from each snapshot and written through
//! `ascend_kube::NodeConditionWriter` (which keeps the Node's other conditions and moves `lastTransitionTime` only when
//! the status flips).
//!
//! Nothing is written until every chip has had its first health check, so a starting plugin does not flip the
//! condition to `True` for chips it has not looked at yet. A failed write is logged and retried after the wait of
//! `ascend_node::Backoff` (exponential with jitter, the server's `Retry-After` honoured; the latest snapshot then);
//! it never touches health or Allocate (this runs in its own task). The loop is `ascend_node::ReconcileLoop`.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_kube::{ConditionWrite, NodeConditionWriter, NpuCondition, ALL_HEALTHY_REASON, UNHEALTHY_REASON};
use tokio::sync::watch;

use crate::node_events::{checked, chips};
use ascend_node::{BackoffPolicy, Reconcile, ReconcileLoop};
use ascend_node::{Health, Snapshot};

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
    snapshots: watch::Receiver<Arc<Snapshot>>,
    writer: NodeConditionWriter,
    backoff: BackoffPolicy,
    shutdown: impl Future<Output = ()>,
) {
    ReconcileLoop::new("node condition AscendNPUUnhealthy", backoff)
        .wake_on_change(snapshots.clone())
        .run(Rounds { snapshots, writer }, shutdown)
        .await;
}

/// The rounds of [`report`]: the condition of the latest snapshot, written when it changed.
struct Rounds {
    snapshots: watch::Receiver<Arc<Snapshot>>,
    writer: NodeConditionWriter,
}

impl Reconcile for Rounds {
    type Error = ascend_kube::Error;

    async fn reconcile(&mut self) -> ascend_kube::Result<Option<Duration>> {
        let snapshot = self.snapshots.borrow_and_update().clone();
        if let Some(condition) = condition_of(&snapshot) {
            if let ConditionWrite::Written { transition } = self.writer.write(&condition).await? {
                tracing::info!(status = condition.status(), transition, message = %condition.message, "node condition AscendNPUUnhealthy written");
            }
        }
        Ok(None)
    }
}
