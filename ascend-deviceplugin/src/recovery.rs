//! Chips that heal, in the device plugin: the node layer's recovery runner (`ascend_node::recovery`) with the chips
//! running pods hold as the kubelet's PodResources lists them. What it did goes to Node Events
//! (`ascend_kube::RecoveryEvents`, with `--node-events`) and the daemon's metrics
//! (`ascend_node::recovery::RecoveryMetrics`), as in the DRA driver.
//!
//! A chip being reset is listed Unhealthy to the kubelet through the monitor (the cause `Recovering`), so the
//! kubelet stops choosing it before the last check of its holders; after the boot it follows the monitor's verdict
//! again. Not in Volcano mode: there the kubelet's ids are slots and the pods' annotations say which chips they hold,
//! which this holder list does not read, so the daemon refuses the combination.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ascend_dcmi::PhyId;
use ascend_node::recovery::Holders;
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
