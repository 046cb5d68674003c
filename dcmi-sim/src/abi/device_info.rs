//! `dcmi_get_device_info`: the typed queries Huawei's components make of it (vNPU resources, super-pod info,
//! HCCS statistics, SIO CRC errors: main commands `MainCmdVDevMng`, `MainCmdChipInf`, `MainCmdHccs` and `MainCmdSio`
//! of `Ascend/mind-cluster`, `component/ascend-common/devmanager/dcmi/constants.go`, called in `dcmi.go` beside it).

use std::os::raw::{c_int, c_uint, c_void};

use dcmi_sys::{
    dcmi_computing_resource, dcmi_hccs_statistic_info, dcmi_hccs_statistic_info_u64, dcmi_main_cmd,
    dcmi_sio_crc_err_statistic_info, dcmi_soc_free_resource, dcmi_soc_total_resource, dcmi_spod_info,
    dcmi_vdev_query_stru,
};

use super::telemetry::HCCS_LINKS;
use super::{copy_c_str, guard, out, sampler, sim};
use crate::chip_type::ChipType;
use crate::function::Function;
use crate::state::{code, ChipCall, Sim};
use crate::vnpu::{self, Vnpu};

/// main_cmd 12 ("chip info"), which the enum lacks.
const MAIN_CMD_CHIP_INFO: u32 = 12;

/// Answers one (main_cmd, sub_cmd) query into `buf`; `*size` is the capacity on input and the bytes
/// written on output (-8001 when too small). Unknown or unsupported queries: -8255.
///
/// # Safety
/// `buf` must be null or point to `*size` writable bytes aligned for the answer's struct; `size`
/// null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_info(
    card_id: c_int,
    device_id: c_int,
    main_cmd: dcmi_main_cmd,
    sub_cmd: c_uint,
    buf: *mut c_void,
    size: *mut c_uint,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::device_info(ChipCall::v1(Function::GetDeviceInfo, card_id, device_id), main_cmd, sub_cmd, buf, size)
    }
}

/// The body of `dcmi_get_device_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_info`.
pub(crate) unsafe fn device_info(
    call: ChipCall,
    main_cmd: dcmi_main_cmd,
    sub_cmd: c_uint,
    buf: *mut c_void,
    size: *mut c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let size = unsafe { out(size) }?;
        if buf.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        let index = sim.resolve(call)?;
        // SAFETY: the caller provides `*size` writable bytes at `buf` (checked non-null above).
        let buffer = unsafe { AnswerBuffer::new(buf, size) };
        let chip_type = sim.chips[index].chip_type;
        let has_vnpu = !vnpu::templates(chip_type).is_empty();
        // The chip's resources (sub-commands 1 and 2) are answered on every family with vNPUs and on Ascend950,
        // which has none: Huawei's device plugin takes the AI-core count of its `servertype` label from them and
        // labels the node `npu-8255` when they answer -8255 (mind-cluster
        // `component/ascend-device-plugin/pkg/device/ascendcommon.go`, `GetChipAiCoreCount`).
        let has_resources = has_vnpu || chip_type == ChipType::Ascend950;
        // Super-pod information exists on A3 and Ascend950 (where chassis_id is the rack).
        let is_a3 = matches!(chip_type, ChipType::Ascend910A3 | ChipType::Ascend950);
        let has_hccs = matches!(chip_type, ChipType::Ascend910B | ChipType::Ascend910A3);
        match (main_cmd, sub_cmd) {
            (dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG, 0) if has_vnpu => vdev_query(&sim, index, buffer.take()?, false),
            (dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG, 1) if has_resources => total_resource(&sim, index, buffer.take()?),
            (dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG, 2) if has_resources => free_resource(&sim, index, buffer.take()?),
            (dcmi_main_cmd::DCMI_MAIN_CMD_VDEV_MNG, 5) if has_vnpu => vdev_query(&sim, index, buffer.take()?, true),
            (dcmi_main_cmd(MAIN_CMD_CHIP_INFO), 1) if is_a3 => {
                let spod = sim.config(index).1.spod;
                *buffer.take::<dcmi_spod_info>()? = dcmi_spod_info {
                    sdid: spod.sdid,
                    scale_type: spod.scale_type,
                    super_pod_id: spod.super_pod_id,
                    server_id: spod.server_id,
                    chassis_id: spod.chassis_id,
                    super_pod_type: spod.super_pod_type,
                    reserve: [0; 6],
                };
                Ok(())
            }
            (dcmi_main_cmd::DCMI_MAIN_CMD_HCCS, 3) if has_hccs => {
                let target = buffer.take::<dcmi_hccs_statistic_info>()?;
                *target = dcmi_hccs_statistic_info::default();
                let crc = sim.config(index).1.links.hccs_crc_errors;
                for link in 0..HCCS_LINKS {
                    let (tx, rx) = hccs_counters(&sim, index, link);
                    target.tx_cnt[link] = tx as u32;
                    target.rx_cnt[link] = rx as u32;
                    target.crc_err_cnt[link] = crc;
                }
                Ok(())
            }
            (dcmi_main_cmd::DCMI_MAIN_CMD_HCCS, 5) if has_hccs => {
                let target = buffer.take::<dcmi_hccs_statistic_info_u64>()?;
                *target = dcmi_hccs_statistic_info_u64::default();
                let crc = u64::from(sim.config(index).1.links.hccs_crc_errors);
                for link in 0..HCCS_LINKS {
                    let (tx, rx) = hccs_counters(&sim, index, link);
                    target.tx_cnt[link] = tx;
                    target.rx_cnt[link] = rx;
                    target.crc_err_cnt[link] = crc;
                }
                Ok(())
            }
            (dcmi_main_cmd::DCMI_MAIN_CMD_SIO, 0) if is_a3 => {
                let links = sim.config(index).1.links;
                *buffer.take::<dcmi_sio_crc_err_statistic_info>()? = dcmi_sio_crc_err_statistic_info {
                    tx_error_count: links.sio_tx_crc_errors,
                    rx_error_count: links.sio_rx_crc_errors,
                    ..Default::default()
                };
                Ok(())
            }
            _ => Err(code::NOT_SUPPORTED),
        }
    })
}

/// The caller's answer buffer: `ptr` with room for `*size` bytes.
struct AnswerBuffer<'a> {
    ptr: *mut c_void,
    size: &'a mut c_uint,
}

impl<'a> AnswerBuffer<'a> {
    /// # Safety
    /// `ptr` must be non-null and point to `*size` writable bytes for the rest of the call.
    unsafe fn new(ptr: *mut c_void, size: &'a mut c_uint) -> Self {
        AnswerBuffer { ptr, size }
    }

    /// The buffer as a `T` when it is large enough and aligned for one (else -8001); sets `*size`.
    fn take<T>(self) -> Result<&'a mut T, c_int> {
        let needed = std::mem::size_of::<T>();
        if (*self.size as usize) < needed || !(self.ptr as usize).is_multiple_of(std::mem::align_of::<T>()) {
            return Err(code::INVALID_PARAMETER);
        }
        *self.size = needed as c_uint;
        // SAFETY: `new`'s contract gives `*size` writable bytes; size and alignment are checked above.
        unsafe { out(self.ptr.cast::<T>()) }
    }
}

/// Monotonic per-link packet counters: packets since the Unix epoch at a rate set by the HBM
/// bandwidth utilization of the current tick.
fn hccs_counters(sim: &Sim, index: usize, link: usize) -> (u64, u64) {
    let sampler = sampler(sim);
    let percent =
        sampler.utilization(sim.config(index).1, crate::capabilities::util_type::HBM_BANDWIDTH, None).unwrap_or(0);
    let base = sampler.tick * 100_000 + u64::from(percent) * 1000;
    (base + link as u64, base + 2 * link as u64)
}

fn computing(aicore: u32, memory_mb: u64) -> dcmi_computing_resource {
    dcmi_computing_resource { aic: aicore as f32, aiv: aicore as f32, memory_size: memory_mb, ..Default::default() }
}

fn total_resource(sim: &Sim, index: usize, target: &mut dcmi_soc_total_resource) -> super::CallResult {
    let pools = sim.vnpus.lock();
    let pool = pools.get(index).ok_or(code::INTERNAL_ERROR)?;
    let (aicore, memory) = pool.totals();
    *target = dcmi_soc_total_resource::default();
    target.vdev_num = pool.vnpus().len() as c_uint;
    for (slot, vnpu) in target.vdev_id.iter_mut().zip(pool.vnpus()) {
        *slot = vnpu.vdev_id;
    }
    target.vfg_num = pool.vnpus().len() as c_uint;
    target.vfg_bitmap = vfg_bitmap(pool.vnpus());
    target.computing = computing(aicore, memory);
    Ok(())
}

fn free_resource(sim: &Sim, index: usize, target: &mut dcmi_soc_free_resource) -> super::CallResult {
    let pools = sim.vnpus.lock();
    let pool = pools.get(index).ok_or(code::INTERNAL_ERROR)?;
    let (aicore, memory) = pool.free();
    *target = dcmi_soc_free_resource::default();
    // A family without vNPUs (Ascend950) has no free vNPU groups either.
    if !vnpu::templates(sim.chips[index].chip_type).is_empty() {
        let used = vfg_bitmap(pool.vnpus());
        target.vfg_num = (vnpu::MAX_VNPUS_PER_CHIP as u32).saturating_sub(used.count_ones());
        target.vfg_bitmap = !used;
    }
    target.computing = computing(aicore, memory);
    Ok(())
}

fn vfg_bitmap(vnpus: &[Vnpu]) -> u32 {
    vnpus.iter().filter(|vnpu| vnpu.vfg_id < 32).fold(0, |bits, vnpu| bits | (1 << vnpu.vfg_id))
}

/// Sub-commands 0 (resources of one vNPU) and 5 (its activity): the caller sets `vdev_id` first.
fn vdev_query(sim: &Sim, index: usize, target: &mut dcmi_vdev_query_stru, activity: bool) -> super::CallResult {
    let pools = sim.vnpus.lock();
    let pool = pools.get(index).ok_or(code::INTERNAL_ERROR)?;
    let vnpu = pool.get(target.vdev_id).ok_or(code::INVALID_PARAMETER)?;
    let vdev_id = target.vdev_id;
    let position = pool.vnpus().iter().position(|other| other.vdev_id == vdev_id).unwrap_or(0);
    *target = dcmi_vdev_query_stru::default();
    target.vdev_id = vdev_id;
    let info = &mut target.query_info;
    copy_c_str(&mut info.name, vnpu.template.name);
    info.vfid = position as c_uint + 1;
    info.vfg_id = vnpu.vfg_id;
    info.base.vfg_id = vnpu.vfg_id;
    info.computing = computing(vnpu.template.aicore, vnpu.memory_mb);
    if activity {
        let utilization = sampler(sim).vnpu_aicore_utilization(sim.config(index).1, vdev_id);
        let total_kb = vnpu.memory_mb * 1024;
        info.computing.vdev_aicore_utilization = utilization;
        info.computing.vdev_memory_total = total_kb;
        info.computing.vdev_memory_free = total_kb - total_kb * u64::from(utilization) / 200;
    }
    Ok(())
}
