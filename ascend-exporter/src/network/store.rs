//! The network sampler's shared state: each chip's [`ChipNetwork`], written by the group tasks as each chip's round
//! ends and read by scrapes without waiting on the tool.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use ascend_dcmi::PhyId;
use parking_lot::RwLock;

use super::readings::ChipNetwork;

/// Per-chip network readings behind a lock that is held only to swap an `Arc`, never across a call of the tool.
#[derive(Debug, Default)]
pub struct NetworkStore {
    chips: RwLock<BTreeMap<PhyId, Arc<ChipNetwork>>>,
    generation: AtomicU64,
}

impl NetworkStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    /// One chip's readings, `None` before any group has read it.
    pub fn chip(&self, phy: PhyId) -> Option<Arc<ChipNetwork>> {
        self.chips.read().get(&phy).cloned()
    }

    /// Changes one chip's readings (copy on write: scrapes holding the previous `Arc` keep it unchanged).
    pub fn update(&self, phy: PhyId, change: impl FnOnce(&mut ChipNetwork)) {
        let mut chips = self.chips.write();
        change(Arc::make_mut(chips.entry(phy).or_default()));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// How many updates the store has had: equal numbers mean equal contents.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::network::readings::GroupReadings;

    #[test]
    fn updates_are_copies_and_bump_the_generation() {
        let store = NetworkStore::new();
        assert!(store.chip(PhyId(3)).is_none());
        store.update(PhyId(3), |chip| {
            chip.roce = Some(GroupReadings { ports: Vec::new(), read_at: Instant::now(), last_success: None })
        });
        let before = store.chip(PhyId(3)).expect("written");
        let generation = store.generation();
        store.update(PhyId(3), |chip| chip.roce = None);
        assert!(before.roce.is_some(), "a reader's copy does not change");
        assert!(store.chip(PhyId(3)).expect("kept").roce.is_none());
        assert_eq!(store.generation(), generation + 1);
    }
}
