//! The daemon's own metrics (not chip telemetry, which is the exporter's job): allocations, health transitions,
//! registrations, and whether the driver is loaded. They are fed by a [`PluginObserver`].

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::{Error, Health, PluginObserver};
use ascend_dcmi::ChipIds;
use ascend_node::recovery::RecoveryMetrics;
use ascend_node::HealthObserver;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

/// Labels of per-resource metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ResourceLabels {
    /// The extended resource, for example `huawei.com/Ascend910`.
    pub resource: String,
}

/// Labels of per-chip metrics.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ChipLabels {
    /// The physical chip id.
    pub id: String,
}

/// Labels of health transitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct TransitionLabels {
    /// The physical chip id.
    pub id: String,
    /// `healthy` or `unhealthy`: the state entered.
    pub to: String,
}

/// Every metric of the daemon, registered in one registry.
pub struct PluginMetrics {
    registry: Registry,
    allocations: Family<ResourceLabels, Counter>,
    allocated_devices: Family<ResourceLabels, Counter>,
    allocation_failures: Family<ResourceLabels, Counter>,
    registrations: Family<ResourceLabels, Counter>,
    registration_failures: Family<ResourceLabels, Counter>,
    health_transitions: Family<TransitionLabels, Counter>,
    chip_healthy: Family<ChipLabels, Gauge>,
    recovery: Arc<RecoveryMetrics>,
    driver_loaded: Gauge,
    running: AtomicBool,
}

impl Default for PluginMetrics {
    fn default() -> Self {
        let mut registry = Registry::with_prefix("ascend_device_plugin");
        let metrics = PluginMetrics {
            allocations: Family::default(),
            allocated_devices: Family::default(),
            allocation_failures: Family::default(),
            registrations: Family::default(),
            registration_failures: Family::default(),
            health_transitions: Family::default(),
            chip_healthy: Family::default(),
            recovery: Arc::default(),
            driver_loaded: Gauge::default(),
            running: AtomicBool::new(false),
            registry: Registry::default(),
        };
        registry.register("allocations", "Containers given devices by Allocate", metrics.allocations.clone());
        registry.register("allocated_devices", "Device ids handed out by Allocate", metrics.allocated_devices.clone());
        registry.register("allocation_failures", "Allocate calls rejected", metrics.allocation_failures.clone());
        registry.register("registrations", "Successful registrations with the kubelet", metrics.registrations.clone());
        registry.register(
            "registration_failures",
            "Failed registration attempts (retried)",
            metrics.registration_failures.clone(),
        );
        registry.register(
            "health_transitions",
            "Chip health changes between healthy and unhealthy",
            metrics.health_transitions.clone(),
        );
        registry.register(
            "chip_healthy",
            "1 when the chip is advertised Healthy, 0 otherwise",
            metrics.chip_healthy.clone(),
        );
        metrics.recovery.register(&mut registry);
        registry.register(
            "driver_loaded",
            "1 once libdcmi.so is loaded and initialised",
            metrics.driver_loaded.clone(),
        );
        PluginMetrics { registry, ..metrics }
    }
}

impl PluginMetrics {
    /// The OpenMetrics text of every metric, ending with `# EOF`.
    pub fn encode(&self) -> String {
        let mut text = String::new();
        if let Err(error) = prometheus_client::encoding::text::encode(&mut text, &self.registry) {
            tracing::error!(%error, "encoding metrics failed");
        }
        text
    }

    /// Records whether the driver is loaded and the plugin runs.
    pub fn set_driver_loaded(&self, loaded: bool) {
        self.driver_loaded.set(i64::from(loaded));
        self.running.store(loaded, Ordering::Relaxed);
    }

    /// The recovery metrics (`chip_resets_total`, `chip_reset_seconds`, `chips_held_out_total`), to observe the
    /// daemon's recovery runner.
    pub fn recovery(&self) -> Arc<RecoveryMetrics> {
        Arc::clone(&self.recovery)
    }

    /// Whether the plugin runs over a loaded driver.
    pub fn is_running(&self) -> bool {
        self.running.load(Ordering::Relaxed)
    }
}

impl HealthObserver for PluginMetrics {
    fn health_changed(&self, chip: &ChipIds, health: &Health) {
        let id = chip.phy.to_string();
        let to = if health.is_healthy() { "healthy" } else { "unhealthy" };
        self.health_transitions.get_or_create(&TransitionLabels { id: id.clone(), to: to.to_owned() }).inc();
        self.chip_healthy.get_or_create(&ChipLabels { id }).set(i64::from(health.is_healthy()));
    }
}

impl PluginObserver for PluginMetrics {
    fn registered(&self, resource: &str) {
        self.registrations.get_or_create(&labels(resource)).inc();
    }

    fn registration_failed(&self, resource: &str, _: &Error) {
        self.registration_failures.get_or_create(&labels(resource)).inc();
    }

    fn allocated(&self, resource: &str, devices: usize) {
        self.allocations.get_or_create(&labels(resource)).inc();
        self.allocated_devices.get_or_create(&labels(resource)).inc_by(devices as u64);
    }

    fn allocation_failed(&self, resource: &str, _: &Error) {
        self.allocation_failures.get_or_create(&labels(resource)).inc();
    }
}

fn labels(resource: &str) -> ResourceLabels {
    ResourceLabels { resource: resource.to_owned() }
}
