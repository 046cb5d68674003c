//! Hooks for what the plugin does, so a daemon can count it (metrics) without the library choosing a metrics crate.

use ascend_dcmi::ChipIds;

use crate::error::Error;
use crate::inventory::Health;

/// Receives the plugin's notable events. Every method has an empty default; calls come from the monitor thread and
/// from gRPC tasks, so implementations must be quick and must not block.
pub trait PluginObserver: Send + Sync {
    /// A chip's health changed (also called once per chip when it is first checked).
    fn health_changed(&self, chip: &ChipIds, health: &Health) {
        let _ = (chip, health);
    }

    /// A resource was registered with the kubelet.
    fn registered(&self, resource: &str) {
        let _ = resource;
    }

    /// Registering a resource failed; the plugin retries.
    fn registration_failed(&self, resource: &str, error: &Error) {
        let _ = (resource, error);
    }

    /// One container's allocation succeeded with this many devices.
    fn allocated(&self, resource: &str, devices: usize) {
        let _ = (resource, devices);
    }

    /// An Allocate call was rejected.
    fn allocation_failed(&self, resource: &str, error: &Error) {
        let _ = (resource, error);
    }
}

/// An observer that ignores everything.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoopObserver;

impl PluginObserver for NoopObserver {}
