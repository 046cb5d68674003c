//! State shared by the dispatcher and the worker threads.

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use super::chip_slot::ChipSlot;
use super::config::Profiling;
use super::metric::MetricSet;
use crate::device_manager::DeviceManager;

/// What workers need: the manager, the chip slots, the selection, and the round's countdown.
pub(crate) struct Shared {
    pub(crate) manager: Arc<dyn DeviceManager>,
    /// One slot per chip, allocated once.
    pub(crate) chips: Box<[ChipSlot]>,
    selection: AtomicU64,
    /// Chains of the current round not yet completed or given up (plus one while the dispatcher still queues).
    pending: AtomicUsize,
    /// The worker that completes a round's last chain wakes the dispatcher through this condition variable (under
    /// `round_lock`). A channel did this before, but a channel's first blocking receive grows its list of waiters:
    /// an allocation inside whichever poll first outlasted crossbeam's spinning, which a loaded machine reached (the
    /// allocation-free poll test failed 8 times in 12 with four busy loops beside it). parking_lot parks the waiting
    /// thread without allocating.
    round_completed: Condvar,
    round_lock: Mutex<()>,
    epoch: Instant,
    /// The profiling windows of the bandwidth calls.
    pub(crate) profiling: Profiling,
}

impl Shared {
    pub(crate) fn new(
        manager: Arc<dyn DeviceManager>,
        chips: Box<[ChipSlot]>,
        selection: MetricSet,
        profiling: Profiling,
    ) -> Self {
        Self {
            manager,
            chips,
            selection: AtomicU64::new(selection.bits()),
            pending: AtomicUsize::new(0),
            round_completed: Condvar::new(),
            round_lock: Mutex::new(()),
            epoch: Instant::now(),
            profiling,
        }
    }

    pub(crate) fn selection(&self) -> MetricSet {
        MetricSet::from_bits(self.selection.load(Ordering::Relaxed))
    }

    pub(crate) fn set_selection(&self, selection: MetricSet) {
        self.selection.store(selection.bits(), Ordering::Relaxed);
    }

    pub(crate) fn nanos_since_epoch(&self, instant: Instant) -> u64 {
        u64::try_from(instant.saturating_duration_since(self.epoch).as_nanos()).unwrap_or(u64::MAX)
    }

    pub(crate) fn instant_at(&self, nanos: u64) -> Instant {
        self.epoch + Duration::from_nanos(nanos)
    }

    /// Dispatcher: a round starts; the one extra count is released by [`Shared::dispatch_done`].
    pub(crate) fn begin_round(&self) {
        self.pending.store(1, Ordering::Release);
    }

    /// Dispatcher: one more chain queued.
    pub(crate) fn add_pending(&self) {
        self.pending.fetch_add(1, Ordering::AcqRel);
    }

    /// Dispatcher: every chain is queued.
    pub(crate) fn dispatch_done(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }

    /// Dispatcher: a chain was given up (timed out or never started).
    pub(crate) fn chain_given_up(&self) {
        self.pending.fetch_sub(1, Ordering::AcqRel);
    }

    /// Worker: a chain completed. The last one wakes the dispatcher: one wake-up per round, not per chip.
    pub(crate) fn chain_done(&self) {
        if self.pending.fetch_sub(1, Ordering::AcqRel) == 1 {
            // Taking the lock orders this wake-up after the dispatcher's check of `pending`: either it saw zero, or it
            // is already waiting and hears this.
            let _checked = self.round_lock.lock();
            self.round_completed.notify_one();
        }
    }

    /// Dispatcher: waits until every chain of the round is completed or given up (true), or until `deadline` (false
    /// if chains are still pending then).
    pub(crate) fn wait_for_chains(&self, deadline: Instant) -> bool {
        let mut checked = self.round_lock.lock();
        while self.pending() > 0 {
            if self.round_completed.wait_until(&mut checked, deadline).timed_out() {
                return self.pending() == 0;
            }
        }
        true
    }

    pub(crate) fn pending(&self) -> usize {
        self.pending.load(Ordering::Acquire)
    }
}
