//! The pod side of Volcano's allocation contract: which pending pod an Allocate call is for, which chips its
//! annotation names, which chips running pods hold, and the annotations that mark a pod served.
//!
//! Volcano's Ascend plugin picks the chips itself and writes them on the pod before binding it:
//! `huawei.com/Ascend910: "Ascend910-0,Ascend910-1"` (the annotation key is the resource name) and
//! `predicate-time: <UnixNano>`. The kubelet then calls Allocate with ids of its own choosing, so the device plugin
//! looks for the pending pod on its node that asks for the resource, has as many chips in its annotation as the
//! kubelet asks for, and has the smallest `predicate-time`; it hands out the annotated chips and marks the pod
//! served by setting `predicate-time` to the largest unsigned 64-bit value, with `huawei.com/kltDev` (the kubelet's
//! ids) and `huawei.com/AscendReal` (the real chips).
//!
//! Sources (Ascend/mind-cluster): `component/ascend-device-plugin/pkg/server/plugin.go` (`doWithVolcanoSchedule`,
//! `checkAnnotationAllocateValid`, `getOldestPod`), `pkg/common/constants.go` (`PodPredicateTime`, `Pod2kl`,
//! `PodRealAlloc`), `pkg/device/ascendcommon.go` (`AddPodAnnotation`, `getRealUsedDevices`: running pods' chips from
//! `huawei.com/AscendReal`).
//!
//! [`PodAssignments`] keeps the node's pods with a watch ([`crate::Watched`]): one LIST when it starts and an event
//! per change of a pod on the node, which is what the device-info publisher reads instead of a LIST per round, and
//! what wakes an Allocate waiting for its pod. Allocate itself decides on one consistent LIST
//! ([`PodAssignments::list`]), a request per container start. [`pod_views`] is that LIST, also for tools that look
//! once (the doctor's stale-allocation check).
//!
//! The mark is a JSON merge patch that carries the pod's `resourceVersion`: when two Allocate calls (or two plugin
//! instances) pick the same pod, the second patch gets 409 Conflict instead of serving the pod twice.

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams, Patch, PatchParams};
use serde_json::json;
use tokio::sync::watch;

use crate::client::{check_node_name, request, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::error::Result;
use crate::watched::Watched;

/// When Volcano chose the chips (nanoseconds); [`CONSUMED_PREDICATE_TIME`] once a device plugin served the pod.
pub const PREDICATE_TIME_ANNOTATION: &str = "predicate-time";
/// `predicate-time` of a served pod: `u64::MAX`.
pub const CONSUMED_PREDICATE_TIME: &str = "18446744073709551615";
/// The device ids the kubelet passed to Allocate for the pod.
pub const KUBELET_DEVICES_ANNOTATION: &str = "huawei.com/kltDev";
/// The chips the pod really got.
pub const REAL_DEVICES_ANNOTATION: &str = "huawei.com/AscendReal";

/// A pod as the allocation flow sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodView {
    /// Namespace.
    pub namespace: String,
    /// Name.
    pub name: String,
    /// `metadata.uid` (empty when unset), the key the kubelet's checkpoint records pods by.
    pub uid: String,
    /// `resourceVersion`, the precondition of the mark.
    pub resource_version: Option<String>,
    /// `status.phase` (`Pending`, `Running` ...; empty when unset).
    pub phase: String,
    /// Annotations.
    pub annotations: BTreeMap<String, String>,
    /// Devices of each extended resource the pod's containers ask for (limits, else requests), summed.
    pub requests: BTreeMap<String, u64>,
}

impl PodView {
    /// The view of a pod.
    pub fn of(pod: &Pod) -> PodView {
        let mut requests: BTreeMap<String, u64> = BTreeMap::new();
        for container in pod.spec.iter().flat_map(|spec| spec.containers.iter()) {
            let Some(resources) = &container.resources else { continue };
            let asked = resources.limits.as_ref().or(resources.requests.as_ref());
            for (resource, quantity) in asked.into_iter().flatten() {
                if let Ok(count) = quantity.0.parse::<u64>() {
                    // Anyone who may create pods writes these numbers: a sum past u64 saturates (no such pod can
                    // match an Allocate) instead of panicking or wrapping to a small count that could.
                    let total = requests.entry(resource.clone()).or_default();
                    *total = total.saturating_add(count);
                }
            }
        }
        PodView {
            namespace: pod.metadata.namespace.clone().unwrap_or_default(),
            name: pod.metadata.name.clone().unwrap_or_default(),
            uid: pod.metadata.uid.clone().unwrap_or_default(),
            resource_version: pod.metadata.resource_version.clone(),
            phase: pod.status.as_ref().and_then(|status| status.phase.clone()).unwrap_or_default(),
            annotations: pod.metadata.annotations.clone().unwrap_or_default(),
            requests,
        }
    }

    /// `namespace/name`.
    pub fn key(&self) -> String {
        format!("{}/{}", self.namespace, self.name)
    }

    /// Whether the pod holds or will hold its devices (not Succeeded or Failed).
    pub fn is_active(&self) -> bool {
        !matches!(self.phase.as_str(), "Succeeded" | "Failed")
    }

    /// Whether a device plugin already served it.
    pub fn is_served(&self) -> bool {
        self.annotation(PREDICATE_TIME_ANNOTATION) == Some(CONSUMED_PREDICATE_TIME)
    }

    /// An annotation's value.
    pub fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.get(key).map(String::as_str)
    }

    /// The chips Volcano chose for `resource` (the annotation named like the resource), in its order.
    pub fn chosen_chips(&self, resource: &str) -> Vec<String> {
        split_list(self.annotation(resource).unwrap_or_default())
    }

    /// The chips the pod really got (`huawei.com/AscendReal`).
    pub fn real_chips(&self) -> Vec<String> {
        split_list(self.annotation(REAL_DEVICES_ANNOTATION).unwrap_or_default())
    }

    /// The `predicate-time` of a pod waiting to be served.
    fn predicate_time(&self) -> Option<u64> {
        self.annotation(PREDICATE_TIME_ANNOTATION).and_then(|text| text.trim().parse().ok())
    }
}

fn split_list(text: &str) -> Vec<String> {
    text.split(',').map(str::trim).filter(|item| !item.is_empty()).map(str::to_owned).collect()
}

/// The pod an Allocate of `count` devices of `resource` is for: among the active pending pods that ask for the
/// resource and are not served yet, whose annotation names `count` chips, the one with the smallest
/// `predicate-time` (ties: the name decides, so two plugin instances agree).
pub fn oldest_waiting<'a>(pods: &'a [PodView], resource: &str, count: usize) -> Option<&'a PodView> {
    pods.iter()
        .filter(|pod| pod.is_active() && pod.phase == "Pending" && !pod.is_served())
        .filter(|pod| pod.requests.get(resource).copied().unwrap_or(0) > 0)
        .filter(|pod| pod.chosen_chips(resource).len() == count)
        .filter_map(|pod| pod.predicate_time().map(|time| (time, pod)))
        .min_by(|(a_time, a), (b_time, b)| a_time.cmp(b_time).then_with(|| a.key().cmp(&b.key())))
        .map(|(_, pod)| pod)
}

/// A served, still active pod whose `huawei.com/kltDev` is exactly these kubelet ids: the kubelet asking again for
/// a container it already asked for (after its own restart, or a retry), which must get the same chips.
pub fn served_for<'a>(pods: &'a [PodView], kubelet_ids: &[String]) -> Option<&'a PodView> {
    let wanted: BTreeSet<&str> = kubelet_ids.iter().map(String::as_str).collect();
    pods.iter().filter(|pod| pod.is_active() && pod.is_served()).find(|pod| {
        let recorded = split_list(pod.annotation(KUBELET_DEVICES_ANNOTATION).unwrap_or_default());
        !recorded.is_empty() && recorded.iter().map(String::as_str).collect::<BTreeSet<_>>() == wanted
    })
}

/// The chips active pods hold (`huawei.com/AscendReal`), with the pod holding each; `except` is left out.
pub fn chips_in_use(pods: &[PodView], except: Option<&PodView>) -> BTreeMap<String, String> {
    pods.iter()
        .filter(|pod| pod.is_active() && Some(*pod) != except)
        .flat_map(|pod| pod.real_chips().into_iter().map(move |chip| (chip, pod.key())))
        .collect()
}

/// The pods bound to `node` (every pod of the cluster when `None`), as views, read from the API server in one list
/// bounded by `timeout`.
///
/// # Errors
/// [`crate::Error::InvalidNodeName`], [`crate::Error::Api`], [`crate::Error::Transport`] or
/// [`crate::Error::Timeout`].
pub async fn pod_views(client: kube::Client, node: Option<&str>, timeout: Duration) -> Result<Vec<PodView>> {
    let pods: Api<Pod> = Api::all(client);
    let (params, object) = match node {
        Some(node) => {
            check_node_name(node)?;
            let selector = format!("spec.nodeName={node}");
            (ListParams::default().fields(&selector), format!("pods?fieldSelector={selector}"))
        }
        None => (ListParams::default(), "pods".to_owned()),
    };
    let listed = request("list", object, timeout, pods.list(&params)).await?;
    Ok(listed.items.iter().map(PodView::of).collect())
}

/// Watches and marks the pods of one node.
#[derive(Clone)]
pub struct PodAssignments {
    pods: Api<Pod>,
    node: String,
    timeout: Duration,
    watched: Watched<Pod>,
}

impl std::fmt::Debug for PodAssignments {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PodAssignments").field("node", &self.node).finish_non_exhaustive()
    }
}

impl PodAssignments {
    /// The pods of `node`, kept by a watch (`spec.nodeName=<node>`) started now on the current Tokio runtime; every
    /// request bounded by `timeout`.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    ///
    /// # Panics
    /// Outside a Tokio runtime.
    pub fn new(client: kube::Client, node: &str, timeout: Duration) -> Result<Self> {
        check_node_name(node)?;
        let pods: Api<Pod> = Api::all(client);
        let watched = Watched::start(pods.clone(), &format!("spec.nodeName={node}"), format!("pods on {node}"));
        Ok(PodAssignments { pods, node: node.to_owned(), timeout, watched })
    }

    /// Every pod bound to the node, read from the API server in one consistent LIST: what Allocate decides on. A
    /// watch's copy may lag behind the server by an event, and Allocate must not give a younger pod the chips
    /// Volcano chose for an older one whose event has not arrived yet. One LIST per Allocate is a request per
    /// container start, not per unit of time; everything periodic reads [`PodAssignments::watched_list`].
    ///
    /// # Errors
    /// [`crate::Error::Api`], [`crate::Error::Transport`] or [`crate::Error::Timeout`].
    pub async fn list(&self) -> Result<Vec<PodView>> {
        pod_views(self.pods.clone().into_client(), Some(&self.node), self.timeout).await
    }

    /// Every pod bound to the node, as the watch has them (no request once the watch has listed).
    ///
    /// # Errors
    /// [`crate::Error::Timeout`] when the watch's first list does not arrive within the timeout.
    pub async fn watched_list(&self) -> Result<Vec<PodView>> {
        self.watched.ready(self.timeout).await?;
        Ok(self.watched.objects().iter().map(|pod| PodView::of(pod)).collect())
    }

    /// A counter bumped after every change to the node's pods the watch saw.
    pub fn changes(&self) -> watch::Receiver<u64> {
        self.watched.changes()
    }

    /// Marks `pod` served: `predicate-time` to [`CONSUMED_PREDICATE_TIME`], the kubelet's ids and the real chips.
    /// The patch carries the `resourceVersion` read with the pod.
    ///
    /// # Errors
    /// [`crate::Error::Api`] with 409 when the pod changed since it was read (another Allocate may have served it),
    /// 404 when it is gone; [`crate::Error::Transport`] or [`crate::Error::Timeout`].
    pub async fn mark_served(&self, pod: &PodView, kubelet_ids: &[String], real: &[String]) -> Result<()> {
        let patch = json!({
            "metadata": {
                "resourceVersion": pod.resource_version,
                "annotations": {
                    PREDICATE_TIME_ANNOTATION: CONSUMED_PREDICATE_TIME,
                    KUBELET_DEVICES_ANNOTATION: kubelet_ids.join(","),
                    REAL_DEVICES_ANNOTATION: real.join(","),
                },
            },
        });
        let params = PatchParams { field_manager: Some(DEVICE_PLUGIN_FIELD_MANAGER.into()), ..PatchParams::default() };
        let pods: Api<Pod> = Api::namespaced(self.pods.clone().into_client(), &pod.namespace);
        let object = format!("pods/{}", pod.key());
        request("patch", object, self.timeout, pods.patch(&pod.name, &params, &Patch::Merge(&patch))).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod(name: &str, phase: &str, annotations: &[(&str, &str)], asks: u64) -> PodView {
        PodView {
            namespace: "jobs".into(),
            name: name.into(),
            uid: format!("uid-{name}"),
            resource_version: Some("1".into()),
            phase: phase.into(),
            annotations: annotations.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect(),
            requests: [("huawei.com/Ascend910".to_owned(), asks)].into(),
        }
    }

    const R: &str = "huawei.com/Ascend910";

    #[test]
    fn the_oldest_matching_waiting_pod_wins() {
        let pods = [
            pod("young", "Pending", &[(R, "Ascend910-0,Ascend910-1"), (PREDICATE_TIME_ANNOTATION, "200")], 2),
            pod("old", "Pending", &[(R, "Ascend910-2,Ascend910-3"), (PREDICATE_TIME_ANNOTATION, "100")], 2),
            pod("older-but-one-chip", "Pending", &[(R, "Ascend910-4"), (PREDICATE_TIME_ANNOTATION, "50")], 1),
            pod(
                "served",
                "Pending",
                &[(R, "Ascend910-5,Ascend910-6"), (PREDICATE_TIME_ANNOTATION, CONSUMED_PREDICATE_TIME)],
                2,
            ),
            pod("running", "Running", &[(R, "Ascend910-7,Ascend910-6"), (PREDICATE_TIME_ANNOTATION, "1")], 2),
            pod("no-time", "Pending", &[(R, "Ascend910-5,Ascend910-6")], 2),
        ];
        assert_eq!(oldest_waiting(&pods, R, 2).map(|p| p.name.as_str()), Some("old"));
        assert_eq!(oldest_waiting(&pods, R, 1).map(|p| p.name.as_str()), Some("older-but-one-chip"));
        assert_eq!(oldest_waiting(&pods, R, 3), None);
        assert_eq!(oldest_waiting(&pods, "huawei.com/Ascend310P", 2), None);
    }

    #[test]
    fn chips_in_use_and_repeated_calls_come_from_the_annotations() {
        let served = pod(
            "served",
            "Running",
            &[
                (PREDICATE_TIME_ANNOTATION, CONSUMED_PREDICATE_TIME),
                (KUBELET_DEVICES_ANNOTATION, "Ascend910-0,Ascend910-1"),
                (REAL_DEVICES_ANNOTATION, "Ascend910-4,Ascend910-5"),
            ],
            2,
        );
        let finished = pod("done", "Succeeded", &[(REAL_DEVICES_ANNOTATION, "Ascend910-6")], 1);
        let pods = [served.clone(), finished];
        let used = chips_in_use(&pods, None);
        assert_eq!(used.keys().collect::<Vec<_>>(), ["Ascend910-4", "Ascend910-5"]);
        assert!(chips_in_use(&pods, Some(&served)).is_empty());
        let again = ["Ascend910-1".to_owned(), "Ascend910-0".to_owned()];
        assert_eq!(served_for(&pods, &again).map(|p| p.name.as_str()), Some("served"));
        assert_eq!(served_for(&pods, &["Ascend910-0".to_owned()]), None);
    }

    #[test]
    fn requests_past_u64_saturate() {
        // The input of fuzz/corpus/pod_annotations/crash-request-overflow: the sum panicked in debug builds and
        // wrapped in release ones.
        use k8s_openapi::api::core::v1::{Container, PodSpec, ResourceRequirements};
        use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
        let container = Container {
            resources: Some(ResourceRequirements {
                limits: Some([(R.to_owned(), Quantity(u64::MAX.to_string()))].into()),
                ..ResourceRequirements::default()
            }),
            ..Container::default()
        };
        let pod = Pod {
            spec: Some(PodSpec { containers: vec![container.clone(), container], ..PodSpec::default() }),
            ..Pod::default()
        };
        assert_eq!(PodView::of(&pod).requests[R], u64::MAX);
    }

    #[tokio::test]
    async fn the_pods_of_a_node_or_of_the_cluster_with_their_uids() {
        let server = fake_apiserver::FakeApiServer::start().await.expect("fake API server");
        for (uid, name, node) in [("uid-a", "train-0", "worker-1"), ("uid-b", "web-0", "worker-2")] {
            server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Pod",
                "metadata": {"name": name, "namespace": "jobs", "uid": uid},
                "spec": {"nodeName": node, "containers": []}, "status": {"phase": "Running"}}));
        }
        let timeout = Duration::from_secs(5);
        let on_node = pod_views(server.client(), Some("worker-1"), timeout).await.expect("list");
        assert_eq!(on_node.len(), 1);
        assert_eq!(
            (on_node[0].key(), on_node[0].uid.as_str(), on_node[0].phase.as_str()),
            ("jobs/train-0".to_owned(), "uid-a", "Running")
        );
        let all = pod_views(server.client(), None, timeout).await.expect("list");
        let mut uids: Vec<&str> = all.iter().map(|pod| pod.uid.as_str()).collect();
        uids.sort_unstable();
        assert_eq!(uids, ["uid-a", "uid-b"]);
        assert!(pod_views(server.client(), Some("Bad/Name"), timeout).await.is_err());
        let selectors: Vec<String> = server
            .requests()
            .into_iter()
            .flat_map(|request| request.query)
            .filter(|(key, _)| key == "fieldSelector")
            .map(|(_, value)| value)
            .collect();
        assert_eq!(selectors, ["spec.nodeName=worker-1"]);
    }
}
