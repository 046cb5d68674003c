//! Keeps the device-info ConfigMap current, and feeds `ManuallySeparateNPU` back into the health monitor.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::PhyId;
use ascend_kube::device_info_publisher::{DeviceInfoPublisher, Published};
use ascend_kube::pod_assignment::{chips_in_use, PodAssignments};
use tokio::sync::{watch, Notify};

use crate::inventory::Snapshot;
use crate::monitor::Separations;
use crate::volcano::device_list::device_list;

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
    /// Time between re-reads of the pods and of `ManuallySeparateNPU` when nothing else happens.
    pub resync_interval: Duration,
}

impl PublisherLoop {
    /// Runs until `shutdown` completes. API errors are logged and retried at the next resync; they never touch the
    /// plugin's health or Allocate.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut retry_in = Duration::ZERO;
        loop {
            let wait = if retry_in.is_zero() { self.resync_interval } else { retry_in };
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep(wait) => {}
                changed = self.snapshot.changed() => if changed.is_err() { return },
                () = self.assigned.notified() => {}
            }
            retry_in = match self.cycle().await {
                Ok(Published::TooSoon(after)) => after,
                Ok(_) => Duration::ZERO,
                Err(error) => {
                    tracing::warn!(config_map = %self.publisher.name(), %error, retry_in = ?self.resync_interval, "device info not published");
                    Duration::ZERO
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
        let pods = self.pods.list().await?;
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
