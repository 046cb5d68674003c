//! The objects a report is computed from, read with one list call per kind, never one request per node.
//!
//! | kind | list | who writes it |
//! |---|---|---|
//! | Nodes | all | the kubelet (capacity, allocatable, Ready), the node labeller (labels), the device plugin (the `AscendNPUUnhealthy` condition) |
//! | Pods | all namespaces, or one; not finished (`status.phase!=Succeeded,status.phase!=Failed`) | users; Volcano and the device plugin annotate them |
//! | ConfigMaps | `kube-system`, label `mx-consumer-cim=true` | the device plugin in Volcano mode (device info) |
//! | ResourceSlices | all, field `spec.driver=npu.huawei.com` | the DRA driver |
//! | ResourceClaims | all namespaces, or one | users; the scheduler writes the allocation |
//! | Events (`events.k8s.io/v1`) | namespace `default`, where Node Events live | the device plugin (`--node-events`) |
//!
//! The lists are made concurrently. A cluster without `resource.k8s.io/v1` (before Kubernetes 1.34) answers 404
//! for the DRA kinds; that reads as "no slices, no claims", not as an error.

use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use k8s_openapi::api::events::v1::Event;
use k8s_openapi::api::resource::v1::{ResourceClaim, ResourceSlice};
use kube::api::{Api, ListParams};
use kube::Resource;
use serde::de::DeserializeOwned;

use ascend_kube::device_info::{CONSUMER_LABEL, CONSUMER_LABEL_VALUE, DEVICE_INFO_NAMESPACE};
use ascend_kube::{request, DEFAULT_REQUEST_TIMEOUT};

use crate::error::Result;

/// The DRA driver's name, as its ResourceSlices and claim allocations carry it (`ascend-dra`'s default; a driver
/// started with another `--driver-name` is not seen).
pub const DRA_DRIVER_NAME: &str = ascend_kube::ASCEND_DRA_DRIVER_NAME;

/// Where pods and claims are read from: `-n NAMESPACE` or `-A`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum Scope {
    /// Every namespace.
    #[default]
    AllNamespaces,
    /// One namespace.
    Namespace(String),
}

/// Which kinds to list (each `true` or `Some` is one list call).
#[derive(Debug, Clone, Default)]
pub struct Wanted {
    /// Nodes.
    pub nodes: bool,
    /// Pods, in this scope.
    pub pods: Option<Scope>,
    /// The device-info ConfigMaps.
    pub device_infos: bool,
    /// The DRA driver's ResourceSlices.
    pub slices: bool,
    /// ResourceClaims, in this scope.
    pub claims: Option<Scope>,
    /// The Node Events.
    pub events: bool,
}

impl Wanted {
    /// What the per-node chip accounting needs (`nodes`, `capacity`, the current faults).
    pub fn chip_accounting() -> Wanted {
        Wanted {
            nodes: true,
            pods: Some(Scope::AllNamespaces),
            device_infos: true,
            slices: true,
            claims: Some(Scope::AllNamespaces),
            events: false,
        }
    }
}

/// The objects read for one report.
#[derive(Debug, Clone, Default)]
pub struct ClusterObjects {
    /// Nodes.
    pub nodes: Vec<Node>,
    /// Pods that have not finished.
    pub pods: Vec<Pod>,
    /// The device-info ConfigMaps.
    pub device_infos: Vec<ConfigMap>,
    /// The DRA driver's ResourceSlices.
    pub slices: Vec<ResourceSlice>,
    /// ResourceClaims.
    pub claims: Vec<ResourceClaim>,
    /// Node Events.
    pub events: Vec<Event>,
}

impl ClusterObjects {
    /// Lists what `wanted` names, concurrently, each list bounded by the default request deadline.
    ///
    /// # Errors
    /// The first list that failed ([`crate::Error::Kube`], naming the resource); a 404 for the DRA kinds is not an
    /// error (the cluster has no `resource.k8s.io/v1`).
    pub async fn read(client: &kube::Client, wanted: &Wanted) -> Result<ClusterObjects> {
        let not_finished = ListParams::default().fields("status.phase!=Succeeded,status.phase!=Failed");
        let device_info_params = ListParams::default().labels(&format!("{CONSUMER_LABEL}={CONSUMER_LABEL_VALUE}"));
        let slice_params = ListParams::default().fields(&format!("spec.driver={DRA_DRIVER_NAME}"));
        let (nodes, pods, device_infos, slices, claims, events) = tokio::try_join!(
            list_if(wanted.nodes, Api::<Node>::all(client.clone()), ListParams::default(), false),
            list_if(wanted.pods.is_some(), scoped::<Pod>(client, wanted.pods.as_ref()), not_finished, false),
            list_if(
                wanted.device_infos,
                Api::<ConfigMap>::namespaced(client.clone(), DEVICE_INFO_NAMESPACE),
                device_info_params,
                false,
            ),
            list_if(wanted.slices, Api::<ResourceSlice>::all(client.clone()), slice_params, true),
            list_if(
                wanted.claims.is_some(),
                scoped::<ResourceClaim>(client, wanted.claims.as_ref()),
                ListParams::default(),
                true,
            ),
            list_if(wanted.events, Api::<Event>::namespaced(client.clone(), "default"), ListParams::default(), false),
        )?;
        Ok(ClusterObjects { nodes, pods, device_infos, slices, claims, events })
    }
}

fn scoped<K>(client: &kube::Client, scope: Option<&Scope>) -> Api<K>
where
    K: Resource<Scope = k8s_openapi::NamespaceResourceScope, DynamicType = ()>,
{
    match scope {
        Some(Scope::Namespace(namespace)) => Api::namespaced(client.clone(), namespace),
        _ => Api::all(client.clone()),
    }
}

/// One list call (kube-rs pages nothing by itself: one request, the server's whole answer), or nothing when not
/// wanted. `absent_is_empty`: a 404 (the kind is not served) reads as an empty list.
async fn list_if<K>(wanted: bool, api: Api<K>, params: ListParams, absent_is_empty: bool) -> Result<Vec<K>>
where
    K: Resource<DynamicType = ()> + Clone + DeserializeOwned + std::fmt::Debug,
{
    if !wanted {
        return Ok(Vec::new());
    }
    let object = K::plural(&()).into_owned();
    match request("list", object, DEFAULT_REQUEST_TIMEOUT, api.list(&params)).await {
        Ok(list) => Ok(list.items),
        Err(error) if absent_is_empty && error.is_not_found() => Ok(Vec::new()),
        Err(error) => Err(error.into()),
    }
}
