//! Chips that heal, in the DRA driver: the node layer's recovery runner (`ascend_node::recovery`) with the chips the
//! driver's prepared claims hold (its checkpoint: every claim the kubelet has prepared and not yet unprepared). A
//! chip being reset is tainted in the slice through the monitor (cause `Recovering`, `NoSchedule`), so the scheduler
//! stops allocating it before the last check of its holders.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use ascend_dcmi::PhyId;
use ascend_node::recovery::Holders;

use crate::devices::{parse_device_name, DeviceRef};
use crate::driver::AscendDriver;

/// The chips prepared claims hold, whole or as vNPUs.
#[derive(Debug)]
pub struct ClaimHolders {
    driver: Arc<AscendDriver>,
}

impl ClaimHolders {
    /// The holders of `driver`'s prepared claims.
    pub fn new(driver: Arc<AscendDriver>) -> Self {
        ClaimHolders { driver }
    }
}

impl Holders for ClaimHolders {
    fn held(&self) -> Pin<Box<dyn Future<Output = Result<BTreeSet<PhyId>, String>> + Send + '_>> {
        Box::pin(async move {
            let checkpoint = self.driver.checkpoint.lock().await;
            let mut held = BTreeSet::new();
            for claim in checkpoint.claims().values() {
                for device in &claim.devices {
                    match parse_device_name(&device.device) {
                        Some(DeviceRef::Chip(phy) | DeviceRef::Partition(phy, _)) => {
                            held.insert(PhyId(phy));
                        }
                        // A device of a claim this driver cannot name: which chip it holds is unknown.
                        None => {
                            return Err(format!(
                                "prepared claim {}/{} holds device {:?}, which names no chip",
                                claim.namespace, claim.name, device.device
                            ))
                        }
                    }
                }
                // A claim being prepared holds its vNPUs' chips before its devices are written.
                held.extend(claim.vnpus.iter().filter_map(|vnpu| self.phy_of_logic(vnpu.logic_id)));
            }
            Ok(held)
        })
    }
}

impl ClaimHolders {
    fn phy_of_logic(&self, logic: u32) -> Option<PhyId> {
        self.driver.chips.borrow().values().find(|chip| chip.ids.logic.0 == logic).map(|chip| chip.ids.phy)
    }
}
