//! A chip's preallocated slot: its sample behind a short mutex, and the lock-free state that keeps one chain per chip.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;

use super::chip_sample::ChipSample;
use super::metric::Metric;
use crate::ids::ChipIds;

/// One chip: its ids, its values, and who is working on it.
pub(crate) struct ChipSlot {
    pub(crate) ids: ChipIds,
    /// Held only to copy a group in or out: never across a driver call.
    pub(crate) sample: Mutex<ChipSample>,
    pub(crate) control: ChipControl,
}

impl ChipSlot {
    pub(crate) fn new(ids: ChipIds) -> Self {
        Self { ids, sample: Mutex::new(ChipSample::new(ids)), control: ChipControl::default() }
    }
}

/// Where a chip's chain is. Packed with the round number into one atomic, so that a stale job (from a round that gave
/// up on it) can never start, finish or be abandoned by mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No chain: the chip may be queued.
    Idle = 0,
    /// A job for the chip is in the queue.
    Queued = 1,
    /// A worker runs the chip's chain.
    Running = 2,
    /// The chain missed its deadline; its worker is still inside a driver call. The chip is skipped until it returns.
    Abandoned = 3,
}

const fn pack(round: u64, phase: Phase) -> u64 {
    (round << 2) | phase as u64
}

/// The chain state of one chip, the time its chain started, and the calls it does not support.
#[derive(Debug, Default)]
pub(crate) struct ChipControl {
    /// `round << 2 | phase`.
    state: AtomicU64,
    /// When the running chain started, in nanoseconds since the sampler's epoch plus one; 0 while not yet recorded.
    started: AtomicU64,
    /// Bit `Metric::index` set: the chip answered -8255 (or the symbol is missing); never asked again.
    unsupported: AtomicU64,
}

impl ChipControl {
    fn transition(&self, round: u64, from: Phase, to: Phase) -> bool {
        self.state.compare_exchange(pack(round, from), pack(round, to), Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Dispatcher: claims an idle chip for `round`. Fails while an earlier chain is queued, running or stuck.
    pub(crate) fn try_queue(&self, round: u64) -> bool {
        let current = self.state.load(Ordering::Acquire);
        if current & 0b11 != Phase::Idle as u64 {
            return false;
        }
        self.started.store(0, Ordering::Relaxed);
        self.state.compare_exchange(current, pack(round, Phase::Queued), Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Worker: starts the job of `round`, unless that round gave up on it.
    pub(crate) fn start(&self, round: u64, started_nanos: u64) -> bool {
        if !self.transition(round, Phase::Queued, Phase::Running) {
            return false;
        }
        self.started.store(started_nanos.saturating_add(1), Ordering::Release);
        true
    }

    /// Worker (with the sample locked): the chain completed; fails if the dispatcher abandoned it first.
    pub(crate) fn finish(&self, round: u64) -> bool {
        self.transition(round, Phase::Running, Phase::Idle)
    }

    /// Worker: whether the dispatcher gave up on this chain (checked after every call, to stop the chain early).
    pub(crate) fn is_abandoned(&self, round: u64) -> bool {
        self.state.load(Ordering::Acquire) == pack(round, Phase::Abandoned)
    }

    /// Worker: its hung call returned after the dispatcher gave up; the chip may be queued again.
    pub(crate) fn release_abandoned(&self, round: u64) {
        self.transition(round, Phase::Abandoned, Phase::Idle);
    }

    /// Dispatcher (with the sample locked): gives up on a running chain that missed its deadline.
    pub(crate) fn abandon(&self, round: u64) -> bool {
        self.transition(round, Phase::Running, Phase::Abandoned)
    }

    /// Dispatcher: withdraws a job no worker has started.
    pub(crate) fn cancel(&self, round: u64) -> bool {
        self.transition(round, Phase::Queued, Phase::Idle)
    }

    /// Dispatcher: `None` unless the chain of `round` is running; then its start in nanoseconds since the epoch, or
    /// `Some(None)` if the worker has not recorded it yet (it started just now).
    pub(crate) fn running_since(&self, round: u64) -> Option<Option<u64>> {
        if self.state.load(Ordering::Acquire) != pack(round, Phase::Running) {
            return None;
        }
        Some(self.started.load(Ordering::Acquire).checked_sub(1))
    }

    /// Whether the chip has a chain stuck in a driver call.
    pub(crate) fn is_stuck(&self) -> bool {
        self.state.load(Ordering::Acquire) & 0b11 == Phase::Abandoned as u64
    }

    /// Whether `metric` is known to be unsupported on this chip.
    pub(crate) fn is_unsupported(&self, metric: Metric) -> bool {
        self.unsupported.load(Ordering::Relaxed) & (1 << metric.index()) != 0
    }

    /// Remembers that `metric` is unsupported on this chip.
    pub(crate) fn remember_unsupported(&self, metric: Metric) {
        self.unsupported.fetch_or(1 << metric.index(), Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_chain_per_chip_and_stale_jobs_never_run() {
        let control = ChipControl::default();
        assert!(control.try_queue(1));
        assert!(!control.try_queue(2), "a queued chip is not queued twice");
        assert!(control.start(1, 10));
        assert_eq!(control.running_since(1), Some(Some(10)));
        assert!(control.abandon(1));
        assert!(control.is_stuck());
        assert!(control.is_abandoned(1));
        assert!(!control.finish(1), "an abandoned chain cannot commit");
        assert!(!control.try_queue(2), "a stuck chip is skipped");
        control.release_abandoned(1);
        assert!(control.try_queue(3));
        assert!(control.cancel(3));
        assert!(!control.start(3, 0), "a cancelled job does not start");
        assert!(control.try_queue(4));
        assert!(!control.start(3, 0), "a job of an older round does not start");
        assert!(control.start(4, 0));
        assert!(control.finish(4));
        assert_eq!(control.running_since(4), None);
    }
}
