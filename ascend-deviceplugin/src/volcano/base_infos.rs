//! Keeps the Node annotation `baseDeviceInfos` current ([`ascend_kube::device_info::BaseDeviceInfos`]): every chip
//! the device-info ConfigMap names, with its RoCE address and super-device id. Volcano's Ascend plugin counts a
//! node's free chips from its keys; without it the node has none.
//!
//! Written once the first snapshot's chips have held still for a second (the monitor's first round adds them one by
//! one); then the chips are read again every 60 s
//! ([`ascend_kube::device_info::BASE_INFO_CHECK_INTERVAL`], as often as Huawei's plugin re-reads the addresses) and
//! whenever the set of chips changes. The Node is patched only when the content changed: an idle node costs DCMI
//! reads, never API requests. The loop is `ascend_node::ReconcileLoop` (a failed write waits for its backoff).

use std::collections::BTreeSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{DeviceManager, PhyId};
use ascend_kube::device_info::{BaseDeviceInfos, BaseInfoWriter, NpuBaseInfo};
use tokio::sync::watch;
use tokio::time::Instant;

use crate::volcano::device_list::is_whole_chips;
use ascend_node::Snapshot;
use ascend_node::{BackoffPolicy, Reconcile, ReconcileLoop};

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
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        ReconcileLoop::new(format!("baseDeviceInfos of {}", self.writer.node()), self.backoff)
            .wake_on_change(self.snapshot.clone())
            .run(Rounds { state: self, started: false, chips: None, read: None, written: None }, shutdown)
            .await;
    }
}

/// The rounds of [`BaseInfoLoop::run`]. A snapshot's change wakes a round, which reads the driver only when the chips
/// have held still for [`SETTLE`] and either changed since the last read or the check interval is over.
struct Rounds {
    state: BaseInfoLoop,
    /// Whether the monitor's first snapshot came (the empty one before it names no chip).
    started: bool,
    /// The chips of the latest snapshot, and since when they have held still.
    chips: Option<(BTreeSet<PhyId>, Instant)>,
    /// The chips of the last read, and when the next read is due.
    read: Option<(BTreeSet<PhyId>, Instant)>,
    /// What the Node carries (as written last).
    written: Option<BaseDeviceInfos>,
}

impl Reconcile for Rounds {
    type Error = ascend_kube::Error;

    async fn reconcile(&mut self) -> ascend_kube::Result<Option<Duration>> {
        let now = Instant::now();
        if !self.started {
            // The monitor publishes its first snapshot within one DCMI round trip; a closed channel ends the loop.
            if !self.state.snapshot.has_changed().unwrap_or(false) {
                return Ok(None);
            }
            self.started = true;
        }
        let snapshot = self.state.snapshot.borrow_and_update().clone();
        let current = whole_chips(&snapshot);
        // The monitor adds chips one by one in its first round: a changed set is read once it has held still.
        let since = match &self.chips {
            Some((chips, since)) if *chips == current => *since,
            _ => {
                self.chips = Some((current.clone(), now));
                now
            }
        };
        if now < since + SETTLE {
            return Ok(Some(since + SETTLE - now));
        }
        if let Some((chips, due)) = &self.read {
            if *chips == current && now < *due {
                return Ok(Some(*due - now));
            }
        }
        let interval = self.state.check_interval;
        let manager = Arc::clone(&self.state.manager);
        let infos = match tokio::task::spawn_blocking(move || base_device_infos(&snapshot, manager.as_ref())).await {
            Ok(infos) => infos,
            Err(error) => {
                tracing::warn!(%error, "reading the chips for baseDeviceInfos failed");
                self.read = Some((current, now + interval));
                return Ok(Some(interval));
            }
        };
        if self.written.as_ref() != Some(&infos) {
            // A failed write leaves `read` as it was, so the round after the backoff reads and writes again.
            self.state.writer.write(&infos).await?;
            tracing::debug!(node = %self.state.writer.node(), chips = infos.0.len(), "baseDeviceInfos written");
            self.written = Some(infos);
        }
        self.read = Some((current, Instant::now() + interval));
        Ok(Some(interval))
    }
}
