//! Keeps the device-info ConfigMap current, and feeds `ManuallySeparateNPU` back into the health monitor.
//!
//! Nothing here polls the API server: a round runs when the chips' health changes, when Allocate served a pod, when
//! the watch of the node's pods or of the ConfigMap saw a change, when the heartbeat is due, and after a failure
//! (with `ascend_kube::Backoff`'s wait). A round reads the watches' copies and writes only a changed list or the
//! heartbeat (see `ascend_kube::device_info::DeviceInfoPublisher`).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::PhyId;
use ascend_kube::device_info::{DeviceInfoPublisher, Published};
use ascend_kube::pod_assignment::{chips_in_use, PodAssignments};
use ascend_kube::{Backoff, BackoffPolicy};
use tokio::sync::{watch, Notify};

use crate::volcano::device_list::device_list;
use ascend_node::inventory::Snapshot;
use ascend_node::monitor::Separations;

/// What the publishing loop works with.
pub struct PublisherLoop {
    /// The ConfigMap writer.
    pub publisher: DeviceInfoPublisher,
    /// The node's pods (for the chips in use).
    pub pods: PodAssignments,
    /// The plugin's snapshots.
    pub snapshot: watch::Receiver<Arc<Snapshot>>,
    /// Where separated chips go.
    pub separations: Separations,
    /// Notified when Allocate served a pod.
    pub assigned: Arc<Notify>,
    /// The waits after a failed round.
    pub backoff: BackoffPolicy,
}

/// When nothing is due (no list written yet and no failure): the first round runs at once anyway.
const IDLE: Duration = Duration::from_secs(24 * 3600);

impl PublisherLoop {
    /// Runs until `shutdown` completes. API errors are logged and retried after the backoff's wait; they never touch
    /// the plugin's health or Allocate.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut pod_changes = self.pods.changes();
        let mut map_changes = self.publisher.changes();
        let mut backoff = Backoff::new(self.backoff);
        let mut wait = Duration::ZERO;
        let mut failing = false;
        loop {
            if failing {
                // The backoff's wait (and the server's Retry-After) holds whatever changes meanwhile; the next round
                // reads the latest of everything.
                tokio::select! {
                    () = &mut shutdown => return,
                    () = tokio::time::sleep(wait) => {}
                }
            } else {
                tokio::select! {
                    () = &mut shutdown => return,
                    () = tokio::time::sleep(wait) => {}
                    changed = self.snapshot.changed() => if changed.is_err() { return },
                    () = self.assigned.notified() => {}
                    changed = pod_changes.changed() => if changed.is_err() { return },
                    changed = map_changes.changed() => if changed.is_err() { return },
                }
            }
            let outcome = self.cycle().await;
            failing = outcome.is_err();
            wait = match outcome {
                Ok(published) => {
                    backoff.reset();
                    match published {
                        Published::TooSoon(after) => after,
                        Published::Written(_) | Published::Unchanged => {
                            self.publisher.heartbeat_due_in().unwrap_or(IDLE)
                        }
                    }
                }
                Err(error) => {
                    let retry_in = backoff.next_delay(&error);
                    tracing::warn!(config_map = %self.publisher.name(), %error, ?retry_in, "device info not published");
                    retry_in
                }
            };
        }
    }

    /// One round: apply the operator's separations, then publish the map.
    ///
    /// # Errors
    /// The API error that stopped the round.
    pub async fn cycle(&mut self) -> ascend_kube::Result<Published> {
        let separated = self.publisher.manually_separated().await?;
        let snapshot = self.snapshot.borrow_and_update().clone();
        self.separations.set(separated_phys(&snapshot, &separated));
        let pods = self.pods.watched_list().await?;
        let in_use: BTreeSet<String> = chips_in_use(&pods, None).into_keys().collect();
        let list = device_list(&snapshot, &in_use);
        let published = self.publisher.publish(&list).await?;
        if let Published::Written(update_time) = published {
            tracing::debug!(config_map = %self.publisher.name(), update_time, "device info written");
        }
        Ok(published)
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
