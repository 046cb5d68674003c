//! [`CallState`]: where one driver call (or one chip's chain of calls) is, in one atomic: idle, queued, running,
//! or abandoned while its worker is still inside the driver.

use std::sync::atomic::{AtomicU64, Ordering};

/// The phases of a call. Packed with a round number into one atomic, so that a stale job (from a round that gave up
/// on it) can never start, finish or be abandoned by mistake.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// No call: a new one may be queued.
    Idle = 0,
    /// A job is in the queue.
    Queued = 1,
    /// A worker runs the call.
    Running = 2,
    /// The call missed its deadline; its worker is still inside the driver. No new call starts until it returns.
    Abandoned = 3,
}

const fn pack(round: u64, phase: Phase) -> u64 {
    (round << 2) | phase as u64
}

/// The state of the calls to one key (a chip, a task), and when the running one started.
///
/// Owner side: [`Self::try_queue`], [`Self::abandon`], [`Self::cancel`], [`Self::running_since`]. Worker side:
/// [`Self::start`], [`Self::finish`], [`Self::is_abandoned`], [`Self::release_abandoned`]. Every transition is one
/// compare-and-swap; nothing allocates.
#[derive(Debug, Default)]
pub(crate) struct CallState {
    /// `round << 2 | phase`.
    state: AtomicU64,
    /// When the running call started, in nanoseconds since the owner's epoch plus one; 0 while not yet recorded.
    started: AtomicU64,
}

impl CallState {
    fn transition(&self, round: u64, from: Phase, to: Phase) -> bool {
        self.state.compare_exchange(pack(round, from), pack(round, to), Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Owner: claims an idle key for `round`. Fails while an earlier call is queued, running or stuck.
    pub(crate) fn try_queue(&self, round: u64) -> bool {
        let current = self.state.load(Ordering::Acquire);
        if current & 0b11 != Phase::Idle as u64 {
            return false;
        }
        self.started.store(0, Ordering::Relaxed);
        self.state.compare_exchange(current, pack(round, Phase::Queued), Ordering::AcqRel, Ordering::Acquire).is_ok()
    }

    /// Worker: starts the job of `round`, unless the owner withdrew it.
    pub(crate) fn start(&self, round: u64, started_nanos: u64) -> bool {
        if !self.transition(round, Phase::Queued, Phase::Running) {
            return false;
        }
        self.started.store(started_nanos.saturating_add(1), Ordering::Release);
        true
    }

    /// Worker: the call completed; fails if the owner abandoned it first.
    pub(crate) fn finish(&self, round: u64) -> bool {
        self.transition(round, Phase::Running, Phase::Idle)
    }

    /// Worker: whether the owner gave up on this call (checked between the calls of a chain, to stop early).
    pub(crate) fn is_abandoned(&self, round: u64) -> bool {
        self.state.load(Ordering::Acquire) == pack(round, Phase::Abandoned)
    }

    /// Worker: its hung call returned after the owner gave up; the key may be queued again.
    pub(crate) fn release_abandoned(&self, round: u64) {
        self.transition(round, Phase::Abandoned, Phase::Idle);
    }

    /// Owner: gives up on a running call that missed its deadline.
    pub(crate) fn abandon(&self, round: u64) -> bool {
        self.transition(round, Phase::Running, Phase::Abandoned)
    }

    /// Owner: withdraws a job no worker has started.
    pub(crate) fn cancel(&self, round: u64) -> bool {
        self.transition(round, Phase::Queued, Phase::Idle)
    }

    /// Owner: `None` unless the call of `round` is running; then its start in nanoseconds since the epoch, or
    /// `Some(None)` if the worker has not recorded it yet (it started just now).
    pub(crate) fn running_since(&self, round: u64) -> Option<Option<u64>> {
        if self.state.load(Ordering::Acquire) != pack(round, Phase::Running) {
            return None;
        }
        Some(self.started.load(Ordering::Acquire).checked_sub(1))
    }

    /// Whether a call is stuck in the driver after its deadline.
    pub(crate) fn is_stuck(&self) -> bool {
        self.state.load(Ordering::Acquire) & 0b11 == Phase::Abandoned as u64
    }

    /// Whether a call is queued, running or stuck.
    pub(crate) fn is_busy(&self) -> bool {
        self.state.load(Ordering::Acquire) & 0b11 != Phase::Idle as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_call_per_key_and_stale_jobs_never_run() {
        let state = CallState::default();
        assert!(state.try_queue(1));
        assert!(!state.try_queue(2), "a queued key is not queued twice");
        assert!(state.start(1, 10));
        assert_eq!(state.running_since(1), Some(Some(10)));
        assert!(state.abandon(1));
        assert!(state.is_stuck());
        assert!(state.is_abandoned(1));
        assert!(!state.finish(1), "an abandoned call cannot commit");
        assert!(!state.try_queue(2), "a stuck key is skipped");
        state.release_abandoned(1);
        assert!(!state.is_busy());
        assert!(state.try_queue(3));
        assert!(state.cancel(3));
        assert!(!state.start(3, 0), "a cancelled job does not start");
        assert!(state.try_queue(4));
        assert!(!state.start(3, 0), "a job of an older round does not start");
        assert!(state.start(4, 0));
        assert!(state.finish(4));
        assert_eq!(state.running_since(4), None);
    }
}
