//! `kubectl ascend capacity --chips N [--same-hccs]`: the nodes where a job of N chips fits now.
//!
//! A node fits when it is Ready, not cordoned, and has N healthy chips nobody holds; with `same_hccs`, N of them
//! in one HCCS group (Ascend 910B and 910 A3 servers have two groups of four chips; other chip types have none,
//! and nodes whose chips are not listed, the plain device plugin's, cannot be judged: both never fit then).

use serde::Serialize;

use crate::error::Result;
use crate::node_npus::{node_npus, NodeNpus};
use crate::objects::{ClusterObjects, Wanted};

/// What the job needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CapacityQuery {
    /// Chips.
    pub chips: u32,
    /// All of them in one HCCS group.
    pub same_hccs: bool,
    /// Only nodes of this chip type (`910B`, `310P` ...), when given.
    pub chip_type: Option<String>,
}

/// One node where the job fits.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Fit {
    /// The node.
    pub node: String,
    /// Its chip type.
    pub chip_type: Option<String>,
    /// Healthy chips nobody holds.
    pub free: u32,
    /// The HCCS groups with at least the chips asked for (with `same_hccs`), else every group with free chips.
    pub hccs_groups: Vec<HccsGroupFree>,
    /// Free chips left after the job (the best fit has the fewest).
    pub left_over: u32,
}

/// Free chips in one HCCS group.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct HccsGroupFree {
    /// The group (physical id / 4).
    pub group: u32,
    /// Its free healthy chips.
    pub free: u32,
}

/// The report of `kubectl ascend capacity`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CapacityReport {
    /// Chips asked for.
    pub chips: u32,
    /// Whether they must share an HCCS group.
    pub same_hccs: bool,
    /// The nodes that fit, best fit (fewest chips left over) first, then by name.
    pub fits: Vec<Fit>,
    /// NPU nodes considered.
    pub nodes_considered: usize,
}

impl CapacityReport {
    /// The report for nodes already accounted.
    pub fn from_nodes(nodes: &[NodeNpus], query: &CapacityQuery) -> CapacityReport {
        let considered = nodes.iter().filter(|node| query.chip_type.is_none() || node.chip_type == query.chip_type);
        let mut fits: Vec<Fit> = considered.clone().filter_map(|node| fit(node, query)).collect();
        fits.sort_by(|a, b| (a.left_over, &a.node).cmp(&(b.left_over, &b.node)));
        CapacityReport { chips: query.chips, same_hccs: query.same_hccs, fits, nodes_considered: considered.count() }
    }
}

fn fit(node: &NodeNpus, query: &CapacityQuery) -> Option<Fit> {
    if !node.ready || !node.schedulable || node.free < query.chips {
        return None;
    }
    let groups: Vec<HccsGroupFree> = node
        .free_per_hccs_group()
        .into_iter()
        .map(|(group, free)| HccsGroupFree { group, free })
        .filter(|group| !query.same_hccs || group.free >= query.chips)
        .collect();
    if query.same_hccs && groups.is_empty() {
        return None;
    }
    let left_over = if query.same_hccs {
        groups.iter().map(|group| group.free - query.chips).min().unwrap_or(0)
    } else {
        node.free - query.chips
    };
    Some(Fit {
        node: node.node.clone(),
        chip_type: node.chip_type.clone(),
        free: node.free,
        hccs_groups: groups,
        left_over,
    })
}

/// Reads the cluster (the five lists of [`crate::nodes_report`]) and finds where the job fits.
///
/// # Errors
/// [`crate::Error::Kube`] when a list fails.
pub async fn capacity_report(client: &kube::Client, query: &CapacityQuery) -> Result<CapacityReport> {
    let objects = ClusterObjects::read(client, &Wanted::chip_accounting()).await?;
    Ok(CapacityReport::from_nodes(&node_npus(&objects), query))
}
