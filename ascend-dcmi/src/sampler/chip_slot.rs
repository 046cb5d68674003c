//! A chip's preallocated slot: its sample behind a short mutex, the lock-free state that keeps one chain per chip,
//! and the metrics it does not support.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use parking_lot::Mutex;

use super::chip_sample::ChipSample;
use super::metric::Metric;
use crate::deadline::call_state::CallState;
use crate::ids::ChipIds;

/// One chip: its ids, its values, and who is working on it.
pub(crate) struct ChipSlot {
    pub(crate) ids: ChipIds,
    /// Held only to copy a group in or out: never across a driver call. Shared with the chip's slot of the slow
    /// groups' dispatcher, which keeps its own call state, so that a chain waiting out a profiling window never holds
    /// up the chip's other groups.
    pub(crate) sample: Arc<Mutex<ChipSample>>,
    /// Its chain's state: one chain per chip, and none while a hung one is still inside the driver.
    pub(crate) call: CallState,
    pub(crate) unsupported: UnsupportedMetrics,
}

impl ChipSlot {
    pub(crate) fn new(ids: ChipIds) -> Self {
        Self {
            ids,
            sample: Arc::new(Mutex::new(ChipSample::new(ids))),
            call: CallState::default(),
            unsupported: UnsupportedMetrics::default(),
        }
    }

    /// A slot of the same chip over the same sample, with a call state and unsupported set of its own.
    pub(crate) fn sharing_sample(&self) -> Self {
        Self {
            ids: self.ids,
            sample: Arc::clone(&self.sample),
            call: CallState::default(),
            unsupported: UnsupportedMetrics::default(),
        }
    }
}

/// The calls a chip does not support: bit `Metric::index` set when the chip answered -8255 (or the symbol is
/// missing); such a metric is never asked again.
#[derive(Debug, Default)]
pub(crate) struct UnsupportedMetrics(AtomicU64);

impl UnsupportedMetrics {
    /// Whether `metric` is known to be unsupported on this chip.
    pub(crate) fn contains(&self, metric: Metric) -> bool {
        self.0.load(Ordering::Relaxed) & (1 << metric.index()) != 0
    }

    /// Remembers that `metric` is unsupported on this chip.
    pub(crate) fn insert(&self, metric: Metric) {
        self.0.fetch_or(1 << metric.index(), Ordering::Relaxed);
    }
}
