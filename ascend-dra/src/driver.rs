//! [`AscendDriver`]: prepare and unprepare, the node half of the driver behind the kubelet layer.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use ascend_dcmi::{DeviceManager, LogicId};
use ascend_kube::get_claim;
use dra_kubelet_plugin::{ClaimError, ClaimRef, DeviceHealth, Driver, PreparedDevice};
use tokio::sync::{watch, Mutex};

use crate::cdi_claim::{ClaimNode, ClaimSpecs};
use crate::checkpoint::{Checkpoint, CheckpointDevice, CreatedVnpu, PrepareState, PreparedClaim};
use crate::claim_plan::{plan_claim, ClaimPlan};
use crate::devices::NpuChip;

/// The node half of the Ascend DRA driver.
pub struct AscendDriver {
    pub(crate) driver_name: String,
    pub(crate) pool: String,
    pub(crate) client: kube::Client,
    pub(crate) manager: Arc<dyn DeviceManager>,
    /// The published chips by physical id, as the driver loop last published them from the monitor's snapshot.
    pub(crate) chips: watch::Receiver<Arc<BTreeMap<u32, NpuChip>>>,
    pub(crate) specs: ClaimSpecs,
    /// Also serializes prepare and unprepare: each reads and writes the checkpoint.
    pub(crate) checkpoint: Mutex<Checkpoint>,
    pub(crate) health: watch::Receiver<Vec<DeviceHealth>>,
    /// The chips (physical ids) recovery has withdrawn for a reset: a claim allocated one of them before its taint
    /// reached the scheduler is not prepared until the reset is over.
    pub(crate) recovering: watch::Receiver<BTreeSet<u32>>,
}

impl std::fmt::Debug for AscendDriver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AscendDriver").field("driver", &self.driver_name).field("pool", &self.pool).finish()
    }
}

impl Driver for AscendDriver {
    async fn prepare(&self, claim: &ClaimRef) -> Result<Vec<PreparedDevice>, ClaimError> {
        let mut checkpoint = self.checkpoint.lock().await;
        if let Some(done) = checkpoint.get(&claim.uid).filter(|entry| entry.state == PrepareState::Completed) {
            return Ok(done.devices.iter().map(prepared_device).collect());
        }
        let object = get_claim(&self.client, &claim.namespace, &claim.name)
            .await
            .map_err(|e| ClaimError::new(e.to_string()))?
            .ok_or_else(|| {
                ClaimError::new(format!(
                    "ResourceClaim {}/{} does not exist (deleted before it was prepared?)",
                    claim.namespace, claim.name
                ))
            })?;
        // One view of the chips for the whole prepare, though the loop may publish a new one meanwhile.
        let chips = Arc::clone(&self.chips.borrow());
        let plan = plan_claim(&object, claim, &self.driver_name, &self.pool, &chips).map_err(ClaimError::new)?;
        let recovering = self.recovering.borrow().clone();
        if let Some(device) = plan.devices.iter().find(|device| recovering.contains(&device.phy)) {
            return Err(ClaimError::new(format!(
                "claim {}/{}: chip {} is being reset to clear its fault; the kubelet retries once the reset is over",
                claim.namespace, claim.name, device.device
            )));
        }
        if let Some(unfinished) = checkpoint.get(&claim.uid).cloned() {
            tracing::info!(%claim, "an earlier prepare did not finish; undoing it first");
            self.undo(&unfinished).await?;
        }
        let mut entry = PreparedClaim {
            namespace: claim.namespace.clone(),
            name: claim.name.clone(),
            state: PrepareState::Started,
            devices: Vec::new(),
            cdi_spec: None,
            vnpus: Vec::new(),
        };
        // A vNPU outlives the driver, so the claim is recorded before one is made. Whole chips leave only the spec
        // file, whose name carries the claim UID: a spec of a prepare that died before its Completed record is swept
        // at the next start (`ClaimSpecs::remove_unlisted`), so those claims are saved once, when done (one fsync per
        // prepare: the p99 target of docs/performance.md §7).
        if plan.devices.iter().any(|device| device.vnpu_template.is_some()) {
            checkpoint.put(&claim.uid, entry.clone())?;
        }
        match self.set_up(&claim.uid, &plan, &chips, &mut entry, &mut checkpoint).await {
            Ok(devices) => Ok(devices),
            Err(error) => {
                if let Err(cleanup) = self.undo(&entry).await {
                    tracing::error!(%claim, error = %cleanup, "cannot undo a failed prepare");
                } else {
                    checkpoint.remove(&claim.uid)?;
                }
                Err(error)
            }
        }
    }

    async fn unprepare(&self, claim: &ClaimRef) -> Result<(), ClaimError> {
        let mut checkpoint = self.checkpoint.lock().await;
        let Some(entry) = checkpoint.get(&claim.uid).cloned() else { return Ok(()) };
        self.undo(&entry).await?;
        checkpoint.remove(&claim.uid)?;
        Ok(())
    }

    fn health(&self) -> Option<watch::Receiver<Vec<DeviceHealth>>> {
        Some(self.health.clone())
    }
}

impl AscendDriver {
    async fn set_up(
        &self,
        uid: &str,
        plan: &ClaimPlan,
        chips: &BTreeMap<u32, NpuChip>,
        entry: &mut PreparedClaim,
        checkpoint: &mut Checkpoint,
    ) -> Result<Vec<PreparedDevice>, ClaimError> {
        let mut nodes = Vec::with_capacity(plan.devices.len());
        for device in &plan.devices {
            let chip = chips.get(&device.phy).ok_or_else(|| {
                ClaimError::new(format!("the claim names chip {}, which this node does not have", device.phy))
            })?;
            let Some(template) = &device.vnpu_template else {
                nodes.push(ClaimNode::Chip(chip.device_node_number()));
                continue;
            };
            let logic = chip.ids.logic;
            let vnpu_id = self.create_vnpu(logic, template).await?;
            entry.vnpus.push(CreatedVnpu { logic_id: logic.get(), vnpu_id });
            checkpoint.put(uid, entry.clone())?;
            nodes.push(ClaimNode::Vnpu(vnpu_id));
        }
        let (path, cdi_id) = self.specs.write(uid, &nodes, &plan.env)?;
        entry.cdi_spec = Some(path);
        entry.devices = plan
            .devices
            .iter()
            .map(|device| CheckpointDevice {
                request_names: vec![device.request.clone()],
                pool: self.pool.clone(),
                device: device.device.clone(),
                cdi_device_ids: vec![cdi_id.clone()],
            })
            .collect();
        entry.state = PrepareState::Completed;
        checkpoint.put(uid, entry.clone())?;
        Ok(entry.devices.iter().map(prepared_device).collect())
    }

    async fn create_vnpu(&self, logic: LogicId, template: &str) -> Result<u32, ClaimError> {
        let manager = Arc::clone(&self.manager);
        let owned = template.to_owned();
        let created = tokio::task::spawn_blocking(move || manager.create_vnpu(logic, &owned))
            .await
            .map_err(|e| ClaimError::new(format!("creating a {template} vNPU on logic id {logic}: {e}")))?;
        created
            .map(|id| id.0)
            .map_err(|e| ClaimError::new(format!("creating a {template} vNPU on logic id {logic}: {e}")))
    }

    /// Removes what `entry` lists: the spec file, then the vNPUs.
    pub(crate) async fn undo(&self, entry: &PreparedClaim) -> Result<(), ClaimError> {
        if let Some(path) = &entry.cdi_spec {
            ClaimSpecs::remove(path)?;
        }
        for vnpu in &entry.vnpus {
            let manager = Arc::clone(&self.manager);
            let created = *vnpu;
            let destroyed = tokio::task::spawn_blocking(move || {
                manager.destroy_vnpu(LogicId(created.logic_id), ascend_dcmi::VnpuId(created.vnpu_id))
            })
            .await
            .map_err(|e| ClaimError::new(format!("destroying vNPU {}: {e}", vnpu.vnpu_id)))?;
            if let Err(error) = destroyed {
                return Err(ClaimError::new(format!(
                    "destroying vNPU {} on logic id {}: {error}",
                    vnpu.vnpu_id, vnpu.logic_id
                )));
            }
        }
        Ok(())
    }
}

fn prepared_device(device: &CheckpointDevice) -> PreparedDevice {
    PreparedDevice {
        request_names: device.request_names.clone(),
        pool: device.pool.clone(),
        device: device.device.clone(),
        cdi_device_ids: device.cdi_device_ids.clone(),
        share_id: None,
    }
}
