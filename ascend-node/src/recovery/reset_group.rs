//! Which chips a hot reset takes down together.
//!
//! A chip is not always reset alone: on some boards the driver resets the whole HCCS ring or card it sits on, so a
//! reset is only safe when every chip of that group is free. The groups follow Huawei's device plugin (mind-cluster
//! `component/ascend-device-plugin/pkg/server/hot_reset_manager.go`, `getResetRingDevices` and `getRingSize`;
//! the sizes in `pkg/common/constants.go`, `Ascend910RingsNum` ...).

use std::collections::BTreeSet;

use ascend_dcmi::{ChipType, LogicId};

/// Board ids of 910B servers whose chips are reset one by one: Atlas 300I A2 (32 GB, 64 GB) and Atlas 800I A2
/// without HCCS (old and new id); Huawei's `A300IA2BoardId`, `A300IA2GB64BoardId`, `A800IA2NoneHccsBoardIdOld`,
/// `A800IA2NoneHccsBoardId`.
const SINGLE_CHIP_910B_BOARD_IDS: [u32; 4] = [0x28, 0x29, 0x33, 0x3c];

/// One chip of the node, as the reset grouping sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupedChip {
    /// The driver's index.
    pub logic: LogicId,
    /// The card the chip sits on; `None` on the DCMI V2 API (Ascend950), which has no cards.
    pub card: Option<i32>,
}

/// The chips (logic ids) a reset of `faulty` takes down, `faulty` included, among the node's `chips` of type
/// `chip_type` on a board of `board_id`.
///
/// - Ascend910 (A1): the HCCS ring of 4 (`logic / 4`).
/// - Ascend910B: one chip on the inference boards without HCCS; the ring of 8 on training servers; 16 where the node
///   has more than 8 chips (Atlas 200T A2 box).
/// - Ascend910A3: every chip of the node. Huawei's plugin holds four chips for a reset, the card's two dies and the
///   two of its brother card, which it asks the driver for (`GetAssociatedLogicIDs`, `dcmi_get_brother_card_id`);
///   this crate does not read the brother card yet, and the card alone would let a reset take down a die a
///   running container holds. So an A3 chip is reset only when the whole node is free: safe, and slower to recover
///   on a busy node.
/// - Ascend310P: the chips of the same card (an Atlas 300I Duo card resets as one).
/// - Ascend950, Ascend310, Ascend310B: the chip alone.
pub fn reset_group(
    chip_type: ChipType,
    board_id: Option<u32>,
    faulty: GroupedChip,
    chips: &[GroupedChip],
) -> BTreeSet<LogicId> {
    let same_card = |chip: &GroupedChip| chip.card.is_some() && chip.card == faulty.card;
    let ring = |size: u32| {
        let start = faulty.logic.0 / size * size;
        chips.iter().filter(|chip| (start..start + size).contains(&chip.logic.0)).map(|chip| chip.logic).collect()
    };
    let mut group: BTreeSet<LogicId> = match chip_type {
        ChipType::Ascend910 => ring(4),
        ChipType::Ascend910B if board_id.is_some_and(|id| SINGLE_CHIP_910B_BOARD_IDS.contains(&id)) => BTreeSet::new(),
        ChipType::Ascend910B if chips.len() > 8 => ring(16),
        ChipType::Ascend910B => ring(8),
        ChipType::Ascend910A3 => chips.iter().map(|c| c.logic).collect(),
        ChipType::Ascend310P => chips.iter().filter(|c| same_card(c)).map(|c| c.logic).collect(),
        // Ascend950, Ascend310, Ascend310B and any later type: the chip alone.
        _ => BTreeSet::new(),
    };
    group.insert(faulty.logic);
    group
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chips(count: u32, per_card: u32) -> Vec<GroupedChip> {
        (0..count).map(|i| GroupedChip { logic: LogicId(i), card: Some((i / per_card) as i32) }).collect()
    }

    fn logic(ids: &[u32]) -> BTreeSet<LogicId> {
        ids.iter().copied().map(LogicId).collect()
    }

    #[test]
    fn a_910b_training_server_resets_its_ring_of_eight_and_an_inference_board_one_chip() {
        let node = chips(8, 1);
        assert_eq!(reset_group(ChipType::Ascend910B, Some(0x0), node[5], &node), logic(&[0, 1, 2, 3, 4, 5, 6, 7]));
        assert_eq!(reset_group(ChipType::Ascend910B, Some(0x3c), node[5], &node), logic(&[5]));
        let box16 = chips(16, 1);
        assert_eq!(reset_group(ChipType::Ascend910B, None, box16[9], &box16).len(), 16);
    }

    #[test]
    fn a_910_resets_its_ring_of_four() {
        let node = chips(8, 1);
        assert_eq!(reset_group(ChipType::Ascend910, None, node[6], &node), logic(&[4, 5, 6, 7]));
    }

    #[test]
    fn an_a3_chip_takes_the_whole_node_a_duo_card_resets_as_one_card() {
        // The brother card is not known here: the node, never a die of a card whose pair may be in use.
        let node = chips(16, 2);
        assert_eq!(reset_group(ChipType::Ascend910A3, Some(0xb0), node[5], &node), (0..16).map(LogicId).collect());
        let duo = chips(4, 2);
        assert_eq!(reset_group(ChipType::Ascend310P, None, duo[0], &duo), logic(&[0, 1]));
    }

    #[test]
    fn an_ascend950_chip_resets_alone() {
        let node: Vec<GroupedChip> = (0..8).map(|i| GroupedChip { logic: LogicId(i), card: None }).collect();
        assert_eq!(reset_group(ChipType::Ascend950, Some(0x07), node[3], &node), logic(&[3]));
    }
}
