//! Hooks for what the plugin does, so a daemon can count it (metrics) without the library choosing a metrics crate.

use ascend_node::{HealthObserver, NoopObserver};

use crate::error::Error;

/// Receives the plugin's notable events: the health monitor's ([`HealthObserver`]) and the plugin's own. Every method
/// has an empty default; calls come from the monitor thread and from gRPC tasks, so implementations must be quick and
/// must not block.
pub trait PluginObserver: HealthObserver {
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

impl PluginObserver for NoopObserver {}
