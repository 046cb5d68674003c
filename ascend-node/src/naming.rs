//! Resource names and device ids, as Huawei's plugin spells them (`Ascend/mind-cluster`,
//! `component/ascend-device-plugin`), with a configurable
//! domain prefix and renaming: the one place that writes them ([`ResourceNaming::chip_device_id`],
//! [`ResourceNaming::vnpu_device_id`]) and reads them back ([`ResourceNaming::parse_device_id`]), so that every
//! consumer of the kubelet's PodResources answers (the exporter's pod attribution, the doctor) maps ids to chips
//! under the same `--resource-prefix` and `--rename` settings as the plugin that issued them.

use std::collections::BTreeMap;

use ascend_dcmi::{ChipType, PhyId, VnpuId};

use crate::error::{Error, Result};

/// The domain prefix of every resource unless configured otherwise.
pub const DEFAULT_PREFIX: &str = "huawei.com";

/// The longest device id the kubelet accepts (proto comment on `Device.ID`).
pub const MAX_DEVICE_ID_LEN: usize = 63;

/// Every resource base name [`base_name`] returns.
pub const BASE_NAMES: [&str; 4] = ["Ascend310", "Ascend310P", "Ascend910", "npu"];

/// Huawei's resource base name of a chip type: one resource per family, `npu` for the Ascend 950.
pub const fn base_name(chip_type: ChipType) -> &'static str {
    match chip_type {
        ChipType::Ascend310 | ChipType::Ascend310B => "Ascend310",
        ChipType::Ascend310P => "Ascend310P",
        ChipType::Ascend950 => "npu",
        // Ascend910, 910B, 910A3 and any later 910 variant share Huawei's `Ascend910` resource.
        _ => "Ascend910",
    }
}

/// How resources and device ids are named.
///
/// The default gives Huawei's names: `huawei.com/Ascend910` with ids `Ascend910-<phy>`. `renames` maps a base name
/// (`Ascend910`, `Ascend310P`, `Ascend310`, `npu`) to the public name used in both the resource and the ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceNaming {
    /// Domain of the resource names, without the slash.
    pub prefix: String,
    /// Base name → public name.
    pub renames: BTreeMap<String, String>,
}

impl Default for ResourceNaming {
    fn default() -> Self {
        Self { prefix: DEFAULT_PREFIX.to_owned(), renames: BTreeMap::new() }
    }
}

impl ResourceNaming {
    /// Parses renames written as `Base=Public` pairs, for example `Ascend910=npu-train`.
    ///
    /// # Errors
    /// [`Error::Config`] naming the entry that is not `Base=Public`, whose base is unknown, or whose public name is
    /// not a valid resource name part.
    pub fn with_renames<'a>(prefix: &str, pairs: impl IntoIterator<Item = &'a str>) -> Result<Self> {
        validate_name_part("resource prefix", prefix)?;
        let mut renames = BTreeMap::new();
        for pair in pairs {
            let (base, public) = pair
                .split_once('=')
                .ok_or_else(|| Error::Config(format!("rename {pair:?} is not of the form Base=Public")))?;
            let (base, public) = (base.trim(), public.trim());
            if !BASE_NAMES.contains(&base) {
                return Err(Error::Config(format!(
                    "rename {pair:?}: unknown base name {base:?}; expected Ascend310, Ascend310P, Ascend910 or npu"
                )));
            }
            validate_name_part("renamed resource", public)?;
            renames.insert(base.to_owned(), public.to_owned());
        }
        Ok(Self { prefix: prefix.to_owned(), renames })
    }

    /// The public name of a chip type: the base name or its rename.
    pub fn public_name(&self, chip_type: ChipType) -> &str {
        let base = base_name(chip_type);
        self.renames.get(base).map_or(base, String::as_str)
    }

    /// The resource of whole chips, for example `huawei.com/Ascend910`.
    pub fn chip_resource(&self, chip_type: ChipType) -> String {
        format!("{}/{}", self.prefix, self.public_name(chip_type))
    }

    /// The resource of one vNPU template, for example `huawei.com/Ascend310P-2c`.
    pub fn vnpu_resource(&self, chip_type: ChipType, resource_suffix: &str) -> String {
        format!("{}/{}-{}", self.prefix, self.public_name(chip_type), resource_suffix)
    }

    /// A whole chip's id, `Ascend910-3`; with time-sharing replicas, `Ascend910-3-<replica>`.
    pub fn chip_device_id(&self, chip_type: ChipType, phy: PhyId, replica: Option<u32>) -> String {
        match replica {
            Some(replica) => format!("{}-{phy}-{replica}", self.public_name(chip_type)),
            None => format!("{}-{phy}", self.public_name(chip_type)),
        }
    }

    /// A vNPU's id, `Ascend310P-2c-100-0` (template suffix, vNPU id, physical chip id).
    pub fn vnpu_device_id(&self, chip_type: ChipType, resource_suffix: &str, vnpu: VnpuId, phy: PhyId) -> String {
        format!("{}-{resource_suffix}-{vnpu}-{phy}", self.public_name(chip_type))
    }
}

impl ResourceNaming {
    /// Reads back a device id that this naming issued for `resource`: the inverse of [`Self::chip_device_id`] and
    /// [`Self::vnpu_device_id`].
    ///
    /// The resource name decides the form: a whole-chip resource (`<prefix>/<public>`) has ids `<public>-<phy>` or
    /// `<public>-<phy>-<replica>`; a vNPU resource (`<prefix>/<public>-<suffix>`) has ids
    /// `<public>-<suffix>-<vnpu>-<phy>`. Reading the form from the resource rather than guessing it from the id keeps
    /// renamed public names and template suffixes that contain `-` unambiguous.
    ///
    /// `None` for resources of another prefix or vendor, and for ids that are not of the resource's form.
    pub fn parse_device_id<'r>(&self, resource: &'r str, device_id: &str) -> Option<DeviceName<'r>> {
        let part = resource.strip_prefix(self.prefix.as_str())?.strip_prefix('/')?;
        let rest = device_id.strip_prefix(part)?.strip_prefix('-')?;
        let publics = || BASE_NAMES.iter().map(|base| self.renames.get(*base).map_or(*base, String::as_str));
        if publics().any(|public| public == part) {
            return match rest.split_once('-') {
                None => Some(DeviceName::Chip { phy: PhyId(decimal(rest)?), replica: None }),
                Some((phy, replica)) => {
                    Some(DeviceName::Chip { phy: PhyId(decimal(phy)?), replica: Some(decimal(replica)?) })
                }
            };
        }
        let resource_suffix = publics()
            .filter_map(|public| part.strip_prefix(public)?.strip_prefix('-'))
            .find(|suffix| !suffix.is_empty())?;
        let (vnpu, phy) = rest.split_once('-')?;
        Some(DeviceName::Vnpu { resource_suffix, vnpu: VnpuId(decimal(vnpu)?), phy: PhyId(decimal(phy)?) })
    }
}

/// A device id read back by [`ResourceNaming::parse_device_id`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DeviceName<'r> {
    /// A whole chip, possibly one of its time-sharing replicas.
    Chip {
        /// The physical chip.
        phy: PhyId,
        /// The replica index when the chip is advertised several times.
        replica: Option<u32>,
    },
    /// A static vNPU carved from a chip.
    Vnpu {
        /// The template suffix of its resource, for example `2c`.
        resource_suffix: &'r str,
        /// The vNPU's id.
        vnpu: VnpuId,
        /// The physical chip it lives on.
        phy: PhyId,
    },
}

impl DeviceName<'_> {
    /// The physical chip the device lives on.
    pub const fn phy(&self) -> PhyId {
        match *self {
            Self::Chip { phy, .. } | Self::Vnpu { phy, .. } => phy,
        }
    }
}

/// A non-empty run of ASCII digits (no sign, no spaces: ids are written by this module, never by people).
fn decimal(text: &str) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|byte| byte.is_ascii_digit()) {
        return None;
    }
    text.parse().ok()
}

/// The socket file name of a resource inside the plugin directory: `ascend-<name part>.sock`.
pub fn socket_name(resource: &str) -> String {
    let part = resource.rsplit('/').next().unwrap_or(resource);
    format!("ascend-{part}.sock")
}

fn validate_name_part(what: &str, value: &str) -> Result<()> {
    let valid = !value.is_empty()
        && value.len() <= MAX_DEVICE_ID_LEN
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_'))
        && value.starts_with(|c: char| c.is_ascii_alphanumeric());
    if valid {
        Ok(())
    } else {
        Err(Error::Config(format!(
            "{what} {value:?} must be 1 to {MAX_DEVICE_ID_LEN} letters, digits, '-', '.' or '_', starting with a \
             letter or digit"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_huaweis() {
        let naming = ResourceNaming::default();
        assert_eq!(naming.chip_resource(ChipType::Ascend910B), "huawei.com/Ascend910");
        assert_eq!(naming.chip_resource(ChipType::Ascend910A3), "huawei.com/Ascend910");
        assert_eq!(naming.chip_resource(ChipType::Ascend310B), "huawei.com/Ascend310");
        assert_eq!(naming.chip_resource(ChipType::Ascend310P), "huawei.com/Ascend310P");
        assert_eq!(naming.chip_resource(ChipType::Ascend950), "huawei.com/npu");
        assert_eq!(naming.chip_device_id(ChipType::Ascend950, PhyId(4), None), "npu-4");
        assert_eq!(naming.chip_device_id(ChipType::Ascend310P, PhyId(1), Some(2)), "Ascend310P-1-2");
        assert_eq!(naming.vnpu_resource(ChipType::Ascend310P, "2c"), "huawei.com/Ascend310P-2c");
        assert_eq!(naming.vnpu_device_id(ChipType::Ascend310P, "2c", VnpuId(100), PhyId(0)), "Ascend310P-2c-100-0");
        assert_eq!(socket_name("huawei.com/Ascend310P-2c"), "ascend-Ascend310P-2c.sock");
    }

    #[test]
    fn renames_apply_to_resources_and_ids() {
        let naming = ResourceNaming::with_renames("example.org", ["Ascend910 = train"]).expect("valid renames");
        assert_eq!(naming.chip_resource(ChipType::Ascend910B), "example.org/train");
        assert_eq!(naming.chip_device_id(ChipType::Ascend910B, PhyId(7), None), "train-7");
        assert_eq!(naming.chip_resource(ChipType::Ascend310P), "example.org/Ascend310P");
    }

    #[test]
    fn every_issued_id_reads_back_to_its_chip() {
        let namings = [
            ResourceNaming::default(),
            ResourceNaming::with_renames("example.org", ["Ascend910=npu-train", "Ascend310P=infer"]).expect("valid"),
        ];
        for naming in &namings {
            for chip_type in ChipType::ALL {
                let resource = naming.chip_resource(chip_type);
                for replica in [None, Some(0), Some(17)] {
                    let id = naming.chip_device_id(chip_type, PhyId(12), replica);
                    let parsed = naming.parse_device_id(&resource, &id);
                    assert_eq!(parsed, Some(DeviceName::Chip { phy: PhyId(12), replica }), "{resource} {id}");
                }
                for suffix in ["2c", "3c.1cpu.8g", "vir04-3c"] {
                    let resource = naming.vnpu_resource(chip_type, suffix);
                    let id = naming.vnpu_device_id(chip_type, suffix, VnpuId(131), PhyId(6));
                    let parsed = naming.parse_device_id(&resource, &id);
                    let expected = DeviceName::Vnpu { resource_suffix: suffix, vnpu: VnpuId(131), phy: PhyId(6) };
                    assert_eq!(parsed, Some(expected), "{resource} {id}");
                    assert_eq!(parsed.map(|name| name.phy()), Some(PhyId(6)));
                }
            }
        }
    }

    #[test]
    fn ids_of_other_resources_or_forms_read_back_to_nothing() {
        let renamed = ResourceNaming::with_renames("huawei.com", ["Ascend910=train"]).expect("valid");
        let cases = [
            ("nvidia.com/gpu", "GPU-1"),
            ("huawei.com/Ascend910", "Ascend910-3"), // renamed away: the plugin no longer issues this resource
            ("example.org/train", "train-3"),        // another prefix
            ("huawei.com/train", "train"),
            ("huawei.com/train", "train-"),
            ("huawei.com/train", "train-x"),
            ("huawei.com/train", "train-1-2-3"),
            ("huawei.com/train", "train--1"),
            ("huawei.com/train", "train-+1"),
            ("huawei.com/train", "Ascend910-3"),
            ("huawei.com/train-2c", "train-2c-1"),
            ("huawei.com/train-2c", "train-2c-a-1"),
            ("huawei.com/train-", "train--1-2"),
            ("huawei.com/npu", "npu-core-17"),
        ];
        for (resource, id) in cases {
            assert_eq!(renamed.parse_device_id(resource, id), None, "{resource} {id}");
        }
        assert_eq!(renamed.parse_device_id("huawei.com/train", "train-3").map(|name| name.phy()), Some(PhyId(3)));
        assert_eq!(renamed.parse_device_id("huawei.com/npu", "npu-4").map(|name| name.phy()), Some(PhyId(4)));
    }

    #[test]
    fn bad_renames_are_rejected_with_the_entry() {
        let missing = ResourceNaming::with_renames("huawei.com", ["Ascend910"]).expect_err("no '='");
        assert!(missing.to_string().contains("\"Ascend910\""), "{missing}");
        let unknown = ResourceNaming::with_renames("huawei.com", ["Ascend999=x"]).expect_err("unknown base");
        assert!(unknown.to_string().contains("Ascend999"), "{unknown}");
        let bad = ResourceNaming::with_renames("huawei.com", ["npu=a/b"]).expect_err("slash");
        assert!(bad.to_string().contains("a/b"), "{bad}");
        assert!(ResourceNaming::with_renames("bad prefix", []).is_err());
    }
}
