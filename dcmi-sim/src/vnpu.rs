//! vNPUs: templates allowed per chip family (`templateNameLists` in Huawei's `Ascend/mind-cluster`,
//! `component/ascend-common/devmanager/common/utils.go`) and resource accounting per chip.

use crate::chip_type::ChipType;
use crate::error::Error;

/// Lowest vNPU id.
pub const VDEV_ID_MIN: u32 = 100;
/// One past the highest vNPU id.
pub const VDEV_ID_END: u32 = 1124;
/// vNPUs one chip can be split into (`DCMI_SOC_SPLIT_MAX`).
pub const MAX_VNPUS_PER_CHIP: usize = 32;

/// A vNPU template, decoded from its name (`vir<cores>[_<cpus>c][_<mem>g][_suffix]`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VnpuTemplate {
    /// Template name, e.g. "vir10_3c_32g".
    pub name: &'static str,
    /// AI cores.
    pub aicore: u32,
    /// AI CPUs (0 when the name gives none).
    pub aicpu: u32,
    /// Memory in GB when the name gives it; otherwise memory is the AI-core share of the chip.
    pub memory_gb: Option<u32>,
}

const fn template(name: &'static str, aicore: u32, aicpu: u32, memory_gb: Option<u32>) -> VnpuTemplate {
    VnpuTemplate { name, aicore, aicpu, memory_gb }
}

const TEMPLATES_310P: &[VnpuTemplate] = &[
    template("vir01", 1, 0, None),
    template("vir02", 2, 0, None),
    template("vir02_1c", 2, 1, None),
    template("vir04", 4, 0, None),
    template("vir04_3c", 4, 3, None),
    template("vir04_3c_ndvpp", 4, 3, None),
    template("vir04_4c_dvpp", 4, 4, None),
];
const TEMPLATES_910: &[VnpuTemplate] = &[
    template("vir01", 1, 0, None),
    template("vir02", 2, 0, None),
    template("vir04", 4, 0, None),
    template("vir08", 8, 0, None),
    template("vir16", 16, 0, None),
];
const TEMPLATES_910B: &[VnpuTemplate] = &[
    template("vir03_1c_8g", 3, 1, Some(8)),
    template("vir05_1c_8g", 5, 1, Some(8)),
    template("vir05_1c_16g", 5, 1, Some(16)),
    template("vir06_1c_16g", 6, 1, Some(16)),
    template("vir10_3c_16g", 10, 3, Some(16)),
    template("vir10_3c_16g_nm", 10, 3, Some(16)),
    template("vir10_3c_32g", 10, 3, Some(32)),
    template("vir10_4c_16g_m", 10, 4, Some(16)),
    template("vir12_3c_32g", 12, 3, Some(32)),
];
const TEMPLATES_910A3: &[VnpuTemplate] = &[
    template("vir05_1c_16g", 5, 1, Some(16)),
    template("vir06_1c_16g", 6, 1, Some(16)),
    template("vir10_3c_32g", 10, 3, Some(32)),
    template("vir12_3c_32g", 12, 3, Some(32)),
];

/// Templates a chip family may create (empty: no vNPU support).
pub fn templates(chip_type: ChipType) -> &'static [VnpuTemplate] {
    match chip_type {
        ChipType::Ascend310P => TEMPLATES_310P,
        ChipType::Ascend910 => TEMPLATES_910,
        ChipType::Ascend910B => TEMPLATES_910B,
        ChipType::Ascend910A3 => TEMPLATES_910A3,
        // Ascend950 has no vNPU (DCMI V2 has no vNPU calls).
        ChipType::Ascend310 | ChipType::Ascend310B | ChipType::Ascend950 => &[],
    }
}

/// The allowed template called `name` for `chip_type`.
pub fn find_template(chip_type: ChipType, name: &str) -> Option<&'static VnpuTemplate> {
    templates(chip_type).iter().find(|template| template.name == name)
}

/// One existing vNPU.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Vnpu {
    /// vNPU id (100..1123).
    pub vdev_id: u32,
    /// Virtual function group.
    pub vfg_id: u32,
    /// Template it was made from.
    pub template: &'static VnpuTemplate,
    /// Memory it holds, MB.
    pub memory_mb: u64,
}

/// The vNPUs of one chip and what they use.
#[derive(Debug, Clone)]
pub struct VnpuPool {
    chip_type: ChipType,
    aicore_total: u32,
    memory_total_mb: u64,
    vnpus: Vec<Vnpu>,
}

impl VnpuPool {
    /// An empty pool for a chip with these resources (memory: HBM on the 910 family, DDR otherwise).
    pub fn new(chip_type: ChipType, aicore_total: u32, memory_total_mb: u64) -> VnpuPool {
        VnpuPool { chip_type, aicore_total, memory_total_mb, vnpus: Vec::new() }
    }

    /// Existing vNPUs in creation order.
    pub fn vnpus(&self) -> &[Vnpu] {
        &self.vnpus
    }

    /// The vNPU `vdev_id`.
    pub fn get(&self, vdev_id: u32) -> Option<&Vnpu> {
        self.vnpus.iter().find(|vnpu| vnpu.vdev_id == vdev_id)
    }

    /// Total AI cores and memory MB.
    pub fn totals(&self) -> (u32, u64) {
        (self.aicore_total, self.memory_total_mb)
    }

    /// AI cores and memory MB not held by a vNPU.
    pub fn free(&self) -> (u32, u64) {
        let cores: u32 = self.vnpus.iter().map(|vnpu| vnpu.template.aicore).sum();
        let memory: u64 = self.vnpus.iter().map(|vnpu| vnpu.memory_mb).sum();
        (self.aicore_total.saturating_sub(cores), self.memory_total_mb.saturating_sub(memory))
    }

    /// Memory a template takes on this chip, MB.
    pub fn memory_for(&self, template: &VnpuTemplate) -> u64 {
        match template.memory_gb {
            Some(gb) => u64::from(gb) * 1024,
            None => self.memory_total_mb * u64::from(template.aicore) / u64::from(self.aicore_total.max(1)),
        }
    }

    /// Creates a vNPU from `template_name`. `vdev_id`/`vfg_id` `None` = pick the lowest free one;
    /// `id_taken` says whether a vdev id is used anywhere on the host.
    ///
    /// # Errors
    /// [`Error`] when the family has no vNPUs, the template is not allowed, the id is bad or
    /// taken, or AI cores, memory or slots run out.
    pub fn create(
        &mut self,
        template_name: &str,
        vdev_id: Option<u32>,
        vfg_id: Option<u32>,
        id_taken: impl Fn(u32) -> bool,
    ) -> Result<Vnpu, Error> {
        if templates(self.chip_type).is_empty() {
            return Err(Error::VnpuUnsupported(self.chip_type));
        }
        let template = find_template(self.chip_type, template_name).ok_or_else(|| Error::VnpuTemplateNotAllowed {
            template: template_name.to_owned(),
            chip_type: self.chip_type,
        })?;
        let out_of = |detail: String| Error::VnpuOutOfResources { template: template_name.to_owned(), detail };
        if self.vnpus.len() >= MAX_VNPUS_PER_CHIP {
            return Err(out_of(format!("the chip already has {MAX_VNPUS_PER_CHIP} vNPUs")));
        }
        let (free_cores, free_memory) = self.free();
        if template.aicore > free_cores {
            return Err(out_of(format!("needs {} AI cores, {free_cores} free", template.aicore)));
        }
        let memory_mb = self.memory_for(template);
        if memory_mb > free_memory {
            return Err(out_of(format!("needs {memory_mb} MB, {free_memory} MB free")));
        }
        let vdev_id = match vdev_id {
            Some(id) if !(VDEV_ID_MIN..VDEV_ID_END).contains(&id) => return Err(Error::VnpuIdOutOfRange(id)),
            Some(id) if id_taken(id) => return Err(Error::VnpuIdInUse(id)),
            Some(id) => id,
            None => (VDEV_ID_MIN..VDEV_ID_END)
                .find(|id| !id_taken(*id))
                .ok_or_else(|| out_of("no free vNPU id".to_owned()))?,
        };
        let vfg_id = vfg_id.unwrap_or_else(|| {
            (0..).find(|candidate| self.vnpus.iter().all(|vnpu| vnpu.vfg_id != *candidate)).unwrap_or(0)
        });
        let vnpu = Vnpu { vdev_id, vfg_id, template, memory_mb };
        self.vnpus.push(vnpu.clone());
        Ok(vnpu)
    }

    /// Destroys vNPU `vdev_id`.
    ///
    /// # Errors
    /// [`Error::VnpuNotFound`] when the chip has no such vNPU.
    pub fn destroy(&mut self, vdev_id: u32) -> Result<(), Error> {
        let position =
            self.vnpus.iter().position(|vnpu| vnpu.vdev_id == vdev_id).ok_or(Error::VnpuNotFound(vdev_id))?;
        self.vnpus.remove(position);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accounting_on_a_310p() {
        let mut pool = VnpuPool::new(ChipType::Ascend310P, 8, 24_576);
        let first = pool.create("vir04", None, None, |_| false).map_err(|e| e.to_string());
        assert_eq!(first.as_ref().map(|vnpu| (vnpu.vdev_id, vnpu.memory_mb)), Ok((100, 12_288)));
        assert!(pool.create("vir02", None, None, |id| id == 100).is_ok());
        assert_eq!(pool.free(), (2, 6144));
        let too_big = pool.create("vir04", None, None, |_| false);
        assert_eq!(too_big.map_err(|error| error.dcmi_code()), Err(Some(-8020)));
        let not_allowed = pool.create("vir08", None, None, |_| false);
        assert_eq!(not_allowed.map_err(|error| error.dcmi_code()), Err(Some(-8001)));
        assert!(pool.destroy(100).is_ok());
        assert_eq!(pool.free(), (6, 18_432));
        assert_eq!(pool.destroy(100).map_err(|error| error.dcmi_code()), Err(Some(-8001)));
    }

    #[test]
    fn families_without_vnpu_and_explicit_memory() {
        let mut edge = VnpuPool::new(ChipType::Ascend310, 2, 8192);
        assert_eq!(edge.create("vir01", None, None, |_| false).map_err(|error| error.dcmi_code()), Err(Some(-8255)));
        let mut a2 = VnpuPool::new(ChipType::Ascend910B, 20, 65_536);
        let vnpu = a2.create("vir10_3c_32g", Some(150), Some(3), |_| false);
        assert_eq!(vnpu.map(|vnpu| (vnpu.vdev_id, vnpu.vfg_id, vnpu.memory_mb)).ok(), Some((150, 3, 32_768)));
        assert_eq!(
            a2.create("vir12_3c_32g", None, None, |_| false).map_err(|error| error.dcmi_code()),
            Err(Some(-8020))
        );
    }
}
