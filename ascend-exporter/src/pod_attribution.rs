//! Which containers hold which chips, as the kubelet's PodResources API reports it.

use std::collections::BTreeMap;
use std::sync::Arc;

use ascend_dcmi::{PhyId, VnpuId};
use ascend_node::naming::{DeviceName, ResourceNaming};
use parking_lot::RwLock;

/// One container of one pod.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ContainerRef {
    /// The pod's namespace.
    pub namespace: String,
    /// The pod's name.
    pub pod: String,
    /// The container's name.
    pub container: String,
}

/// Devices of one resource that the kubelet assigned to a container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AssignedDevices {
    /// Extended resource name, for example `huawei.com/Ascend910`.
    pub resource_name: String,
    /// Device ids as the device plugin advertised them, for example `Ascend910-3`.
    pub device_ids: Vec<String>,
}

/// One container's assignments, as listed by `PodResourcesLister.List`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerAssignment {
    /// The container.
    pub container: ContainerRef,
    /// Its devices, every resource.
    pub devices: Vec<AssignedDevices>,
}

/// The containers holding each chip. Built from a PodResources listing; empty without a kubelet.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PodAttribution {
    holders: BTreeMap<PhyId, Vec<ContainerRef>>,
    /// The containers holding each vNPU, by the chip it is carved from and its id.
    vnpu_holders: BTreeMap<(PhyId, VnpuId), Vec<ContainerRef>>,
}

impl PodAttribution {
    /// Maps every Ascend device of every container back to its chip, reading ids with the device plugin's own
    /// `naming` (prefix and renames), so a renamed resource keeps its pods. Devices of other vendors and ids the
    /// plugin does not issue are ignored; a chip split into vNPUs or shared between pods lists every holder once.
    pub fn from_assignments(assignments: &[ContainerAssignment], naming: &ResourceNaming) -> Self {
        let mut holders: BTreeMap<PhyId, Vec<ContainerRef>> = BTreeMap::new();
        let mut vnpu_holders: BTreeMap<(PhyId, VnpuId), Vec<ContainerRef>> = BTreeMap::new();
        fn hold(list: &mut Vec<ContainerRef>, container: &ContainerRef) {
            if !list.contains(container) {
                list.push(container.clone());
            }
        }
        for assignment in assignments {
            for devices in &assignment.devices {
                let resource = devices.resource_name.as_str();
                let names = devices.device_ids.iter().filter_map(|id| naming.parse_device_id(resource, id));
                for name in names {
                    hold(holders.entry(name.phy()).or_default(), &assignment.container);
                    if let DeviceName::Vnpu { vnpu, phy, .. } = name {
                        hold(vnpu_holders.entry((phy, vnpu)).or_default(), &assignment.container);
                    }
                }
            }
        }
        for list in holders.values_mut().chain(vnpu_holders.values_mut()) {
            list.sort();
        }
        Self { holders, vnpu_holders }
    }

    /// The containers holding one vNPU of a chip, sorted; empty if none.
    pub fn holders_of_vnpu(&self, phy: PhyId, vnpu: VnpuId) -> &[ContainerRef] {
        self.vnpu_holders.get(&(phy, vnpu)).map_or(&[], Vec::as_slice)
    }

    /// The containers holding a chip, sorted; empty if none (or no kubelet).
    pub fn holders_of(&self, phy: PhyId) -> &[ContainerRef] {
        self.holders.get(&phy).map_or(&[], Vec::as_slice)
    }

    /// Every container with the chips it holds, sorted by container.
    pub fn containers(&self) -> BTreeMap<&ContainerRef, Vec<PhyId>> {
        let mut by_container: BTreeMap<&ContainerRef, Vec<PhyId>> = BTreeMap::new();
        for (phy, list) in &self.holders {
            for container in list {
                by_container.entry(container).or_default().push(*phy);
            }
        }
        by_container
    }
}

/// The latest attribution plus whether the last PodResources call worked; shared between the watcher and scrapes.
#[derive(Debug, Default)]
pub struct SharedAttribution {
    state: RwLock<(Arc<PodAttribution>, bool)>,
}

impl SharedAttribution {
    /// No attribution, kubelet not reached.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces the attribution after a successful `List`.
    pub fn publish(&self, attribution: PodAttribution) {
        *self.state.write() = (Arc::new(attribution), true);
    }

    /// Records that the kubelet could not be reached. The last attribution is kept: a kubelet restart does not move
    /// running containers.
    pub fn mark_unreachable(&self) {
        self.state.write().1 = false;
    }

    /// The latest attribution.
    pub fn latest(&self) -> Arc<PodAttribution> {
        self.state.read().0.clone()
    }

    /// Whether the last `List` call succeeded.
    pub fn is_reachable(&self) -> bool {
        self.state.read().1
    }

    /// The latest attribution and whether the last `List` call succeeded, read together.
    pub fn latest_with_reachability(&self) -> (Arc<PodAttribution>, bool) {
        let state = self.state.read();
        (Arc::clone(&state.0), state.1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn container(pod: &str, name: &str) -> ContainerRef {
        ContainerRef { namespace: "ml".into(), pod: pod.into(), container: name.into() }
    }

    fn assignment(pod: &str, name: &str, resource: &str, ids: &[&str]) -> ContainerAssignment {
        ContainerAssignment {
            container: container(pod, name),
            devices: vec![AssignedDevices {
                resource_name: resource.into(),
                device_ids: ids.iter().map(|id| id.to_string()).collect(),
            }],
        }
    }

    #[test]
    fn maps_whole_chips_and_vnpus_back_to_physical_ids() {
        let attribution = PodAttribution::from_assignments(
            &[
                assignment("train", "main", "huawei.com/Ascend910", &["Ascend910-0", "Ascend910-3"]),
                assignment("infer", "srv", "huawei.com/Ascend310P-2c", &["Ascend310P-2c-100-5"]),
                assignment("gpu", "cuda", "nvidia.com/gpu", &["GPU-5"]),
            ],
            &ResourceNaming::default(),
        );
        assert_eq!(attribution.holders_of(PhyId(0)), &[container("train", "main")]);
        assert_eq!(attribution.holders_of(PhyId(3)), &[container("train", "main")]);
        assert_eq!(attribution.holders_of(PhyId(5)), &[container("infer", "srv")]);
        assert!(attribution.holders_of(PhyId(1)).is_empty());
        let containers = attribution.containers();
        assert_eq!(containers.get(&container("train", "main")), Some(&vec![PhyId(0), PhyId(3)]));
    }

    #[test]
    fn a_renamed_resource_keeps_its_pods() {
        // The plugin ran with `--resource-prefix=example.org --rename=Ascend910=train`.
        let naming = ResourceNaming::with_renames("example.org", ["Ascend910=train"]).expect("valid naming");
        let assignments = [
            assignment("train", "main", "example.org/train", &["train-1", "train-6"]),
            assignment("infer", "srv", "example.org/Ascend310P-2c", &["Ascend310P-2c-100-5"]),
            assignment("old", "c", "huawei.com/Ascend910", &["Ascend910-2"]),
        ];
        let attribution = PodAttribution::from_assignments(&assignments, &naming);
        assert_eq!(attribution.holders_of(PhyId(1)), &[container("train", "main")]);
        assert_eq!(attribution.holders_of(PhyId(6)), &[container("train", "main")]);
        assert_eq!(attribution.holders_of(PhyId(5)), &[container("infer", "srv")]);
        assert!(attribution.holders_of(PhyId(2)).is_empty(), "not a resource of this plugin");
        let unaware = PodAttribution::from_assignments(&assignments, &ResourceNaming::default());
        assert!(unaware.holders_of(PhyId(1)).is_empty(), "the default naming cannot read renamed ids");
    }

    #[test]
    fn a_chip_shared_by_two_pods_lists_both_once() {
        let attribution = PodAttribution::from_assignments(
            &[
                assignment("b", "c", "huawei.com/Ascend310P", &["Ascend310P-2-0", "Ascend310P-2-1"]),
                assignment("a", "c", "huawei.com/Ascend310P", &["Ascend310P-2-2"]),
            ],
            &ResourceNaming::default(),
        );
        assert_eq!(attribution.holders_of(PhyId(2)), &[container("a", "c"), container("b", "c")]);
    }

    #[test]
    fn unreachable_kubelet_keeps_the_last_attribution() {
        let shared = SharedAttribution::new();
        assert!(!shared.is_reachable());
        shared.publish(PodAttribution::from_assignments(
            &[assignment("p", "c", "huawei.com/npu", &["npu-7"])],
            &ResourceNaming::default(),
        ));
        shared.mark_unreachable();
        assert!(!shared.is_reachable());
        assert_eq!(shared.latest().holders_of(PhyId(7)).len(), 1);
    }
}
