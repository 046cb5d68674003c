//! Which chips have a network port that `hccn_tool` reads, and how the tool names them.
//!
//! As in Huawei's exporter (Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_network.go,
//! collector_for_roce.go, collector_for_optical.go, `IsSupported`): training cards (910, 910B except its inference
//! boards, A3) by physical id; Ascend950 per UB port, by logic id; no 310-family chip.

use ascend_dcmi::{ChipType, LogicId, PhyId};

use super::group::NetworkGroup;
use crate::snapshot::ChipSnapshot;

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
    },
}

impl NetworkTarget {
    /// The chip's physical id, the store's key.
    pub fn phy(self) -> PhyId {
        match self {
            NetworkTarget::Training { phy } | NetworkTarget::Ub { phy, .. } => phy,
        }
    }

    /// Whether Huawei's exporter reads `group` on this kind of chip (Ascend950 has no RoCE counters there: its
    /// packet counters are the `ub` group, read through DCMI).
    pub fn reads(self, group: NetworkGroup) -> bool {
        !matches!((self, group), (NetworkTarget::Ub { .. }, NetworkGroup::Roce))
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
        ChipType::Ascend950 => NetworkTarget::Ub { phy, logic: chip.ids.logic },
        _ => NetworkTarget::Training { phy },
    })
}
