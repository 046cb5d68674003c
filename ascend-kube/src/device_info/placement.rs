//! Where the node sits in a super-pod, read from the driver as Huawei's device plugin reads it, and the Node
//! annotations that carry it.
//!
//! Huawei's plugin asks each chip in turn for its super-pod information (`dcmi_get_device_info`, main command 12,
//! sub command 1) and keeps the first answer; on Ascend950 an answer with a negative rack id does not count. When no
//! chip answers, the super-pod id and the server index are -2 (mind-cluster
//! `component/ascend-device-plugin/pkg/server/manager.go`, `getSuperPodInfo`; `pkg/common/constants.go`,
//! `SuperPodIdAbnormal`, `ServerIdAbnormal`). The same values go into the device-info ConfigMap's `SuperPodID`,
//! `ServerIndex` and, on an Ascend950 server of a 1D or 2D super-pod, `RackID` (`pkg/device/ascendcommon.go`,
//! `getNodeDeviceInfoCache`), which Volcano's Ascend plugin reads to place super-pod jobs (`component/ascend-for-
//! volcano/common/k8s/cmmgr.go`), and into the Node annotations `superPodID`, `serverIndex`, `rackID` and
//! `serverType` (`pkg/server/manager.go`, `getNewNodeAnnotation`): Volcano reads `serverIndex` on Ascend950
//! (`plugin/node.go`, `initNPUNodeByNodeInf`).

use std::collections::BTreeMap;

use ascend_dcmi::{ChipIds, ChipType, DeviceManager};

use super::document::Placement;

/// `SuperPodID` and `ServerIndex` when no chip answered the super-pod query.
pub const PLACEMENT_UNREADABLE: i32 = -2;
/// The Node annotation of the super-pod id.
pub const SUPER_POD_ID_ANNOTATION: &str = "superPodID";
/// The Node annotation of the server's index in its super-pod.
pub const SERVER_INDEX_ANNOTATION: &str = "serverIndex";
/// The Node annotation of the server type: `A3` on Atlas A3, `npu` on Ascend950, empty elsewhere.
pub const SERVER_TYPE_ANNOTATION: &str = "serverType";
/// The Node annotation of the rack (Ascend950 in a 1D or 2D super-pod).
pub const RACK_ID_ANNOTATION: &str = "rackID";

/// Ascend950 super-pod types whose servers sit in racks (Huawei's `ProductType1D`, `ProductType2D`).
const RACKED_SUPER_POD_TYPES: [u32; 2] = [1, 2];

/// What [`NodePlacement::read`] found: the placement and the node's chip type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodePlacement {
    /// The ConfigMap's `SuperPodID`, `ServerIndex` and `RackID`.
    pub placement: Placement,
    /// The chip type of the node's first chip, `None` when unknown.
    pub chip_type: Option<ChipType>,
}

impl NodePlacement {
    /// Reads the placement of the node's chips (see the module docs). Never fails: a driver that cannot list its
    /// chips or answer for any of them gives [`PLACEMENT_UNREADABLE`], as Huawei's plugin writes. Blocks on the
    /// driver.
    pub fn read(manager: &dyn DeviceManager) -> Self {
        let chips = manager.chips().unwrap_or_default();
        let chip_type = chips.first().and_then(|chip| manager.identity(chip.logic).ok()).and_then(|id| id.chip_type);
        Self::of_chips(manager, &chips, chip_type)
    }

    /// [`NodePlacement::read`] for chips already listed, of this chip type. Blocks on the driver.
    pub fn of_chips(manager: &dyn DeviceManager, chips: &[ChipIds], chip_type: Option<ChipType>) -> Self {
        let unreadable =
            Placement { super_pod_id: PLACEMENT_UNREADABLE, server_index: PLACEMENT_UNREADABLE, rack_id: None };
        let is_950 = chip_type == Some(ChipType::Ascend950);
        let found = chips.iter().find_map(|chip| match manager.super_pod_info(chip.logic) {
            Ok(info) if is_950 && (info.chassis_id as i32) < 0 => None,
            Ok(info) => Some(info),
            Err(error) => {
                tracing::debug!(logic = %chip.logic, %error, "no super-pod information");
                None
            }
        });
        let placement = found.map_or(unreadable, |info| Placement {
            super_pod_id: info.super_pod_id as i32,
            server_index: info.server_id as i32,
            rack_id: (is_950 && RACKED_SUPER_POD_TYPES.contains(&info.super_pod_type))
                .then_some(info.chassis_id as i32),
        });
        NodePlacement { placement, chip_type }
    }

    /// The Node annotations Huawei's plugin writes from it: `superPodID`, `serverIndex`, `serverType`, and `rackID`
    /// when the ConfigMap has a `RackID`.
    pub fn annotations(&self) -> BTreeMap<String, String> {
        let server_type = match self.chip_type {
            Some(ChipType::Ascend950) => "npu",
            Some(ChipType::Ascend910A3) => "A3",
            _ => "",
        };
        let mut annotations = BTreeMap::from([
            (SUPER_POD_ID_ANNOTATION.to_owned(), self.placement.super_pod_id.to_string()),
            (SERVER_INDEX_ANNOTATION.to_owned(), self.placement.server_index.to_string()),
            (SERVER_TYPE_ANNOTATION.to_owned(), server_type.to_owned()),
        ]);
        if let Some(rack) = self.placement.rack_id {
            annotations.insert(RACK_ID_ANNOTATION.to_owned(), rack.to_string());
        }
        annotations
    }
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{Error, LogicId, MockDeviceManager, PhyId};

    use super::*;

    fn driver_without_super_pods() -> MockDeviceManager {
        let mut mock = MockDeviceManager::new();
        let ids = |n: u32| ChipIds { logic: LogicId(n), phy: PhyId(n), locator: None };
        mock.expect_chips().returning(move || Ok(vec![ids(0), ids(1)]));
        mock.expect_identity().returning(|logic| Err(Error::NoSuchChip(logic.to_string())));
        mock.expect_super_pod_info().returning(|logic| Err(Error::NoSuchChip(logic.to_string())));
        mock
    }

    #[test]
    fn a_driver_that_answers_for_no_chip_gives_huaweis_minus_two() {
        let read = NodePlacement::read(&driver_without_super_pods());
        assert_eq!(read.placement, Placement { super_pod_id: -2, server_index: -2, rack_id: None });
        let annotations = read.annotations();
        assert_eq!(annotations.get(SUPER_POD_ID_ANNOTATION).map(String::as_str), Some("-2"));
        assert_eq!(annotations.get(SERVER_INDEX_ANNOTATION).map(String::as_str), Some("-2"));
        assert_eq!(annotations.get(SERVER_TYPE_ANNOTATION).map(String::as_str), Some(""));
        assert!(!annotations.contains_key(RACK_ID_ANNOTATION));
    }

    #[test]
    fn the_server_type_annotation_names_a3_and_ascend950() {
        let placed = Placement { super_pod_id: 0, server_index: 1, rack_id: None };
        let a3 = NodePlacement { placement: placed, chip_type: Some(ChipType::Ascend910A3) };
        assert_eq!(a3.annotations()[SERVER_TYPE_ANNOTATION], "A3");
        let npu =
            NodePlacement { placement: Placement { rack_id: Some(4), ..placed }, chip_type: Some(ChipType::Ascend950) };
        assert_eq!(npu.annotations()[SERVER_TYPE_ANNOTATION], "npu");
        assert_eq!(npu.annotations()[RACK_ID_ANNOTATION], "4");
    }
}
