//! `kubectl ascend nodes`: every NPU node with its chips, health, allocation, versions and mode.

use serde::Serialize;

use crate::error::Result;
use crate::node_npus::{node_npus, NodeNpus};
use crate::objects::{ClusterObjects, Wanted};

/// The report of `kubectl ascend nodes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodesReport {
    /// The NPU nodes, in name order.
    pub nodes: Vec<NodeNpus>,
}

impl NodesReport {
    /// The report for objects already read.
    pub fn from_objects(objects: &ClusterObjects) -> NodesReport {
        NodesReport { nodes: node_npus(objects) }
    }
}

/// Reads the cluster (five list calls: nodes, pods, device-info ConfigMaps, ResourceSlices, ResourceClaims) and
/// reports every NPU node.
///
/// # Errors
/// [`crate::Error::Kube`] when a list fails.
pub async fn nodes_report(client: &kube::Client) -> Result<NodesReport> {
    let objects = ClusterObjects::read(client, &Wanted::chip_accounting()).await?;
    Ok(NodesReport::from_objects(&objects))
}
