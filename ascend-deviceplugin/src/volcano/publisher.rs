//! Keeps the device-info ConfigMap current, and feeds `ManuallySeparateNPU` back into the health monitor.
//!
//! Nothing here polls the API server: a round runs when the chips' health changes, when Allocate served a pod, when
//! the watch of the node's pods or of the ConfigMap saw a change, when the heartbeat is due, and after a failure
//! (with `ascend_node::Backoff`'s wait, during which changes wait too): the loop is `ascend_node::ReconcileLoop`. A
//! round reads the watches' copies and writes only a changed list or the heartbeat (see
//! `ascend_kube::device_info::DeviceInfoPublisher`).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::PhyId;
use ascend_kube::device_info::{DeviceInfoPublisher, Published};
use ascend_kube::pod_assignment::{chips_in_use, PodAssignments};
use tokio::sync::{watch, Notify};

use crate::held::Holdings;
use crate::volcano::assigner::held_without_annotation;
use crate::volcano::device_list::device_list;
use ascend_node::Separations;
use ascend_node::Snapshot;
use ascend_node::{BackoffPolicy, Reconcile, ReconcileLoop};

/// What the publishing loop works with.
pub struct PublisherLoop {
    /// The ConfigMap writer.
    pub publisher: DeviceInfoPublisher,
    /// The node's pods (for the chips in use).
    pub pods: PodAssignments,
    /// The plugin's snapshots.
    pub snapshot: watch::Receiver<Arc<Snapshot>>,
    /// What the kubelet's PodResources says pods hold: a pod without `huawei.com/AscendReal` (served by another
    /// plugin before this one took the node over) holds the chips listed there.
    pub holdings: watch::Receiver<Arc<Holdings>>,
    /// Where separated chips go.
    pub separations: Separations,
    /// Notified when Allocate served a pod.
    pub assigned: Arc<Notify>,
    /// The waits after a failed round.
    pub backoff: BackoffPolicy,
}

impl PublisherLoop {
    /// Runs until `shutdown` completes. API errors are logged and retried after the backoff's wait; they never touch
    /// the plugin's health or Allocate.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        ReconcileLoop::new(format!("device info {}", self.publisher.name()), self.backoff)
            .wake_on_change(self.snapshot.clone())
            .wake_on_change(self.holdings.clone())
            .wake_on_notify(Arc::clone(&self.assigned))
            .wake_on_change(self.pods.changes())
            .wake_on_change(self.publisher.changes())
            .run(Rounds(self), shutdown)
            .await;
    }

    /// One round: apply the operator's separations, then publish the map.
    ///
    /// # Errors
    /// The API error that stopped the round.
    pub async fn cycle(&mut self) -> ascend_kube::Result<Published> {
        let snapshot = self.snapshot.borrow_and_update().clone();
        // The monitor's first view, before every chip has answered, lists none or some: written, it would tell
        // Volcano the node has no free chip (or fewer) until the next round. On a node taken over from Huawei's
        // plugin it would replace that plugin's complete lists; the round that follows the settled view writes.
        if !snapshot.is_settled() {
            return Ok(Published::Unchanged);
        }
        let separated = self.publisher.manually_separated().await?;
        self.separations.set(separated_phys(&snapshot, &separated));
        let pods = self.pods.watched_list().await?;
        let holdings = self.holdings.borrow_and_update().clone();
        let mut in_use: BTreeSet<String> = chips_in_use(&pods, None).into_keys().collect();
        for resource in snapshot.resources() {
            in_use.extend(held_without_annotation(resource, &pods, &holdings, None).into_keys());
        }
        let list = device_list(&snapshot, &in_use);
        let published = self.publisher.publish(&list).await?;
        if let Published::Written(update_time) = published {
            tracing::debug!(config_map = %self.publisher.name(), update_time, "device info written");
        }
        Ok(published)
    }
}

/// The rounds of [`PublisherLoop::run`]: the next one when the cadence asks (too soon to write, or the heartbeat).
struct Rounds(PublisherLoop);

impl Reconcile for Rounds {
    type Error = ascend_kube::Error;

    async fn reconcile(&mut self) -> ascend_kube::Result<Option<Duration>> {
        Ok(match self.0.cycle().await? {
            Published::TooSoon(after) => Some(after),
            Published::Written(_) | Published::Unchanged => self.0.publisher.heartbeat_due_in(),
        })
    }
}

/// The physical ids of the separated chip names this node has.
fn separated_phys(snapshot: &Snapshot, names: &BTreeSet<String>) -> BTreeSet<PhyId> {
    snapshot
        .resources()
        .flat_map(|resource| resource.devices.values())
        .filter(|device| names.contains(&device.chip_name))
        .map(|device| device.chip.phy)
        .collect()
}
