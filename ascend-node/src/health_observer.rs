//! A hook for the health monitor's verdicts, so a daemon can count them (metrics) without the library choosing a
//! metrics crate.

use ascend_dcmi::ChipIds;

use crate::inventory::Health;

/// Receives each chip's health as the monitor decides it. Calls come from the monitor thread, so implementations
/// must be quick and must not block.
pub trait HealthObserver: Send + Sync {
    /// A chip's health changed (also called once per chip when it is first checked).
    fn health_changed(&self, chip: &ChipIds, health: &Health) {
        let _ = (chip, health);
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopObserver;

impl HealthObserver for NoopObserver {}
