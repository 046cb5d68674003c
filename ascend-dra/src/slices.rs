//! The node's devices as `resource.k8s.io/v1` ResourceSlices: one pool named after the node, devices named after
//! physical ids, attributes a user can select on in CEL, capacities, taints for faulty chips and, in partitionable
//! mode, the vNPU partitions with the shared counters they consume.

use std::collections::BTreeMap;
use std::path::Path;

pub use ascend_kube::SliceContent;
use k8s_openapi::api::resource::v1::{
    Counter, CounterSet, Device, DeviceAttribute, DeviceCapacity, DeviceCounterConsumption,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;

use ascend_node::Health;

use crate::devices::{partition_name, NpuChip};
use crate::health::taint;

/// At most this many devices in one slice (the API's limit).
pub const MAX_DEVICES: usize = 128;
/// At most this many devices in a slice where any device has taints or consumes counters (the limit from
/// Kubernetes 1.35 on; kept on 1.34 too so that one driver serves both).
pub const MAX_DEVICES_WITH_TAINTS_OR_COUNTERS: usize = 64;
/// At most this many shared counters in one slice (1.34).
pub const MAX_COUNTERS: usize = 32;

/// The capacity names of a device (what CEL selects on: `device.capacity['npu.huawei.com'].aiCores`).
pub const AI_CORES: &str = "aiCores";
/// See [`AI_CORES`].
pub const MEMORY: &str = "memory";
/// The counter names of a chip's counter set. The API server takes only DNS labels here (lowercase, no
/// camelCase), unlike capacity names: `aiCores` as a counter is refused with 422 Invalid.
pub const AI_CORES_COUNTER: &str = "aicores";
/// See [`AI_CORES_COUNTER`].
pub const MEMORY_COUNTER: &str = "memory";

/// One chip's devices and, in partitionable mode, its counter set: they must share a slice.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipGroup {
    /// The whole chip first, then its partitions.
    pub devices: Vec<Device>,
    /// The chip's counters.
    pub counters: Option<CounterSet>,
}

/// The devices of every chip, grouped per chip; a chip's devices carry its health's taint ([`taint`]).
pub fn chip_groups(chips: &[(NpuChip, Health)], host_root: &Path, partitionable: bool) -> Vec<ChipGroup> {
    chips
        .iter()
        .map(|(chip, health)| {
            let taints = taint(health).map(|taint| vec![taint]);
            let mut whole = chip_device(chip, host_root);
            whole.taints.clone_from(&taints);
            if !partitionable || chip.vnpu_templates.is_empty() {
                return ChipGroup { devices: vec![whole], counters: None };
            }
            let set = counter_set_name(chip);
            let total = chip_counters(chip.aicore, chip.memory_bytes.unwrap_or(0));
            whole.consumes_counters =
                Some(vec![DeviceCounterConsumption { counter_set: set.clone(), counters: total.clone() }]);
            let mut devices = vec![whole];
            for template in &chip.vnpu_templates {
                if template.aicore == 0 || template.aicore > chip.aicore {
                    continue;
                }
                // DCMI gives a template's cores, not its memory; the driver splits HBM in proportion to the cores,
                // as the templates do.
                let memory = chip.memory_bytes.unwrap_or(0) / u64::from(chip.aicore) * u64::from(template.aicore);
                let mut device = chip_device(chip, host_root);
                device.name = partition_name(chip.ids.phy.get(), template.name);
                let attributes = device.attributes.get_or_insert_with(BTreeMap::new);
                attributes.insert("vnpu".into(), boolean(true));
                attributes.insert("vnpuTemplate".into(), string(template.name));
                device.capacity = Some(capacities(template.aicore, Some(memory)));
                device.consumes_counters = Some(vec![DeviceCounterConsumption {
                    counter_set: set.clone(),
                    counters: chip_counters(template.aicore, memory),
                }]);
                device.taints.clone_from(&taints);
                devices.push(device);
            }
            ChipGroup { devices, counters: Some(CounterSet { name: set, counters: total }) }
        })
        .collect()
}

fn counter_set_name(chip: &NpuChip) -> String {
    format!("npu-{}-counters", chip.ids.phy.get())
}

fn chip_counters(aicore: u32, memory: u64) -> BTreeMap<String, Counter> {
    BTreeMap::from([
        (AI_CORES_COUNTER.to_owned(), Counter { value: Quantity(aicore.to_string()) }),
        (MEMORY_COUNTER.to_owned(), Counter { value: Quantity(memory.to_string()) }),
    ])
}

fn chip_device(chip: &NpuChip, host_root: &Path) -> Device {
    let mut attributes = BTreeMap::from([
        ("type".to_owned(), string(chip.chip_type.as_str())),
        ("model".to_owned(), string(&chip.model)),
        ("physicalId".to_owned(), int(chip.ids.phy.get())),
        ("logicId".to_owned(), int(chip.ids.logic.get())),
        ("vnpu".to_owned(), boolean(false)),
    ]);
    // V2 (Ascend950) chips have no card/device pair.
    if let Some(locator) = chip.ids.locator {
        attributes.insert("cardId".into(), int(locator.card.get()));
        attributes.insert("chipOnCard".into(), int(locator.device.get()));
    }
    if let Some(numa) = chip.numa_node {
        attributes.insert("numaNode".into(), int(numa));
    }
    if let Some(group) = chip.hccs_group() {
        attributes.insert("hccsGroup".into(), int(group));
    }
    if let Some(address) = chip.pcie_address {
        attributes.insert("pciBusId".into(), string(&address.to_string()));
        if let Some(root) = pcie_root(host_root, &address.to_string()) {
            attributes.insert("resource.kubernetes.io/pcieRoot".into(), string(&root));
        }
    }
    if let Some(version) = &chip.driver_version {
        attributes.insert("driverVersion".into(), string(version));
    }
    Device {
        name: chip.device_name(),
        attributes: Some(attributes),
        capacity: Some(capacities(chip.aicore, chip.memory_bytes)),
        ..Device::default()
    }
}

fn capacities(aicore: u32, memory: Option<u64>) -> BTreeMap<String, DeviceCapacity> {
    let mut capacity = BTreeMap::from([(
        AI_CORES.to_owned(),
        DeviceCapacity { value: Quantity(aicore.to_string()), request_policy: None },
    )]);
    if let Some(memory) = memory {
        capacity
            .insert(MEMORY.to_owned(), DeviceCapacity { value: Quantity(memory.to_string()), request_policy: None });
    }
    capacity
}

/// The PCIe root complex of a device as Kubernetes' standard attribute spells it (`pci0000:00`): the first
/// component of the device's resolved sysfs path. `None` when sysfs does not have the device.
pub fn pcie_root(host_root: &Path, bus_id: &str) -> Option<String> {
    let link = host_root.join("sys/bus/pci/devices").join(bus_id);
    let target = std::fs::read_link(link).ok()?;
    target
        .components()
        .filter_map(|component| component.as_os_str().to_str())
        .find(|name| name.starts_with("pci") && name.contains(':'))
        .map(str::to_owned)
}

fn string(value: &str) -> DeviceAttribute {
    // The API caps string attributes at 64 characters.
    let value: String = value.chars().take(64).collect();
    DeviceAttribute { string: Some(value), ..DeviceAttribute::default() }
}

fn int(value: impl Into<i64>) -> DeviceAttribute {
    DeviceAttribute { int: Some(value.into()), ..DeviceAttribute::default() }
}

fn boolean(value: bool) -> DeviceAttribute {
    DeviceAttribute { bool: Some(value), ..DeviceAttribute::default() }
}

/// Packs the groups into as few slices as the limits allow (a group never splits), in order.
pub fn pack(groups: &[ChipGroup]) -> Vec<SliceContent> {
    let mut packed: Vec<SliceContent> = Vec::new();
    let mut current = SliceContent::default();
    for group in groups {
        let devices = current.devices.len() + group.devices.len();
        let counters: usize = current.shared_counters.iter().chain(&group.counters).map(|set| set.counters.len()).sum();
        let limited = current
            .devices
            .iter()
            .chain(&group.devices)
            .any(|device| device.taints.is_some() || device.consumes_counters.is_some());
        let limit = if limited { MAX_DEVICES_WITH_TAINTS_OR_COUNTERS } else { MAX_DEVICES };
        let fits = devices <= limit && counters <= MAX_COUNTERS;
        if !fits && !current.devices.is_empty() {
            packed.push(std::mem::take(&mut current));
        }
        current.devices.extend(group.devices.iter().cloned());
        current.shared_counters.extend(group.counters.iter().cloned());
    }
    if !current.devices.is_empty() {
        packed.push(current);
    }
    packed
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascend_dcmi::{CardId, ChipIds, ChipLocator, ChipType, DeviceId, FaultLevel, LogicId, PhyId, VnpuTemplate};
    use ascend_node::UnhealthyCause;

    fn chip(phy: u32) -> (NpuChip, Health) {
        let chip = NpuChip {
            ids: ChipIds {
                logic: LogicId(phy),
                phy: PhyId(phy),
                locator: Some(ChipLocator { card: CardId(0), device: DeviceId(0) }),
            },
            chip_type: ChipType::Ascend310P,
            model: "310P3".into(),
            numa_node: Some(0),
            pcie_address: None,
            aicore: 8,
            memory_bytes: Some(24 << 30),
            driver_version: Some("24.1.rc2".into()),
            vnpu_templates: VnpuTemplate::for_chip_type(ChipType::Ascend310P).collect(),
        };
        (chip, Health::Healthy)
    }

    #[test]
    fn many_chips_split_into_slices_of_one_pool_within_the_limits() {
        let chips: Vec<(NpuChip, Health)> = (0..200).map(chip).collect();
        let groups = chip_groups(&chips, Path::new("/nonexistent"), false);
        let slices = pack(&groups);
        assert_eq!(slices.len(), 2);
        assert_eq!(slices[0].devices.len(), MAX_DEVICES);
        assert_eq!(slices[1].devices[0].name, "npu-128");
    }

    #[test]
    fn partitions_consume_their_chips_counters_in_the_same_slice() {
        let chips: Vec<(NpuChip, Health)> = (0..20).map(chip).collect();
        let groups = chip_groups(&chips, Path::new("/nonexistent"), true);
        let slices = pack(&groups);
        assert!(slices.len() > 1, "20 chips' counters do not fit one slice");
        for slice in &slices {
            let counters = &slice.shared_counters;
            let sets: Vec<&str> = counters.iter().map(|set| set.name.as_str()).collect();
            assert!(counters.iter().map(|set| set.counters.len()).sum::<usize>() <= MAX_COUNTERS);
            for device in &slice.devices {
                let consumed = &device.consumes_counters.as_ref().unwrap()[0];
                assert!(
                    sets.contains(&consumed.counter_set.as_str()),
                    "{} consumes a set of another slice",
                    device.name
                );
            }
        }
        let first = &slices[0].devices;
        let vir02 = first.iter().find(|d| d.name == "npu-0-vir02").expect("a vir02 partition");
        assert_eq!(vir02.capacity.as_ref().unwrap()[AI_CORES].value.0, "2");
        assert_eq!(vir02.attributes.as_ref().unwrap()["vnpu"].bool, Some(true));
        let whole = &first[0];
        assert_eq!(whole.consumes_counters.as_ref().unwrap()[0].counters[AI_CORES_COUNTER].value.0, "8");
    }

    #[test]
    fn every_name_the_api_server_checks_is_a_dns_label() {
        // Every 310P template, `vir04_3c_ndvpp` included, in partitionable mode, held against the API server's
        // rules for names as the fake API server applies them (device, counter-set and counter names are DNS labels).
        let groups = chip_groups(&[chip(0)], Path::new("/nonexistent"), true);
        let slices = pack(&groups);
        assert!(slices.iter().flat_map(|slice| &slice.devices).any(|device| device.name == "npu-0-vir04-3c-ndvpp"));
        let kind = fake_apiserver::Kind::cluster("resource.k8s.io", "v1", "resourceslices", "ResourceSlice");
        for slice in &slices {
            let object = serde_json::json!({
                "metadata": {"name": "node-npu-huawei-com-0"},
                "spec": {"devices": slice.devices, "sharedCounters": slice.shared_counters},
            });
            if let Err(refused) = fake_apiserver::validation::check(&kind, &object) {
                panic!("the API server refuses these names: {}", refused.message);
            }
        }
    }

    #[test]
    fn a_faulty_chip_and_its_partitions_are_tainted() {
        let faulty = Health::Unhealthy(UnhealthyCause::Faulty {
            level: FaultLevel::SeparateNpu,
            faults: Vec::new(),
            card_dropped: false,
        });
        let chips = [chip(0), (chip(1).0, faulty)];
        let groups = chip_groups(&chips, Path::new("/nonexistent"), true);
        assert!(groups[0].devices.iter().all(|d| d.taints.is_none()));
        assert!(groups[1].devices.iter().all(|d| d.taints.as_ref().unwrap()[0].effect == "NoExecute"));
    }
}
