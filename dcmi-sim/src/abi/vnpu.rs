//! vNPU creation and destruction.

use std::os::raw::{c_int, c_uint};

use dcmi_sys::{dcmi_create_vdev_out, dcmi_create_vdev_res_stru};

use super::{guard, input, out, read_c_str, sim};
use crate::function::Function;
use crate::state::code;

/// "Pick one for me" value of `vdev_id` and `vfg_id`.
const AUTO: c_uint = 0xFFFF_FFFF;

/// Creates a vNPU from `vdev.template_name` (the family's allowed templates, `templateNameLists` in Huawei's
/// `Ascend/mind-cluster`, `component/ascend-common/devmanager/common/utils.go`):
/// -8001 for a template the family does not allow, -8020 when AI cores, memory or ids run out,
/// -8255 on families without vNPUs.
///
/// # Safety
/// `vdev` must be null or readable; `out` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_create_vdevice(
    card_id: c_int,
    device_id: c_int,
    vdev: *mut dcmi_create_vdev_res_stru,
    out: *mut dcmi_create_vdev_out,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: each is null or the caller's struct.
        let (request, result) = unsafe { (input(vdev.cast_const())?, self::out(out)?) };
        let index = sim.chip_call(Function::CreateVdevice, card_id, device_id)?;
        let template = read_c_str(&request.template_name);
        let wanted_id = (request.vdev_id != AUTO).then_some(request.vdev_id);
        let wanted_vfg = (request.vfg_id != AUTO).then_some(request.vfg_id);
        let mut pools = sim.vnpus.lock();
        let taken: Vec<u32> = pools.iter().flat_map(|pool| pool.vnpus().iter().map(|vnpu| vnpu.vdev_id)).collect();
        let created = pools
            .get_mut(index)
            .ok_or(code::INTERNAL_ERROR)?
            .create(&template, wanted_id, wanted_vfg, |id| taken.contains(&id))
            .map_err(|error| error.dcmi_code().unwrap_or(code::INTERNAL_ERROR))?;
        let bdf = sim.config(index).1.pcie.parsed_bdf().map_err(|_| code::INTERNAL_ERROR)?;
        let position = pools[index].vnpus().len() as c_uint;
        *result = dcmi_create_vdev_out {
            vdev_id: created.vdev_id,
            pcie_bus: bdf.bus,
            pcie_device: bdf.device,
            pcie_func: position,
            vfg_id: created.vfg_id,
            reserved: [0; 32],
        };
        crate::vnpu_device_node::created(created.vdev_id);
        Ok(())
    })
}

/// Destroys vNPU `vdevid` of the chip (-8001 when the chip has no such vNPU).
#[no_mangle]
pub extern "C" fn dcmi_set_destroy_vdevice(card_id: c_int, device_id: c_int, vdevid: c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.chip_call(Function::SetDestroyVdevice, card_id, device_id)?;
        let mut pools = sim.vnpus.lock();
        pools
            .get_mut(index)
            .ok_or(code::INTERNAL_ERROR)?
            .destroy(vdevid)
            .map_err(|error| error.dcmi_code().unwrap_or(code::INTERNAL_ERROR))?;
        crate::vnpu_device_node::destroyed(vdevid);
        Ok(())
    })
}
