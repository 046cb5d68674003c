//! Volcano mode (feature `volcano`): a drop-in for Huawei's device plugin in clusters scheduled by Volcano with
//! mind-cluster's Ascend plugin.
//!
//! - The device-info ConfigMap (`kube-system/mindx-dl-deviceinfo-<node>`) Volcano schedules from, kept current by
//!   [`PublisherLoop`]: free healthy chips, unhealthy chips, faults with their levels, in Huawei's JSON
//!   ([`ascend_kube::device_info`]); chips listed in its `ManuallySeparateNPU` key are Unhealthy until removed.
//!   The list itself is [`device_list`] (with [`key_set`] and [`is_whole_chips`]).
//! - Allocate hands out the chips Volcano wrote on the pod ([`VolcanoAssigner`], looking as [`LookupConfig`] says),
//!   not the kubelet's ids.
//!
//! [`start`] wires both to a running health monitor; the daemon's `--volcano` flag calls it.

mod assigner;
mod device_list;
mod publisher;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_kube::device_info::{DeviceInfoPublisher, PublisherConfig};
use ascend_kube::pod_assignment::PodAssignments;
use ascend_kube::BackoffPolicy;
use tokio::sync::Notify;

use crate::error::{Error, Result};
use ascend_node::monitor::HealthMonitor;

pub use assigner::{LookupConfig, VolcanoAssigner};
pub use device_list::{device_list, is_whole_chips, key_set};
pub use publisher::PublisherLoop;

/// Volcano mode settings.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VolcanoConfig {
    /// This node's name (the downward API's `spec.nodeName`).
    pub node_name: String,
    /// ConfigMap cadence and placement.
    pub publisher: PublisherConfig,
    /// Pod lookup of Allocate.
    pub lookup: LookupConfig,
    /// The waits after a failed write (the pods and `ManuallySeparateNPU` are watched, never re-read).
    pub backoff: BackoffPolicy,
    /// How long one API request may take.
    pub request_timeout: Duration,
}

impl VolcanoConfig {
    /// The defaults for a node.
    pub fn new(node_name: impl Into<String>) -> Self {
        VolcanoConfig {
            node_name: node_name.into(),
            publisher: PublisherConfig::default(),
            lookup: LookupConfig::default(),
            backoff: BackoffPolicy::default(),
            request_timeout: Duration::from_secs(10),
        }
    }
}

/// Starts the device-info publisher on the current Tokio runtime and returns the assigner for
/// [`crate::serve`]. The publisher stops when `shutdown` completes; the watches of the node's pods and of the
/// ConfigMap stop once the publisher has stopped and the assigner is dropped.
///
/// # Errors
/// [`Error::Config`] for a node name that cannot be an object name.
pub fn start(
    client: kube::Client,
    monitor: &HealthMonitor,
    config: VolcanoConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Arc<VolcanoAssigner>> {
    let node = &config.node_name;
    let publisher_config = PublisherConfig { request_timeout: config.request_timeout, ..config.publisher };
    let publisher = DeviceInfoPublisher::new(client.clone(), node, publisher_config).map_err(config_error)?;
    let pods = PodAssignments::new(client, node, config.request_timeout).map_err(config_error)?;
    let assigned = Arc::new(Notify::new());
    let publishing = PublisherLoop {
        publisher,
        pods: pods.clone(),
        snapshot: monitor.subscribe(),
        separations: monitor.separations(),
        assigned: Arc::clone(&assigned),
        backoff: config.backoff,
    };
    tokio::spawn(publishing.run(shutdown));
    Ok(Arc::new(VolcanoAssigner::new(pods, config.lookup, assigned)))
}

fn config_error(error: ascend_kube::Error) -> Error {
    Error::Config(format!("Volcano mode: {error}"))
}
