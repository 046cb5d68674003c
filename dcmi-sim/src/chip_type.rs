//! Chip families the simulator models, with the vendor's chip-type strings, and the DCMI API family each
//! family's driver serves.

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
    /// Ascend950 ("A5", Atlas 950/850/350): the only family on the DCMI V2 API.
    Ascend950,
}

impl ChipType {
    /// Every modelled family.
    pub const ALL: [ChipType; 7] = [
        ChipType::Ascend310,
        ChipType::Ascend310B,
        ChipType::Ascend310P,
        ChipType::Ascend910,
        ChipType::Ascend910B,
        ChipType::Ascend910A3,
        ChipType::Ascend950,
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
            ChipType::Ascend950 => "Ascend950",
        }
    }

    /// The DCMI API the family's driver serves: V2 on Ascend950, V1 on every older family.
    pub fn api(self) -> Api {
        if self == ChipType::Ascend950 {
            Api::V2
        } else {
            Api::V1
        }
    }

    /// True for the 910 family (910, 910B, A3): fault subscription, RoCE, out-of-band reset.
    pub fn is_910_family(self) -> bool {
        matches!(self, ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3)
    }

    /// True when the chip has on-package HBM (910 family, Ascend950).
    pub fn has_hbm(self) -> bool {
        self.is_910_family() || self == ChipType::Ascend950
    }

    /// True when the chip reports DDR memory (`dcmi_get_device_memory_info_v3`): 310 family and 910A.
    pub fn has_ddr(self) -> bool {
        !matches!(self, ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950)
    }
}

/// The two DCMI API families one `libdcmi.so` can serve.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Api {
    /// `dcmi_*`: chips addressed by (card, device); every family up to the 910 A3.
    V1,
    /// `dcmiv2_*`: chips addressed by logic id; Ascend950. `dcmi_init` fails on such a host.
    V2,
}

impl std::fmt::Display for Api {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Api::V1 => "DCMI V1",
            Api::V2 => "DCMI V2",
        })
    }
}

impl std::fmt::Display for ChipType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
