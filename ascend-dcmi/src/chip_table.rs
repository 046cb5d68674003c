//! [`ChipTable`]: every known chip's ids by logic id, read on every trait call without a lock and without writing
//! to shared memory.
//!
//! `impl DeviceManager for Dcmi` turns the logic id of each call into the chip's `(card, device)` locator. The
//! sampler makes a dozen such calls per chip per round from several worker threads at once, so the lookup must cost
//! a few loads: a lock (even a read lock) writes its word on every acquisition, and that cache line then bounces
//! between the cores. Each slot is a sequence lock made of atomics: readers load the sequence, the fields and the
//! sequence again, and retry if a writer was active (after a few tries they wait for the writers' mutex). Writers
//! are rare (an enumeration, a first lookup) and take that mutex among themselves.
//!
//! Logic ids cover `0..TABLE_SLOTS` (64 cards of 4 chips, Huawei's limits); larger ones, which no driver hands out,
//! live in a locked map so that nothing is lost.

use std::collections::HashMap;
use std::sync::atomic::{fence, AtomicBool, AtomicI32, AtomicU32, Ordering};

use parking_lot::{Mutex, RwLock};

use crate::ids::{CardId, ChipIds, ChipLocator, DeviceId, LogicId, PhyId};
use crate::limits::MAX_CHIPS;

/// Slots in the lock-free part: one per logic id DCMI can hand out.
const TABLE_SLOTS: usize = MAX_CHIPS;

/// How often a reader retries a slot a writer is changing before it takes the writers' lock.
const READ_ATTEMPTS: usize = 4;

/// One logic id's ids. `sequence` is odd while a writer changes the fields and only ever grows (a reader that saw
/// the same even value before and after its loads read one writer's fields, never a mix); `present` says whether the
/// fields hold a chip.
#[derive(Debug, Default)]
struct Slot {
    sequence: AtomicU32,
    present: AtomicBool,
    phy: AtomicU32,
    card: AtomicI32,
    device: AtomicI32,
}

/// The `card` of a slot whose chip has no locator (V2 API): DCMI card ids are never negative.
const NO_CARD: i32 = -1;

fn card_of(ids: ChipIds) -> i32 {
    ids.locator.map_or(NO_CARD, |locator| locator.card.0)
}

fn device_of(ids: ChipIds) -> i32 {
    ids.locator.map_or(0, |locator| locator.device.0)
}

/// What a slot read found.
enum SlotRead {
    Empty,
    Found(ChipIds),
    /// A writer was active during every attempt.
    Contended,
}

impl Slot {
    fn read(&self, logic: LogicId) -> SlotRead {
        for _ in 0..READ_ATTEMPTS {
            let before = self.sequence.load(Ordering::Acquire);
            if before % 2 == 1 {
                std::hint::spin_loop();
                continue;
            }
            let present = self.present.load(Ordering::Relaxed);
            let phy = self.phy.load(Ordering::Relaxed);
            let card = self.card.load(Ordering::Relaxed);
            let device = self.device.load(Ordering::Relaxed);
            // Orders the field loads before the second sequence load: if it still equals the first, no writer
            // touched the fields in between.
            fence(Ordering::Acquire);
            if self.sequence.load(Ordering::Relaxed) != before {
                continue;
            }
            if !present {
                return SlotRead::Empty;
            }
            let locator = (card != NO_CARD).then_some(ChipLocator { card: CardId(card), device: DeviceId(device) });
            return SlotRead::Found(ChipIds { logic, phy: PhyId(phy), locator });
        }
        SlotRead::Contended
    }

    /// Callers hold the table's writer mutex: only this thread changes the slot, so its own loads are stable.
    fn write(&self, ids: Option<ChipIds>) {
        let unchanged = match ids {
            None => !self.present.load(Ordering::Relaxed),
            Some(ids) => {
                self.present.load(Ordering::Relaxed)
                    && self.phy.load(Ordering::Relaxed) == ids.phy.0
                    && self.card.load(Ordering::Relaxed) == card_of(ids)
                    && self.device.load(Ordering::Relaxed) == device_of(ids)
            }
        };
        if unchanged {
            return;
        }
        let sequence = self.sequence.load(Ordering::Relaxed);
        self.sequence.store(sequence.wrapping_add(1), Ordering::Relaxed);
        // Orders the odd sequence before the field stores, so a reader that sees a new field also sees the change.
        fence(Ordering::Release);
        self.present.store(ids.is_some(), Ordering::Relaxed);
        if let Some(ids) = ids {
            self.phy.store(ids.phy.0, Ordering::Relaxed);
            self.card.store(card_of(ids), Ordering::Relaxed);
            self.device.store(device_of(ids), Ordering::Relaxed);
        }
        self.sequence.store(sequence.wrapping_add(2), Ordering::Release);
    }
}

/// Every known chip's ids by logic id.
#[derive(Debug)]
pub(crate) struct ChipTable {
    slots: Box<[Slot]>,
    beyond: RwLock<HashMap<LogicId, ChipIds>>,
    writers: Mutex<()>,
}

impl Default for ChipTable {
    fn default() -> Self {
        Self {
            slots: (0..TABLE_SLOTS).map(|_| Slot::default()).collect(),
            beyond: RwLock::default(),
            writers: Mutex::new(()),
        }
    }
}

impl ChipTable {
    /// The ids of `logic`, if known.
    pub fn get(&self, logic: LogicId) -> Option<ChipIds> {
        let Some(slot) = self.slot(logic) else { return self.beyond.read().get(&logic).copied() };
        match slot.read(logic) {
            SlotRead::Found(ids) => Some(ids),
            SlotRead::Empty => None,
            SlotRead::Contended => {
                let _writers = self.writers.lock();
                match slot.read(logic) {
                    SlotRead::Found(ids) => Some(ids),
                    SlotRead::Empty | SlotRead::Contended => None,
                }
            }
        }
    }

    /// Records one chip (a first lookup by logic id).
    pub fn insert(&self, ids: ChipIds) {
        let _writers = self.writers.lock();
        match self.slot(ids.logic) {
            Some(slot) => slot.write(Some(ids)),
            None => {
                self.beyond.write().insert(ids.logic, ids);
            }
        }
    }

    /// Replaces everything with the result of a full enumeration: chips that are gone are forgotten (a later lookup
    /// asks the driver again), chips whose ids changed get the new ones.
    pub fn replace_all(&self, chips: &[ChipIds]) {
        let _writers = self.writers.lock();
        for (index, slot) in self.slots.iter().enumerate() {
            let enumerated = chips.iter().find(|ids| usize::try_from(ids.logic.0).is_ok_and(|logic| logic == index));
            slot.write(enumerated.copied());
        }
        let mut beyond = self.beyond.write();
        beyond.clear();
        for ids in chips.iter().filter(|ids| self.slot(ids.logic).is_none()) {
            beyond.insert(ids.logic, *ids);
        }
    }

    fn slot(&self, logic: LogicId) -> Option<&Slot> {
        usize::try_from(logic.0).ok().and_then(|index| self.slots.get(index))
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    fn ids(logic: u32, phy: u32, card: i32, device: i32) -> ChipIds {
        ChipIds {
            logic: LogicId(logic),
            phy: PhyId(phy),
            locator: (card >= 0).then_some(ChipLocator { card: CardId(card), device: DeviceId(device) }),
        }
    }

    #[test]
    fn lookups_find_what_was_recorded_in_and_beyond_the_slots() {
        let table = ChipTable::default();
        assert_eq!(table.get(LogicId(3)), None);
        table.insert(ids(3, 7, 2, 1));
        table.insert(ids(4000, 9, 5, 0));
        table.insert(ids(6, 8, -1, 0));
        assert_eq!(table.get(LogicId(6)).map(|found| found.locator), Some(None), "a V2 chip has no locator");
        assert_eq!(table.get(LogicId(3)), Some(ids(3, 7, 2, 1)));
        assert_eq!(table.get(LogicId(4000)), Some(ids(4000, 9, 5, 0)));
        assert_eq!(table.get(LogicId(4)), None);
    }

    #[test]
    fn an_enumeration_replaces_changed_chips_and_forgets_vanished_ones() {
        let table = ChipTable::default();
        table.replace_all(&[ids(0, 0, 1, 0), ids(1, 1, 1, 1), ids(300, 3, 9, 0)]);
        table.replace_all(&[ids(0, 4, 2, 0)]);
        assert_eq!(table.get(LogicId(0)), Some(ids(0, 4, 2, 0)));
        assert_eq!(table.get(LogicId(1)), None);
        assert_eq!(table.get(LogicId(300)), None);
    }

    #[test]
    fn readers_never_see_a_torn_slot_while_a_writer_flips_it() {
        let table = Arc::new(ChipTable::default());
        let first = ids(5, 10, 10, 0);
        let second = ids(5, 20, 20, 3);
        table.insert(first);
        let stop = Arc::new(AtomicBool::new(false));
        let writer = {
            let (table, stop) = (Arc::clone(&table), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut flip = false;
                while !stop.load(Ordering::Relaxed) {
                    table.insert(if flip { first } else { second });
                    if flip {
                        table.replace_all(&[]);
                    }
                    flip = !flip;
                }
            })
        };
        for _ in 0..200_000 {
            let seen = table.get(LogicId(5));
            assert!(seen.is_none() || seen == Some(first) || seen == Some(second), "torn read {seen:?}");
        }
        stop.store(true, Ordering::Relaxed);
        writer.join().expect("the writer ends");
    }
}
