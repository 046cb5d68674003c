//! The DCMI V2 exports (`dcmiv2_*`, the API of Ascend950 hosts).
//!
//! Each call names its chip by `dev_id`, the logic id. Where V1 has the same call, both exports
//! share one body (it takes a [`ChipCall`]), so injection, support tables, dropped chips and resets
//! behave alike on both families. On a V1 topology every export here answers -8255
//! ([`crate::state::Sim::check_api`]); on a V2 topology the V1 exports answer -8005.

use std::os::raw::{c_char, c_int, c_uint};

use dcmi_sys::{
    dcmi_board_info, dcmi_boot_status, dcmi_chip_info_v2, dcmi_device_type, dcmi_die_id, dcmi_die_type, dcmi_ecc_info,
    dcmi_elabel_info, dcmi_event_filter, dcmi_fault_event_callback, dcmi_freq_type, dcmi_hbm_info, dcmi_main_cmd,
    dcmi_multi_utilization_info, dcmi_pcie_info_all, dcmi_pcie_link_bandwidth_info, dcmi_port_pkt_stats_info,
    dcmi_proc_mem_info, dcmi_rdfx_detect_result, dcmi_reset_channel, dcmi_ub_ping_mesh_info, dcmi_ub_ping_mesh_operate,
    dcmi_ub_port_info, dcmi_unit_type, dcmi_urma_eid_info_t,
};

use super::{cluster, device_info, enumeration, guard, health, identity, init, out, out_slice, reset, sim, telemetry};
use crate::function::Function;
use crate::state::{code, ChipCall, Sim};

/// Defines a V2 export that runs the body it shares with its V1 twin.
macro_rules! v2_twin {
    ($(#[doc = $doc:literal])* $name:ident => $body:path, $function:ident ($($arg:ident: $type:ty),*)) => {
        $(#[doc = $doc])*
        ///
        /// # Safety
        /// As the V1 twin: each pointer must be null or valid for the call.
        #[no_mangle]
        pub unsafe extern "C" fn $name(dev_id: c_int, $($arg: $type),*) -> c_int {
            // SAFETY: the caller's pointers go on under the same contract.
            unsafe { $body(ChipCall::v2(Function::$function, dev_id), $($arg),*) }
        }
    };
}

v2_twin!(/// Unit type: always NPU.
    dcmiv2_get_device_type => enumeration::device_type, V2GetDeviceType(device_type: *mut dcmi_unit_type));
v2_twin!(/// PCI ids and bus address.
    dcmiv2_get_device_pcie_info => identity::pcie_info, V2GetDevicePcieInfo(pcie_info: *mut dcmi_pcie_info_all));
v2_twin!(/// Chip strings (chip name "Ascend950..."), AI cores, NPU name.
    dcmiv2_get_device_chip_info => identity::chip_info_v2, V2GetDeviceChipInfo(chip_info: *mut dcmi_chip_info_v2));
v2_twin!(/// Power in 0.1 W.
    dcmiv2_get_device_power_info => telemetry::power, V2GetDevicePowerInfo(power: *mut c_int));
v2_twin!(/// Health 0..3; -8012 when dropped.
    dcmiv2_get_device_health => health::health, V2GetDeviceHealth(health: *mut c_uint));
v2_twin!(/// Raised fault codes.
    dcmiv2_get_device_error_code_list => health::error_codes, V2GetDeviceErrorCodeList(
        error_count: *mut c_int, error_code_list: *mut c_uint, list_len: c_uint));
v2_twin!(/// Temperature in °C.
    dcmiv2_get_device_temperature => telemetry::temperature, V2GetDeviceTemperature(temperature: *mut c_int));
v2_twin!(/// Voltage in 0.01 V.
    dcmiv2_get_device_voltage => telemetry::voltage, V2GetDeviceVoltage(voltage: *mut c_uint));
v2_twin!(/// HBM ECC counters.
    dcmiv2_get_device_ecc_info => telemetry::ecc_info, V2GetDeviceEccInfo(
        input_type: dcmi_device_type, device_ecc_info: *mut dcmi_ecc_info));
v2_twin!(/// Clock in MHz.
    dcmiv2_get_device_frequency => telemetry::frequency, V2GetDeviceFrequency(
        input_type: dcmi_freq_type, frequency: *mut c_uint));
v2_twin!(/// HBM size, usage, clock, temperature, bandwidth.
    dcmiv2_get_device_hbm_info => telemetry::hbm_info, V2GetDeviceHbmInfo(hbm_info: *mut dcmi_hbm_info));
v2_twin!(/// Utilization in percent of one unit type.
    dcmiv2_get_device_utilization_rate => telemetry::utilization, V2GetDeviceUtilizationRate(
        input_type: c_int, utilization_rate: *mut c_uint));
v2_twin!(/// Typed queries (super-pod info, the chip's resources; no vNPU and no HCCS on Ascend950: -8255).
    dcmiv2_get_device_info => device_info::device_info, V2GetDeviceInfo(
        main_cmd: dcmi_main_cmd, sub_cmd: c_uint, buf: *mut std::ffi::c_void, size: *mut c_uint));
v2_twin!(/// Network health of the chip's ports.
    dcmiv2_get_device_network_health => health::network_health, V2GetDeviceNetworkHealth(
        result: *mut dcmi_rdfx_detect_result));
v2_twin!(/// 1: out-of-band reset is possible.
    dcmiv2_get_device_outband_channel_state => reset::outband_channel_state, V2GetDeviceOutbandChannelState(
        channel_state: *mut c_int));
v2_twin!(/// Boot status: 16 when booted, 1/2 during a reset, 0 while dropped.
    dcmiv2_get_device_boot_status => reset::boot_status, V2GetDeviceBootStatus(boot_status: *mut dcmi_boot_status));
v2_twin!(/// Die ids (VDIE, DDIE).
    dcmiv2_get_device_die_id => identity::die_id, V2GetDeviceDieId(input_type: dcmi_die_type, die_id: *mut dcmi_die_id));
v2_twin!(/// Processes and their memory in bytes.
    dcmiv2_get_device_proc_mem_info => telemetry::processes, V2GetDeviceProcMemInfo(
        proc_info: *mut dcmi_proc_mem_info, proc_num: *mut c_int));
v2_twin!(/// Board, PCB, BOM and slot ids.
    dcmiv2_get_device_board_info => identity::board_info, V2GetDeviceBoardInfo(board_info: *mut dcmi_board_info));
v2_twin!(/// PCIe bandwidth `[min, max, avg]` in MB/ms.
    dcmiv2_get_pcie_link_bandwidth_info => telemetry::pcie_link_bandwidth, V2GetPcieLinkBandwidthInfo(
        pcie_link_bandwidth_info: *mut dcmi_pcie_link_bandwidth_info));
v2_twin!(/// Mainboard id.
    dcmiv2_get_mainboard_id => identity::mainboard_id, V2GetMainboardId(mainboard_id: *mut c_uint));
v2_twin!(/// CPU list of the chip's NUMA-affine cores.
    dcmiv2_get_affinity_cpu_info_by_dev_id => identity::affinity_cpu, V2GetAffinityCpuInfoByDevId(
        affinity_cpu: *mut c_char, len: *mut c_int));

/// Initialises the library for the V2 API: reads the topology as `dcmi_init` does; succeeds on an
/// Ascend950 topology, -8255 on an older one.
#[no_mangle]
pub extern "C" fn dcmiv2_init() -> c_int {
    init::initialise(Function::V2Init)
}

/// Logic ids of every chip, in enumeration order (`list_len` must hold them all).
///
/// # Safety
/// `device_list` must be null or hold `list_len` ints; `device_num` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_device_list(
    device_list: *mut c_int,
    device_num: *mut c_int,
    list_len: c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        sim.global_call(Function::V2GetDeviceList)?;
        // SAFETY: null or the caller's int.
        let count = unsafe { out(device_num) }?;
        let capacity = usize::try_from(list_len).map_err(|_| code::INVALID_PARAMETER)?;
        if capacity < sim.chips.len() {
            return Err(code::INVALID_PARAMETER);
        }
        // SAFETY: the caller provides `list_len` ints.
        let list = unsafe { out_slice(device_list, capacity) }?;
        for (slot, chip) in list.iter_mut().zip(sim.chips.iter()) {
            *slot = chip.logic_id as c_int;
        }
        *count = sim.chips.len() as c_int;
        Ok(())
    })
}

/// Number of chips.
///
/// # Safety
/// `all_device_count` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_all_device_count(all_device_count: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        sim.global_call(Function::V2GetAllDeviceCount)?;
        // SAFETY: null or the caller's int.
        *unsafe { out(all_device_count) }? = sim.chips.len() as c_int;
        Ok(())
    })
}

/// Physical id of a logic id.
///
/// # Safety
/// `phyid` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_chip_phy_id_by_dev_id(dev_id: c_uint, phyid: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(phyid) }?;
        let index = sim.resolve(ChipCall::v2(Function::V2GetChipPhyIdByDevId, dev_id as c_int))?;
        *target = sim.config(index).1.phy_id;
        Ok(())
    })
}

/// Logic id of a physical id.
///
/// # Safety
/// `dev_id` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_dev_id_by_chip_phy_id(phyid: c_uint, dev_id: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(dev_id) }?;
        sim.check_api(Function::V2GetDevIdByChipPhyId)?;
        let index = sim.chip_by_phy(phyid).ok_or(code::INVALID_DEVICE_ID)?;
        sim.indexed_call(Function::V2GetDevIdByChipPhyId, index)?;
        *target = sim.chips[index].logic_id;
        Ok(())
    })
}

/// Starts a hot reset.
#[no_mangle]
pub extern "C" fn dcmiv2_reset_device(dev_id: c_int, channel_type: dcmi_reset_channel) -> c_int {
    reset::reset(ChipCall::v2(Function::V2ResetDevice, dev_id), channel_type)
}

/// Prepares an out-of-band reset (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmiv2_pre_reset_device(dev_id: c_int) -> c_int {
    reset::pre_reset(ChipCall::v2(Function::V2PreResetDevice, dev_id))
}

/// Triggers a PCIe rescan (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmiv2_rescan_device(dev_id: c_int) -> c_int {
    reset::rescan(ChipCall::v2(Function::V2RescanDevice, dev_id))
}

/// Subscribes `callback` to fault events of one chip or, with `dev_id` -1, of every chip. Events carry
/// the logic id in `deviceid`, as on V1.
///
/// # Safety
/// `callback` must be null (-8001) or callable from another thread while the library is loaded.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_subscribe_fault_event(
    dev_id: c_int,
    filter: dcmi_event_filter,
    callback: dcmi_fault_event_callback,
) -> c_int {
    // SAFETY: the caller's callback goes on under the same contract.
    unsafe { health::subscribe(ChipCall::v2(Function::V2SubscribeFaultEvent, dev_id), dev_id == -1, filter, callback) }
}

/// AI Cube, vector, AI Core and NPU utilization in one call.
///
/// # Safety
/// `util_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_device_multi_utilization_rate(
    dev_id: c_int,
    util_info: *mut dcmi_multi_utilization_info,
) -> c_int {
    let call = ChipCall::v2(Function::V2GetDeviceMultiUtilizationRate, dev_id);
    // SAFETY: the caller's pointer goes on under the same contract.
    guard(|| unsafe { telemetry::multi_utilization(call, util_info) })
}

/// As `dcmiv2_get_device_multi_utilization_rate`, averaged over `period` s (≥ 1).
///
/// # Safety
/// `util_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_device_multi_utilization_rate_period(
    dev_id: c_int,
    util_info: *mut dcmi_multi_utilization_info,
    period: c_int,
) -> c_int {
    let call = ChipCall::v2(Function::V2GetDeviceMultiUtilizationRatePeriod, dev_id);
    guard(|| {
        if period < 1 {
            return Err(code::INVALID_PARAMETER);
        }
        // SAFETY: the caller's pointer goes on under the same contract.
        unsafe { telemetry::multi_utilization(call, util_info) }
    })
}

/// The driver version (`simulation.driver_version`).
///
/// # Safety
/// `dcmi_ver` must be null or point to `buf_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_dcmi_version(dcmi_ver: *mut c_char, buf_size: c_int) -> c_int {
    // SAFETY: the caller's buffer goes on under the same contract.
    unsafe { init::driver_version(Function::V2GetDcmiVersion, dcmi_ver, buf_size) }
}

/// The chip's electronic label.
///
/// # Safety
/// `elabel_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_device_elabel_info(dev_id: c_int, elabel_info: *mut dcmi_elabel_info) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.resolve(ChipCall::v2(Function::V2GetDeviceElabelInfo, dev_id))?;
        // SAFETY: null or the caller's struct.
        unsafe { identity::write_elabel(&sim, index, elabel_info) }
    })
}

/// Packet counters of the unified-bus port `ub_port_info` names (`[card.chip.ub]`; a port the chip
/// does not have: -8001).
///
/// # Safety
/// `ub_port_info` must be null or readable; `port_pkt_stats_info` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_port_pkt_stats_info(
    dev_id: c_int,
    ub_port_info: *mut dcmi_ub_port_info,
    port_pkt_stats_info: *mut dcmi_port_pkt_stats_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: each is null or the caller's struct.
        let (port, target) = unsafe { (super::input(ub_port_info.cast_const())?, out(port_pkt_stats_info)?) };
        let index = sim.resolve(ChipCall::v2(Function::V2GetPortPktStatsInfo, dev_id))?;
        let ub = sim.config(index).1.ub;
        let die = u32::try_from(port.udie_id).map_err(|_| code::INVALID_PARAMETER)?;
        let port_id = u32::try_from(port.port_id).map_err(|_| code::INVALID_PARAMETER)?;
        if die >= ub.dies || port_id >= ub.ports {
            return Err(code::INVALID_PARAMETER);
        }
        *target = port_counters(&sim, ub);
        Ok(())
    })
}

/// Counters that grow at the topology's rates since the instance started.
fn port_counters(sim: &Sim, ub: crate::topology::UbPorts) -> dcmi_port_pkt_stats_info {
    let elapsed_ms = sim.elapsed_ms();
    let count = |per_s: u64| per_s.saturating_mul(elapsed_ms) / 1000;
    let received = count(ub.rx_packets_per_s);
    let sent = count(ub.tx_packets_per_s);
    let mut stats = dcmi_port_pkt_stats_info { port_mode: 1, ..Default::default() };
    stats.ub_glb_ipv4_pkt_cnt_rx = received;
    stats.rx_busi_flit_num = received.saturating_mul(4);
    stats.to_link_pkt_cnt_rx = received;
    stats.ub_glb_ipv4_pkt_cnt_tx = sent;
    stats.tx_busi_flit_num = sent.saturating_mul(4);
    stats.crc_error_sum = ub.crc_errors_per_hour.saturating_mul(elapsed_ms) / 3_600_000;
    stats
}

/// URMA devices of the chip: one per chip with UB ports, none otherwise.
///
/// # Safety
/// `dev_cnt` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_urma_device_cnt(dev_id: c_int, dev_cnt: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(dev_cnt) }?;
        let index = sim.resolve(ChipCall::v2(Function::V2GetUrmaDeviceCnt, dev_id))?;
        *target = u32::from(sim.config(index).1.ub.ports > 0);
        Ok(())
    })
}

/// The EIDs of URMA device `dev_index`: one IPv4-mapped EID per chip (10.<phy>.0.1).
///
/// # Safety
/// `eid_list` must be null or hold `*eid_cnt` entries; `eid_cnt` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmiv2_get_eid_list_by_urma_dev_index(
    dev_id: c_int,
    dev_index: c_uint,
    eid_list: *mut dcmi_urma_eid_info_t,
    eid_cnt: *mut c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let count = unsafe { out(eid_cnt) }?;
        // SAFETY: the caller provides `*eid_cnt` entries.
        let entries = unsafe { out_slice(eid_list, *count as usize) }?;
        let index = sim.resolve(ChipCall::v2(Function::V2GetEidListByUrmaDevIndex, dev_id))?;
        let chip = sim.config(index).1;
        if chip.ub.ports == 0 || dev_index != 0 {
            return Err(code::INVALID_PARAMETER);
        }
        let mut raw = [0u8; 16];
        raw[10] = 0xff;
        raw[11] = 0xff;
        raw[12..].copy_from_slice(&[10, chip.phy_id as u8, 0, 1]);
        entries[0] = dcmi_urma_eid_info_t { eid: dcmi_sys::dcmi_urma_eid_t { raw }, eid_index: 0 };
        *count = 1;
        Ok(())
    })
}

v2_twin!(/// UB ping-mesh tasks are not modelled: -8255.
    dcmiv2_start_ub_ping_mesh => cluster::start_ub_ping_mesh, V2StartUbPingMesh(
        count: c_int, ubping_mesh: *mut dcmi_ub_ping_mesh_operate));
v2_twin!(/// Not modelled: -8255.
    dcmiv2_get_ub_ping_mesh_info => cluster::ub_ping_mesh_info, V2GetUbPingMeshInfo(
        task_id: c_int, ub_ping_mesh_reply: *mut dcmi_ub_ping_mesh_info, mesh_reply_size: c_int, count: *mut c_int));
v2_twin!(/// Not modelled: -8255.
    dcmiv2_get_ub_ping_mesh_state => cluster::ub_ping_mesh_state, V2GetUbPingMeshState(
        task_id: c_int, state: *mut c_uint));

/// Not modelled: -8255.
#[no_mangle]
pub extern "C" fn dcmiv2_stop_ub_ping_mesh(dev_id: c_int, task_id: c_int) -> c_int {
    cluster::stop_ub_ping_mesh(ChipCall::v2(Function::V2StopUbPingMesh, dev_id), task_id)
}
