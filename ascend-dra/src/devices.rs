//! The devices the driver publishes: the node's chips from the node layer's health monitor, and their device names
//! (`npu-<physical id>`, partitions `npu-<physical id>-<template>`); the chip list follows the monitor's, which re-lists
//! the chips on every poll.

use ascend_dcmi::{ChipIds, ChipType, PcieAddress, VnpuTemplate};
use ascend_node::{ChipDetails, ChipRecord, Health, Snapshot, UnhealthyCause};

/// One chip and everything the driver publishes about it.
#[derive(Debug, Clone, PartialEq)]
pub struct NpuChip {
    /// Its ids.
    pub ids: ChipIds,
    /// The generation, for example `Ascend910B`.
    pub chip_type: ChipType,
    /// The chip name DCMI reports, for example `910B3`.
    pub model: String,
    /// NUMA node.
    pub numa_node: Option<u32>,
    /// PCIe address.
    pub pcie_address: Option<PcieAddress>,
    /// AI cores.
    pub aicore: u32,
    /// HBM size, when the chip has HBM (DDR otherwise).
    pub memory_bytes: Option<u64>,
    /// The DCMI driver version.
    pub driver_version: Option<String>,
    /// The vNPU templates the chip type accepts.
    pub vnpu_templates: Vec<&'static VnpuTemplate>,
}

impl NpuChip {
    /// The device name in the ResourceSlice: `npu-<physical id>`, stable across reboots and driver restarts (the
    /// logic id is not: it follows the driver's enumeration order).
    pub fn device_name(&self) -> String {
        device_name(self.ids.phy.get())
    }

    /// The `N` of its `/dev/davinci<N>`, which its claims' CDI specs name: the physical id, on Ascend950 the logic id
    /// ([`ascend_dcmi::ChipIds::device_node_number`]), as Huawei's device plugin and runtime number it.
    pub fn device_node_number(&self) -> u32 {
        self.ids.device_node_number(self.chip_type)
    }

    /// The HCCS group: chips of one group talk over HCCS links, so a multi-chip job wants them together.
    pub fn hccs_group(&self) -> Option<u32> {
        ascend_node::hccs_group(self.chip_type, self.ids.phy)
    }
}

/// `npu-<phy>`.
pub fn device_name(phy: u32) -> String {
    format!("npu-{phy}")
}

/// The partition device of a vNPU template on a chip: `npu-<phy>-<template label>`, for example `npu-0-vir02` or
/// `npu-0-vir04-3c-ndvpp` (template `vir04_3c_ndvpp`).
pub fn partition_name(phy: u32, template: &str) -> String {
    format!("npu-{phy}-{}", template_label(template))
}

/// A vNPU template's name as it appears in a device name. Device names must be DNS labels (lowercase letters,
/// digits, `-`), and the API server refuses a slice holding `npu-0-vir02_1c`; Huawei's template names use `_` and
/// never `-`, so the label maps back to the template unambiguously.
pub fn template_label(template: &str) -> String {
    template.to_ascii_lowercase().replace('_', "-")
}

/// What a device name of ours stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceRef<'a> {
    /// A whole chip.
    Chip(u32),
    /// A vNPU of a template on a chip, the template as its label ([`template_label`]).
    Partition(u32, &'a str),
}

/// Parses `npu-<phy>` or `npu-<phy>-<template>`; `None` for anything else.
pub fn parse_device_name(name: &str) -> Option<DeviceRef<'_>> {
    let rest = name.strip_prefix("npu-")?;
    let (phy, template) = match rest.split_once('-') {
        Some((phy, template)) => (phy, Some(template)),
        None => (rest, None),
    };
    if phy.is_empty() || !phy.bytes().all(|b| b.is_ascii_digit()) || (phy.len() > 1 && phy.starts_with('0')) {
        return None;
    }
    let phy = phy.parse().ok()?;
    Some(match template {
        Some(template) if !template.is_empty() => DeviceRef::Partition(phy, template),
        Some(_) => return None,
        None => DeviceRef::Chip(phy),
    })
}

/// The chips the driver publishes, with their health, from the node layer's monitor snapshot: every chip the monitor
/// has identified, in physical-id order, except those gone from the driver's chip list
/// ([`UnhealthyCause::Absent`]), which are withdrawn. A chip that appears is published as soon as the monitor has
/// identified it; one that comes back is published again.
pub fn published_chips(snapshot: &Snapshot) -> Vec<(NpuChip, Health)> {
    snapshot
        .chips()
        .filter(|(_, health)| !matches!(health, Health::Unhealthy(UnhealthyCause::Absent)))
        .map(|(record, health)| {
            let chip = NpuChip::from_record(record, snapshot.details(record.ids.phy).cloned().unwrap_or_default());
            (chip, health.clone())
        })
        .collect()
}

impl NpuChip {
    /// The chip the monitor identified, with the details it read.
    pub fn from_record(record: &ChipRecord, details: ChipDetails) -> NpuChip {
        NpuChip {
            ids: record.ids,
            chip_type: record.chip_type,
            model: details.model,
            numa_node: record.numa_node,
            pcie_address: details.pcie_address,
            aicore: details.aicore,
            memory_bytes: details.memory_bytes,
            driver_version: details.driver_version,
            vnpu_templates: VnpuTemplate::for_chip_type(record.chip_type).collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_round_trip_and_reject_what_we_never_publish() {
        assert_eq!(parse_device_name(&device_name(12)), Some(DeviceRef::Chip(12)));
        assert_eq!(parse_device_name(&partition_name(3, "vir02")), Some(DeviceRef::Partition(3, "vir02")));
        assert_eq!(partition_name(0, "vir04_3c_ndvpp"), "npu-0-vir04-3c-ndvpp");
        assert_eq!(parse_device_name("npu-0-vir04-3c-ndvpp"), Some(DeviceRef::Partition(0, "vir04-3c-ndvpp")));
        for bad in ["gpu-0", "npu-", "npu-x", "npu-01", "npu-1-", "npu--1", "npu-99999999999"] {
            assert_eq!(parse_device_name(bad), None, "{bad}");
        }
    }
}
