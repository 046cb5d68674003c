//! What the checks read from the API server: the [`ClusterApi`] the doctor asks (kube-rs's in `node_api`, feature
//! `kube`; a test's own), and the answers it gives; all public at the crate root.

use std::collections::BTreeMap;

use ascend_oci::runtime_config::RuntimeClassRef;

use super::error::{Error, Result};

/// What the checks read from the API server. The doctor works without one (builds without the `kube` feature,
/// hosts without access to the API server); tests pass their own, or the kube-rs one
/// (`node_api::KubeClusterApi`, feature `kube`) pointed at a fake API server.
///
/// Every method's error names the request and why it got no answer (refused, timed out, HTTP 403 or 404): kube-rs's
/// client gives `Error::Kube` (feature `kube`), or [`Error::NoCluster`] when no cluster is configured; other clients
/// give [`Error::ApiRequest`].
pub trait ClusterApi: Send + Sync {
    /// Why no cluster can be asked at all (no in-cluster environment and no kubeconfig), or `None` when one is
    /// configured. Checks that need the cluster SKIP with this reason; a configured cluster that then fails to
    /// answer is a finding (WARN), as it was when the doctor ran `kubectl`.
    fn unavailable(&self) -> Option<String> {
        None
    }

    /// The node's `status.nodeInfo.kubeletVersion`; `Ok(None)` when the kubelet has not reported one.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn kubelet_version(&self, node: &str) -> Result<Option<String>>;

    /// The versions of API group `group` the server serves, preferred first (API discovery, `/apis`); `Ok(None)`
    /// when it does not serve the group.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn served_versions(&self, group: &str) -> Result<Option<Vec<String>>>;

    /// The node's `status.capacity` and `status.allocatable`.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn node_resources(&self, node: &str) -> Result<NodeResources>;

    /// The pods bound to `node`, or every pod of the cluster when the node is unknown.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn pods(&self, node: Option<&str>) -> Result<Vec<ClusterPod>>;

    /// The cluster's RuntimeClasses.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn runtime_classes(&self) -> Result<Vec<RuntimeClassRef>>;

    /// Pod `namespace/name`: its node and its containers' statuses; `Ok(None)` when there is no such pod. The
    /// default, for clients written before `--pod`, says it cannot answer.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn pod(&self, namespace: &str, name: &str) -> Result<Option<PodContainers>> {
        Err(Error::ApiRequest {
            request: format!("get pods/{namespace}/{name}"),
            reason: "this API client does not read single pods".to_owned(),
        })
    }

    /// The Events about Node `node` (`events.k8s.io/v1`, in namespace `default`, where the Events of a Node live)
    /// whose reason is one of `reasons`, in any order. The default, for clients written before the recovery check,
    /// says it cannot answer.
    ///
    /// # Errors
    /// Why the API server gave no answer.
    fn node_events(&self, node: &str, reasons: &[&str]) -> Result<Vec<NodeEventRecord>> {
        let _ = (node, reasons);
        Err(Error::ApiRequest {
            request: "list events.k8s.io/v1 events in namespace default".to_owned(),
            reason: "this API client does not read Events".to_owned(),
        })
    }
}

/// One Event about a Node, as the checks read it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeEventRecord {
    /// `reason` (`NpuHeldOut`).
    pub reason: String,
    /// `action`: the chip the device plugin's Events are about (`Ascend910-3`).
    pub action: String,
    /// `note`: the message.
    pub note: String,
    /// When it was last seen, RFC 3339: `series.lastObservedTime`, else `eventTime`, else `deprecatedLastTimestamp`,
    /// else `metadata.creationTimestamp`; empty when none is set.
    pub time: String,
}

impl NodeEventRecord {
    /// The fields of an Event object's JSON; missing or mistyped fields are empty.
    pub fn from_event_json(event: &serde_json::Value) -> NodeEventRecord {
        let text = |value: &serde_json::Value| value.as_str().unwrap_or_default().to_owned();
        let time = [
            &event["series"]["lastObservedTime"],
            &event["eventTime"],
            &event["deprecatedLastTimestamp"],
            &event["metadata"]["creationTimestamp"],
        ]
        .into_iter()
        .map(text)
        .find(|time| !time.is_empty())
        .unwrap_or_default();
        NodeEventRecord {
            reason: text(&event["reason"]),
            action: text(&event["action"]),
            note: text(&event["note"]),
            time,
        }
    }
}

/// A node's `status.capacity` and `status.allocatable`: resource name to quantity as the API server writes it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeResources {
    /// What the node has.
    pub capacity: BTreeMap<String, String>,
    /// What pods may use.
    pub allocatable: BTreeMap<String, String>,
}

/// A pod as the checks see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClusterPod {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid`.
    pub uid: String,
    /// `status.phase` (`Running`, `Succeeded` ...; empty when unset).
    pub phase: String,
}

/// What the API server says of a pod's containers.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodContainers {
    /// `spec.nodeName`; `None` while the pod is not scheduled.
    pub node_name: Option<String>,
    /// `status.phase` (empty when unset).
    pub phase: String,
    /// `status.containerStatuses`, in the pod's order.
    pub containers: Vec<ContainerStatus>,
}

impl PodContainers {
    /// The fields of a Pod object's JSON (`spec.nodeName`, `status.phase`, `status.containerStatuses`); missing or
    /// mistyped fields are empty.
    pub fn from_pod_json(pod: &serde_json::Value) -> PodContainers {
        let text = |value: &serde_json::Value| value.as_str().map(str::to_owned);
        let statuses = pod["status"]["containerStatuses"].as_array().map(Vec::as_slice).unwrap_or_default();
        PodContainers {
            node_name: text(&pod["spec"]["nodeName"]).filter(|node| !node.is_empty()),
            phase: text(&pod["status"]["phase"]).unwrap_or_default(),
            containers: statuses
                .iter()
                .filter_map(|status| {
                    Some(ContainerStatus {
                        name: text(&status["name"])?,
                        container_id: text(&status["containerID"]).filter(|id| !id.is_empty()),
                        running: status["state"]["running"].is_object(),
                    })
                })
                .collect(),
        }
    }
}

/// One entry of `status.containerStatuses`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerStatus {
    /// The container's name.
    pub name: String,
    /// `containerID` (`containerd://<id>`); `None` before the runtime created it.
    pub container_id: Option<String>,
    /// Whether `state.running` is set.
    pub running: bool,
}
