//! A condition on the Node's status that says whether every NPU of the node is healthy, so that
//! `kubectl describe node`, `kubectl get node -o yaml` and remediation controllers see it.
//!
//! The type is [`NPU_CONDITION_TYPE`] (`AscendNPUUnhealthy`), `True` while at least one NPU is unhealthy. It takes
//! the polarity of node-problem-detector's conditions and of the kubelet's own `MemoryPressure`, `DiskPressure`
//! and `PIDPressure`: on a Node only `Ready` is `True` when all is well, and the tools that act on node conditions
//! (node-problem-detector based remedies, Cluster API's MachineHealthCheck, Medik8s' NodeHealthCheck, alert rules
//! on `kube_node_status_condition`) are commonly set up as "this type is True". The vendor's name in the type keeps
//! it apart from the conditions of other accelerators on the same node.
//!
//! Written with a strategic merge patch of `nodes/<node>/status`: Node conditions merge by `type`, so the kubelet's
//! and other agents' conditions are kept. `lastTransitionTime` changes only when the status flips: the writer
//! remembers what it wrote, and reads the Node's current condition only before its first write (after a start, the
//! condition a predecessor wrote keeps its transition time); `lastHeartbeatTime` is the time of the last write.
//! Writes happen only when the status, reason or message changed: one PATCH per change, and one GET per start. It
//! needs `patch` on `nodes/status` and `get` on nodes.

use k8s_openapi::api::core::v1::{Node, NodeCondition};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
use kube::api::{Api, Patch, PatchParams};
use serde_json::json;

use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::error::Result;

/// The condition type.
pub const NPU_CONDITION_TYPE: &str = "AscendNPUUnhealthy";
/// The reason while every NPU is healthy.
pub const ALL_HEALTHY_REASON: &str = "AllNPUsHealthy";
/// The reason while some NPU is unhealthy.
pub const UNHEALTHY_REASON: &str = "NPUUnhealthy";

/// What the condition says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NpuCondition {
    /// Whether some NPU is unhealthy (the condition's status is then `True`).
    pub unhealthy: bool,
    /// A one-word CamelCase reason ([`ALL_HEALTHY_REASON`], [`UNHEALTHY_REASON`]).
    pub reason: String,
    /// For humans: which chips and why.
    pub message: String,
}

impl NpuCondition {
    /// `"True"` or `"False"`.
    pub fn status(&self) -> &'static str {
        if self.unhealthy {
            "True"
        } else {
            "False"
        }
    }
}

/// What [`NodeConditionWriter::write`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ConditionWrite {
    /// Patched; `true` when the status flipped (or the condition was new).
    Written {
        /// Whether `lastTransitionTime` was set to now.
        transition: bool,
    },
    /// The same condition was written last time.
    Unchanged,
}

/// Writes one node's NPU condition.
pub struct NodeConditionWriter {
    nodes: Api<Node>,
    node: String,
    timeout: std::time::Duration,
    /// What was written last, and its `lastTransitionTime`.
    last: Option<(NpuCondition, Time)>,
}

impl std::fmt::Debug for NodeConditionWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeConditionWriter").field("node", &self.node).field("last", &self.last).finish()
    }
}

impl NodeConditionWriter {
    /// A writer of `node`'s condition, each request bounded by the default timeout.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    pub fn new(client: kube::Client, node: &str) -> Result<Self> {
        check_node_name(node)?;
        Ok(NodeConditionWriter {
            nodes: Api::all(client),
            node: node.to_owned(),
            timeout: DEFAULT_REQUEST_TIMEOUT,
            last: None,
        })
    }

    /// Bounds every request by `timeout`.
    pub fn with_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Writes `condition` unless it is what was written last.
    ///
    /// # Errors
    /// [`crate::Error::Api`] (404 when the Node does not exist), [`crate::Error::Transport`] or
    /// [`crate::Error::Timeout`]; nothing counts as written then, so the next call tries again.
    pub async fn write(&mut self, condition: &NpuCondition) -> Result<ConditionWrite> {
        if self.last.as_ref().is_some_and(|(last, _)| last == condition) {
            return Ok(ConditionWrite::Unchanged);
        }
        let node = self.node.clone();
        let object = format!("nodes/{node}");
        let now = Time(k8s_openapi::jiff::Timestamp::now());
        // The status and transition time on the Node: as this writer left them, or, before its first write, as read.
        let (status, transition_time) = match &self.last {
            Some((last, since)) => (Some(last.status().to_owned()), Some(since.clone())),
            None => {
                let current = request("get", object.clone(), self.timeout, self.nodes.get(&node)).await?;
                let existing = current
                    .status
                    .and_then(|status| status.conditions)
                    .into_iter()
                    .flatten()
                    .find(|known| known.type_ == NPU_CONDITION_TYPE);
                existing.map_or((None, None), |known| (Some(known.status), known.last_transition_time))
            }
        };
        let (transition, since) = match status {
            Some(status) if status == condition.status() => (false, transition_time.unwrap_or_else(|| now.clone())),
            _ => (true, now.clone()),
        };
        let written = NodeCondition {
            type_: NPU_CONDITION_TYPE.to_owned(),
            status: condition.status().to_owned(),
            reason: Some(condition.reason.clone()),
            message: Some(condition.message.clone()),
            last_heartbeat_time: Some(now),
            last_transition_time: Some(since.clone()),
        };
        let patch = json!({"status": {"conditions": [written]}});
        let params = PatchParams { field_manager: Some(DEVICE_PLUGIN_FIELD_MANAGER.into()), ..PatchParams::default() };
        request(
            "patch",
            format!("{object}/status"),
            self.timeout,
            self.nodes.patch_status(&node, &params, &Patch::Strategic(&patch)),
        )
        .await?;
        self.last = Some((condition.clone(), since));
        Ok(ConditionWrite::Written { transition })
    }
}
