//! Section 4: a node whose allocatable lacks NPUs is a device-plugin problem. Is the plugin's socket there and
//! registered, does the node advertise the resource, and does the kubelet hold NPUs for pods that are gone?

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::time::Duration;

use ascend_dcmi::ChipType;
use ascend_node::naming::{base_name, socket_name, DEFAULT_PREFIX};
use ascend_node::{DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
use super::cluster_api::ClusterApi;
use super::context::{DoctorOptions, Facts};
use super::error::{Error, Result};
use super::host::EntryKind;
use super::pod_resources::{checkpoint_allocations, checkpoint_registered, list_pod_resources, Allocation, PodRef};

/// The kubelet's device-plugin checkpoint, in the plugin directory.
pub const CHECKPOINT_FILE: &str = "kubelet_internal_checkpoint";

fn plugin_dir() -> PathBuf {
    PathBuf::from(DEFAULT_PLUGIN_DIR)
}

/// The chip families of the host: from DCMI when the driver answered, else from the PCI device ids.
fn chip_types(facts: &Facts) -> BTreeSet<ChipType> {
    if !facts.chip_types.is_empty() {
        return facts.chip_types.iter().map(|(_, chip_type)| *chip_type).collect();
    }
    facts
        .npu_functions
        .iter()
        .filter_map(|(_, device)| match device {
            0xd100 => Some(ChipType::Ascend310),
            0xd105 => Some(ChipType::Ascend310B),
            0xd500 => Some(ChipType::Ascend310P),
            0xd801 => Some(ChipType::Ascend910),
            0xd802 => Some(ChipType::Ascend910B),
            0xd803 => Some(ChipType::Ascend910A3),
            0xd806 => Some(ChipType::Ascend950),
            _ => None,
        })
        .collect()
}

/// The resources the host's chips should be advertised as, with Huawei's default names.
pub fn expected_resources(facts: &Facts) -> Vec<String> {
    let names: BTreeSet<String> =
        chip_types(facts).into_iter().map(|t| format!("{DEFAULT_PREFIX}/{}", base_name(t))).collect();
    names.into_iter().collect()
}

/// kubernetes.kubelet_socket: the kubelet's registration socket.
pub fn kubelet_socket(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.kubelet_socket",
        Section::Kubernetes,
        "kubelet registration socket present",
        Status::Ok,
    );
    let host = &options.host;
    if !host.exists("/var/lib/kubelet") {
        return check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip);
    }
    let socket = plugin_dir().join(KUBELET_SOCKET);
    match host.kind(&socket) {
        Some(EntryKind::Socket) => check.evidence(format!("{} is a socket", socket.display())),
        Some(other) => check
            .evidence(format!("{} exists but is not a socket ({other:?})", socket.display()))
            .advise(Advice::KubeletSocketNotSocket)
            .with_status(Status::Fail),
        None => check
            .evidence(format!("{} absent", socket.display()))
            .advise(Advice::KubeletSocketAbsent)
            .with_status(Status::Fail),
    }
}

/// kubernetes.device_plugin: the plugin's socket `ascend-<Type>.sock` and its registration in the checkpoint.
pub fn device_plugin(options: &DoctorOptions, facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.device_plugin",
        Section::Kubernetes,
        "Device plugin socket present and registered",
        Status::Ok,
    );
    let host = &options.host;
    if !host.exists("/var/lib/kubelet") {
        return check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip);
    }
    let expected = expected_resources(facts);
    let present: Vec<String> = host
        .list(plugin_dir())
        .into_iter()
        .filter(|name| name.starts_with("ascend-") && name.ends_with(".sock"))
        .collect();
    let check = check.evidence(format!(
        "{}: plugin sockets {}",
        DEFAULT_PLUGIN_DIR,
        if present.is_empty() { "none".to_owned() } else { present.join(", ") }
    ));
    if present.is_empty() {
        let wanted: Vec<String> = expected.iter().map(|resource| socket_name(resource)).collect();
        let wanted = if wanted.is_empty() { "ascend-<Type>.sock".to_owned() } else { wanted.join(", ") };
        return check
            .evidence(format!("expected {wanted}"))
            .advise(Advice::PluginNotRegistered)
            .with_status(Status::Fail);
    }
    let checkpoint = host.read_to_string(plugin_dir().join(CHECKPOINT_FILE)).unwrap_or_default();
    let registered: Vec<(String, usize)> = checkpoint_registered(&checkpoint)
        .into_iter()
        .filter(|(resource, _)| resource.starts_with(DEFAULT_PREFIX))
        .collect();
    let mut check = check;
    for resource in &expected {
        let socket = socket_name(resource);
        check = check.evidence(if present.contains(&socket) {
            format!("{resource}: {socket} present")
        } else {
            format!("{resource}: {socket} absent (renamed resources use other socket names)")
        });
    }
    if registered.is_empty() {
        return check
            .evidence(format!(
                "{CHECKPOINT_FILE} lists no {DEFAULT_PREFIX} resource: the kubelet has not taken the plugin's devices"
            ))
            .advise(Advice::PluginNotRegistered)
            .with_status(Status::Warn);
    }
    let lines =
        registered.iter().map(|(resource, count)| format!("kubelet checkpoint: {resource} with {count} device(s)"));
    check.evidence_lines(lines.collect::<Vec<_>>())
}

/// The node this host is: `--node` (or `NODE_NAME`), else the host's hostname. An empty name (`NODE_NAME=` in an
/// environment) names no node.
pub fn node_name(options: &DoctorOptions) -> Option<String> {
    if let Some(name) = options.node_name.as_deref().map(str::trim).filter(|name| !name.is_empty()) {
        return Some(name.to_owned());
    }
    ["/etc/hostname", "/proc/sys/kernel/hostname"]
        .iter()
        .find_map(|path| options.host.read_to_string(path).ok())
        .map(|text| text.trim().to_owned())
        .filter(|name| !name.is_empty())
}

fn skip_without_cluster(check: CheckResult, reason: &Error) -> CheckResult {
    check.evidence(reason.to_string()).advise(Advice::NoCluster).with_status(Status::Skip)
}

/// What a check of this node's objects in the cluster needs: the API and the node's name, with `check` to go on; or
/// `check` as a SKIP saying which is missing (not a Kubernetes node, no cluster, no node name).
pub(crate) fn node_in_cluster(
    options: &DoctorOptions,
    check: CheckResult,
) -> std::result::Result<(&dyn ClusterApi, String, CheckResult), Box<CheckResult>> {
    if !options.host.exists("/var/lib/kubelet") {
        return Err(Box::new(
            check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip),
        ));
    }
    let api = match options.cluster() {
        Ok(api) => api,
        Err(reason) => return Err(Box::new(skip_without_cluster(check, &reason))),
    };
    let Some(node) = node_name(options) else {
        return Err(Box::new(
            check
                .evidence("the node name is unknown (no /etc/hostname)")
                .advise(Advice::NodeNameUnknown)
                .with_status(Status::Skip),
        ));
    };
    Ok((api, node, check))
}

/// The `huawei.com/*` entries of a resource list with a whole-number quantity.
fn npu_quantities(list: &BTreeMap<String, String>) -> Vec<(String, u64)> {
    list.iter()
        .filter(|(name, _)| name.starts_with(&format!("{DEFAULT_PREFIX}/")))
        .filter_map(|(name, amount)| amount.parse().ok().map(|count| (name.clone(), count)))
        .collect()
}

/// kubernetes.node_resources: the node's capacity and allocatable include the NPU resource.
pub fn node_resources(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.node_resources",
        Section::Kubernetes,
        "Node advertises the NPU resource",
        Status::Ok,
    );
    let (api, node, check) = match node_in_cluster(options, check) {
        Ok(found) => found,
        Err(skipped) => return *skipped,
    };
    let resources = match api.node_resources(&node) {
        Ok(resources) => resources,
        Err(error) => return check.evidence(error.to_string()).advise(Advice::NodeAccess).with_status(Status::Warn),
    };
    let capacity = npu_quantities(&resources.capacity);
    let allocatable = npu_quantities(&resources.allocatable);
    if capacity.is_empty() {
        return check
            .evidence(format!("node {node}: no {DEFAULT_PREFIX}/* in status.capacity"))
            .advise(Advice::CapacityMissing)
            .with_status(Status::Fail);
    }
    let mut check = check;
    let mut short = Vec::new();
    for (resource, total) in &capacity {
        let usable = allocatable.iter().find(|(name, _)| name == resource).map_or(0, |(_, n)| *n);
        check = check.evidence(format!("node {node}: {resource} capacity {total}, allocatable {usable}"));
        if usable < *total {
            short.push(format!("{resource}: {} of {total} unhealthy", total - usable));
        }
    }
    if short.is_empty() {
        return check;
    }
    check.evidence_lines(short).advise(Advice::AllocatableShort).with_status(Status::Warn)
}

/// The pods of the cluster that still run (not Succeeded or Failed), by `namespace/name` and by UID.
fn live_pods(api: &dyn ClusterApi, node: Option<&str>) -> Result<(BTreeSet<String>, BTreeSet<String>)> {
    let mut names = BTreeSet::new();
    let mut uids = BTreeSet::new();
    for pod in api.pods(node)? {
        if matches!(pod.phase.as_str(), "Succeeded" | "Failed") {
            continue;
        }
        let namespace = if pod.namespace.is_empty() { "default" } else { pod.namespace.as_str() };
        if !pod.name.is_empty() {
            names.insert(format!("{namespace}/{}", pod.name));
        }
        if !pod.uid.is_empty() {
            uids.insert(pod.uid);
        }
    }
    Ok((names, uids))
}

fn allocations(options: &DoctorOptions) -> Result<(String, Vec<Allocation>)> {
    let socket = options.host.path(&options.pod_resources_socket);
    if options.host.kind(&options.pod_resources_socket) == Some(EntryKind::Socket) {
        let found = list_pod_resources(&socket, DEFAULT_PREFIX, Duration::from_secs(5))?;
        return Ok((format!("PodResources List on {}", options.pod_resources_socket.display()), found));
    }
    let checkpoint = plugin_dir().join(CHECKPOINT_FILE);
    match options.host.read_to_string(&checkpoint) {
        Ok(text) => Ok((
            format!("{} (no PodResources socket)", checkpoint.display()),
            checkpoint_allocations(&text, DEFAULT_PREFIX),
        )),
        Err(_) => Err(Error::AllocationsUnavailable { socket: options.pod_resources_socket.clone(), checkpoint }),
    }
}

/// kubernetes.stale_allocations: NPUs the kubelet still holds for pods that no longer exist (the plugin and the
/// kubelet disagree, and the node shows NPUs as allocated after the pods were deleted).
pub fn stale_allocations(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.stale_allocations",
        Section::Kubernetes,
        "No NPUs allocated to deleted pods",
        Status::Ok,
    );
    if !options.host.exists("/var/lib/kubelet") {
        return check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip);
    }
    let api = match options.cluster() {
        Ok(api) => api,
        Err(reason) => return skip_without_cluster(check, &reason),
    };
    let (source, found) = match allocations(options) {
        Ok(found) => found,
        Err(error) => return check.evidence(error.to_string()).with_status(Status::Skip),
    };
    let node = node_name(options);
    let (names, uids) = match live_pods(api, node.as_deref()) {
        Ok(pods) => pods,
        Err(error) => return check.evidence(error.to_string()).advise(Advice::PodsAccess).with_status(Status::Warn),
    };
    let check =
        check.evidence(format!("{source}: {} NPU allocation(s); {} live pod(s) on the node", found.len(), names.len()));
    let stale: Vec<&Allocation> = found
        .iter()
        .filter(|allocation| match &allocation.pod {
            PodRef::Name { namespace, name } => !names.contains(&format!("{namespace}/{name}")),
            PodRef::Uid(uid) => !uids.contains(uid),
        })
        .collect();
    if stale.is_empty() {
        return check;
    }
    let lines: Vec<String> = stale
        .iter()
        .map(|a| format!("stale: {} container {} holds {} {}", a.pod, a.container, a.resource, a.device_ids.join(",")))
        .collect();
    check.evidence_lines(lines).advise(Advice::StaleAllocations).with_status(Status::Fail)
}
