//! Chip families the simulator models, with the vendor's chip-type strings.

use serde::{Deserialize, Serialize};

/// A chip family, spelled as the Go stack spells it (`Ascend310P`, `Ascend910B`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub enum ChipType {
    /// Ascend 310 (inference, edge boxes and Atlas 300I).
    Ascend310,
    /// Ascend 310B (Atlas 200I A2 class).
    Ascend310B,
    /// Ascend 310P (Atlas 300I Pro / Duo, 300V).
    Ascend310P,
    /// Ascend 910 (910A, "A1").
    Ascend910,
    /// Ascend 910B ("A2", Atlas 800T A2 / 900 A2).
    Ascend910B,
    /// Ascend 910 A3 ("910_93", two dies per card).
    Ascend910A3,
}

impl ChipType {
    /// Every modelled family.
    pub const ALL: [ChipType; 6] = [
        ChipType::Ascend310,
        ChipType::Ascend310B,
        ChipType::Ascend310P,
        ChipType::Ascend910,
        ChipType::Ascend910B,
        ChipType::Ascend910A3,
    ];

    /// The Go constant string, e.g. `Ascend910B`.
    pub fn as_str(self) -> &'static str {
        match self {
            ChipType::Ascend310 => "Ascend310",
            ChipType::Ascend310B => "Ascend310B",
            ChipType::Ascend310P => "Ascend310P",
            ChipType::Ascend910 => "Ascend910",
            ChipType::Ascend910B => "Ascend910B",
            ChipType::Ascend910A3 => "Ascend910A3",
        }
    }

    /// True for the 910 family (910, 910B, A3): fault subscription, RoCE, out-of-band reset.
    pub fn is_910_family(self) -> bool {
        matches!(self, ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3)
    }

    /// True when the chip has on-package HBM (910 family).
    pub fn has_hbm(self) -> bool {
        self.is_910_family()
    }

    /// True when the chip reports DDR memory (`dcmi_get_device_memory_info_v3`): 310 family and 910A.
    pub fn has_ddr(self) -> bool {
        !matches!(self, ChipType::Ascend910B | ChipType::Ascend910A3)
    }
}

impl std::fmt::Display for ChipType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
