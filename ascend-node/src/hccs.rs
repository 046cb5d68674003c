//! HCCS groups: the chip topology the scheduler cares about on 910B and A3 servers.

use ascend_dcmi::{ChipType, PhyId};

/// Chips per HCCS group on 910B and A3 servers: chips 0-3 and 4-7 of an eight-chip server share a full mesh.
pub const HCCS_GROUP_SIZE: u32 = 4;

/// The HCCS group of a chip (`phy / 4`), on chip types that have HCCS groups; `None` on the others.
pub fn hccs_group(chip_type: ChipType, phy: PhyId) -> Option<u32> {
    matches!(chip_type, ChipType::Ascend910B | ChipType::Ascend910A3).then(|| phy.get() / HCCS_GROUP_SIZE)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_910b_and_a3_chips_have_hccs_groups() {
        assert_eq!(hccs_group(ChipType::Ascend910B, PhyId(3)), Some(0));
        assert_eq!(hccs_group(ChipType::Ascend910A3, PhyId(4)), Some(1));
        assert_eq!(hccs_group(ChipType::Ascend310P, PhyId(4)), None);
    }
}
