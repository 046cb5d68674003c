//! Virtual NPUs (vNPU) on a [`Chip`]: what exists and what is free, create from a template, destroy.
//!
//! The inventory comes from `dcmi_get_device_info` with main command 52 (vNPU management): sub command 1 for the
//! totals and the list of vNPU ids, 2 for what is free, 0 for one vNPU, 5 for its activity (not on every chip).

use std::fmt;

use dcmi_sys as sys;

use crate::chip::Chip;
use crate::error::{Error, Result};
use crate::units::BYTES_PER_MB;
use crate::vnpu_template::VnpuTemplate;

/// `DCMI_MAIN_CMD_VDEV_MNG`.
const VDEV_MANAGEMENT: u32 = 52;
/// Sub commands of [`VDEV_MANAGEMENT`].
const QUERY_ONE: u32 = 0;
const QUERY_TOTAL: u32 = 1;
const QUERY_FREE: u32 = 2;
const QUERY_ACTIVITY: u32 = 5;

/// A vNPU's id (`vdev_id`, valid range 100..1124).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct VnpuId(pub u32);

impl fmt::Display for VnpuId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// One vNPU on a chip.
#[derive(Debug, Clone, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Vnpu {
    /// Its id; the container sees `/dev/davinci<id>` from host `/dev/vdavinci<id>`.
    pub id: VnpuId,
    /// The template name it was made from, when the driver reports it.
    pub template: String,
    /// AI cores it holds.
    pub aicore: f32,
    /// Memory it holds.
    pub memory_bytes: u64,
    /// Whether a container uses it.
    pub in_use: bool,
    /// AI-core utilisation, when the chip reports per-vNPU activity.
    pub aicore_utilization: Option<u32>,
    /// Memory of the vNPU in KiB, as the activity query reports it (310P).
    pub activity_memory_total_kb: Option<u64>,
    /// Memory in use on the vNPU in KiB (total minus free of the activity query).
    pub activity_memory_used_kb: Option<u64>,
}

/// A chip's vNPU resources: totals, what is free, and the vNPUs that exist.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct VnpuInventory {
    /// AI cores of the chip.
    pub total_aicore: f32,
    /// AI cores not given to vNPUs.
    pub free_aicore: f32,
    /// Memory of the chip.
    pub total_memory_bytes: u64,
    /// Memory not given to vNPUs.
    pub free_memory_bytes: u64,
    /// The vNPUs.
    pub vnpus: Vec<Vnpu>,
}

impl Chip {
    /// vNPU resources and the vNPUs that exist.
    ///
    /// # Errors
    /// [`Error::NotSupported`] on chips without vNPU support, [`Error::InvalidValue`] when the driver reports more
    /// vNPUs than its list holds, or any DCMI error.
    #[doc(alias = "dcmi_get_device_info")]
    pub fn vnpus(&self) -> Result<VnpuInventory> {
        let library = self.dcmi().library();
        let target = self.target();
        let total =
            library.device_info(target, VDEV_MANAGEMENT, QUERY_TOTAL, sys::dcmi_soc_total_resource::default())?;
        let count = usize::try_from(total.vdev_num).unwrap_or(usize::MAX);
        if count > total.vdev_id.len() {
            return Err(Error::InvalidValue {
                context: self.context("dcmi_get_device_info"),
                detail: format!("{} vNPUs reported, at most {} possible", total.vdev_num, total.vdev_id.len()),
            });
        }
        let free = library.device_info(target, VDEV_MANAGEMENT, QUERY_FREE, sys::dcmi_soc_free_resource::default())?;
        let mut vnpus = Vec::with_capacity(count);
        for id in &total.vdev_id[..count] {
            let request = sys::dcmi_vdev_query_stru { vdev_id: *id, ..Default::default() };
            let one = library.device_info(target, VDEV_MANAGEMENT, QUERY_ONE, request)?;
            let activity = library.device_info(target, VDEV_MANAGEMENT, QUERY_ACTIVITY, request).ok();
            let info = &one.query_info;
            vnpus.push(Vnpu {
                id: VnpuId(*id),
                template: crate::ffi::c_string(&info.name),
                aicore: info.computing.aic,
                memory_bytes: info.computing.memory_size.saturating_mul(BYTES_PER_MB),
                in_use: info.is_container_used != 0,
                aicore_utilization: activity.map(|a| a.query_info.computing.vdev_aicore_utilization),
                activity_memory_total_kb: activity.map(|a| a.query_info.computing.vdev_memory_total),
                activity_memory_used_kb: activity.map(|a| {
                    let computing = &a.query_info.computing;
                    computing.vdev_memory_total.saturating_sub(computing.vdev_memory_free)
                }),
            });
        }
        Ok(VnpuInventory {
            total_aicore: total.computing.aic,
            free_aicore: free.computing.aic,
            total_memory_bytes: total.computing.memory_size.saturating_mul(BYTES_PER_MB),
            free_memory_bytes: free.computing.memory_size.saturating_mul(BYTES_PER_MB),
            vnpus,
        })
    }

    /// Creates a vNPU from a template (by driver name, for example `"vir02"`); the driver picks its id.
    ///
    /// # Errors
    /// [`Error::UnavailableOnApi`] on the V2 API (Ascend950 has no vNPU); [`Error::VnpuTemplateNotAllowed`] for a
    /// template this chip type does not allow (checked before any call);
    /// any DCMI error (for example [`Error::ResourceOccupied`] when the chip lacks the resources).
    #[doc(alias = "dcmi_create_vdevice")]
    pub fn create_vnpu(&self, template: &str) -> Result<VnpuId> {
        if self.dcmi().api_family() == crate::api_family::ApiFamily::V2 {
            return Err(Error::UnavailableOnApi { call: "dcmi_create_vdevice", family: self.dcmi().api_family() });
        }
        let chip_type = self.chip_type()?;
        let allowed_here = VnpuTemplate::by_name(template).zip(chip_type).is_some_and(|(t, chip)| t.allows(chip));
        if !allowed_here {
            return Err(Error::VnpuTemplateNotAllowed {
                template: template.to_owned(),
                chip_type: chip_type.map_or_else(|| "an unsupported chip".to_owned(), |t| t.to_string()),
                allowed: chip_type
                    .map(|t| VnpuTemplate::for_chip_type(t).map(|t| t.name).collect())
                    .unwrap_or_default(),
            });
        }
        let out = self.dcmi().library().create_vdevice(self.target(), template)?;
        Ok(VnpuId(out.vdev_id))
    }

    /// Destroys a vNPU.
    ///
    /// # Errors
    /// Any DCMI error.
    #[doc(alias = "dcmi_set_destroy_vdevice")]
    pub fn destroy_vnpu(&self, vnpu: VnpuId) -> Result<()> {
        self.dcmi().library().destroy_vdevice(self.target(), vnpu.0)
    }
}
