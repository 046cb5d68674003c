//! Simulated hosts of any size up to the driver's 256 chips: one chip of a sample topology, copied four to a card.
//!
//! The samples stop at 8 chips; a full-node poll is also measured on 64 and 256. Every chip is a copy of the
//! sample's first chip (same telemetry, processes, support table), so one chip's chain of calls is the same on every
//! host size and only the chip count changes between cases.

use std::path::Path;

use dcmi_sim::{Card, Topology};

/// Chips per card: the most a DCMI card holds, so that 256 chips fit in the driver's 64 cards.
pub const CHIPS_PER_CARD: usize = 4;

/// The most chips a host can have (64 cards of 4).
pub const MAX_CHIPS: usize = 256;

/// A host of `chips` copies of the first chip of sample `sample`: card `c` holds logic ids `4c..4c+3` (device ids
/// 0..3), physical ids are the logic ids rotated by half the chip count (so that they differ, as on the Atlas 800T
/// A2), PCIe addresses `0000:<0x10 + c>:00.<device>`.
///
/// # Errors
/// A message naming the sample or the chip count when the sample does not exist, has no chip, or `chips` is 0 or
/// above [`MAX_CHIPS`].
pub fn replicated_topology(sample: &str, chips: usize) -> Result<Topology, String> {
    if chips == 0 || chips > MAX_CHIPS {
        return Err(format!("a simulated host holds 1..={MAX_CHIPS} chips, not {chips}"));
    }
    let template = dcmi_sim::samples::by_name(sample)
        .ok_or_else(|| format!("dcmi-sim has no sample topology {sample:?}"))?
        .topology()
        .map_err(|error| format!("dcmi-sim sample {sample:?} does not load: {error}"))?;
    let template_card = template.cards.first().ok_or_else(|| format!("dcmi-sim sample {sample:?} has no [[card]]"))?;
    let template_chip =
        template_card.chips.first().ok_or_else(|| format!("dcmi-sim sample {sample:?}: its first card has no chip"))?;

    let mut cards = Vec::with_capacity(chips.div_ceil(CHIPS_PER_CARD));
    for card_index in 0..chips.div_ceil(CHIPS_PER_CARD) {
        let mut card = Card { chips: Vec::with_capacity(CHIPS_PER_CARD), ..template_card.clone() };
        card.card_id = to_i32(card_index)?;
        card.brother_card_id = None;
        card.elabel.serial_number = format!("{}{card_index:04}", template_card.elabel.serial_number);
        for device in 0..CHIPS_PER_CARD {
            let logic = card_index * CHIPS_PER_CARD + device;
            if logic >= chips {
                break;
            }
            let mut chip = template_chip.clone();
            chip.device_id = to_i32(device)?;
            chip.logic_id = to_u32(logic)?;
            chip.phy_id = to_u32((logic + chips / 2) % chips)?;
            chip.pcie.bdf = format!("0000:{:02x}:00.{device}", 0x10 + card_index);
            chip.board.slot_id = to_u32(card_index)?;
            chip.roce_ip = Some(format!("192.168.{}.{}", 100 + card_index, 10 + device));
            card.chips.push(chip);
        }
        cards.push(card);
    }
    let mut topology = Topology { cards, ..template };
    topology.simulation.name = format!("{sample}, first chip x {chips}");
    Ok(topology)
}

/// Writes `topology` as a TOML file at `path` and loads it back the way `dcmi_init` will, so that a file the
/// simulator would refuse fails here, naming the field.
///
/// # Errors
/// The serialisation, I/O or validation error, with the path.
pub fn write_topology(topology: &Topology, path: &Path) -> Result<(), String> {
    let text = toml::to_string(topology).map_err(|error| format!("{}: cannot serialise: {error}", path.display()))?;
    std::fs::write(path, &text).map_err(|error| format!("{}: {error}", path.display()))?;
    Topology::load(path).map(|_| ()).map_err(|error| error.to_string())
}

fn to_i32(value: usize) -> Result<i32, String> {
    i32::try_from(value).map_err(|_| format!("{value} does not fit a DCMI id"))
}

fn to_u32(value: usize) -> Result<u32, String> {
    u32::try_from(value).map_err(|_| format!("{value} does not fit a DCMI id"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_host_has_unique_ids_and_loads_back() {
        let topology = replicated_topology("atlas-800t-a2", MAX_CHIPS).expect("256 chips fit");
        assert_eq!(topology.cards.len(), 64);
        let logic: Vec<u32> = topology.chips().map(|chip| chip.chip.logic_id).collect();
        assert_eq!(logic, (0..256).collect::<Vec<u32>>());
        let mut phy: Vec<u32> = topology.chips().map(|chip| chip.chip.phy_id).collect();
        assert_eq!(topology.chip_by_logic_id(0).map(|chip| chip.chip.phy_id), Some(128));
        phy.sort_unstable();
        assert_eq!(phy, logic);

        let directory = tempfile::tempdir().expect("temporary directory");
        let path = directory.path().join("host.toml");
        write_topology(&topology, &path).expect("the simulator accepts the file");
        let loaded = Topology::load(&path).expect("loads");
        assert_eq!(loaded, topology);
    }

    #[test]
    fn a_partial_card_holds_the_remainder() {
        let topology = replicated_topology("atlas-800t-a2", 6).expect("6 chips");
        let per_card: Vec<usize> = topology.cards.iter().map(|card| card.chips.len()).collect();
        assert_eq!(per_card, [4, 2]);
    }

    #[test]
    fn impossible_hosts_are_refused_with_the_reason() {
        for chips in [0, MAX_CHIPS + 1] {
            let error = replicated_topology("atlas-800t-a2", chips).expect_err("out of range");
            assert!(error.contains(&chips.to_string()), "{error}");
        }
        let error = replicated_topology("no-such-host", 8).expect_err("unknown sample");
        assert!(error.contains("no-such-host"), "{error}");
    }
}
