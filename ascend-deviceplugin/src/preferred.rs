//! Topology-aware preferred allocation: keep a request on as few cards as possible (both chips of a 310P Duo card
//! together), then on one NUMA node, then inside one HCCS group (chips 0-3 or 4-7 of an eight-chip 910B or A3
//! server), and leave whole free cards for later requests when a request is smaller than a card.
//!
//! The choice is greedy: `must_include` devices come first; each further pick is the candidate that best matches
//! what was already picked. The very first free pick looks for the NUMA node and HCCS group that can hold the whole
//! request with the least left over.

use std::collections::{BTreeMap, BTreeSet};

use ascend_dcmi::{CardId, PhyId};

use crate::allocate::resolve;
use crate::error::{Error, Result};
use ascend_node::{Device, Resource};

/// The HCCS group of a device, on chip types that have HCCS groups.
pub fn hccs_group(device: &Device) -> Option<u32> {
    ascend_node::hccs_group(device.chip_type, device.chip.phy)
}

/// Picks `size` of `available`, containing every id of `must_include`.
///
/// # Errors
/// [`Error::InvalidRequest`] when `size` is not positive, is smaller than `must_include` or larger than what is
/// available, or `must_include` names a device not in `available`; [`Error::UnknownDevices`] and
/// [`Error::UnhealthyDevices`] as for Allocate.
pub fn preferred_allocation(
    resource: &Resource,
    available: &[String],
    must_include: &[String],
    size: i32,
) -> Result<Vec<String>> {
    let invalid = |detail: String| Error::InvalidRequest {
        resource: resource.name.clone(),
        rpc: "GetPreferredAllocation",
        detail,
    };
    let available = resolve(resource, available, "GetPreferredAllocation")?;
    let size = usize::try_from(size)
        .ok()
        .filter(|s| *s > 0)
        .ok_or_else(|| invalid(format!("allocation size {size} is not positive")))?;
    if size > available.len() {
        return Err(invalid(format!("allocation size {size} exceeds the {} available devices", available.len())));
    }
    let mut chosen: Vec<&Device> = Vec::new();
    for id in must_include {
        let device = available
            .iter()
            .find(|d| &d.id == id)
            .ok_or_else(|| invalid(format!("must-include device {id} is not among the available devices")))?;
        if !chosen.iter().any(|d| d.id == device.id) {
            chosen.push(device);
        }
    }
    if chosen.len() > size {
        return Err(invalid(format!("{} must-include devices exceed the allocation size {size}", chosen.len())));
    }
    let mut candidates: Vec<&Device> = available.into_iter().filter(|d| !chosen.iter().any(|c| c.id == d.id)).collect();
    while chosen.len() < size {
        let need = size - chosen.len();
        let counts = Counts::of(&candidates);
        let best = candidates
            .iter()
            .enumerate()
            .max_by_key(|(_, candidate)| score(candidate, &chosen, need, &counts))
            .map(|(index, _)| index);
        let Some(index) = best else { break };
        chosen.push(candidates.remove(index));
    }
    Ok(chosen.into_iter().map(|d| d.id.clone()).collect())
}

/// Free devices per card, NUMA node and HCCS group.
struct Counts {
    card: BTreeMap<CardKey, usize>,
    numa: BTreeMap<Option<u32>, usize>,
    hccs: BTreeMap<Option<u32>, usize>,
}

impl Counts {
    fn of(candidates: &[&Device]) -> Self {
        let mut counts = Counts { card: BTreeMap::new(), numa: BTreeMap::new(), hccs: BTreeMap::new() };
        // Replicas of one chip count once: they are not extra capacity of the card.
        let mut chips = BTreeSet::new();
        for device in candidates.iter().filter(|d| chips.insert(d.chip.phy)) {
            *counts.card.entry(card_key(device)).or_default() += 1;
            *counts.numa.entry(device.numa_node).or_default() += 1;
            *counts.hccs.entry(hccs_group(device)).or_default() += 1;
        }
        counts
    }
}

/// The card a device is on; on the DCMI V2 API (Ascend950), which has no cards, each chip is its own unit.
type CardKey = Result<CardId, PhyId>;

fn card_key(device: &Device) -> CardKey {
    device.chip.locator.map(|locator| locator.card).ok_or(device.chip.phy)
}

/// Larger is better; compared lexicographically.
type Score =
    (bool, bool, bool, bool, bool, usize, std::cmp::Reverse<usize>, std::cmp::Reverse<usize>, std::cmp::Reverse<u32>);

fn score(candidate: &Device, chosen: &[&Device], need: usize, counts: &Counts) -> Score {
    let anchor = chosen.first();
    let same_card = chosen.iter().any(|d| card_key(d) == card_key(candidate));
    let same_numa = anchor.is_some_and(|a| a.numa_node.is_some() && a.numa_node == candidate.numa_node);
    let same_hccs = anchor.is_some_and(|a| hccs_group(a).is_some() && hccs_group(a) == hccs_group(candidate));
    let numa_free = counts.numa.get(&candidate.numa_node).copied().unwrap_or(0);
    let hccs_free = counts.hccs.get(&hccs_group(candidate)).copied().unwrap_or(0);
    let card_free = counts.card.get(&card_key(candidate)).copied().unwrap_or(0);
    // A card whose free chips all fit in the request is taken whole (bigger first); a card that would be split
    // scores zero, so a small request goes to an already partly used card.
    let card_fit = if card_free <= need { card_free } else { 0 };
    (
        same_card,
        same_numa,
        same_hccs,
        anchor.is_some() || numa_free >= need,
        anchor.is_some() || hccs_free >= need,
        card_fit,
        std::cmp::Reverse(if numa_free >= need { numa_free } else { usize::MAX }),
        std::cmp::Reverse(if hccs_free >= need { hccs_free } else { usize::MAX }),
        std::cmp::Reverse(candidate.chip.phy.get()),
    )
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ascend_dcmi::{ChipIds, ChipLocator, DeviceId, LogicId, PhyId};

    use super::*;
    use ascend_dcmi::ChipType;
    use ascend_node::{ChipRecord, Health, InventoryOptions, Snapshot};

    /// Chips as (phy, card, numa).
    fn resource(chip_type: ChipType, layout: &[(u32, i32, u32)], replicas: u32) -> Resource {
        let chips: Vec<ChipRecord> = layout
            .iter()
            .map(|&(phy, card, numa)| ChipRecord {
                ids: ChipIds {
                    logic: LogicId(phy),
                    phy: PhyId(phy),
                    locator: Some(ChipLocator { card: CardId(card), device: DeviceId(0) }),
                },
                chip_type,
                numa_node: Some(numa),
                vnpus: Vec::new(),
            })
            .collect();
        let health: BTreeMap<PhyId, Health> = layout.iter().map(|&(phy, _, _)| (PhyId(phy), Health::Healthy)).collect();
        let options = InventoryOptions { replicas, ..InventoryOptions::default() };
        let snapshot = Snapshot::build(&chips, &health, &options);
        let resource = snapshot.resources().next().cloned();
        resource.unwrap_or_else(|| panic!("a resource"))
    }

    fn all(resource: &Resource) -> Vec<String> {
        resource.devices.keys().cloned().collect()
    }

    #[test]
    fn hccs_groups_only_on_910b_and_a3() {
        let b = resource(ChipType::Ascend910B, &[(5, 5, 0)], 1);
        assert_eq!(b.devices.values().next().and_then(hccs_group), Some(1));
        let p = resource(ChipType::Ascend310P, &[(5, 2, 0)], 1);
        assert_eq!(p.devices.values().next().and_then(hccs_group), None);
    }

    #[test]
    fn must_include_comes_first_and_counts_towards_the_size() {
        let layout: Vec<(u32, i32, u32)> = (0..8).map(|phy| (phy, phy as i32, phy / 4)).collect();
        let resource = resource(ChipType::Ascend910B, &layout, 1);
        let chosen = preferred_allocation(&resource, &all(&resource), &["Ascend910-6".to_owned()], 1).expect("one");
        assert_eq!(chosen, ["Ascend910-6"]);
        let too_many =
            preferred_allocation(&resource, &all(&resource), &["Ascend910-6".to_owned(), "Ascend910-7".to_owned()], 1);
        assert!(matches!(too_many, Err(Error::InvalidRequest { .. })));
    }

    #[test]
    fn a3_dies_of_one_card_go_together() {
        // Eight A3 cards with two dies each: phy 2k and 2k+1 share card k.
        let layout: Vec<(u32, i32, u32)> = (0..16).map(|phy| (phy, (phy / 2) as i32, phy / 8)).collect();
        let resource = resource(ChipType::Ascend910A3, &layout, 1);
        let available: Vec<String> = all(&resource).into_iter().filter(|id| id != "Ascend910-0").collect();
        let chosen = preferred_allocation(&resource, &available, &[], 2).expect("two");
        let cards: std::collections::BTreeSet<u32> = chosen
            .iter()
            .filter_map(|id| id.trim_start_matches("Ascend910-").parse::<u32>().ok())
            .map(|p| p / 2)
            .collect();
        assert_eq!(cards.len(), 1, "{chosen:?}");
        // A single die goes to the half-used card 0.
        assert_eq!(preferred_allocation(&resource, &available, &[], 1).expect("one"), ["Ascend910-1"]);
    }

    proptest::proptest! {
        /// Whatever the free set, the answer has the requested size, comes from the free set, holds every
        /// must-include device and names no device twice.
        #[test]
        fn answers_are_valid_subsets(
            free_mask in 1u16..=u16::MAX,
            must_pick in proptest::collection::vec(0usize..16, 0..3),
            size_pick in 1usize..=16,
        ) {
            let layout: Vec<(u32, i32, u32)> = (0..16).map(|phy| (phy, (phy / 2) as i32, phy / 8)).collect();
            let resource = resource(ChipType::Ascend910A3, &layout, 1);
            let free: Vec<String> =
                (0..16).filter(|bit| free_mask & (1 << bit) != 0).map(|phy| format!("Ascend910-{phy}")).collect();
            let mut must: Vec<String> = must_pick.iter().map(|i| free[i % free.len()].clone()).collect();
            must.dedup();
            let size = size_pick.clamp(must.len().max(1), free.len());
            let chosen = preferred_allocation(&resource, &free, &must, size as i32).expect("valid request");
            proptest::prop_assert_eq!(chosen.len(), size);
            proptest::prop_assert!(chosen.iter().all(|id| free.contains(id)));
            proptest::prop_assert!(must.iter().all(|id| chosen.contains(id)));
            let distinct: std::collections::BTreeSet<&String> = chosen.iter().collect();
            proptest::prop_assert_eq!(distinct.len(), chosen.len());
        }
    }

    #[test]
    fn replicas_of_one_chip_are_never_counted_twice() {
        let resource = resource(ChipType::Ascend310P, &[(0, 0, 0), (1, 0, 0)], 2);
        let chosen = preferred_allocation(&resource, &all(&resource), &[], 2).expect("two");
        assert_eq!(chosen.len(), 2);
        let distinct: std::collections::BTreeSet<&String> = chosen.iter().collect();
        assert_eq!(distinct.len(), 2);
    }
}
