//! Chips that running pods hold under ids the kubelet does not count against this plugin's devices: what the plugin
//! learns from the kubelet's PodResources API when it takes over a node from another device plugin (Huawei's), and
//! keeps out of ListAndWatch, the preferred allocation and Allocate until the holding pod ends.
//!
//! Where the other plugin named its devices as this one does, under the same resource, nothing is needed: the
//! kubelet keeps which pod has which device id in its checkpoint and never passes an allocated id to
//! GetPreferredAllocation or Allocate, whichever plugin serves the resource now. Huawei's plugin names a chip
//! `<resource base>-<physical id>` (`Ascend910-3`, `npu-4`; mind-cluster
//! `component/ascend-device-plugin/pkg/device/ascendcommon.go`, `assemblePhyDevices`), as this plugin does with its
//! defaults, so a takeover with the same resource names is protected by the kubelet alone. The ids differ, and the
//! kubelet's bookkeeping protects nothing, when either side shares chips (Huawei's `-shareDevCount` ids
//! `<chip>-<n>`, `plugin.go`; ours `--replicas`) or renames a resource (Huawei's custom names; ours `--rename`),
//! and in Volcano mode, where Huawei's plugin lists chips to the kubelet under other chips' names (`plugin.go`,
//! `responseToKubelet`) and the pod's `huawei.com/AscendReal` annotation says which chips it really has.
//!
//! [`Holdings`] is what PodResources says, per pod. [`Holdings::held_back`] are the devices of a resource that a
//! pod holds under an id of another resource or an id this plugin does not advertise (outside Volcano mode);
//! [`Holdings::held_chips`] are the chips pods hold as the kubelet counts them, for Volcano mode, whose assigner adds
//! the pods' `huawei.com/AscendReal` annotations. [`HoldingsTracker`] reads PodResources before every registration
//! with the kubelet and then on a timer.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_node::pod_resources::api::ListPodResourcesResponse;
use ascend_node::pod_resources::PodResourcesClient;
use ascend_node::Resource;
use tokio::sync::{watch, Mutex};

use crate::error::{grpc_error, Result};

/// What the kubelet's PodResources API says each pod's containers were given: per pod (`namespace/name`), the
/// `(resource, device id)` pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Holdings {
    pods: BTreeMap<String, BTreeSet<(String, String)>>,
}

impl Holdings {
    /// The holdings of a PodResources `List` answer (pods without devices are left out).
    pub fn from_pod_resources(response: &ListPodResourcesResponse) -> Self {
        let mut holdings = Holdings::default();
        for pod in &response.pod_resources {
            let key = format!("{}/{}", pod.namespace, pod.name);
            for devices in pod.containers.iter().flat_map(|container| container.devices.iter()) {
                holdings.add(&key, &devices.resource_name, devices.device_ids.iter().map(String::as_str));
            }
        }
        holdings
    }

    /// Records that pod `pod` (`namespace/name`) holds `ids` of `resource`.
    pub fn add<'a>(&mut self, pod: &str, resource: &str, ids: impl IntoIterator<Item = &'a str>) {
        let held = self.pods.entry(pod.to_owned()).or_default();
        held.extend(ids.into_iter().map(|id| (resource.to_owned(), id.to_owned())));
        if held.is_empty() {
            self.pods.remove(pod);
        }
    }

    /// Whether no pod holds a device.
    pub fn is_empty(&self) -> bool {
        self.pods.is_empty()
    }

    /// The devices of `resource` to hold back outside Volcano mode, each with the pod (`namespace/name`) holding its
    /// chip: the devices of every chip a pod holds under an id the kubelet does not count as one of `resource`'s
    /// (another resource's, or an id `resource` does not advertise), except the ids the kubelet itself has given a
    /// pod (it never offers those again, and a pod's init-container devices go back to the same pod).
    pub fn held_back(&self, resource: &Resource) -> BTreeMap<String, String> {
        let chips = ChipNames::of(resource);
        let kubelet_counts = |name: &str, id: &str| name == resource.name && resource.devices.contains_key(id);
        let mut held: BTreeMap<&str, &str> = BTreeMap::new();
        for (pod, ids) in &self.pods {
            for (_, id) in ids.iter().filter(|(name, id)| !kubelet_counts(name, id)) {
                if let Some(chip) = chips.chip_of(id) {
                    held.entry(chip).or_insert(pod);
                }
            }
        }
        let protected: BTreeSet<&str> = self
            .pods
            .values()
            .flatten()
            .filter(|(name, _)| *name == resource.name)
            .map(|(_, id)| id.as_str())
            .collect();
        resource
            .devices
            .values()
            .filter(|device| !protected.contains(device.id.as_str()))
            .filter_map(|device| held.get(device.chip_name.as_str()).map(|pod| (device.id.clone(), (*pod).to_owned())))
            .collect()
    }

    /// The chips of `resource` (by chip name) pods hold as the kubelet counts them, each with its pod, leaving out the
    /// pods `skip` names (Volcano mode: pods whose `huawei.com/AscendReal` annotation says which chips they really
    /// have, since their kubelet ids are not their chips, and the pod being served).
    pub fn held_chips(&self, resource: &Resource, skip: impl Fn(&str) -> bool) -> BTreeMap<String, String> {
        let chips = ChipNames::of(resource);
        let mut held = BTreeMap::new();
        for (pod, ids) in self.pods.iter().filter(|(pod, _)| !skip(pod)) {
            for (_, id) in ids {
                if let Some(chip) = chips.chip_of(id) {
                    held.entry(chip.to_owned()).or_insert_with(|| pod.clone());
                }
            }
        }
        held
    }
}

/// The chip behind a device id, whoever named it: one of the resource's ids, a chip name (`Ascend910-3`), or a
/// chip name with a share number (`Ascend910-3-1`). A chip's name is this plugin's (`npu-train-3` under a rename)
/// and Huawei's, the base name and the physical id (`Ascend910-3`; mind-cluster
/// `component/ascend-device-plugin/pkg/device/ascendcommon.go`, `assemblePhyDevices`): a pod Huawei's plugin served
/// holds its chips under that name, whatever this plugin calls them now.
struct ChipNames<'a> {
    by_id: BTreeMap<&'a str, &'a str>,
    by_chip_name: BTreeMap<String, &'a str>,
}

impl<'a> ChipNames<'a> {
    fn of(resource: &'a Resource) -> Self {
        let mut by_id = BTreeMap::new();
        let mut by_chip_name = BTreeMap::new();
        for device in resource.devices.values() {
            let chip = device.chip_name.as_str();
            by_id.insert(device.id.as_str(), chip);
            by_chip_name.insert(chip.to_owned(), chip);
            let huawei = format!("{}-{}", ascend_node::naming::base_name(device.chip_type), device.chip.phy);
            by_chip_name.insert(huawei, chip);
        }
        ChipNames { by_id, by_chip_name }
    }

    fn chip_of(&self, id: &str) -> Option<&'a str> {
        if let Some(chip) = self.by_id.get(id).or_else(|| self.by_chip_name.get(id)) {
            return Some(chip);
        }
        let (chip, share) = id.rsplit_once('-')?;
        let chip = self.by_chip_name.get(chip)?;
        share.parse::<u32>().ok().map(|_| *chip)
    }
}

/// Reads the kubelet's PodResources and publishes what it says as [`Holdings`].
///
/// A failed read keeps the last holdings (a chip stays held back until the kubelet says its pod has ended) and is
/// logged once until a read succeeds again.
#[derive(Debug)]
pub struct HoldingsTracker {
    socket: Option<PathBuf>,
    timeout: Duration,
    client: Mutex<Option<PodResourcesClient>>,
    published: watch::Sender<Arc<Holdings>>,
    failing: std::sync::atomic::AtomicBool,
}

impl HoldingsTracker {
    /// A tracker of the PodResources socket `socket` (`None`: no holdings, ever), each call bounded by `timeout`.
    pub fn new(socket: Option<PathBuf>, timeout: Duration) -> Self {
        let (published, _) = watch::channel(Arc::new(Holdings::default()));
        HoldingsTracker { socket, timeout, client: Mutex::new(None), published, failing: Default::default() }
    }

    /// The holdings as last read, and every change.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Holdings>> {
        self.published.subscribe()
    }

    /// Reads PodResources once (connecting again after a failure, as the kubelet recreates its socket when it
    /// restarts) and publishes the holdings when they changed.
    ///
    /// # Errors
    /// [`crate::Error::Grpc`] naming the socket when the kubelet cannot be reached or does not answer.
    pub async fn refresh(&self) -> Result<()> {
        let Some(socket) = &self.socket else { return Ok(()) };
        let mut client = self.client.lock().await;
        let result = async {
            if client.is_none() {
                *client = Some(PodResourcesClient::connect(socket, self.timeout).await?);
            }
            match client.as_mut() {
                Some(connected) => connected.list().await,
                None => unreachable_client(socket),
            }
        }
        .await;
        let listed = match result {
            Ok(listed) => listed,
            Err(error) => {
                *client = None;
                if !self.failing.swap(true, std::sync::atomic::Ordering::Relaxed) {
                    tracing::warn!(%error, "cannot read the kubelet's PodResources; chips held under other ids are \
                        held back as last read");
                }
                return Err(grpc_error("PodResources List", socket, error.to_string()));
            }
        };
        if self.failing.swap(false, std::sync::atomic::Ordering::Relaxed) {
            tracing::info!(socket = %socket.display(), "reading the kubelet's PodResources again");
        }
        let holdings = Holdings::from_pod_resources(&listed);
        self.published.send_if_modified(|current| {
            let changed = **current != holdings;
            if changed {
                *current = Arc::new(holdings);
            }
            changed
        });
        Ok(())
    }

    /// Reads PodResources every `interval` until `shutdown` completes (nothing when there is no socket).
    pub async fn run(self: Arc<Self>, interval: Duration, shutdown: impl std::future::Future<Output = ()>) {
        if self.socket.is_none() {
            return;
        }
        tokio::pin!(shutdown);
        let mut tick = tokio::time::interval(interval);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = &mut shutdown => return,
                _ = tick.tick() => {}
            }
            // A failure is logged by `refresh` and retried on the next tick.
            let _ = self.refresh().await;
        }
    }
}

fn unreachable_client(socket: &std::path::Path) -> ascend_node::Result<ListPodResourcesResponse> {
    Err(ascend_node::Error::PodResources {
        operation: "List",
        socket: socket.to_path_buf(),
        detail: "no connection".to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use ascend_dcmi::{ChipIds, ChipType, LogicId, PhyId};
    use ascend_node::{ChipRecord, Health, InventoryOptions, Snapshot};

    use super::*;

    const R: &str = "huawei.com/Ascend910";

    fn resource(options: &InventoryOptions) -> Resource {
        let chips: Vec<ChipRecord> = (0..8)
            .map(|phy| ChipRecord {
                ids: ChipIds { logic: LogicId(phy), phy: PhyId(phy), locator: None },
                chip_type: ChipType::Ascend910B,
                numa_node: None,
                vnpus: Vec::new(),
            })
            .collect();
        let health: BTreeMap<PhyId, Health> = chips.iter().map(|chip| (chip.ids.phy, Health::Healthy)).collect();
        let snapshot = Snapshot::build(&chips, &health, options);
        let resource = snapshot.resources().next().cloned();
        resource.expect("one resource")
    }

    fn keys(map: &BTreeMap<String, String>) -> Vec<&str> {
        map.keys().map(String::as_str).collect()
    }

    #[test]
    fn the_same_ids_under_the_same_resource_are_left_to_the_kubelet() {
        let mut holdings = Holdings::default();
        holdings.add("jobs/train", R, ["Ascend910-3", "Ascend910-4"]);
        assert!(holdings.held_back(&resource(&InventoryOptions::default())).is_empty());
    }

    #[test]
    fn a_chip_held_under_another_resource_or_a_share_id_is_held_back() {
        let plain = resource(&InventoryOptions::default());
        let mut holdings = Holdings::default();
        // Huawei's plugin under a custom name, and with chip sharing (`Ascend910-5-1`).
        holdings.add("jobs/renamed", "huawei.com/npu-train", ["Ascend910-3"]);
        holdings.add("jobs/shared", R, ["Ascend910-5-1"]);
        // Not a chip of this node, and a CPU-like resource: ignored.
        holdings.add("jobs/other", "example.com/gpu", ["GPU-0", "Ascend910-9"]);
        let held = holdings.held_back(&plain);
        assert_eq!(keys(&held), ["Ascend910-3", "Ascend910-5"]);
        assert_eq!(held["Ascend910-3"], "jobs/renamed");
        assert_eq!(held["Ascend910-5"], "jobs/shared");
    }

    #[test]
    fn a_chip_huaweis_plugin_gave_is_held_back_from_a_renamed_resource() {
        let naming =
            ascend_node::naming::ResourceNaming::with_renames("huawei.com", ["Ascend910=npu-train"]).expect("rename");
        let renamed = resource(&InventoryOptions { naming, ..InventoryOptions::default() });
        let mut holdings = Holdings::default();
        // Pods of Huawei's plugin, under its resource and ids (one with a share id), before the rename.
        holdings.add("jobs/huawei", R, ["Ascend910-3", "Ascend910-4"]);
        holdings.add("jobs/shared", R, ["Ascend910-6-1"]);
        let held = holdings.held_back(&renamed);
        assert_eq!(keys(&held), ["npu-train-3", "npu-train-4", "npu-train-6"]);
        assert_eq!(held["npu-train-6"], "jobs/shared");
        let chips = holdings.held_chips(&renamed, |_| false);
        assert_eq!(keys(&chips), ["npu-train-3", "npu-train-4", "npu-train-6"]);
    }

    #[test]
    fn every_replica_of_a_chip_held_elsewhere_is_held_back_but_not_the_kubelets_own() {
        let shared = resource(&InventoryOptions { replicas: 2, ..InventoryOptions::default() });
        let ids: Vec<&str> = shared.devices.keys().map(String::as_str).take(2).collect();
        let mut holdings = Holdings::default();
        // Huawei's whole-chip id of chip 0; our own replica of chip 1 is the kubelet's to track.
        holdings.add("jobs/huawei", R, ["Ascend910-0"]);
        holdings.add(
            "jobs/ours",
            R,
            [shared.devices.values().find(|d| d.chip.phy == PhyId(1)).expect("chip 1").id.as_str()],
        );
        let held = holdings.held_back(&shared);
        assert_eq!(keys(&held), ids, "both replicas of chip 0, nothing of chip 1");
    }

    #[test]
    fn volcano_counts_every_pod_but_those_it_is_told_to_skip() {
        let plain = resource(&InventoryOptions::default());
        let mut holdings = Holdings::default();
        holdings.add("jobs/plain", R, ["Ascend910-1"]);
        holdings.add("jobs/annotated", R, ["Ascend910-2"]);
        let held = holdings.held_chips(&plain, |pod| pod == "jobs/annotated");
        assert_eq!(keys(&held), ["Ascend910-1"]);
    }

    #[test]
    fn a_pod_resources_answer_becomes_holdings_per_pod() {
        use ascend_node::pod_resources::api::{ContainerDevices, ContainerResources, PodResources};
        let devices = |resource: &str, ids: &[&str]| ContainerDevices {
            resource_name: resource.to_owned(),
            device_ids: ids.iter().map(|id| (*id).to_owned()).collect(),
            topology: None,
        };
        let response = ListPodResourcesResponse {
            pod_resources: vec![
                PodResources {
                    name: "train".into(),
                    namespace: "jobs".into(),
                    containers: vec![
                        ContainerResources {
                            name: "a".into(),
                            devices: vec![devices(R, &["Ascend910-0"])],
                            ..Default::default()
                        },
                        ContainerResources {
                            name: "b".into(),
                            devices: vec![devices(R, &["Ascend910-1"])],
                            ..Default::default()
                        },
                    ],
                    ..Default::default()
                },
                PodResources { name: "web".into(), namespace: "apps".into(), ..Default::default() },
            ],
        };
        let holdings = Holdings::from_pod_resources(&response);
        let mut expected = Holdings::default();
        expected.add("jobs/train", R, ["Ascend910-0", "Ascend910-1"]);
        assert_eq!(holdings, expected);
    }
}
