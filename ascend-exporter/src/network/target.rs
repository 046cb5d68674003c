//! Which chips have a network port that `hccn_tool` reads, and how the tool names them.
//!
//! As in Huawei's exporter (Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_network.go,
//! collector_for_roce.go, collector_for_optical.go, `IsSupported`): training cards (910, 910B except its inference
//! boards, A3) by physical id; Ascend950 per UB port, by logic id; no 310-family chip.

use ascend_dcmi::{ChipType, LogicId, PhyId};

use super::group::NetworkGroup;
use crate::snapshot::ChipSnapshot;

/// Ascend950 main boards whose optical modules Huawei's exporter does not read: the Atlas 350 cards (0x68, 0x6b,
/// 0x6c) and the Atlas 950 1D boards (0x03, 0x07) (`notSupportedOpticalNpuDevices` in mind-cluster
/// `component/npu-exporter/collector/metrics/collector_for_optical.go`, `IsSupported`; ids from
/// `component/ascend-common/api/default_name.go`).
const NO_OPTICAL_950_MAIN_BOARDS: [u32; 5] = [0x68, 0x6b, 0x6c, 0x03, 0x07];

/// Whether Huawei's exporter reads the optical modules of `chip`: not on the Ascend950 main boards above, whose
/// Huawei optical names are therefore never served.
pub fn huawei_reads_optical(chip: &ChipSnapshot) -> bool {
    let board = chip.identity.as_ref().and_then(|identity| identity.mainboard_id);
    !board.is_some_and(|board| NO_OPTICAL_950_MAIN_BOARDS.contains(&board))
}

/// A chip whose network the sampler reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NetworkTarget {
    /// A training card's chip: one RoCE port, `-i <phy_id>`.
    Training {
        /// The chip.
        phy: PhyId,
    },
    /// An Ascend950 chip: its UB ports, `-i <logic_id> -u <udie> -p <port>`.
    Ub {
        /// The chip, as the store names it.
        phy: PhyId,
        /// The id the tool takes.
        logic: LogicId,
        /// Whether Huawei's exporter reads the chip's optical modules ([`huawei_reads_optical`]).
        huawei_optical: bool,
    },
}

impl NetworkTarget {
    /// The chip's physical id, the store's key.
    pub fn phy(self) -> PhyId {
        match self {
            NetworkTarget::Training { phy } | NetworkTarget::Ub { phy, .. } => phy,
        }
    }

    /// Whether the sampler reads `group` on this chip: what Huawei's exporter reads (Ascend950 has no RoCE
    /// counters there: its packet counters are the `ub` group, read through DCMI), and the optical modules of the
    /// Ascend950 boards Huawei's exporter leaves out only when native names are served too (`huawei_names_only`
    /// false). In Huawei naming alone no name would show those readings, and on an Atlas 950 node their
    /// `-g -optical` per UB port was a quarter of the tool's runs (144 of 592 a minute on `atlas-950-8`).
    pub fn reads(self, group: NetworkGroup, huawei_names_only: bool) -> bool {
        match (self, group) {
            (NetworkTarget::Ub { .. }, NetworkGroup::Roce) => false,
            (NetworkTarget::Ub { huawei_optical: false, .. }, NetworkGroup::Optical) => !huawei_names_only,
            _ => true,
        }
    }
}

/// The chip's target, `None` for a chip without a network port or whose identity is not read yet.
pub fn network_target(chip: &ChipSnapshot) -> Option<NetworkTarget> {
    let identity = chip.identity.as_ref()?;
    let phy = chip.ids.phy;
    let chip_type = identity.chip_type?;
    // `IsTrainingCard` (Ascend/mind-cluster component/ascend-common/devmanager/devmanager.go) is the complement of
    // `is_inference`: no 310 family, no 910B inference board.
    if chip_type.is_inference(identity.board.as_ref().and_then(|board| board.board_id)) {
        return None;
    }
    Some(match chip_type {
        ChipType::Ascend950 => {
            NetworkTarget::Ub { phy, logic: chip.ids.logic, huawei_optical: huawei_reads_optical(chip) }
        }
        _ => NetworkTarget::Training { phy },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn huawei_naming_alone_skips_the_optical_modules_huawei_does_not_read() {
        let ub = |huawei_optical| NetworkTarget::Ub { phy: PhyId(4), logic: LogicId(0), huawei_optical };
        for huawei_names_only in [false, true] {
            assert!(ub(true).reads(NetworkGroup::Optical, huawei_names_only), "{huawei_names_only}");
            assert!(ub(false).reads(NetworkGroup::Network, huawei_names_only), "{huawei_names_only}");
            assert!(!ub(false).reads(NetworkGroup::Roce, huawei_names_only), "no RoCE counters on Ascend950");
            assert!(NetworkTarget::Training { phy: PhyId(0) }.reads(NetworkGroup::Optical, huawei_names_only));
        }
        assert!(!ub(false).reads(NetworkGroup::Optical, true), "no served name shows them");
        assert!(ub(false).reads(NetworkGroup::Optical, false), "the native names show them");
    }
}
