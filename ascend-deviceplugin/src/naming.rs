//! Resource names and device ids, as Huawei's plugin spells them (ascend-stack-facts §2.1), with a configurable
//! domain prefix and renaming.

use std::collections::BTreeMap;

use ascend_dcmi::{ChipType, PhyId, VnpuId};

use crate::error::{Error, Result};

/// The domain prefix of every resource unless configured otherwise.
pub const DEFAULT_PREFIX: &str = "huawei.com";

/// The longest device id the kubelet accepts (proto comment on `Device.ID`).
pub const MAX_DEVICE_ID_LEN: usize = 63;

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
            let known = ChipType::ALL.iter().any(|t| base_name(*t) == base);
            if !known {
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
