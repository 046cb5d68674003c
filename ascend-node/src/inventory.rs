//! What the plugin advertises: resources, their devices, each device's chip, NUMA node and health.
//!
//! A [`Snapshot`] is a pure function of the known chips and their health; the health monitor rebuilds it on every
//! change and publishes it through a `watch` channel. It is the one source of a chip's state for every node daemon:
//! the device plugin's ListAndWatch, the node's Events and condition, and the DRA driver's devices and taints all read
//! it, and none of them asks the driver again. A chip's health is a structured verdict ([`Health`], with an
//! [`UnhealthyCause`]); the verdict of a health answer is computed in one place, [`Health::from_report`].

use std::collections::BTreeMap;
use std::fmt;
use std::time::Duration;

use ascend_dcmi::{ChipIds, ChipType, FaultCode, FaultLevel, HealthReport, PcieAddress, PhyId, VnpuId, VnpuTemplate};

use crate::naming::{socket_name, ResourceNaming};

/// A chip the monitor has identified.
#[derive(Debug, Clone, PartialEq)]
pub struct ChipRecord {
    /// Its ids.
    pub ids: ChipIds,
    /// Its generation.
    pub chip_type: ChipType,
    /// Its NUMA node, when the driver or sysfs knows it.
    pub numa_node: Option<u32>,
    /// Static vNPUs that exist on it, with their templates.
    pub vnpus: Vec<(VnpuId, &'static VnpuTemplate)>,
}

/// What the driver says about a chip beyond what the kubelet's resources need, read once when the monitor identifies
/// it, for daemons that publish chips with attributes (the DRA driver's ResourceSlices).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChipDetails {
    /// The chip name the driver reports, for example `910B3`.
    pub model: String,
    /// Its PCIe address.
    pub pcie_address: Option<PcieAddress>,
    /// Its AI cores.
    pub aicore: u32,
    /// Its HBM size, when it has HBM (DDR otherwise).
    pub memory_bytes: Option<u64>,
    /// The driver's version, as the driver reported it when the chip was identified.
    pub driver_version: Option<String>,
}

/// Kubelet-facing health of a chip: the monitor's verdict, with its cause when unhealthy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Health {
    /// Usable.
    Healthy,
    /// Not usable, and why.
    Unhealthy(UnhealthyCause),
}

/// Why a chip is not usable. Its `Display` is the reason people read (the kubelet's health stream, Events, the Node
/// condition); programs match on the variant.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UnhealthyCause {
    /// The monitor has not checked the chip yet.
    NotChecked,
    /// The driver reports faults that make the chip unusable: their level as the fault policy grades them, the active
    /// codes, and whether the card dropped off the bus.
    Faulty {
        /// The level the fault policy gave the chip.
        level: FaultLevel,
        /// The active fault codes, in the driver's order.
        faults: Vec<FaultCode>,
        /// The card dropped off the bus.
        card_dropped: bool,
    },
    /// The chip's health call failed, with the driver's error.
    HealthCallFailed(String),
    /// The chip's health call gave no answer within this deadline (a hung chip).
    Hung(Duration),
    /// The chip is no longer in the driver's chip list.
    Absent,
    /// Listing the chips failed, with the driver's error.
    ListingFailed(String),
    /// An operator took the chip out of service (`ManuallySeparateNPU`).
    Separated,
    /// Recovery withdrew the chip while it, or a chip of its reset group, is hot-reset ([`crate::recovery`]).
    Recovering,
}

impl UnhealthyCause {
    /// The fault level the cause stands for: the driver's for a fault, `ManuallySeparateNPU` for a chip an operator
    /// separated; `None` when the cause says nothing of the chip's faults (not checked, unreadable, hung, absent).
    pub fn level(&self) -> Option<FaultLevel> {
        match self {
            UnhealthyCause::Faulty { level, .. } => Some(*level),
            UnhealthyCause::Separated => Some(FaultLevel::ManuallySeparateNpu),
            _ => None,
        }
    }

    /// Whether the card dropped off the bus.
    pub fn card_dropped(&self) -> bool {
        matches!(self, UnhealthyCause::Faulty { card_dropped: true, .. })
    }

    /// Whether the chip must be isolated, what runs on it evicted: Huawei's `SeparateNPU` levels and a card gone from
    /// the bus. Lesser faults (restart levels, `PreSeparateNPU`: isolate once free) and causes of unknown gravity only
    /// stop new work.
    pub fn requires_isolation(&self) -> bool {
        self.card_dropped() || self.level().is_some_and(|level| level >= FaultLevel::SeparateNpu)
    }
}

impl fmt::Display for UnhealthyCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UnhealthyCause::NotChecked => f.write_str("not yet checked"),
            UnhealthyCause::Faulty { level, faults, card_dropped } => {
                write!(f, "fault level {level}")?;
                if !faults.is_empty() {
                    let codes: Vec<String> = faults.iter().map(ToString::to_string).collect();
                    write!(f, ", faults {}", codes.join(" "))?;
                }
                if *card_dropped {
                    f.write_str(", card dropped off the bus")?;
                }
                Ok(())
            }
            UnhealthyCause::HealthCallFailed(reason) => write!(f, "health call failed: {reason}"),
            UnhealthyCause::Hung(deadline) => write!(f, "the driver gave no health answer within {deadline:?}"),
            UnhealthyCause::Absent => f.write_str("absent from the driver's chip list"),
            UnhealthyCause::ListingFailed(reason) => write!(f, "listing the chips failed: {reason}"),
            UnhealthyCause::Separated => f.write_str("separated by an operator (ManuallySeparateNPU)"),
            UnhealthyCause::Recovering => {
                f.write_str("withdrawn while recovery resets it or a chip of its reset group")
            }
        }
    }
}

impl Health {
    /// The verdict of a driver's health answer, the one place it is decided: healthy when the chip may take new work
    /// ([`HealthReport::is_healthy`]: its card is on the bus and its faults grade to a schedulable level), otherwise
    /// [`UnhealthyCause::Faulty`] with the level, the codes and whether the card dropped.
    pub fn from_report(report: &HealthReport) -> Health {
        if report.is_healthy() {
            return Health::Healthy;
        }
        Health::Unhealthy(UnhealthyCause::Faulty {
            level: report.level,
            faults: report.faults.as_slice().to_vec(),
            card_dropped: report.card_dropped,
        })
    }

    /// Why the chip is unhealthy; `None` when healthy.
    pub fn cause(&self) -> Option<&UnhealthyCause> {
        match self {
            Health::Healthy => None,
            Health::Unhealthy(cause) => Some(cause),
        }
    }

    /// Whether the monitor has checked the chip at least once.
    pub fn is_checked(&self) -> bool {
        !matches!(self, Health::Unhealthy(UnhealthyCause::NotChecked))
    }

    /// The kubelet's spelling: `Healthy` or `Unhealthy`.
    pub fn as_kubelet_str(&self) -> &'static str {
        match self {
            Health::Healthy => "Healthy",
            Health::Unhealthy(_) => "Unhealthy",
        }
    }

    /// Whether the chip is usable.
    pub fn is_healthy(&self) -> bool {
        matches!(self, Health::Healthy)
    }
}

impl fmt::Display for Health {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Health::Healthy => f.write_str("healthy"),
            Health::Unhealthy(reason) => write!(f, "unhealthy ({reason})"),
        }
    }
}

/// What the driver last said about a chip beyond healthy or not: its active faults (each with the time it was
/// first seen, Unix milliseconds), the level they grade to, and whether an operator separated it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ChipCondition {
    /// Active fault codes with their first-seen times, in the driver's order.
    pub faults: Vec<(FaultCode, i64)>,
    /// The level the fault policy gave the chip.
    pub level: FaultLevel,
    /// The card dropped off the bus.
    pub card_dropped: bool,
    /// An operator took the chip out of service (`ManuallySeparateNPU`).
    pub separated: bool,
}

impl ChipCondition {
    /// The condition a health report describes; codes already active in `previous` keep their first-seen time.
    pub fn from_report(report: &HealthReport, previous: Option<&ChipCondition>, now_millis: i64) -> ChipCondition {
        let first_seen = |code: FaultCode| {
            previous
                .and_then(|previous| previous.faults.iter().find(|(known, _)| *known == code))
                .map_or(now_millis, |(_, since)| *since)
        };
        ChipCondition {
            faults: report.faults.as_slice().iter().map(|code| (*code, first_seen(*code))).collect(),
            level: report.level,
            card_dropped: report.card_dropped,
            separated: false,
        }
    }
}

/// What one advertised device stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceKind {
    /// A whole chip; `replica` is set when the chip is time-shared as several devices.
    Chip {
        /// The replica index, `0..replicas`.
        replica: Option<u32>,
    },
    /// A static vNPU on the chip.
    Vnpu {
        /// The vNPU id (`/dev/vdavinci<id>` on the host).
        id: VnpuId,
        /// Its template.
        template: &'static VnpuTemplate,
    },
}

/// One advertised device.
#[derive(Debug, Clone, PartialEq)]
pub struct Device {
    /// The id the kubelet sees, for example `Ascend910-3`.
    pub id: String,
    /// The name of the physical chip behind it, for example `Ascend910-3` (no replica or vNPU part).
    pub chip_name: String,
    /// The chip it lives on.
    pub chip: ChipIds,
    /// The chip's generation.
    pub chip_type: ChipType,
    /// The chip's NUMA node.
    pub numa_node: Option<u32>,
    /// Whole chip, replica or vNPU.
    pub kind: DeviceKind,
    /// The chip's health.
    pub health: Health,
}

/// One extended resource and its devices, keyed by device id.
#[derive(Debug, Clone, PartialEq)]
pub struct Resource {
    /// The resource name, for example `huawei.com/Ascend910`.
    pub name: String,
    /// The socket file name in the plugin directory.
    pub socket: String,
    /// The devices by id.
    pub devices: BTreeMap<String, Device>,
}

impl Resource {
    /// A device by id.
    pub fn device(&self, id: &str) -> Option<&Device> {
        self.devices.get(id)
    }
}

/// How chips become resources.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InventoryOptions {
    /// Resource and id naming.
    pub naming: ResourceNaming,
    /// Time-sharing: advertise each whole chip this many times (1 = no sharing).
    pub replicas: u32,
    /// Advertise chips that have static vNPUs as their vNPUs (Huawei's default) instead of as whole chips.
    pub advertise_vnpus: bool,
}

impl Default for InventoryOptions {
    fn default() -> Self {
        Self { naming: ResourceNaming::default(), replicas: 1, advertise_vnpus: true }
    }
}

/// Every advertised resource with its devices' health, at one moment.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    resources: BTreeMap<String, Resource>,
    conditions: BTreeMap<PhyId, ChipCondition>,
    chips: Vec<(ChipRecord, Health)>,
    details: BTreeMap<PhyId, ChipDetails>,
    settled: bool,
}

impl Snapshot {
    /// Builds the resources from the known chips and their health; a chip without a health entry is unhealthy
    /// ([`UnhealthyCause::NotChecked`]).
    pub fn build(chips: &[ChipRecord], health: &BTreeMap<PhyId, Health>, options: &InventoryOptions) -> Self {
        let mut resources: BTreeMap<String, Resource> = BTreeMap::new();
        let mut verdicts = Vec::with_capacity(chips.len());
        for chip in chips {
            let chip_health =
                health.get(&chip.ids.phy).cloned().unwrap_or(Health::Unhealthy(UnhealthyCause::NotChecked));
            verdicts.push((chip.clone(), chip_health.clone()));
            for (resource, id, kind) in advertised_devices(chip, options) {
                let entry = resources.entry(resource.clone()).or_insert_with(|| Resource {
                    socket: socket_name(&resource),
                    name: resource,
                    devices: BTreeMap::new(),
                });
                let device = Device {
                    id: id.clone(),
                    chip_name: options.naming.chip_device_id(chip.chip_type, chip.ids.phy, None),
                    chip: chip.ids,
                    chip_type: chip.chip_type,
                    numa_node: chip.numa_node,
                    kind,
                    health: chip_health.clone(),
                };
                entry.devices.insert(id, device);
            }
        }
        verdicts.sort_by_key(|(chip, _)| chip.ids.phy);
        Self { resources, conditions: BTreeMap::new(), chips: verdicts, details: BTreeMap::new(), settled: false }
    }

    /// The same snapshot with the chips' conditions.
    pub fn with_conditions(self, conditions: BTreeMap<PhyId, ChipCondition>) -> Self {
        Self { conditions, ..self }
    }

    /// The same snapshot with the chips' details.
    pub fn with_details(self, details: BTreeMap<PhyId, ChipDetails>) -> Self {
        Self { details, ..self }
    }

    /// A chip's details, when the monitor has identified it.
    pub fn details(&self, phy: PhyId) -> Option<&ChipDetails> {
        self.details.get(&phy)
    }

    /// The same snapshot, saying whether it is settled ([`Snapshot::is_settled`]).
    pub fn with_settled(self, settled: bool) -> Self {
        Self { settled, ..self }
    }

    /// Whether the monitor has a complete first view: the driver's chip list answered, and every chip in it has been
    /// identified (or found unsupported, or given up on after the deadline) and checked once. A daemon that publishes
    /// the node's chips as a whole (the DRA driver) waits for it, so that it does not publish half a node at start.
    pub fn is_settled(&self) -> bool {
        self.settled
    }

    /// Every chip the monitor knows, with its health, in physical-id order: whole chips, whatever the resources
    /// make of them (vNPUs, replicas). A chip gone from the driver's list stays, [`UnhealthyCause::Absent`].
    pub fn chips(&self) -> impl Iterator<Item = (&ChipRecord, &Health)> {
        self.chips.iter().map(|(chip, health)| (chip, health))
    }

    /// A chip's condition, when the driver answered its last health call.
    pub fn condition(&self, phy: PhyId) -> Option<&ChipCondition> {
        self.conditions.get(&phy)
    }

    /// A resource by name.
    pub fn resource(&self, name: &str) -> Option<&Resource> {
        self.resources.get(name)
    }

    /// Every resource, by name.
    pub fn resources(&self) -> impl Iterator<Item = &Resource> {
        self.resources.values()
    }
}

fn advertised_devices(chip: &ChipRecord, options: &InventoryOptions) -> Vec<(String, String, DeviceKind)> {
    let naming = &options.naming;
    if options.advertise_vnpus && !chip.vnpus.is_empty() {
        return chip
            .vnpus
            .iter()
            .map(|(vnpu, template)| {
                let resource = naming.vnpu_resource(chip.chip_type, template.resource_suffix);
                let id = naming.vnpu_device_id(chip.chip_type, template.resource_suffix, *vnpu, chip.ids.phy);
                (resource, id, DeviceKind::Vnpu { id: *vnpu, template })
            })
            .collect();
    }
    let resource = naming.chip_resource(chip.chip_type);
    if options.replicas <= 1 {
        let id = naming.chip_device_id(chip.chip_type, chip.ids.phy, None);
        return vec![(resource, id, DeviceKind::Chip { replica: None })];
    }
    (0..options.replicas)
        .map(|replica| {
            let id = naming.chip_device_id(chip.chip_type, chip.ids.phy, Some(replica));
            (resource.clone(), id, DeviceKind::Chip { replica: Some(replica) })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{CardId, ChipLocator, DeviceId, LogicId};

    use super::*;

    fn chip(phy: u32, chip_type: ChipType) -> ChipRecord {
        ChipRecord {
            ids: ChipIds {
                logic: LogicId(phy),
                phy: PhyId(phy),
                locator: Some(ChipLocator { card: CardId(phy as i32), device: DeviceId(0) }),
            },
            chip_type,
            numa_node: Some(phy / 4),
            vnpus: Vec::new(),
        }
    }

    #[test]
    fn whole_chips_vnpus_and_replicas() {
        let mut with_vnpus = chip(1, ChipType::Ascend310P);
        let template = VnpuTemplate::by_name("vir02").expect("known template");
        with_vnpus.vnpus = vec![(VnpuId(100), template), (VnpuId(101), template)];
        let chips = [chip(0, ChipType::Ascend310P), with_vnpus];
        let health =
            BTreeMap::from([(PhyId(0), Health::Healthy), (PhyId(1), Health::Unhealthy(UnhealthyCause::Absent))]);

        let snapshot = Snapshot::build(&chips, &health, &InventoryOptions::default());
        let names: Vec<&str> = snapshot.resources().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["huawei.com/Ascend310P", "huawei.com/Ascend310P-2c"]);
        let vnpus = snapshot.resource("huawei.com/Ascend310P-2c").expect("vNPU resource");
        assert_eq!(vnpus.devices.keys().collect::<Vec<_>>(), ["Ascend310P-2c-100-1", "Ascend310P-2c-101-1"]);
        assert!(vnpus.devices.values().all(|d| !d.health.is_healthy()));
        assert_eq!(vnpus.socket, "ascend-Ascend310P-2c.sock");

        let shared = InventoryOptions { replicas: 2, advertise_vnpus: false, ..InventoryOptions::default() };
        let snapshot = Snapshot::build(&chips, &health, &shared);
        let ids: Vec<&String> = snapshot.resource("huawei.com/Ascend310P").expect("chips").devices.keys().collect();
        assert_eq!(ids, ["Ascend310P-0-0", "Ascend310P-0-1", "Ascend310P-1-0", "Ascend310P-1-1"]);
    }

    #[test]
    fn unchecked_chips_are_unhealthy() {
        let snapshot =
            Snapshot::build(&[chip(3, ChipType::Ascend910B)], &BTreeMap::new(), &InventoryOptions::default());
        let device = snapshot.resource("huawei.com/Ascend910").and_then(|r| r.device("Ascend910-3")).expect("device");
        assert_eq!(device.health.as_kubelet_str(), "Unhealthy");
        assert!(!device.health.is_checked());
        assert_eq!(device.numa_node, Some(0));
        let chips: Vec<(PhyId, &Health)> = snapshot.chips().map(|(chip, health)| (chip.ids.phy, health)).collect();
        assert_eq!(chips, [(PhyId(3), &Health::Unhealthy(UnhealthyCause::NotChecked))]);
    }

    #[test]
    fn the_verdict_of_a_health_answer_names_level_codes_and_drops() {
        use ascend_dcmi::{DcmiHealth, FaultCodes};
        assert_eq!(Health::from_report(&HealthReport::healthy()), Health::Healthy);
        let report = HealthReport {
            dcmi: None,
            faults: FaultCodes::from_codes([FaultCode(0x80E0_1801), FaultCode::CARD_DROP]),
            level: FaultLevel::SeparateNpu,
            card_dropped: true,
        };
        let verdict = Health::from_report(&report);
        let cause = verdict.cause().expect("unhealthy");
        assert_eq!(cause.to_string(), "fault level SeparateNPU, faults 80E01801 40F84E00, card dropped off the bus");
        assert_eq!(
            (cause.level(), cause.card_dropped(), cause.requires_isolation()),
            (Some(FaultLevel::SeparateNpu), true, true)
        );
        let restart = HealthReport { level: FaultLevel::RestartNpu, card_dropped: false, ..report };
        let cause = Health::from_report(&restart).cause().cloned().expect("unhealthy");
        assert_eq!(
            (cause.level(), cause.card_dropped(), cause.requires_isolation()),
            (Some(FaultLevel::RestartNpu), false, false)
        );
        let sub_health = HealthReport { level: FaultLevel::SubHealthFault, dcmi: Some(DcmiHealth::Minor), ..report };
        assert_eq!(Health::from_report(&HealthReport { card_dropped: false, ..sub_health }), Health::Healthy);
        assert!(UnhealthyCause::Separated.requires_isolation());
        assert!(!UnhealthyCause::Hung(Duration::from_secs(1)).requires_isolation());
    }
}
