//! Volcano mode (feature `volcano`): a drop-in for Huawei's device plugin in clusters scheduled by Volcano with
//! mind-cluster's Ascend plugin.
//!
//! - The device-info ConfigMap (`kube-system/mindx-dl-deviceinfo-<node>`) Volcano schedules from, kept current by
//!   [`PublisherLoop`]: free healthy chips, unhealthy chips, faults with their levels, in Huawei's JSON
//!   ([`ascend_kube::device_info`]); chips listed in its `ManuallySeparateNPU` key are Unhealthy until removed.
//!   The list itself is [`device_list`] (with [`key_set`] and [`is_whole_chips`]).
//! - Allocate hands out the chips Volcano wrote on the pod ([`VolcanoAssigner`], looking as [`LookupConfig`] says),
//!   not the kubelet's ids.
//! - The Node annotation `baseDeviceInfos` ([`ascend_kube::device_info::BaseDeviceInfos`]), from whose chips Volcano
//!   counts the free ones (its default `self-maintain-available-card`), kept current by [`BaseInfoLoop`]; the
//!   content is [`base_device_infos`].
//!
//! [`start`] wires the first two to a running health monitor, [`start_node_annotation`] the third; the daemon's
//! `--volcano` flag calls both.

mod assigner;
mod base_infos;
mod device_list;
mod publisher;

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_kube::device_info::{
    BaseInfoWriter, DeviceInfoPublisher, NodePlacement, PublisherConfig, BASE_INFO_CHECK_INTERVAL,
};
use ascend_kube::pod_assignment::PodAssignments;
use ascend_kube::BackoffPolicy;
use tokio::sync::{watch, Notify};

use crate::error::{Error, Result};
use crate::held::Holdings;
use ascend_node::HealthMonitor;

pub use assigner::{LookupConfig, VolcanoAssigner};
pub use base_infos::{base_device_infos, BaseInfoLoop};
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
    /// How often the chips of `baseDeviceInfos` are read again ([`BASE_INFO_CHECK_INTERVAL`]).
    pub base_info_interval: Duration,
    /// The node's super-pod placement, read from the driver at start ([`NodePlacement::read`]): the ConfigMap's
    /// `SuperPodID`, `ServerIndex` and `RackID` and the Node annotations written beside `baseDeviceInfos`. `None`
    /// writes `publisher.placement` and no placement annotations.
    pub placement: Option<NodePlacement>,
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
            base_info_interval: BASE_INFO_CHECK_INTERVAL,
            placement: None,
        }
    }
}

/// Starts the device-info publisher on the current Tokio runtime and returns the assigner for
/// [`crate::serve`]; `holdings` are what the kubelet's PodResources says pods hold (the tracker given to
/// [`crate::serve`]), whose chips a pod without `huawei.com/AscendReal` holds are not free. The publisher stops
/// when `shutdown` completes; the watches of the node's pods and of the ConfigMap stop once the publisher has
/// stopped and the assigner is dropped.
///
/// # Errors
/// [`Error::Config`] for a node name that cannot be an object name.
pub fn start(
    client: kube::Client,
    monitor: &HealthMonitor,
    holdings: watch::Receiver<Arc<Holdings>>,
    config: VolcanoConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<Arc<VolcanoAssigner>> {
    let node = &config.node_name;
    let placement = config.placement.map_or(config.publisher.placement, |read| read.placement);
    let publisher_config = PublisherConfig { request_timeout: config.request_timeout, placement, ..config.publisher };
    let publisher = DeviceInfoPublisher::new(client.clone(), node, publisher_config).map_err(config_error)?;
    let pods = PodAssignments::new(client, node, config.request_timeout).map_err(config_error)?;
    let assigned = Arc::new(Notify::new());
    let publishing = PublisherLoop {
        publisher,
        pods: pods.clone(),
        snapshot: monitor.subscribe(),
        holdings,
        separations: monitor.separations(),
        assigned: Arc::clone(&assigned),
        backoff: config.backoff,
    };
    tokio::spawn(publishing.run(shutdown));
    Ok(Arc::new(VolcanoAssigner::new(pods, config.lookup, assigned)))
}

/// Starts the writer of the Node annotation `baseDeviceInfos` on the current Tokio runtime, reading the chips'
/// addresses from `manager`; it stops when `shutdown` completes.
///
/// # Errors
/// [`Error::Config`] for a node name that cannot be an object name.
pub fn start_node_annotation(
    client: kube::Client,
    manager: Arc<dyn DeviceManager>,
    monitor: &HealthMonitor,
    config: &VolcanoConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let writer = BaseInfoWriter::new(client, &config.node_name)
        .map_err(config_error)?
        .with_timeout(config.request_timeout)
        .with_annotations(config.placement.map(|read| read.annotations()).unwrap_or_default());
    let annotating = BaseInfoLoop {
        writer,
        manager,
        snapshot: monitor.subscribe(),
        backoff: config.backoff,
        check_interval: config.base_info_interval,
    };
    tokio::spawn(annotating.run(shutdown));
    Ok(())
}

fn config_error(error: ascend_kube::Error) -> Error {
    Error::Config(format!("Volcano mode: {error}"))
}
