//! Allocate in Volcano mode: the chips come from the pod's annotation, not from the kubelet's ids.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::Duration;

use ascend_kube::pod_assignment::{
    chips_in_use, oldest_waiting, served_for, PodAssignments, PodView, REAL_DEVICES_ANNOTATION,
};
use tokio::sync::{Mutex, Notify};

use crate::assigner::DeviceAssigner;
use crate::error::{Error, Result};
use crate::held::Holdings;
use ascend_dcmi::ChipType;
use ascend_node::{DeviceKind, Resource};

/// How the pod of an Allocate call is looked for: a LIST of the node's pods, again whenever the watch of them sees a
/// change, until the pod is there or the time is up.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LookupConfig {
    /// With `retry_interval`, how long to wait for the pod: `(attempts - 1) * retry_interval` (the scheduler's
    /// annotations may reach the API server just after the binding). Within that time the lookup runs again after
    /// every change of the node's pods the watch sees, not on a timer.
    pub attempts: u32,
    /// See `attempts`.
    pub retry_interval: Duration,
}

impl Default for LookupConfig {
    fn default() -> Self {
        // Huawei's plugin tries three times a second apart (`GetPodFromInformerTime`).
        LookupConfig { attempts: 3, retry_interval: Duration::from_secs(1) }
    }
}

/// Assigns the chips Volcano wrote on the oldest waiting pod (see `ascend_kube::pod_assignment`).
///
/// Calls are serialised: two containers started at once must not pick the same pod. A pod another instance served
/// in the meantime is detected by the mark's `resourceVersion` precondition and the lookup starts over.
pub struct VolcanoAssigner {
    pods: PodAssignments,
    lookup: LookupConfig,
    serial: Mutex<()>,
    assigned: Arc<Notify>,
}

impl VolcanoAssigner {
    /// An assigner over the pods of one node; `assigned` is notified after every served pod (the device-info
    /// publisher then drops the chips from the free list at once).
    pub fn new(pods: PodAssignments, lookup: LookupConfig, assigned: Arc<Notify>) -> Self {
        VolcanoAssigner { pods, lookup, serial: Mutex::new(()), assigned }
    }

    fn refuse(resource: &Resource, detail: impl Into<String>) -> Error {
        Error::Assignment { resource: resource.name.clone(), detail: detail.into() }
    }

    /// One lookup: `Ok(None)` when no pod waits yet.
    async fn try_assign(
        &self,
        resource: &Resource,
        kubelet_ids: &[String],
        holdings: &Holdings,
    ) -> Result<Option<Vec<String>>> {
        let pods = self
            .pods
            .list()
            .await
            .map_err(|error| Self::refuse(resource, format!("listing the node's pods: {error}")))?;
        if let Some(pod) = served_for(&pods, kubelet_ids) {
            tracing::info!(pod = %pod.key(), "the kubelet asks again for a served pod; giving it the same chips");
            let chips = pod.real_chips();
            check_chips(resource, pod, &chips, &pods, holdings)?;
            return Ok(Some(chips));
        }
        let Some(pod) = oldest_waiting(&pods, &resource.name, kubelet_ids.len()) else { return Ok(None) };
        let chips = annotated_chips(resource, pod.chosen_chips(&resource.name));
        check_chips(resource, pod, &chips, &pods, holdings)?;
        match self.pods.mark_served(pod, kubelet_ids, &chips).await {
            Ok(()) => {
                tracing::info!(pod = %pod.key(), ?chips, kubelet = ?kubelet_ids, "assigned Volcano's chips");
                self.assigned.notify_one();
                Ok(Some(chips))
            }
            // The pod changed since the list (another Allocate served it, or Volcano rewrote it): look again.
            Err(error) if error.is_conflict() => Ok(None),
            Err(error) => Err(Self::refuse(resource, format!("marking pod {} served: {error}", pod.key()))),
        }
    }
}

/// Our device ids for the chips of Volcano's annotation. On Ascend950 Huawei's Volcano plugin names each chosen chip
/// by the `DeviceID` of the node's `baseDeviceInfos` annotation, the chip's logic id (mind-cluster
/// `component/ascend-for-volcano/internal/npu/base/task.go`, `SetNPUTopologyToPodFn`, `PhyIDToDeviceIDMap`), which
/// Huawei's plugin reads as the `N` of `/dev/davinci<N>` (`plugin.go`, `Allocate`; `GetRealAllocateDevicesFromEnv`,
/// `convertLogicIDToPhyID`): `npu-<logic>` is turned back into the device `npu-<physical>` whose
/// [`ascend_dcmi::ChipIds::device_node_number`] it is. Elsewhere the annotation names the devices themselves. A name
/// that fits no chip is kept, for [`check_chips`] to refuse.
fn annotated_chips(resource: &Resource, names: Vec<String>) -> Vec<String> {
    names
        .into_iter()
        .map(|name| {
            let Some((prefix, number)) = name.rsplit_once('-') else { return name };
            let Ok(number) = number.parse::<u32>() else { return name };
            let chip = resource.devices.values().find(|device| {
                device.chip_type == ChipType::Ascend950
                    && matches!(device.kind, DeviceKind::Chip { replica: None })
                    && device.chip.device_node_number(device.chip_type) == number
                    && device.id.rsplit_once('-').is_some_and(|(own_prefix, _)| own_prefix == prefix)
            });
            chip.map_or(name, |device| device.id.clone())
        })
        .collect()
}

/// Every chip must be one of this resource's, healthy, named once, and held by no other active pod: neither by its
/// `huawei.com/AscendReal` annotation nor, for a pod without one (served by a plugin outside Volcano mode, or by
/// Huawei's before its annotation round), by the ids the kubelet's PodResources lists for it.
fn check_chips(
    resource: &Resource,
    pod: &PodView,
    chips: &[String],
    pods: &[PodView],
    holdings: &Holdings,
) -> Result<()> {
    let refuse = |detail: String| VolcanoAssigner::refuse(resource, format!("pod {}: {detail}", pod.key()));
    let mut seen = BTreeSet::new();
    if let Some(twice) = chips.iter().find(|chip| !seen.insert(chip.as_str())) {
        return Err(refuse(format!("its annotation names chip {twice} twice")));
    }
    let unknown: Vec<&String> = chips.iter().filter(|chip| resource.device(chip).is_none()).collect();
    if !unknown.is_empty() {
        return Err(refuse(format!("chip(s) {unknown:?} in its {} annotation are not on this node", resource.name)));
    }
    let unhealthy: Vec<String> = chips
        .iter()
        .filter_map(|chip| resource.device(chip).filter(|device| !device.health.is_healthy()))
        .map(|device| format!("{} is {}", device.id, device.health))
        .collect();
    if !unhealthy.is_empty() {
        return Err(refuse(format!("its annotation names unhealthy chips: {}", unhealthy.join("; "))));
    }
    let mut in_use = chips_in_use(pods, Some(pod));
    for (chip, holder) in held_without_annotation(resource, pods, holdings, Some(pod)) {
        in_use.entry(chip).or_insert(holder);
    }
    let taken: Vec<String> =
        chips.iter().filter_map(|chip| in_use.get(chip).map(|holder| format!("{chip} (held by {holder})"))).collect();
    if !taken.is_empty() {
        return Err(refuse(format!("chips already in use: {}", taken.join(", "))));
    }
    Ok(())
}

/// The chips of `resource` that pods without `huawei.com/AscendReal` hold as the kubelet's PodResources lists them,
/// each with its pod, leaving out `serving` (the pod Allocate serves): the rule of Allocate and of the free-chip list
/// alike. Pods with the annotation hold the chips it names ([`chips_in_use`]), not their kubelet slots.
///
/// A PodResources holder counts only while the API still shows its pod active on the node: the plugin reads
/// PodResources every few seconds, so a pod that has just ended may still be listed there, and refusing its chips
/// fails the next pod's admission (UnexpectedAdmissionError), which the kubelet does not retry.
pub(crate) fn held_without_annotation(
    resource: &Resource,
    pods: &[PodView],
    holdings: &Holdings,
    serving: Option<&PodView>,
) -> BTreeMap<String, String> {
    let counted: BTreeSet<String> = pods
        .iter()
        .filter(|other| other.is_active() && other.annotation(REAL_DEVICES_ANNOTATION).is_none())
        .filter(|other| serving.is_none_or(|pod| other.key() != pod.key()))
        .map(PodView::key)
        .collect();
    holdings.held_chips(resource, |key| !counted.contains(key))
}

#[tonic::async_trait]
impl DeviceAssigner for VolcanoAssigner {
    async fn assign(&self, resource: &Resource, kubelet_ids: &[String], holdings: &Holdings) -> Result<Vec<String>> {
        let _serial = self.serial.lock().await;
        let mut changes = self.pods.changes();
        // As long as `attempts` lookups a `retry_interval` apart would take; the lookup runs again as soon as the
        // watch sees the node's pods change (the pod arriving, or the change behind a conflict).
        let deadline =
            tokio::time::Instant::now() + self.lookup.retry_interval * self.lookup.attempts.saturating_sub(1);
        loop {
            changes.borrow_and_update();
            if let Some(chips) = self.try_assign(resource, kubelet_ids, holdings).await? {
                return Ok(chips);
            }
            if !matches!(tokio::time::timeout_at(deadline, changes.changed()).await, Ok(Ok(()))) {
                break;
            }
        }
        Err(Self::refuse(
            resource,
            format!(
                "no pending pod on this node carries Volcano's {} annotation with {} chip(s) and a predicate-time; \
                 is the pod scheduled by Volcano with the Ascend plugin?",
                resource.name,
                kubelet_ids.len()
            ),
        ))
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ascend_dcmi::{ChipIds, LogicId, PhyId};
    use ascend_node::{ChipRecord, Health, InventoryOptions, Snapshot};

    use super::*;

    /// The chip resource of a host whose logic ids 0..7 are physical 4..7, 0..3 (`atlas-950-8`).
    fn resource(chip_type: ChipType) -> Resource {
        let chips: Vec<ChipRecord> = (0..8)
            .map(|logic| ChipRecord {
                ids: ChipIds { logic: LogicId(logic), phy: PhyId((logic + 4) % 8), locator: None },
                chip_type,
                numa_node: None,
                vnpus: Vec::new(),
            })
            .collect();
        let health: BTreeMap<PhyId, Health> = chips.iter().map(|chip| (chip.ids.phy, Health::Healthy)).collect();
        let snapshot = Snapshot::build(&chips, &health, &InventoryOptions::default());
        let name = if chip_type == ChipType::Ascend950 { "huawei.com/npu" } else { "huawei.com/Ascend910" };
        snapshot.resource(name).cloned().unwrap_or_else(|| panic!("{name} advertised"))
    }

    fn names(names: &[&str]) -> Vec<String> {
        names.iter().map(|name| (*name).to_owned()).collect()
    }

    #[test]
    fn an_ascend950_annotation_names_chips_by_their_node_number() {
        // Huawei's Volcano writes npu-<logic>: logic 0 is npu-4, logic 6 is npu-2.
        let a5 = resource(ChipType::Ascend950);
        assert_eq!(annotated_chips(&a5, names(&["npu-0", "npu-6"])), ["npu-4", "npu-2"]);
        // A name that fits no chip stays, for check_chips to refuse.
        assert_eq!(annotated_chips(&a5, names(&["npu-20", "npu"])), ["npu-20", "npu"]);
        // Other chip types: the annotation names the devices themselves.
        let a2 = resource(ChipType::Ascend910B);
        assert_eq!(annotated_chips(&a2, names(&["Ascend910-0", "Ascend910-6"])), ["Ascend910-0", "Ascend910-6"]);
    }
}
