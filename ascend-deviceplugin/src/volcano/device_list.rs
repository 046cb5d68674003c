//! The device-info map of a node, computed from the plugin's snapshot and the chips running pods hold.

use std::collections::BTreeSet;

use ascend_dcmi::{ChipType, FaultLevel};
use ascend_kube::device_info::{DeviceFault, DeviceList, FamilyDevices, KeySet};

use ascend_node::{DeviceKind, Resource, Snapshot};

/// Which keys Huawei's plugin writes for a chip type.
pub fn key_set(chip_type: ChipType) -> KeySet {
    match chip_type {
        ChipType::Ascend310 | ChipType::Ascend310B => KeySet::Edge,
        ChipType::Ascend310P => KeySet::Inference,
        _ => KeySet::Training,
    }
}

/// The `DeviceList` of every whole-chip resource of `snapshot`; `in_use` are the chips running pods hold (by their
/// `huawei.com/AscendReal` annotation, or as the kubelet's PodResources lists a pod without one), which are not free. vNPU resources are left out, as Huawei's plugin leaves them out.
pub fn device_list(snapshot: &Snapshot, in_use: &BTreeSet<String>) -> DeviceList {
    let mut list = DeviceList::new();
    for resource in snapshot.resources().filter(|resource| is_whole_chips(resource)) {
        let Some(chip_type) = resource.devices.values().next().map(|device| device.chip_type) else { continue };
        list.add_family(&resource.name, key_set(chip_type), &family(snapshot, resource, in_use));
    }
    list
}

/// Whether a resource advertises whole chips (possibly time-shared), not vNPUs.
pub fn is_whole_chips(resource: &Resource) -> bool {
    resource.devices.values().all(|device| matches!(device.kind, DeviceKind::Chip { .. }))
}

fn family(snapshot: &Snapshot, resource: &Resource, in_use: &BTreeSet<String>) -> FamilyDevices {
    let mut devices = FamilyDevices::default();
    // Replicas of a time-shared chip are one chip here; chips in physical-id order, as the driver lists them.
    let mut chips: Vec<&ascend_node::Device> = Vec::new();
    for device in resource.devices.values() {
        if !chips.iter().any(|known| known.chip.phy == device.chip.phy) {
            chips.push(device);
        }
    }
    chips.sort_by_key(|device| device.chip.phy);
    for device in chips {
        let name = &device.chip_name;
        let condition = snapshot.condition(device.chip.phy);
        if device.health.is_healthy() {
            if !in_use.contains(name) {
                devices.free.insert(name.clone());
            }
        } else {
            devices.unhealthy.insert(name.clone());
        }
        let has_faults = condition.is_some_and(|condition| !condition.faults.is_empty());
        if !has_faults && device.health.is_healthy() {
            continue;
        }
        let level = match condition {
            Some(condition) if condition.separated => FaultLevel::ManuallySeparateNpu,
            Some(condition) if !device.health.is_healthy() || has_faults => condition.level,
            // Unhealthy without an answer from the driver (the call failed or hung): unusable, cause unknown.
            _ => FaultLevel::SeparateNpu,
        };
        let level =
            if !device.health.is_healthy() && level.is_schedulable(false) { FaultLevel::SeparateNpu } else { level };
        // The policy grades the chip, not each code; each code carries the chip's level.
        let codes: Vec<(u64, i64, String)> = condition
            .map(|condition| {
                condition.faults.iter().map(|(code, since)| (code.0, *since, level.name().to_owned())).collect()
            })
            .unwrap_or_default();
        devices.faults.push(DeviceFault::chip(name, level.name(), &codes));
    }
    devices
}
