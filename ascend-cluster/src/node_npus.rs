//! One node's NPUs as the API shows them: which chips, which are unhealthy and why, which pod holds which, from
//! whichever of our daemons publishes for the node.
//!
//! Three sources, the richest first (a node being switched from one to the other shows both modes while both publish;
//! a device plugin gone from a DRA node is not shown, though the kubelet keeps its capacity for 5 minutes):
//!
//! 1. **DRA** (`ascend-dra`): the node's ResourceSlices of driver [`DRA_DRIVER_NAME`] (the newest generation of the
//!    pool) list every chip by name (`npu-<phy>`) with its attributes (`type`, `physicalId`, `hccsGroup`,
//!    `driverVersion`); a faulty chip carries the device taint `npu.huawei.com/unhealthy` (value: the fault level).
//!    Claims whose allocation names a device of the node's pool hold that chip (a vNPU partition holds its chip).
//! 2. **Volcano** (`ascend-deviceplugin --volcano`): the device-info ConfigMap lists the free chips and the
//!    unhealthy, network-unhealthy and recovering ones; its `-Fault` entries say why. A running pod holds the chips
//!    of its `huawei.com/AscendReal` annotation.
//! 3. **Device plugin** alone: only counts. The kubelet's capacity of the chip resource (`huawei.com/Ascend910` ...)
//!    is every chip, its allocatable the healthy ones; the pods on the node that request the resource hold that
//!    many. The `AscendNPUUnhealthy` condition's message says which chips are unhealthy and why. Which pod holds
//!    which chip is not published in this mode (docs/kubectl-ascend.md, "Chips of the plain device plugin").

use std::collections::{BTreeMap, BTreeSet};

use k8s_openapi::api::core::v1::{ConfigMap, Node, Pod};
use k8s_openapi::api::resource::v1::{Device, ResourceClaim, ResourceSlice};
use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use ascend_kube::device_info::{
    config_map_name, parse_device_info_cfg, DeviceInfoDocument, DEVICE_INFO_KEY, NETWORK_UNHEALTHY_SUFFIX,
    RECOVERING_SUFFIX, UNHEALTHY_SUFFIX,
};
use ascend_kube::node_labels::{CHIP_TYPE_LABEL, DRIVER_VERSION_LABEL};
use ascend_kube::pod_assignment::REAL_DEVICES_ANNOTATION;
use ascend_kube::NPU_CONDITION_TYPE;

use crate::objects::{ClusterObjects, DRA_DRIVER_NAME};

/// The node label an operator may set to the CANN toolkit version installed on the host. None of our daemons
/// writes it (CANN usually ships in the workload's image, not on the node); `kubectl ascend nodes` shows it when
/// present.
pub const CANN_VERSION_LABEL: &str = "ascend.huawei.com/cann-version";

/// Chips per HCCS group on Ascend 910B and 910 A3 servers (chips 0-3 and 4-7): the node daemons' constant, which the
/// device plugin's topology-aware allocation and the DRA driver's `hccsGroup` attribute count by.
pub use ascend_node::HCCS_GROUP_SIZE;

/// How a node's NPUs are published.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// The kubelet device plugin advertises a chip resource.
    DevicePlugin,
    /// The device plugin writes Volcano's device-info ConfigMap.
    Volcano,
    /// The DRA driver publishes ResourceSlices.
    Dra,
}

impl Mode {
    /// The name shown in tables: `device-plugin`, `volcano`, `dra`.
    pub fn as_str(self) -> &'static str {
        match self {
            Mode::DevicePlugin => "device-plugin",
            Mode::Volcano => "volcano",
            Mode::Dra => "dra",
        }
    }
}

/// One chip, when the source lists chips (DRA and Volcano).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Chip {
    /// The name the source uses: `npu-3` (DRA), `Ascend910-3` (Volcano).
    pub name: String,
    /// The physical id, when known.
    pub phy: Option<u32>,
    /// The HCCS group (910B and A3 only).
    pub hccs_group: Option<u32>,
    /// Why the chip is unhealthy; `None` when healthy.
    pub unhealthy: Option<String>,
    /// Since when it is unhealthy, when the source says.
    pub unhealthy_since: Option<Timestamp>,
    /// The pods (`namespace/name`) or the claim holding the chip; empty when free.
    pub holders: Vec<String>,
}

/// One node's NPUs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeNpus {
    /// The node.
    pub node: String,
    /// The chip type (`910B`, `310P`, `950` ...): the node label, else the DRA attribute, else the resource name.
    pub chip_type: Option<String>,
    /// How the NPUs are published; several while a node is being switched.
    pub modes: Vec<Mode>,
    /// Every chip.
    pub total: u32,
    /// Chips fit for work.
    pub healthy: u32,
    /// Chips that are not.
    pub unhealthy: u32,
    /// Chips a pod or claim holds.
    pub allocated: u32,
    /// Healthy chips nobody holds.
    pub free: u32,
    /// The driver version (node label, else the DRA attribute).
    pub driver_version: Option<String>,
    /// The CANN version ([`CANN_VERSION_LABEL`]), when an operator labels it.
    pub cann_version: Option<String>,
    /// The newest report about the node's NPUs: the device info's `UpdateTime`, the `AscendNPUUnhealthy`
    /// condition's heartbeat, else the kubelet's `Ready` heartbeat.
    pub last_update: Option<Timestamp>,
    /// Whether the kubelet reports the node Ready.
    pub ready: bool,
    /// Whether new pods may land (not cordoned).
    pub schedulable: bool,
    /// Why chips are unhealthy: one line per chip.
    pub unhealthy_reasons: Vec<String>,
    /// The chips, when the source lists them (empty for the plain device plugin).
    pub chips: Vec<Chip>,
}

impl NodeNpus {
    /// Free healthy chips per HCCS group; empty when the chip type has no groups or the chips are not listed.
    pub fn free_per_hccs_group(&self) -> BTreeMap<u32, u32> {
        let mut groups = BTreeMap::new();
        for chip in self.chips.iter().filter(|chip| chip.unhealthy.is_none() && chip.holders.is_empty()) {
            if let Some(group) = chip.hccs_group {
                *groups.entry(group).or_insert(0) += 1;
            }
        }
        groups
    }
}

/// Every node that has NPUs by any source, in name order. Nodes without any are left out.
pub fn node_npus(objects: &ClusterObjects) -> Vec<NodeNpus> {
    let index = Index::new(objects);
    objects.nodes.iter().filter_map(|node| index.node(node)).collect()
}

/// The objects of one list, indexed by node once.
struct Index<'a> {
    slices: BTreeMap<&'a str, Vec<&'a ResourceSlice>>,
    device_infos: BTreeMap<&'a str, &'a ConfigMap>,
    pods: BTreeMap<&'a str, Vec<&'a Pod>>,
    /// Pool (node) → device name → holders.
    claimed: BTreeMap<&'a str, BTreeMap<&'a str, Vec<String>>>,
}

impl<'a> Index<'a> {
    fn new(objects: &'a ClusterObjects) -> Index<'a> {
        Index {
            slices: newest_slices(&objects.slices),
            device_infos: objects
                .device_infos
                .iter()
                .filter_map(|map| Some((map.metadata.name.as_deref()?, map)))
                .collect(),
            pods: group_by(&objects.pods, |pod| pod.spec.as_ref()?.node_name.as_deref()),
            claimed: claimed_devices(&objects.claims),
        }
    }

    fn node(&self, node: &'a Node) -> Option<NodeNpus> {
        let name = node.metadata.name.as_deref()?;
        let labels = node.metadata.labels.as_ref();
        let label = |key: &str| labels.and_then(|labels| labels.get(key)).filter(|value| !value.is_empty()).cloned();
        let pods = self.pods.get(name).map(Vec::as_slice).unwrap_or_default();
        let slices = self.slices.get(name).map(Vec::as_slice).unwrap_or_default();
        // A device plugin that went away: the kubelet zeroes its allocatable at once but keeps its capacity for 5
        // minutes (`endpointStopGracePeriod`, kubernetes pkg/kubelet/cm/devicemanager/types.go). On a node the DRA
        // driver now publishes, with no pod holding the resource, that is the departed plugin, not a second mode.
        let departed =
            |counts: &DevicePluginCounts| !slices.is_empty() && counts.allocatable == 0 && counts.requested == 0;
        let counts = device_plugin_counts(node, pods).filter(|counts| !departed(counts));
        let device_info = self
            .device_infos
            .get(config_map_name(name).as_str())
            .and_then(|map| map.data.as_ref()?.get(DEVICE_INFO_KEY))
            .and_then(|text| parse_device_info_cfg(text).ok());
        let mut modes = Vec::new();
        if counts.as_ref().is_some_and(|counts| counts.capacity > 0) {
            modes.push(Mode::DevicePlugin);
        }
        if device_info.is_some() {
            modes.push(Mode::Volcano);
        }
        if !slices.is_empty() {
            modes.push(Mode::Dra);
        }
        let chip_type = label(CHIP_TYPE_LABEL);
        if modes.is_empty() && chip_type.is_none() {
            return None;
        }
        let condition = npu_condition(node);
        let mut npus = NodeNpus {
            node: name.to_owned(),
            chip_type,
            modes,
            total: 0,
            healthy: 0,
            unhealthy: 0,
            allocated: 0,
            free: 0,
            driver_version: label(DRIVER_VERSION_LABEL),
            cann_version: label(CANN_VERSION_LABEL),
            last_update: last_update(node, device_info.as_ref()),
            ready: condition_status(node, "Ready") == Some(true),
            schedulable: !node.spec.as_ref().and_then(|spec| spec.unschedulable).unwrap_or(false),
            unhealthy_reasons: Vec::new(),
            chips: Vec::new(),
        };
        if !slices.is_empty() {
            let claimed = self.claimed.get(name);
            npus.chips = dra_chips(slices, claimed);
            let attribute = |key: &str| whole_chips(slices).find_map(|device| string_attribute(device, key));
            npus.chip_type = npus.chip_type.or_else(|| attribute("type").map(|t| short_type(&t).to_owned()));
            npus.driver_version = npus.driver_version.or_else(|| attribute("driverVersion"));
        } else if let Some(document) = &device_info {
            let grouped = has_hccs_groups(npus.chip_type.as_deref());
            npus.chips = volcano_chips(document, pods, grouped);
            npus.chip_type = npus.chip_type.or_else(|| document.device_list.resources().next().map(type_of_resource));
        }
        if npus.chips.is_empty() {
            if let Some(counts) = counts {
                npus.total = counts.capacity;
                npus.healthy = counts.allocatable.min(counts.capacity);
                npus.unhealthy = npus.total - npus.healthy;
                npus.allocated = counts.requested;
                npus.free = npus.healthy.saturating_sub(counts.requested);
                npus.chip_type = npus.chip_type.or_else(|| Some(type_of_resource(&counts.resource)));
                if let Some((true, message, _)) = &condition {
                    npus.unhealthy_reasons.push(message.clone());
                }
            }
        } else {
            npus.count_chips();
        }
        Some(npus)
    }
}

impl NodeNpus {
    fn count_chips(&mut self) {
        let count = |pick: &dyn Fn(&Chip) -> bool| {
            u32::try_from(self.chips.iter().filter(|c| pick(c)).count()).unwrap_or(u32::MAX)
        };
        self.total = count(&|_| true);
        self.unhealthy = count(&|chip| chip.unhealthy.is_some());
        self.healthy = self.total - self.unhealthy;
        self.allocated = count(&|chip| !chip.holders.is_empty());
        self.free = count(&|chip| chip.unhealthy.is_none() && chip.holders.is_empty());
        self.unhealthy_reasons =
            self.chips.iter().filter_map(|chip| Some(format!("{}: {}", chip.name, chip.unhealthy.as_ref()?))).collect();
    }
}

fn group_by<'a, T>(items: &'a [T], key: impl Fn(&'a T) -> Option<&'a str>) -> BTreeMap<&'a str, Vec<&'a T>> {
    let mut groups: BTreeMap<&str, Vec<&T>> = BTreeMap::new();
    for item in items {
        if let Some(key) = key(item) {
            groups.entry(key).or_default().push(item);
        }
    }
    groups
}

/// The slices of each node's pool, only those of the pool's newest generation (the scheduler ignores older ones).
fn newest_slices(slices: &[ResourceSlice]) -> BTreeMap<&str, Vec<&ResourceSlice>> {
    let mut by_node = group_by(slices, |slice| {
        (slice.spec.driver == DRA_DRIVER_NAME).then_some(slice.spec.node_name.as_deref()).flatten()
    });
    for pool in by_node.values_mut() {
        let newest = pool.iter().map(|slice| slice.spec.pool.generation).max().unwrap_or(0);
        pool.retain(|slice| slice.spec.pool.generation == newest);
    }
    by_node
}

/// Pool → device → who holds it: the pods the claim is reserved for, else the claim itself.
fn claimed_devices(claims: &[ResourceClaim]) -> BTreeMap<&str, BTreeMap<&str, Vec<String>>> {
    let mut claimed: BTreeMap<&str, BTreeMap<&str, Vec<String>>> = BTreeMap::new();
    for claim in claims {
        let Some(status) = &claim.status else { continue };
        let results = status.allocation.as_ref().and_then(|allocation| allocation.devices.as_ref());
        let namespace = claim.metadata.namespace.as_deref().unwrap_or("default");
        let holders = claim_holders(claim, namespace);
        for result in results.into_iter().flat_map(|devices| devices.results.iter().flatten()) {
            if result.driver == DRA_DRIVER_NAME {
                claimed.entry(&result.pool).or_default().entry(&result.device).or_default().extend(holders.clone());
            }
        }
    }
    claimed
}

/// `namespace/pod` of each pod a claim is reserved for; `claim namespace/name` when it is reserved for none.
pub(crate) fn claim_holders(claim: &ResourceClaim, namespace: &str) -> Vec<String> {
    let pods: Vec<String> = claim
        .status
        .iter()
        .flat_map(|status| status.reserved_for.iter().flatten())
        .filter(|consumer| consumer.resource == "pods")
        .map(|consumer| format!("{namespace}/{}", consumer.name))
        .collect();
    if pods.is_empty() {
        vec![format!("claim {namespace}/{}", claim.metadata.name.as_deref().unwrap_or_default())]
    } else {
        pods
    }
}

fn attribute<'d>(device: &'d Device, key: &str) -> Option<&'d k8s_openapi::api::resource::v1::DeviceAttribute> {
    device.attributes.as_ref()?.get(key)
}

fn string_attribute(device: &Device, key: &str) -> Option<String> {
    attribute(device, key)?.string.clone()
}

fn int_attribute(device: &Device, key: &str) -> Option<u32> {
    attribute(device, key)?.int.and_then(|value| u32::try_from(value).ok())
}

fn whole_chips<'s>(slices: &'s [&'s ResourceSlice]) -> impl Iterator<Item = &'s Device> + 's {
    slices
        .iter()
        .flat_map(|slice| slice.spec.devices.iter().flatten())
        .filter(|device| attribute(device, "vnpu").and_then(|value| value.bool) != Some(true))
}

fn dra_chips(slices: &[&ResourceSlice], claimed: Option<&BTreeMap<&str, Vec<String>>>) -> Vec<Chip> {
    let all_devices = || slices.iter().flat_map(|slice| slice.spec.devices.iter().flatten());
    // A partition (vNPU) claimed holds its chip: map every device to the physical id it lives on.
    let mut holders_by_phy: BTreeMap<u32, BTreeSet<String>> = BTreeMap::new();
    let mut holders_by_name: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
    for device in all_devices() {
        let Some(holders) = claimed.and_then(|claimed| claimed.get(device.name.as_str())) else { continue };
        match int_attribute(device, "physicalId") {
            Some(phy) => holders_by_phy.entry(phy).or_default().extend(holders.iter().cloned()),
            None => holders_by_name.entry(&device.name).or_default().extend(holders.iter().cloned()),
        }
    }
    let mut chips: Vec<Chip> = whole_chips(slices)
        .map(|device| {
            let phy = int_attribute(device, "physicalId");
            let taint = device.taints.iter().flatten().find(|taint| taint.key == ascend_kube::UNHEALTHY_TAINT_KEY);
            let mut holders: BTreeSet<String> =
                phy.and_then(|phy| holders_by_phy.get(&phy)).cloned().unwrap_or_default();
            holders.extend(holders_by_name.get(device.name.as_str()).cloned().unwrap_or_default());
            Chip {
                name: device.name.clone(),
                phy,
                hccs_group: int_attribute(device, "hccsGroup"),
                unhealthy: taint
                    .map(|taint| format!("{} ({})", taint.value.as_deref().unwrap_or("unhealthy"), taint.effect)),
                unhealthy_since: taint.and_then(|taint| taint.time_added.as_ref()).map(|time| time.0),
                holders: holders.into_iter().collect(),
            }
        })
        .collect();
    chips.sort_by(|a, b| (a.phy, &a.name).cmp(&(b.phy, &b.name)));
    chips
}

/// The chips of a device-info document; the pods on the node hold the chips of their `huawei.com/AscendReal`.
fn volcano_chips(document: &DeviceInfoDocument, pods: &[&Pod], grouped: bool) -> Vec<Chip> {
    let list = &document.device_list;
    let mut holders: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for pod in pods {
        let Some(real) = pod.metadata.annotations.as_ref().and_then(|a| a.get(REAL_DEVICES_ANNOTATION)) else {
            continue;
        };
        for chip in real.split(',').map(str::trim).filter(|chip| !chip.is_empty()) {
            holders.entry(chip).or_default().push(pod_key(pod));
        }
    }
    let mut chips: BTreeMap<String, Chip> = BTreeMap::new();
    let mut add = |name: &str, reason: Option<String>| {
        let phy = name.rsplit_once('-').and_then(|(_, id)| id.parse::<u32>().ok());
        let chip = chips.entry(name.to_owned()).or_insert_with(|| Chip {
            name: name.to_owned(),
            phy,
            hccs_group: phy.filter(|_| grouped).map(|phy| phy / HCCS_GROUP_SIZE),
            unhealthy: None,
            unhealthy_since: None,
            holders: holders.get(name).cloned().unwrap_or_default(),
        });
        if chip.unhealthy.is_none() {
            chip.unhealthy = reason;
        }
    };
    for resource in list.resources() {
        for chip in list.chips(resource) {
            add(chip, None);
        }
        for (suffix, reason) in [
            (UNHEALTHY_SUFFIX, "unhealthy"),
            (NETWORK_UNHEALTHY_SUFFIX, "network unhealthy"),
            (RECOVERING_SUFFIX, "recovering (hot reset)"),
        ] {
            for chip in list.chips(&format!("{resource}{suffix}")) {
                add(chip, Some(reason.to_owned()));
            }
        }
    }
    // Chips a pod holds are left out of the free list by the plugin; the annotations still name them.
    for chip in holders.keys() {
        add(chip, None);
    }
    for resource in list.resources() {
        for fault in list.faults(resource).unwrap_or_default() {
            if let Some(chip) = chips.get_mut(&fault.npu_name) {
                let first = fault.fault_time_and_level_map.values().map(|entry| entry.fault_time).min();
                let kind =
                    if fault.fault_type == ascend_kube::device_info::CARD_NETWORK_UNHEALTHY { "network " } else { "" };
                chip.unhealthy =
                    Some(format!("{kind}fault {} (codes {})", fault.fault_level, fault.fault_code.replace(',', ", ")));
                chip.unhealthy_since = first.and_then(|ms| Timestamp::from_millisecond(ms).ok());
            }
        }
    }
    let mut chips: Vec<Chip> = chips.into_values().collect();
    chips.sort_by(|a, b| (a.phy, &a.name).cmp(&(b.phy, &b.name)));
    chips
}

pub(crate) fn pod_key(pod: &Pod) -> String {
    format!(
        "{}/{}",
        pod.metadata.namespace.as_deref().unwrap_or("default"),
        pod.metadata.name.as_deref().unwrap_or_default()
    )
}

/// What the kubelet says of the node's chip resource, and what the node's pods request of it.
struct DevicePluginCounts {
    resource: String,
    capacity: u32,
    allocatable: u32,
    requested: u32,
}

fn device_plugin_counts(node: &Node, pods: &[&Pod]) -> Option<DevicePluginCounts> {
    let status = node.status.as_ref()?;
    let capacity = status.capacity.as_ref()?;
    let (resource, total) = capacity
        .iter()
        .filter(|(resource, _)| is_chip_resource(resource))
        .map(|(resource, quantity)| (resource, quantity_count(&quantity.0)))
        .max_by_key(|(_, count)| *count)?;
    let allocatable =
        status.allocatable.as_ref().and_then(|a| a.get(resource)).map_or(0, |quantity| quantity_count(&quantity.0));
    let requested = pods.iter().map(|pod| pod_request(pod, resource)).sum();
    Some(DevicePluginCounts { resource: resource.clone(), capacity: total, allocatable, requested })
}

/// `huawei.com/Ascend910`, `huawei.com/Ascend310P`, `huawei.com/npu` ...: a whole-chip resource of the device
/// plugin (vNPU resources such as `huawei.com/Ascend310P-2c` carry a dash and are not chips).
pub fn is_chip_resource(resource: &str) -> bool {
    resource
        .strip_prefix("huawei.com/")
        .is_some_and(|name| (name.starts_with("Ascend") || name == "npu") && !name.contains('-'))
}

/// The chips a pod takes of `resource`: its containers' sum, or its largest init container if more (the kubelet's
/// rule for extended resources, which are requested through limits).
pub(crate) fn pod_request(pod: &Pod, resource: &str) -> u32 {
    let Some(spec) = &pod.spec else { return 0 };
    let of = |container: &k8s_openapi::api::core::v1::Container| {
        container.resources.as_ref().map_or(0, |resources| {
            let limits = resources.limits.as_ref().and_then(|limits| limits.get(resource));
            let requests = resources.requests.as_ref().and_then(|requests| requests.get(resource));
            limits.or(requests).map_or(0, |quantity| quantity_count(&quantity.0))
        })
    };
    let containers: u32 = spec.containers.iter().map(of).sum();
    let init = spec.init_containers.iter().flatten().map(of).max().unwrap_or(0);
    containers.max(init)
}

fn quantity_count(text: &str) -> u32 {
    text.trim().parse().unwrap_or(0)
}

/// `Ascend910B` → `910B`, `npu` → `npu`.
fn short_type(name: &str) -> &str {
    name.strip_prefix("Ascend").unwrap_or(name)
}

/// The chip type a resource name tells: `huawei.com/Ascend310P` → `310P`, `huawei.com/npu` → `950`.
fn type_of_resource(resource: &str) -> String {
    let name = resource.rsplit('/').next().unwrap_or(resource);
    if name == "npu" {
        "950".to_owned()
    } else {
        short_type(name).to_owned()
    }
}

fn has_hccs_groups(chip_type: Option<&str>) -> bool {
    matches!(chip_type, Some("910B" | "910A3"))
}

/// The `AscendNPUUnhealthy` condition: (unhealthy, message, last transition).
fn npu_condition(node: &Node) -> Option<(bool, String, Option<Timestamp>)> {
    let condition = node_condition(node, NPU_CONDITION_TYPE)?;
    Some((
        condition.status == "True",
        condition.message.clone().unwrap_or_default(),
        condition.last_transition_time.as_ref().map(|time| time.0),
    ))
}

/// Since when the node's `AscendNPUUnhealthy` condition is `True`, if it is.
pub(crate) fn unhealthy_since(node: &Node) -> Option<Timestamp> {
    npu_condition(node).filter(|(unhealthy, _, _)| *unhealthy).and_then(|(_, _, since)| since)
}

fn node_condition<'n>(node: &'n Node, kind: &str) -> Option<&'n k8s_openapi::api::core::v1::NodeCondition> {
    node.status.as_ref()?.conditions.as_ref()?.iter().find(|condition| condition.type_ == kind)
}

fn condition_status(node: &Node, kind: &str) -> Option<bool> {
    node_condition(node, kind).map(|condition| condition.status == "True")
}

fn last_update(node: &Node, device_info: Option<&DeviceInfoDocument>) -> Option<Timestamp> {
    let heartbeat = |kind: &str| node_condition(node, kind)?.last_heartbeat_time.as_ref().map(|time| time.0);
    let published = device_info.and_then(|document| Timestamp::from_second(document.update_time).ok());
    let ours = published.into_iter().chain(heartbeat(NPU_CONDITION_TYPE)).max();
    ours.or_else(|| heartbeat("Ready"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chip_resources_are_whole_chips_of_huawei() {
        for yes in ["huawei.com/Ascend910", "huawei.com/Ascend310P", "huawei.com/npu"] {
            assert!(is_chip_resource(yes), "{yes}");
        }
        for no in ["huawei.com/Ascend310P-2c", "nvidia.com/gpu", "cpu", "huawei.com/other"] {
            assert!(!is_chip_resource(no), "{no}");
        }
    }

    fn object<T: serde::de::DeserializeOwned>(value: serde_json::Value) -> T {
        serde_json::from_value(value).expect("a valid object")
    }

    #[test]
    fn a_claimed_partition_holds_its_chip_and_partitions_are_not_chips() {
        let device = |name: &str, phy: u32, vnpu: bool| {
            serde_json::json!({"name": name, "attributes": {"physicalId": {"int": phy}, "vnpu": {"bool": vnpu},
                                                             "type": {"string": "Ascend310P"}}})
        };
        let objects = ClusterObjects {
            nodes: vec![object(serde_json::json!({"metadata": {"name": "n1"}}))],
            slices: vec![object(serde_json::json!({
                "metadata": {"name": "n1-npu-huawei-com-0"},
                "spec": {"driver": DRA_DRIVER_NAME, "nodeName": "n1", "pool": {"name": "n1", "generation": 3,
                         "resourceSliceCount": 1},
                         "devices": [device("npu-0", 0, false), device("npu-0-vir02", 0, true), device("npu-1", 1, false)]}
            }))],
            claims: vec![object(serde_json::json!({
                "metadata": {"namespace": "ai", "name": "small"},
                "spec": {},
                "status": {"allocation": {"devices": {"results": [
                    {"request": "r", "driver": DRA_DRIVER_NAME, "pool": "n1", "device": "npu-0-vir02"}]}}}
            }))],
            ..ClusterObjects::default()
        };
        let nodes = node_npus(&objects);
        assert_eq!(nodes.len(), 1);
        let node = &nodes[0];
        assert_eq!((node.total, node.allocated, node.free), (2, 1, 1));
        assert_eq!(node.chip_type.as_deref(), Some("310P"));
        assert_eq!(node.chips[0].holders, ["claim ai/small"], "a claim no pod uses yet still holds the chip");
    }

    #[test]
    fn resource_names_tell_the_chip_type() {
        assert_eq!(type_of_resource("huawei.com/Ascend310P"), "310P");
        assert_eq!(type_of_resource("huawei.com/npu"), "950");
        assert_eq!(short_type("Ascend910A3"), "910A3");
    }
}
