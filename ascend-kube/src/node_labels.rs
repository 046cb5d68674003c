//! The node labels that describe an NPU node, computed from the driver, and the patch that brings a node's labels to
//! them.
//!
//! Operators keep 310P inference nodes and 910B training nodes in separate pools selected by label
//! (`ascend.huawei.com/chip-type=310P`); these labels make that selection follow the hardware instead of a manual
//! `kubectl label`. Besides our own keys, the labels Huawei's device plugin sets (`accelerator`,
//! `node.kubernetes.io/npu.chip.name`) are kept with Huawei's values, so that selectors written for Huawei's stack
//! keep working.
//!
//! | key | value | example |
//! |---|---|---|
//! | [`CHIP_TYPE_LABEL`] | chip generation without `Ascend` ([`chip_type_value`]); [`MIXED`] when the node has several, [`UNKNOWN`] for chips this stack does not support | `310P`, `910B`, `910A3` |
//! | [`CHIP_COUNT_LABEL`] | number of chips (dies) the driver enumerates | `8` |
//! | [`DRIVER_VERSION_LABEL`] | the DCMI version, as a label value ([`sanitize_label_value`]) | `24.1.rc2` |
//! | [`PRODUCT_LABEL`] | the card's product type, else its electronic label's product name; [`MIXED`] when cards differ; absent when no card reports one | `Atlas-300I-Duo` |
//! | [`ACCELERATOR_LABEL`] | Huawei's `huawei-<resource family>`; absent when chips of different families are mixed | `huawei-Ascend310P`, `huawei-Ascend910` |
//! | [`CHIP_NAME_LABEL`] | the chip name of `dcmi_get_device_chip_info`; absent when chips differ | `310P3`, `910B3` |
//! | [`HUAWEI_DRIVER_VERSION_LABEL`] | Huawei's copy of the driver version | `24.1.rc2` |
//! | [`SERVER_TYPE_LABEL`] | Huawei's server type: the chip type and the AI cores of the first chip's vNPU resources (`npu-<cores>` on Ascend950); absent when the chip has no vNPU resources (310), chips differ, or the count is outside 8..=36; an existing value is kept | `Ascend910B-20`, `Ascend310P-8`, `npu-32` |
//! | [`CHIP_MEMORY_LABEL`] | the first chip's HBM in GiB, on chips with HBM (910, 910B, 910A3, 950) | `64G` |
//! | [`INFER_CARD_LABEL`] | `card-300i-duo` when every card is an Atlas 300I Duo | `card-300i-duo` |
//! | [`TOPO_SUPER_POD_LABEL`], [`TOPO_SERVER_LABEL`], [`TOPO_RACK_LABEL`] | the super-pod placement ([`NodePlacement`]): super-pod id on Atlas A3 and Ascend950, server index and rack on Ascend950, when the driver gives them | `1` |
//!
//! The last seven are what Huawei's device plugin writes (mind-cluster `component/ascend-device-plugin/pkg/server/
//! manager.go`, `getNewNodeLabel`) and Volcano's Ascend plugin reads: `servertype` for vNPU scheduling (`component/
//! ascend-for-volcano/plugin/vnode.go`, `setNodeVNPUInfo`), `mind-cluster/npu-chip-memory` for soft sharing (`internal/
//! npu/policy/chip1softsharedev/node.go`). Only the keys of [`MANAGED_LABELS`] are ever set or removed; a
//! [`LabelPatch`] cannot name any other key.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use ascend_dcmi::{ChipIdentity, ChipType, DeviceManager};

use crate::device_info::NodePlacement;
use crate::error::{Error, Result};

/// The prefix of this stack's own node labels.
pub const LABEL_PREFIX: &str = "ascend.huawei.com/";
/// Chip generation of the node (`310P`, `910B`, ... or [`MIXED`]): what the node pools select on.
pub const CHIP_TYPE_LABEL: &str = "ascend.huawei.com/chip-type";
/// Number of chips on the node.
pub const CHIP_COUNT_LABEL: &str = "ascend.huawei.com/chip-count";
/// Driver (DCMI) version.
pub const DRIVER_VERSION_LABEL: &str = "ascend.huawei.com/driver-version";
/// Product of the NPU cards, for example `Atlas-300I-Duo`.
pub const PRODUCT_LABEL: &str = "ascend.huawei.com/product";
/// Huawei's accelerator label (`huawei-Ascend310P`, `huawei-Ascend910`, ...), kept for compatibility.
pub const ACCELERATOR_LABEL: &str = "accelerator";
/// Huawei's chip-name label (`310P3`, `910B3`, ...), kept for compatibility.
pub const CHIP_NAME_LABEL: &str = "node.kubernetes.io/npu.chip.name";

/// Huawei's driver-version label (the raw DCMI version, as Huawei's device plugin writes it), kept for compatibility.
pub const HUAWEI_DRIVER_VERSION_LABEL: &str = "huawei.com/driver.version";
/// Huawei's server-type label (`Ascend910B-20`, `Ascend310P-8`, `npu-32`): Volcano's vNPU scheduling reads it.
pub const SERVER_TYPE_LABEL: &str = "servertype";
/// Huawei's on-chip memory label (`64G`): Volcano's soft-sharing policy reads it.
pub const CHIP_MEMORY_LABEL: &str = "mind-cluster/npu-chip-memory";
/// Huawei's inference-card label, `card-300i-duo` on a node of Atlas 300I Duo cards.
pub const INFER_CARD_LABEL: &str = "infer-card-type";

/// Huawei's topology label of the super-pod id (Atlas A3 and Ascend950 in a super-pod).
pub const TOPO_SUPER_POD_LABEL: &str = "huawei.com/topotree.superpodid";
/// Huawei's topology label of the server's index in its super-pod (Ascend950).
pub const TOPO_SERVER_LABEL: &str = "huawei.com/topotree.serverid";
/// Huawei's topology label of the rack (Ascend950 in a 1D or 2D super-pod).
pub const TOPO_RACK_LABEL: &str = "huawei.com/topotree.rackid";

/// Every key the labeller owns. Keys outside this list are never changed or removed.
pub const MANAGED_LABELS: [&str; 13] = [
    CHIP_TYPE_LABEL,
    CHIP_COUNT_LABEL,
    DRIVER_VERSION_LABEL,
    PRODUCT_LABEL,
    ACCELERATOR_LABEL,
    CHIP_NAME_LABEL,
    HUAWEI_DRIVER_VERSION_LABEL,
    SERVER_TYPE_LABEL,
    CHIP_MEMORY_LABEL,
    INFER_CARD_LABEL,
    TOPO_SUPER_POD_LABEL,
    TOPO_SERVER_LABEL,
    TOPO_RACK_LABEL,
];

/// The fewest and most AI cores Huawei's plugin accepts for [`SERVER_TYPE_LABEL`] (mind-cluster
/// `component/ascend-device-plugin/pkg/device/ascendcommon.go`, `getAiCoreCount`).
const AI_CORES: std::ops::RangeInclusive<u32> = 8..=36;
/// The product type of an Atlas 300I Duo card, and Huawei's [`INFER_CARD_LABEL`] value for a node of them.
const ATLAS_300I_DUO: (&str, &str) = ("Atlas 300I Duo", "card-300i-duo");

/// What the first chip tells about the node beyond its identity: the inputs of Huawei's labels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ChipResources {
    /// AI cores of the chip's vNPU resources (`dcmi_get_device_info` main command 52; the chip information's count
    /// on the V2 API, where ascend-dcmi makes no vNPU query), `None` when unreadable.
    pub ai_cores: Option<u32>,
    /// HBM size in bytes, `None` on chips without HBM or when unreadable.
    pub hbm_bytes: Option<u64>,
}

impl ChipResources {
    /// Reads the AI cores and the HBM size of one chip. Neither is required: a chip that cannot say gets no label.
    pub fn read(manager: &dyn DeviceManager, chip: &ChipIdentity) -> Self {
        let has_hbm = matches!(
            chip.chip_type,
            Some(ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950)
        );
        ChipResources {
            ai_cores: match manager.vnpus(chip.ids.logic) {
                Ok(inventory) => Some(inventory.total_aicore as u32),
                // ascend-dcmi makes no vNPU query on the V2 API (Ascend950, which has no vNPUs); the chip information
                // gives the same chip's AI cores.
                Err(ascend_dcmi::Error::UnavailableOnApi { .. }) => Some(chip.info.aicore_count),
                Err(_) => None,
            },
            hbm_bytes: if has_hbm { manager.hbm_memory(chip.ids.logic).ok().map(|hbm| hbm.total_bytes) } else { None },
        }
    }
}

/// The value of [`CHIP_TYPE_LABEL`] and [`PRODUCT_LABEL`] on a node whose chips (or cards) are not all alike. Such a
/// node matches neither pool selector (`chip-type=310P`, `chip-type=910B`), deliberately: a pool's plugin flags and
/// upgrades are made for one chip generation.
pub const MIXED: &str = "mixed";

/// The per-chip value of [`CHIP_TYPE_LABEL`] for a chip this stack does not classify.
pub const UNKNOWN: &str = "unknown";

/// The longest label value Kubernetes accepts.
pub const MAX_LABEL_VALUE_LEN: usize = 63;

/// The labels a node should carry, keyed by label name. Every key is one of [`MANAGED_LABELS`] and every value is a
/// valid label value.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct NodeLabels(BTreeMap<String, String>);

impl NodeLabels {
    /// Reads the chips and the driver version and computes the labels. Blocks on the driver: call it from a thread.
    ///
    /// # Errors
    /// [`Error::NoChips`] when the driver enumerates none, [`Error::Dcmi`] when the chip list, a
    /// chip's identity or the driver version cannot be read (no partial label set: a chip missing from the count
    /// would relabel the node wrongly).
    pub fn read(manager: &dyn DeviceManager) -> Result<Self> {
        let chips = manager
            .chips()
            .map_err(|source| Error::Dcmi { what: "the chip list for the node labels".into(), source })?;
        if chips.is_empty() {
            return Err(Error::NoChips);
        }
        let identities = chips
            .iter()
            .map(|ids| {
                manager.identity(ids.logic).map_err(|source| Error::Dcmi {
                    what: format!("the identity of chip logic {} (phy {})", ids.logic, ids.phy),
                    source,
                })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let driver_version = manager
            .driver_version()
            .map_err(|source| Error::Dcmi { what: "the driver version for the node labels".into(), source })?;
        let resources = ChipResources::read(manager, &identities[0]);
        let listed: Vec<_> = identities.iter().map(|identity| identity.ids).collect();
        let placement = NodePlacement::of_chips(manager, &listed, identities[0].chip_type);
        Ok(Self::from_inventory(&driver_version, &identities)
            .with_huawei_labels(&driver_version, &identities, resources)
            .with_topology_labels(&placement))
    }

    /// Adds Huawei's super-pod topology labels, which Volcano's Ascend plugin reads to group super-pod nodes
    /// (mind-cluster `component/ascend-device-plugin/pkg/server/manager.go`, `addTopologyLabel`; `component/
    /// ascend-for-volcano/plugin/supernode.go`): the super-pod id on Atlas A3 and Ascend950, the server index and
    /// the rack on Ascend950, each only when the driver gave one (not negative).
    pub fn with_topology_labels(mut self, placement: &NodePlacement) -> Self {
        let known = |value: i32| (value >= 0).then(|| value.to_string());
        let read = placement.placement;
        let (super_pod, server, rack) = match placement.chip_type {
            Some(ChipType::Ascend910A3) => (known(read.super_pod_id), None, None),
            Some(ChipType::Ascend950) => {
                (known(read.super_pod_id), known(read.server_index), read.rack_id.and_then(known))
            }
            _ => (None, None, None),
        };
        for (key, value) in [(TOPO_SUPER_POD_LABEL, super_pod), (TOPO_SERVER_LABEL, server), (TOPO_RACK_LABEL, rack)] {
            if let Some(value) = value {
                self.0.insert(key.to_owned(), value);
            }
        }
        self
    }

    /// Adds the labels Huawei's device plugin writes (see the module docs) to these, for a node with these chips
    /// whose first chip has these `resources` (pure).
    pub fn with_huawei_labels(
        mut self,
        driver_version: &str,
        chips: &[ChipIdentity],
        resources: ChipResources,
    ) -> Self {
        let mut put = |key: &str, value: Option<String>| {
            if let Some(value) = value.as_deref().and_then(sanitize_label_value) {
                self.0.insert(key.to_owned(), value);
            }
        };
        put(HUAWEI_DRIVER_VERSION_LABEL, Some(driver_version.to_owned()));
        let chip_type = single(distinct(chips.iter().map(|chip| chip.chip_type))).flatten();
        let cores = resources.ai_cores.filter(|cores| AI_CORES.contains(cores));
        put(SERVER_TYPE_LABEL, chip_type.zip(cores).map(|(chip_type, cores)| server_type_value(chip_type, cores)));
        put(CHIP_MEMORY_LABEL, resources.hbm_bytes.map(|bytes| format!("{}G", bytes >> 30)));
        let all_duo = chips.iter().all(|chip| chip.product_type.as_deref().map(str::trim) == Some(ATLAS_300I_DUO.0));
        put(INFER_CARD_LABEL, (all_duo && !chips.is_empty()).then(|| ATLAS_300I_DUO.1.to_owned()));
        self
    }

    /// Computes the labels of a node with these chips and this driver version (pure; see the module docs for the
    /// values), without Huawei's labels of [`NodeLabels::with_huawei_labels`]. A label whose value sanitises to
    /// nothing is left out.
    pub fn from_inventory(driver_version: &str, chips: &[ChipIdentity]) -> Self {
        let mut labels = BTreeMap::new();
        let mut put = |key: &str, value: Option<String>| {
            if let Some(value) = value.as_deref().and_then(sanitize_label_value) {
                labels.insert(key.to_owned(), value);
            }
        };
        let types = distinct(chips.iter().map(|chip| chip.chip_type.map_or(UNKNOWN, chip_type_value).to_owned()));
        put(CHIP_TYPE_LABEL, common_or_mixed(types));
        put(CHIP_COUNT_LABEL, Some(chips.len().to_string()));
        put(DRIVER_VERSION_LABEL, Some(driver_version.to_owned()));
        put(PRODUCT_LABEL, common_or_mixed(distinct(chips.iter().filter_map(product_of))));
        let families = distinct(chips.iter().map(|chip| chip.chip_type.and_then(accelerator_value)));
        put(ACCELERATOR_LABEL, single(families).flatten().map(str::to_owned));
        put(CHIP_NAME_LABEL, single(distinct(chips.iter().map(|chip| chip.info.chip_name.trim().to_owned()))));
        NodeLabels(labels)
    }

    /// The value of one label, if the node should carry it.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.0.get(key).map(String::as_str)
    }

    /// Every label, in key order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value.as_str()))
    }

    /// The number of labels.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// What must change on a node whose labels are `current`: managed keys whose value differs are set, managed keys
    /// the node should not carry are removed, every other key of `current` is ignored.
    pub fn patch_against(&self, current: &BTreeMap<String, String>) -> LabelPatch {
        let mut changes = BTreeMap::new();
        for key in MANAGED_LABELS {
            // Huawei's plugin never replaces a server type the node has (an operator's `Ascend310P-10-dual`, say).
            if key == SERVER_TYPE_LABEL && current.contains_key(key) {
                continue;
            }
            let wanted = self.0.get(key);
            if current.get(key) != wanted {
                changes.insert(key.to_owned(), wanted.cloned());
            }
        }
        LabelPatch(changes)
    }
}

/// The label changes that bring a node to its [`NodeLabels`]: key to new value, `None` to remove the key. Only made
/// by [`NodeLabels::patch_against`], so it names managed keys only.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LabelPatch(BTreeMap<String, Option<String>>);

impl LabelPatch {
    /// Whether the node already carries the right labels.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Each change: key and new value (`None`: remove).
    pub fn changes(&self) -> impl Iterator<Item = (&str, Option<&str>)> {
        self.0.iter().map(|(key, value)| (key.as_str(), value.as_deref()))
    }

    /// The JSON merge patch (RFC 7386) of the node: `{"metadata":{"labels":{key: value or null}}}`.
    pub fn to_merge_patch(&self) -> serde_json::Value {
        let labels: serde_json::Map<String, serde_json::Value> = self
            .0
            .iter()
            .map(|(key, value)| (key.clone(), value.clone().map_or(serde_json::Value::Null, serde_json::Value::String)))
            .collect();
        serde_json::json!({ "metadata": { "labels": labels } })
    }
}

impl fmt::Display for LabelPatch {
    /// `key=value` for a set, `key-` for a removal (as `kubectl label` writes them), comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0.is_empty() {
            return f.write_str("no changes");
        }
        for (index, (key, value)) in self.0.iter().enumerate() {
            if index > 0 {
                f.write_str(", ")?;
            }
            match value {
                Some(value) => write!(f, "{key}={value}")?,
                None => write!(f, "{key}-")?,
            }
        }
        Ok(())
    }
}

/// The [`CHIP_TYPE_LABEL`] value of a chip type: Huawei's name without `Ascend` (`Ascend310P` → `310P`,
/// `Ascend910A3` → `910A3`), the spelling the node pools select on.
pub fn chip_type_value(chip_type: ChipType) -> &'static str {
    let name = chip_type.as_str();
    name.strip_prefix("Ascend").unwrap_or(name)
}

/// Huawei's [`SERVER_TYPE_LABEL`] value: `<chip type>-<AI cores>` (`Ascend910B-20`), `npu-<AI cores>` on Ascend950
/// (mind-cluster `component/ascend-device-plugin/pkg/server/manager.go`, `getNewNodeLabel`).
pub fn server_type_value(chip_type: ChipType, ai_cores: u32) -> String {
    match chip_type {
        ChipType::Ascend950 => format!("npu-{ai_cores}"),
        other => format!("{}-{ai_cores}", other.as_str()),
    }
}

/// Huawei's [`ACCELERATOR_LABEL`] value for a chip type: the resource family, as Huawei's device plugin sets it
/// (910, 910B and A3 are all `huawei-Ascend910`; 310 and 310B `huawei-Ascend310`; Ascend950 `huawei-npu`).
pub fn accelerator_value(chip_type: ChipType) -> Option<&'static str> {
    match chip_type {
        ChipType::Ascend310 | ChipType::Ascend310B => Some("huawei-Ascend310"),
        ChipType::Ascend310P => Some("huawei-Ascend310P"),
        ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3 => Some("huawei-Ascend910"),
        ChipType::Ascend950 => Some("huawei-npu"),
        // A generation added to ascend-dcmi later has no Huawei value we know of.
        _ => None,
    }
}

/// Makes a string a valid label value: at most 63 characters of `[A-Za-z0-9._-]`, starting and ending with a letter
/// or digit. Each run of other characters (spaces, `/`, non-ASCII ...) becomes one `-`; the ends are trimmed to
/// alphanumerics; a longer result is cut at 63 and trimmed again. `None` when nothing is left.
pub fn sanitize_label_value(raw: &str) -> Option<String> {
    let mut value = String::with_capacity(raw.len());
    let mut replacing = false;
    for character in raw.chars() {
        if character.is_ascii_alphanumeric() || matches!(character, '.' | '_' | '-') {
            value.push(character);
            replacing = false;
        } else if !replacing {
            value.push('-');
            replacing = true;
        }
    }
    let trimmed = trim_to_alphanumeric(&value);
    let cut = &trimmed[..trimmed.len().min(MAX_LABEL_VALUE_LEN)];
    let cut = trim_to_alphanumeric(cut);
    (!cut.is_empty()).then(|| cut.to_owned())
}

fn trim_to_alphanumeric(value: &str) -> &str {
    value.trim_matches(|character: char| !character.is_ascii_alphanumeric())
}

/// The product a chip's card reports: `dcmi_get_product_type` (310 family), else the electronic label's name.
fn product_of(chip: &ChipIdentity) -> Option<String> {
    let elabel_name = chip.elabel.as_ref().map(|label| label.product_name.as_str());
    [chip.product_type.as_deref(), elabel_name]
        .into_iter()
        .flatten()
        .map(str::trim)
        .find(|name| !name.is_empty())
        .map(str::to_owned)
}

fn distinct<T: Ord>(values: impl Iterator<Item = T>) -> BTreeSet<T> {
    values.collect()
}

/// The one value of the set; `None` when it is empty or has several.
fn single<T>(values: BTreeSet<T>) -> Option<T> {
    if values.len() == 1 {
        values.into_iter().next()
    } else {
        None
    }
}

/// The one value of the set, [`MIXED`] when it has several, `None` when it is empty.
fn common_or_mixed(values: BTreeSet<String>) -> Option<String> {
    if values.len() > 1 {
        Some(MIXED.to_owned())
    } else {
        values.into_iter().next()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sanitising_keeps_valid_values_and_repairs_others() {
        assert_eq!(sanitize_label_value("24.1.rc2").as_deref(), Some("24.1.rc2"));
        assert_eq!(sanitize_label_value("Atlas 300I Duo").as_deref(), Some("Atlas-300I-Duo"));
        assert_eq!(sanitize_label_value("  Atlas  800T / A2 \n").as_deref(), Some("Atlas-800T-A2"));
        assert_eq!(sanitize_label_value("-_24.1.RC2_-").as_deref(), Some("24.1.RC2"));
        assert_eq!(sanitize_label_value("Atlas 300I（Duo）").as_deref(), Some("Atlas-300I-Duo"));
        assert_eq!(sanitize_label_value(" -- "), None);
        assert_eq!(sanitize_label_value(""), None);
    }

    #[test]
    fn sanitising_cuts_at_63_and_ends_on_an_alphanumeric() {
        let long = format!("{}-{}", "a".repeat(62), "b".repeat(10));
        let value = sanitize_label_value(&long).expect("a value");
        assert_eq!(value, "a".repeat(62), "the cut lands after the dash, which is trimmed");
        let exact = "v".repeat(70);
        assert_eq!(sanitize_label_value(&exact).map(|v| v.len()), Some(MAX_LABEL_VALUE_LEN));
    }

    #[test]
    fn chip_type_values_drop_the_ascend_prefix() {
        let values: Vec<_> = ChipType::ALL.into_iter().map(chip_type_value).collect();
        assert_eq!(values, ["310", "310B", "310P", "910", "910B", "910A3", "950"]);
    }

    #[test]
    fn the_patch_display_reads_like_kubectl_label() {
        let mut current = BTreeMap::new();
        current.insert(CHIP_NAME_LABEL.to_owned(), "310P3".to_owned());
        let patch = NodeLabels::default().patch_against(&current);
        assert_eq!(patch.to_string(), format!("{CHIP_NAME_LABEL}-"));
        assert_eq!(LabelPatch::default().to_string(), "no changes");
    }
}
