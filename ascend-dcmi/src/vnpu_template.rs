//! vNPU templates: the fixed ways a chip's AI cores and memory can be split, per chip generation, with the resource
//! names Huawei's device plugin advertises them under.

use std::fmt;

use crate::chip_type::ChipType;

/// A vNPU template the driver knows, with the resource-name suffix Huawei's device plugin advertises it under.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct VnpuTemplate {
    /// The driver's template name, for example `"vir02"`.
    pub name: &'static str,
    /// The Kubernetes resource suffix, for example `"2c"` in `huawei.com/Ascend310P-2c`.
    pub resource_suffix: &'static str,
    /// AI cores the template takes.
    pub aicore: u32,
    /// Chip types whose driver accepts it.
    pub chip_types: &'static [ChipType],
}

use ChipType::{Ascend310P as P310, Ascend910 as A910, Ascend910A3 as A3, Ascend910B as B910};

/// Every template Huawei's components accept (`templateNameLists` in `Ascend/mind-cluster`,
/// `component/ascend-common/devmanager/common/utils.go`).
pub const TEMPLATES: [VnpuTemplate; 18] = [
    VnpuTemplate { name: "vir01", resource_suffix: "1c", aicore: 1, chip_types: &[P310, A910] },
    VnpuTemplate { name: "vir02", resource_suffix: "2c", aicore: 2, chip_types: &[P310, A910] },
    VnpuTemplate { name: "vir02_1c", resource_suffix: "2c.1cpu", aicore: 2, chip_types: &[P310] },
    VnpuTemplate { name: "vir04", resource_suffix: "4c", aicore: 4, chip_types: &[P310, A910] },
    VnpuTemplate { name: "vir04_3c", resource_suffix: "4c.3cpu", aicore: 4, chip_types: &[P310] },
    VnpuTemplate { name: "vir04_3c_ndvpp", resource_suffix: "4c.3cpu.ndvpp", aicore: 4, chip_types: &[P310] },
    VnpuTemplate { name: "vir04_4c_dvpp", resource_suffix: "4c.4cpu.dvpp", aicore: 4, chip_types: &[P310] },
    VnpuTemplate { name: "vir08", resource_suffix: "8c", aicore: 8, chip_types: &[A910] },
    VnpuTemplate { name: "vir16", resource_suffix: "16c", aicore: 16, chip_types: &[A910] },
    VnpuTemplate { name: "vir03_1c_8g", resource_suffix: "3c.1cpu.8g", aicore: 3, chip_types: &[B910] },
    VnpuTemplate { name: "vir05_1c_8g", resource_suffix: "5c.1cpu.8g", aicore: 5, chip_types: &[B910] },
    VnpuTemplate { name: "vir05_1c_16g", resource_suffix: "5c.1cpu.16g", aicore: 5, chip_types: &[B910, A3] },
    VnpuTemplate { name: "vir06_1c_16g", resource_suffix: "6c.1cpu.16g", aicore: 6, chip_types: &[B910, A3] },
    VnpuTemplate { name: "vir10_3c_16g", resource_suffix: "10c.3cpu.16g", aicore: 10, chip_types: &[B910] },
    VnpuTemplate { name: "vir10_3c_16g_nm", resource_suffix: "10c.3cpu.16g.ndvpp", aicore: 10, chip_types: &[B910] },
    VnpuTemplate { name: "vir10_3c_32g", resource_suffix: "10c.3cpu.32g", aicore: 10, chip_types: &[B910, A3] },
    VnpuTemplate { name: "vir10_4c_16g_m", resource_suffix: "10c.4cpu.16g.dvpp", aicore: 10, chip_types: &[B910] },
    VnpuTemplate { name: "vir12_3c_32g", resource_suffix: "12c.3cpu.32g", aicore: 12, chip_types: &[B910, A3] },
];

impl VnpuTemplate {
    /// Looks a template up by its driver name.
    pub fn by_name(name: &str) -> Option<&'static VnpuTemplate> {
        TEMPLATES.iter().find(|t| t.name == name)
    }

    /// Looks a template up by its resource suffix (`"2c"`, `"10c.3cpu.32g"` ...).
    pub fn by_resource_suffix(suffix: &str) -> Option<&'static VnpuTemplate> {
        TEMPLATES.iter().find(|t| t.resource_suffix == suffix)
    }

    /// The templates a chip type allows (none for types without vNPU support).
    pub fn for_chip_type(chip_type: ChipType) -> impl Iterator<Item = &'static VnpuTemplate> {
        TEMPLATES.iter().filter(move |t| t.chip_types.contains(&chip_type))
    }

    /// Whether this chip type allows the template.
    pub fn allows(&self, chip_type: ChipType) -> bool {
        self.chip_types.contains(&chip_type)
    }
}

impl fmt::Display for VnpuTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_per_chip_type_match_the_vendor_lists() {
        let names = |chip_type| VnpuTemplate::for_chip_type(chip_type).map(|t| t.name).collect::<Vec<_>>();
        assert_eq!(
            names(ChipType::Ascend310P),
            ["vir01", "vir02", "vir02_1c", "vir04", "vir04_3c", "vir04_3c_ndvpp", "vir04_4c_dvpp"]
        );
        assert_eq!(names(ChipType::Ascend910), ["vir01", "vir02", "vir04", "vir08", "vir16"]);
        assert_eq!(names(ChipType::Ascend910A3), ["vir05_1c_16g", "vir06_1c_16g", "vir10_3c_32g", "vir12_3c_32g"]);
        assert_eq!(names(ChipType::Ascend910B).len(), 9);
        assert!(names(ChipType::Ascend310).is_empty());
    }

    #[test]
    fn lookups_by_name_and_suffix_agree() {
        for template in &TEMPLATES {
            assert_eq!(VnpuTemplate::by_name(template.name), Some(template));
            assert_eq!(VnpuTemplate::by_resource_suffix(template.resource_suffix), Some(template));
            let leading: u32 = template.name[3..5].parse().expect("two-digit core count");
            assert_eq!(leading, template.aicore, "{}", template.name);
        }
        assert!(VnpuTemplate::by_name("vir99").is_none());
    }
}
