//! `kubectl ascend pods [-n NS | -A]`: which pod holds which chips on which node.
//!
//! - DRA: each claim allocated devices of driver [`DRA_DRIVER_NAME`]: the pods it is reserved for hold them, on
//!   the node of the device's (node-local) pool.
//! - Volcano: a pod's `huawei.com/AscendReal` annotation names its chips (the device plugin writes it at Allocate).
//! - The plain device plugin publishes no chip names: the pod's request of the chip resource is shown as a count.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::Pod;
use serde::Serialize;

use ascend_kube::pod_assignment::REAL_DEVICES_ANNOTATION;

use crate::error::Result;
use crate::node_npus::{claim_holders, is_chip_resource, pod_key, pod_request, Mode};
use crate::objects::{ClusterObjects, Scope, Wanted, DRA_DRIVER_NAME};

/// One holder of chips.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodChips {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod, or for an allocated claim that no pod uses yet, `claim <name>`.
    pub pod: String,
    /// The node.
    pub node: Option<String>,
    /// How the chips were allocated.
    pub mode: Mode,
    /// The chips by name, when the source names them (empty for the plain device plugin).
    pub chips: Vec<String>,
    /// How many chips.
    pub count: u32,
    /// The pod's phase (`Running`, `Pending` ...); empty for a claim.
    pub phase: String,
    /// The claim, for DRA.
    pub claim: Option<String>,
}

/// The report of `kubectl ascend pods`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PodsReport {
    /// The holders, by namespace, pod and claim.
    pub pods: Vec<PodChips>,
}

impl PodsReport {
    /// The report for objects already read.
    pub fn from_objects(objects: &ClusterObjects) -> PodsReport {
        let phases: BTreeMap<String, String> = objects
            .pods
            .iter()
            .map(|pod| (pod_key(pod), pod.status.as_ref().and_then(|s| s.phase.clone()).unwrap_or_default()))
            .collect();
        let mut pods: Vec<PodChips> = objects.pods.iter().filter_map(device_plugin_chips).collect();
        for claim in &objects.claims {
            let namespace = claim.metadata.namespace.clone().unwrap_or_else(|| "default".into());
            let results = claim.status.as_ref().and_then(|status| status.allocation.as_ref()?.devices.as_ref());
            let ours: Vec<_> = results
                .into_iter()
                .flat_map(|devices| devices.results.iter().flatten())
                .filter(|result| result.driver == DRA_DRIVER_NAME)
                .collect();
            if ours.is_empty() {
                continue;
            }
            let node = ours.first().map(|result| result.pool.clone());
            let chips: Vec<String> = ours.iter().map(|result| result.device.clone()).collect();
            for holder in claim_holders(claim, &namespace) {
                let pod = holder.strip_prefix(&format!("{namespace}/")).unwrap_or(&holder).to_owned();
                pods.push(PodChips {
                    phase: phases.get(&holder).cloned().unwrap_or_default(),
                    namespace: namespace.clone(),
                    pod,
                    node: node.clone(),
                    mode: Mode::Dra,
                    count: u32::try_from(chips.len()).unwrap_or(u32::MAX),
                    chips: chips.clone(),
                    claim: claim.metadata.name.clone(),
                });
            }
        }
        pods.sort_by(|a, b| (&a.namespace, &a.pod, &a.claim).cmp(&(&b.namespace, &b.pod, &b.claim)));
        PodsReport { pods }
    }
}

/// A pod's chips from the device plugin: named by its `AscendReal` annotation (Volcano), else counted.
fn device_plugin_chips(pod: &Pod) -> Option<PodChips> {
    let spec = pod.spec.as_ref()?;
    let real = pod.metadata.annotations.as_ref().and_then(|annotations| annotations.get(REAL_DEVICES_ANNOTATION));
    let named: Vec<String> = real
        .iter()
        .flat_map(|text| text.split(','))
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map(str::to_owned)
        .collect();
    let resources: std::collections::BTreeSet<&String> = spec
        .containers
        .iter()
        .chain(spec.init_containers.iter().flatten())
        .filter_map(|container| container.resources.as_ref())
        .flat_map(|resources| resources.limits.iter().chain(resources.requests.iter()).flat_map(|map| map.keys()))
        .filter(|resource| is_chip_resource(resource))
        .collect();
    let count: u32 = resources.iter().map(|resource| pod_request(pod, resource)).sum();
    if named.is_empty() && count == 0 {
        return None;
    }
    Some(PodChips {
        namespace: pod.metadata.namespace.clone().unwrap_or_else(|| "default".into()),
        pod: pod.metadata.name.clone().unwrap_or_default(),
        node: spec.node_name.clone(),
        mode: if named.is_empty() { Mode::DevicePlugin } else { Mode::Volcano },
        count: if named.is_empty() { count } else { u32::try_from(named.len()).unwrap_or(u32::MAX) },
        chips: named,
        phase: pod.status.as_ref().and_then(|status| status.phase.clone()).unwrap_or_default(),
        claim: None,
    })
}

/// Reads the pods and claims of `scope` (two list calls) and reports who holds chips.
///
/// # Errors
/// [`crate::Error::Kube`] when a list fails.
pub async fn pods_report(client: &kube::Client, scope: &Scope) -> Result<PodsReport> {
    let wanted = Wanted { pods: Some(scope.clone()), claims: Some(scope.clone()), ..Wanted::default() };
    let objects = ClusterObjects::read(client, &wanted).await?;
    Ok(PodsReport::from_objects(&objects))
}
