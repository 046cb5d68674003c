//! Cluster interconnect: HCCS ping-mesh tasks, super-pod node status, the A3 multi-die policy, and
//! the Ascend950 unified-bus / URMA calls (no simulated family has those: -8255).

use std::os::raw::{c_int, c_uint};
use std::time::Instant;

use dcmi_sys::{
    dcmi_hccsping_mesh_info, dcmi_hccsping_mesh_operate, dcmi_multi_die_policy, dcmi_ub_ping_mesh_info,
    dcmi_ub_ping_mesh_operate, dcmi_urma_eid_info_t,
};

use super::{copy_c_str, guard, input, out, read_c_str, sim};
use crate::function::Function;
use crate::state::{code, ChipCall, PingTask};

/// Starts an HCCS ping-mesh task (port 0, task 0 or 1, limits of the real driver: packet size
/// 1792..3000, 1..1000 packets, interval 1..1000, task interval 1..60, at most 48 destinations).
///
/// # Safety
/// `hccsping_mesh` must be null or readable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_start_hccsping_mesh(
    card_id: c_int,
    device_id: c_int,
    port_id: c_int,
    hccsping_mesh: *mut dcmi_hccsping_mesh_operate,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let operation = unsafe { input(hccsping_mesh.cast_const()) }?;
        let index = sim.chip_call(Function::StartHccspingMesh, card_id, device_id)?;
        let valid = port_id == 0
            && (0..=1).contains(&operation.task_id)
            && (1792..=3000).contains(&operation.pkt_size)
            && (1..=1000).contains(&operation.pkt_send_num)
            && (1..=1000).contains(&operation.pkt_interval)
            && (1..=60).contains(&operation.task_interval);
        let destinations: Vec<String> = read_c_str(&operation.dst_addr_list)
            .split(',')
            .map(|address| address.trim().to_owned())
            .filter(|address| !address.is_empty())
            .collect();
        if !valid || destinations.is_empty() || destinations.len() > 48 {
            return Err(code::INVALID_PARAMETER);
        }
        let task =
            PingTask { destinations, packets: operation.pkt_send_num as u32, started: Instant::now(), stopped: false };
        sim.host.lock().ping_tasks.insert((index, operation.task_id as u32), task);
        Ok(())
    })
}

/// Stops a ping-mesh task (-8001 for an unknown task).
#[no_mangle]
pub extern "C" fn dcmi_stop_hccsping_mesh(card_id: c_int, device_id: c_int, port_id: c_int, task_id: c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.chip_call(Function::StopHccspingMesh, card_id, device_id)?;
        let mut host = sim.host.lock();
        let task =
            host.ping_tasks.get_mut(&(index, task_id)).filter(|_| port_id == 0).ok_or(code::INVALID_PARAMETER)?;
        task.stopped = true;
        Ok(())
    })
}

/// Results of a task: every destination answers every packet (20 µs average).
///
/// # Safety
/// `hccsping_mesh_reply` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_hccsping_mesh_info(
    card_id: c_int,
    device_id: c_int,
    port_id: c_int,
    task_id: c_uint,
    hccsping_mesh_reply: *mut dcmi_hccsping_mesh_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let reply = unsafe { out(hccsping_mesh_reply) }?;
        let index = sim.chip_call(Function::GetHccspingMeshInfo, card_id, device_id)?;
        let host = sim.host.lock();
        let task = host.ping_tasks.get(&(index, task_id)).filter(|_| port_id == 0).ok_or(code::INVALID_PARAMETER)?;
        let rounds = 1 + task.started.elapsed().as_secs();
        *reply = dcmi_hccsping_mesh_info::default();
        for (slot, destination) in task.destinations.iter().enumerate() {
            copy_c_str(&mut reply.dst_addr[slot], destination);
            reply.suc_pkt_num[slot] = task.packets;
            reply.max_time[slot] = 30;
            reply.min_time[slot] = 10;
            reply.avg_time[slot] = 20;
            reply.tp95_time[slot] = 28;
            reply.reply_stat_num[slot] = task.packets as c_int;
            reply.ping_total_num[slot] = u64::from(task.packets) * rounds;
        }
        reply.dest_num = task.destinations.len() as c_int;
        Ok(())
    })
}

/// Task state: 1 running, 0 stopped (-8001 for an unknown task).
///
/// # Safety
/// `state` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_hccsping_mesh_state(
    card_id: c_int,
    device_id: c_int,
    port_id: c_int,
    task_id: c_uint,
    state: *mut c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(state) }?;
        let index = sim.chip_call(Function::GetHccspingMeshState, card_id, device_id)?;
        let host = sim.host.lock();
        let task = host.ping_tasks.get(&(index, task_id)).filter(|_| port_id == 0).ok_or(code::INVALID_PARAMETER)?;
        *target = c_uint::from(!task.stopped);
        Ok(())
    })
}

/// Super-pod node status of `sdid` as seen from the chip (A3; default 0).
///
/// # Safety
/// `status` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_spod_node_status(
    card_id: c_int,
    device_id: c_int,
    sdid: c_uint,
    status: *mut c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(status) }?;
        let index = sim.chip_call(Function::GetSpodNodeStatus, card_id, device_id)?;
        *target = sim.host.lock().spod_status.get(&(index, sdid)).copied().unwrap_or(0);
        Ok(())
    })
}

/// Sets the super-pod node status of `sdid` (A3).
#[no_mangle]
pub extern "C" fn dcmi_set_spod_node_status(card_id: c_int, device_id: c_int, sdid: c_uint, status: c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.chip_call(Function::SetSpodNodeStatus, card_id, device_id)?;
        sim.host.lock().spod_status.insert((index, sdid), status);
        Ok(())
    })
}

fn has_multi_die_chips(sim: &crate::state::Sim, function: Function) -> super::CallResult {
    sim.global_call(function)?;
    if sim.chips.iter().any(|chip| chip.supports(function)) {
        Ok(())
    } else {
        Err(code::NOT_SUPPORTED)
    }
}

/// The A3 die policy (0 union, 1 independent); -8255 on hosts without A3 chips.
///
/// # Safety
/// `policy` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_multi_die_policy(policy: *mut dcmi_multi_die_policy) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's enum.
        let target = unsafe { out(policy) }?;
        has_multi_die_chips(&sim, Function::GetMultiDiePolicy)?;
        *target = dcmi_multi_die_policy(sim.host.lock().multi_die_policy);
        Ok(())
    })
}

/// Sets the A3 die policy (0 or 1, else -8001).
#[no_mangle]
pub extern "C" fn dcmi_set_multi_die_policy(policy: dcmi_multi_die_policy) -> c_int {
    guard(|| {
        let sim = sim()?;
        has_multi_die_chips(&sim, Function::SetMultiDiePolicy)?;
        if policy.0 > 1 {
            return Err(code::INVALID_PARAMETER);
        }
        sim.host.lock().multi_die_policy = policy.0;
        Ok(())
    })
}

/// Unified-bus ping mesh: -8255 on every V1 family; Ascend950 has it through V2, where the
/// simulator does not model the tasks (-8255 too).
///
/// # Safety
/// `ubping_mesh` must be null or point to `count` operations.
#[no_mangle]
pub unsafe extern "C" fn dcmi_start_ub_ping_mesh(
    card_id: c_int,
    device_id: c_int,
    count: c_int,
    ubping_mesh: *mut dcmi_ub_ping_mesh_operate,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::start_ub_ping_mesh(ChipCall::v1(Function::StartUbPingMesh, card_id, device_id), count, ubping_mesh) }
}

/// The body of `dcmi_start_ub_ping_mesh` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_start_ub_ping_mesh`.
pub(crate) unsafe fn start_ub_ping_mesh(
    call: ChipCall,
    count: c_int,
    ubping_mesh: *mut dcmi_ub_ping_mesh_operate,
) -> c_int {
    guard(|| {
        if ubping_mesh.is_null() || count < 1 {
            return Err(code::INVALID_PARAMETER);
        }
        sim()?.resolve(call).map(drop)
    })
}

/// Ascend950 only: -8255.
#[no_mangle]
pub extern "C" fn dcmi_stop_ub_ping_mesh(card_id: c_int, device_id: c_int, _task_id: c_int) -> c_int {
    self::stop_ub_ping_mesh(ChipCall::v1(Function::StopUbPingMesh, card_id, device_id), _task_id)
}

/// The body of `dcmi_stop_ub_ping_mesh` and of its V2 twin, for the chip `call` names.
pub(crate) fn stop_ub_ping_mesh(call: ChipCall, _task_id: c_int) -> c_int {
    guard(|| sim()?.resolve(call).map(drop))
}

/// Ascend950 only: -8255.
///
/// # Safety
/// Pointers must be null or valid for the sizes given.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_ub_ping_mesh_info(
    card_id: c_int,
    device_id: c_int,
    _task_id: c_int,
    ub_ping_mesh_reply: *mut dcmi_ub_ping_mesh_info,
    mesh_reply_size: c_int,
    count: *mut c_int,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::ub_ping_mesh_info(
            ChipCall::v1(Function::GetUbPingMeshInfo, card_id, device_id),
            _task_id,
            ub_ping_mesh_reply,
            mesh_reply_size,
            count,
        )
    }
}

/// The body of `dcmi_get_ub_ping_mesh_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_ub_ping_mesh_info`.
pub(crate) unsafe fn ub_ping_mesh_info(
    call: ChipCall,
    _task_id: c_int,
    ub_ping_mesh_reply: *mut dcmi_ub_ping_mesh_info,
    mesh_reply_size: c_int,
    count: *mut c_int,
) -> c_int {
    guard(|| {
        if ub_ping_mesh_reply.is_null() || count.is_null() || mesh_reply_size < 1 {
            return Err(code::INVALID_PARAMETER);
        }
        sim()?.resolve(call).map(drop)
    })
}

/// Ascend950 only: -8255.
///
/// # Safety
/// `state` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_ub_ping_mesh_state(
    card_id: c_int,
    device_id: c_int,
    _task_id: c_int,
    state: *mut c_uint,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::ub_ping_mesh_state(ChipCall::v1(Function::GetUbPingMeshState, card_id, device_id), _task_id, state) }
}

/// The body of `dcmi_get_ub_ping_mesh_state` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_ub_ping_mesh_state`.
pub(crate) unsafe fn ub_ping_mesh_state(call: ChipCall, _task_id: c_int, state: *mut c_uint) -> c_int {
    guard(|| {
        if state.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        sim()?.resolve(call).map(drop)
    })
}

/// Ascend950 only: -8255.
///
/// # Safety
/// `dev_cnt` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_urma_device_cnt(card_id: c_int, device_id: c_int, dev_cnt: *mut c_uint) -> c_int {
    guard(|| {
        if dev_cnt.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        sim()?.chip_call(Function::GetUrmaDeviceCnt, card_id, device_id).map(drop)
    })
}

/// Ascend950 only: -8255.
///
/// # Safety
/// `eid_list` must be null or hold `*eid_cnt` entries; `eid_cnt` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_eid_list_by_urma_dev_index(
    card_id: c_int,
    device_id: c_int,
    _dev_index: c_uint,
    eid_list: *mut dcmi_urma_eid_info_t,
    eid_cnt: *mut c_uint,
) -> c_int {
    guard(|| {
        if eid_list.is_null() || eid_cnt.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        sim()?.chip_call(Function::GetEidListByUrmaDevIndex, card_id, device_id).map(drop)
    })
}
