//! Keeps the Node annotation `baseDeviceInfos` current ([`ascend_kube::device_info::BaseDeviceInfos`]): every chip
//! the device-info ConfigMap names, with its RoCE address and super-device id. Volcano's Ascend plugin counts a
//! node's free chips from its keys; without it the node has none.
//!
//! Written once the first snapshot's chips have held still for a second (the monitor's first round adds them one by
//! one); then the chips are read again every 60 s
//! ([`ascend_kube::device_info::BASE_INFO_CHECK_INTERVAL`], as often as Huawei's plugin re-reads the addresses) and
//! whenever the set of chips changes. The Node is patched only when the content changed: an idle node costs DCMI
//! reads, never API requests.

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{DeviceManager, PhyId};
use ascend_kube::device_info::{BaseDeviceInfos, BaseInfoWriter, NpuBaseInfo};
use ascend_kube::{Backoff, BackoffPolicy};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::volcano::device_list::is_whole_chips;
use ascend_node::inventory::Snapshot;

/// The annotation's content for `snapshot`: each chip of a whole-chip resource (the chips the device-info
/// ConfigMap lists, by the same names), read from `manager`. vNPU resources are left out, as the ConfigMap leaves
/// them out: a chip advertised only as vNPUs is then never counted free. Blocks on the driver.
pub fn base_device_infos(snapshot: &Snapshot, manager: &dyn DeviceManager) -> BaseDeviceInfos {
    let mut infos = BaseDeviceInfos::default();
    for resource in snapshot.resources().filter(|resource| is_whole_chips(resource)) {
        for device in resource.devices.values() {
            // Replicas of a time-shared chip are one chip.
            if !infos.0.contains_key(&device.chip_name) {
                infos.0.insert(device.chip_name.clone(), NpuBaseInfo::read(manager, device.chip, device.chip_type));
            }
        }
    }
    infos
}

/// The chips a snapshot advertises whole, by physical id: a change re-reads the annotation's content.
fn whole_chips(snapshot: &Snapshot) -> BTreeSet<PhyId> {
    snapshot
        .resources()
        .filter(|resource| is_whole_chips(resource))
        .flat_map(|resource| resource.devices.values().map(|device| device.chip.phy))
        .collect()
}

/// How long the set of chips must hold still before it is read: the monitor's first round adds the chips one by one
/// (each write of a partial set would show Volcano fewer chips, and cost a PATCH).
const SETTLE: Duration = Duration::from_secs(1);

/// What the annotation loop works with.
pub struct BaseInfoLoop {
    /// The Node writer.
    pub writer: BaseInfoWriter,
    /// The driver the addresses are read from.
    pub manager: Arc<dyn DeviceManager>,
    /// The plugin's snapshots.
    pub snapshot: watch::Receiver<Arc<Snapshot>>,
    /// The waits after a failed write.
    pub backoff: BackoffPolicy,
    /// How often the chips are read again (Huawei's 60 s in the daemon).
    pub check_interval: Duration,
}

impl BaseInfoLoop {
    /// Runs until `shutdown` completes. API errors are logged and retried after the backoff's wait.
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        // The monitor publishes its first snapshot within one DCMI round trip; the empty one before it names no chip.
        tokio::select! {
            () = &mut shutdown => return,
            changed = self.snapshot.changed() => if changed.is_err() { return },
        }
        let mut backoff = Backoff::new(self.backoff);
        let mut written: Option<BaseDeviceInfos> = None;
        // The chips of the latest snapshot; the monitor adds chips one by one in its first round, so a change is read
        // only once the set has held still for SETTLE.
        let mut chips = whole_chips(&self.snapshot.borrow_and_update());
        let mut due = Instant::now() + SETTLE;
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                () = tokio::time::sleep_until(due) => {}
                changed = self.snapshot.changed() => {
                    if changed.is_err() {
                        return;
                    }
                    let now = whole_chips(&self.snapshot.borrow_and_update());
                    if now != chips {
                        chips = now;
                        due = Instant::now() + SETTLE;
                    }
                    continue;
                }
            }
            let snapshot = self.snapshot.borrow_and_update().clone();
            let manager = Arc::clone(&self.manager);
            let read = Arc::clone(&snapshot);
            let infos = match tokio::task::spawn_blocking(move || base_device_infos(&read, manager.as_ref())).await {
                Ok(infos) => infos,
                Err(error) => {
                    tracing::warn!(%error, "reading the chips for baseDeviceInfos failed");
                    due = Instant::now() + self.check_interval;
                    continue;
                }
            };
            if written.as_ref() == Some(&infos) {
                due = Instant::now() + self.check_interval;
                continue;
            }
            match self.writer.write(&infos).await {
                Ok(()) => {
                    tracing::debug!(node = %self.writer.node(), chips = infos.0.len(), "baseDeviceInfos written");
                    written = Some(infos);
                    backoff.reset();
                    due = Instant::now() + self.check_interval;
                }
                Err(error) => {
                    let retry_in = backoff.next_delay(&error);
                    tracing::warn!(node = %self.writer.node(), %error, ?retry_in, "baseDeviceInfos not written");
                    due = Instant::now() + retry_in;
                }
            }
        }
    }
}
