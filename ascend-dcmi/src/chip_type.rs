//! Chip generations and how a chip is classified from its name and board id (as `GetDevType` in Huawei's
//! `Ascend/mind-cluster`, `component/ascend-common/devmanager/common/utils.go`).

use std::fmt;
use std::str::FromStr;

/// An Ascend chip generation, named as Huawei's stack names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
#[non_exhaustive]
pub enum ChipType {
    /// Ascend 310 (edge inference).
    Ascend310,
    /// Ascend 310B (Atlas 200I A2 / 500 A2 edge).
    Ascend310B,
    /// Ascend 310P (Atlas 300I Pro / Duo inference cards).
    Ascend310P,
    /// Ascend 910 (910A, "A1").
    Ascend910,
    /// Ascend 910B ("A2", Atlas 800T A2).
    Ascend910B,
    /// Ascend 910 A3 ("910_93", two dies per card), detected by board id.
    Ascend910A3,
    /// Ascend 950 ("A5"), served through DCMI V2.
    Ascend950,
}

/// Board ids that mark an A3 server or super-pod whatever the chip name says.
const A3_BOARD_IDS: [u32; 9] = [0xb0, 0xb1, 0xb2, 0xb3, 0xb4, 0x81, 0x83, 0xd1, 0xd3];

/// Board ids of 910B boards used for inference (Atlas 300I A2 and 200L A2).
const INFERENCE_910B_BOARD_IDS: [u32; 3] = [0x28, 0x29, 0x69];

impl ChipType {
    /// Every chip type, oldest first.
    pub const ALL: [ChipType; 7] = [
        ChipType::Ascend310,
        ChipType::Ascend310B,
        ChipType::Ascend310P,
        ChipType::Ascend910,
        ChipType::Ascend910B,
        ChipType::Ascend910A3,
        ChipType::Ascend950,
    ];

    /// Classifies a chip from the `chip_name` of `dcmi_get_device_chip_info(_v2)` and the board id of
    /// `dcmi_get_device_board_info`, in the order Huawei's stack does: A3 board ids first, then the name.
    /// Returns `None` for chips this stack does not support.
    pub fn classify(chip_name: &str, board_id: Option<u32>) -> Option<ChipType> {
        if board_id.is_some_and(|id| A3_BOARD_IDS.contains(&id)) {
            return Some(ChipType::Ascend910A3);
        }
        let name = chip_name.trim();
        if name.starts_with("Ascend950") {
            return Some(ChipType::Ascend950);
        }
        if starts_with_then_digit_or_end(name, "310P") || starts_with_then_digit_or_end(name, "I2") {
            return Some(ChipType::Ascend310P);
        }
        if name.contains("310B") {
            return Some(ChipType::Ascend310B);
        }
        if name.contains("310") {
            return Some(ChipType::Ascend310);
        }
        if starts_with_then_digit(name, "910B") || starts_with_then_digit(name, "A2G") {
            return Some(ChipType::Ascend910B);
        }
        if name.starts_with("910") {
            return Some(ChipType::Ascend910);
        }
        None
    }

    /// Huawei's name for the type, for example `"Ascend910B"`.
    pub const fn as_str(self) -> &'static str {
        match self {
            ChipType::Ascend310 => "Ascend310",
            ChipType::Ascend310B => "Ascend310B",
            ChipType::Ascend310P => "Ascend310P",
            ChipType::Ascend910 => "Ascend910",
            ChipType::Ascend910B => "Ascend910B",
            ChipType::Ascend910A3 => "Ascend910A3",
            ChipType::Ascend950 => "Ascend950",
        }
    }

    /// Whether the chip is an inference part; training parts get network health and RoCE metrics.
    pub fn is_inference(self, board_id: Option<u32>) -> bool {
        match self {
            ChipType::Ascend310 | ChipType::Ascend310B | ChipType::Ascend310P => true,
            ChipType::Ascend910B => board_id.is_some_and(|id| INFERENCE_910B_BOARD_IDS.contains(&id)),
            _ => false,
        }
    }

    /// Whether the driver delivers fault events by subscription on this type; the others are polled.
    pub const fn supports_fault_subscription(self) -> bool {
        matches!(self, ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950)
    }

    /// Whether this type has HBM (and so no DDR memory info).
    pub const fn has_hbm(self) -> bool {
        matches!(self, ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950)
    }

    /// Whether chip power comes from the card's MCU (`dcmi_mcu_get_power_info`) instead of the chip.
    pub const fn has_card_level_power(self) -> bool {
        matches!(self, ChipType::Ascend310P)
    }
}

fn starts_with_then_digit_or_end(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| rest.is_empty() || rest.starts_with(|c: char| c.is_ascii_digit()))
}

fn starts_with_then_digit(name: &str, prefix: &str) -> bool {
    name.strip_prefix(prefix).is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
}

impl fmt::Display for ChipType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`ChipType`] from a string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown chip type {0:?}; expected one of Ascend310, Ascend310B, Ascend310P, Ascend910, Ascend910B, Ascend910A3, Ascend950")]
pub struct ParseChipTypeError(pub String);

impl FromStr for ChipType {
    type Err = ParseChipTypeError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ChipType::ALL
            .into_iter()
            .find(|t| t.as_str().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| ParseChipTypeError(s.to_owned()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classification_follows_the_vendor_order() {
        let cases = [
            ("310P3", None, Some(ChipType::Ascend310P)),
            ("310P", None, Some(ChipType::Ascend310P)),
            ("I2", None, Some(ChipType::Ascend310P)),
            ("310B1", None, Some(ChipType::Ascend310B)),
            ("310", None, Some(ChipType::Ascend310)),
            ("910B3", None, Some(ChipType::Ascend910B)),
            ("A2G1", None, Some(ChipType::Ascend910B)),
            ("910B", None, Some(ChipType::Ascend910)),
            ("910A", None, Some(ChipType::Ascend910)),
            ("910B3", Some(0xb3), Some(ChipType::Ascend910A3)),
            ("Ascend950PR", None, Some(ChipType::Ascend950)),
            ("710", None, None),
        ];
        for (name, board, expected) in cases {
            assert_eq!(ChipType::classify(name, board), expected, "{name} board {board:?}");
        }
    }

    #[test]
    fn names_round_trip() {
        for chip_type in ChipType::ALL {
            assert_eq!(chip_type.to_string().parse::<ChipType>(), Ok(chip_type));
        }
        assert!("Ascend999".parse::<ChipType>().is_err());
    }

    #[test]
    fn inference_and_capabilities() {
        assert!(ChipType::Ascend310P.is_inference(None));
        assert!(ChipType::Ascend910B.is_inference(Some(0x28)));
        assert!(!ChipType::Ascend910B.is_inference(Some(0x10)));
        assert!(ChipType::Ascend910B.supports_fault_subscription());
        assert!(!ChipType::Ascend310P.supports_fault_subscription());
        assert!(ChipType::Ascend310P.has_card_level_power());
        assert!(!ChipType::Ascend910B.has_card_level_power());
    }
}
