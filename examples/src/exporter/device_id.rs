//! Device ids that the Ascend device plugin advertises to the kubelet, mapped back to physical chip ids.
//!
//! Forms (see the device plugin's resource table): whole chips `<Type>-<phy>` (`Ascend910-3`, `npu-3`), static vNPUs
//! `<Type>-<template>-<vdev>-<phy>` (`Ascend310P-2c-100-5`), time-shared chips `<Type>-<phy>-<k>`
//! (`Ascend310P-2-0`). Dynamic vNPU ids (`npu-core-<n>`) name AI cores, not chips, and map to nothing.

use ascend_dcmi::PhyId;

/// Prefix of every extended resource the Ascend device plugin registers.
pub const RESOURCE_PREFIX: &str = "huawei.com/";

/// Chip-type prefixes of device ids; longer names first so that `Ascend310P` is not read as `Ascend310`.
const TYPE_PREFIXES: [&str; 5] = ["Ascend910", "Ascend310P", "Ascend310B", "Ascend310", "npu"];

/// The physical chip behind a device id, `None` for ids that do not name one chip.
pub fn phy_id_of_device(device_id: &str) -> Option<PhyId> {
    let rest = TYPE_PREFIXES.iter().find_map(|prefix| device_id.strip_prefix(prefix)?.strip_prefix('-'))?;
    let segments: Vec<&str> = rest.split('-').collect();
    let numeric = |segment: &str| !segment.is_empty() && segment.bytes().all(|b| b.is_ascii_digit());
    let phy_segment = match segments.as_slice() {
        [phy] | [phy, _] if numeric(phy) && segments.iter().all(|s| numeric(s)) => *phy,
        [template, vdev, phy] if !numeric(template) && numeric(vdev) && numeric(phy) => *phy,
        _ => return None,
    };
    phy_segment.parse().ok().map(PhyId)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_chip_ids() {
        assert_eq!(phy_id_of_device("Ascend910-3"), Some(PhyId(3)));
        assert_eq!(phy_id_of_device("Ascend310P-12"), Some(PhyId(12)));
        assert_eq!(phy_id_of_device("Ascend310-0"), Some(PhyId(0)));
        assert_eq!(phy_id_of_device("npu-7"), Some(PhyId(7)));
    }

    #[test]
    fn vnpu_and_shared_ids() {
        assert_eq!(phy_id_of_device("Ascend310P-2c-100-5"), Some(PhyId(5)));
        assert_eq!(phy_id_of_device("Ascend910-3c.1cpu.8g-131-6"), Some(PhyId(6)));
        assert_eq!(phy_id_of_device("Ascend310P-2-0"), Some(PhyId(2)));
    }

    #[test]
    fn ids_that_name_no_chip() {
        for id in
            ["npu-core-17", "GPU-1", "Ascend910", "Ascend910-", "Ascend910-x", "Ascend910-1-2-3-4", "Ascend910-2c-1"]
        {
            assert_eq!(phy_id_of_device(id), None, "{id}");
        }
    }
}
