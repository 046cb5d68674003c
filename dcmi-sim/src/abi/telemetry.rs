//! Telemetry: power, temperature, voltage, clocks, utilization, memory, ECC, processes, bandwidth.
//!
//! Values come from [`crate::telemetry::Sampler`] at the current tick; overrides set by the overlay
//! file replace the topology's signal. Nothing here allocates.

use std::os::raw::{c_int, c_uint, c_ulong};

use dcmi_sys::{
    dcmi_device_type, dcmi_ecc_info, dcmi_freq_type, dcmi_get_memory_info_stru, dcmi_hbm_info,
    dcmi_hccs_bandwidth_info, dcmi_memory_info_stru, dcmi_multi_utilization_info, dcmi_pcie_link_bandwidth_info,
    dcmi_proc_mem_info,
};

use super::{card_first_chip, guard, out, out_slice, sampler, sim};
use crate::capabilities;
use crate::function::Function;
use crate::state::{code, ChipCall};

/// Chip power in 0.1 W (not on 310P).
///
/// # Safety
/// `power` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_power_info(card_id: c_int, device_id: c_int, power: *mut c_int) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::power(ChipCall::v1(Function::GetDevicePowerInfo, card_id, device_id), power) }
}

/// The body of `dcmi_get_device_power_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_power_info`.
pub(crate) unsafe fn power(call: ChipCall, power: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(power) }?;
        let index = sim.resolve(call)?;
        let overriding = sim.chips[index].dynamic.lock().power;
        *target = sampler(&sim).power(sim.config(index).1, overriding.as_ref());
        Ok(())
    })
}

/// Card power from the MCU in 0.1 W (310P cards).
///
/// # Safety
/// `power` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_mcu_get_power_info(card_id: c_int, power: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(power) }?;
        let index = card_first_chip(&sim, card_id)?;
        sim.indexed_call(Function::McuGetPowerInfo, index)?;
        *target = sampler(&sim).mcu_power(sim.config(index).0);
        Ok(())
    })
}

/// Chip temperature in °C.
///
/// # Safety
/// `temperature` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_temperature(
    card_id: c_int,
    device_id: c_int,
    temperature: *mut c_int,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::temperature(ChipCall::v1(Function::GetDeviceTemperature, card_id, device_id), temperature) }
}

/// The body of `dcmi_get_device_temperature` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_temperature`.
pub(crate) unsafe fn temperature(call: ChipCall, temperature: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(temperature) }?;
        let index = sim.resolve(call)?;
        let overriding = sim.chips[index].dynamic.lock().temperature;
        *target = sampler(&sim).temperature(sim.config(index).1, overriding.as_ref());
        Ok(())
    })
}

/// Voltage in 0.01 V.
///
/// # Safety
/// `voltage` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_voltage(card_id: c_int, device_id: c_int, voltage: *mut c_uint) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::voltage(ChipCall::v1(Function::GetDeviceVoltage, card_id, device_id), voltage) }
}

/// The body of `dcmi_get_device_voltage` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_voltage`.
pub(crate) unsafe fn voltage(call: ChipCall, voltage: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(voltage) }?;
        let index = sim.resolve(call)?;
        *target = sampler(&sim).voltage(sim.config(index).1);
        Ok(())
    })
}

/// Clock in MHz of one frequency type (the family's supported set; others -8255, unknown -8001).
///
/// # Safety
/// `frequency` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_frequency(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_freq_type,
    frequency: *mut c_uint,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::frequency(ChipCall::v1(Function::GetDeviceFrequency, card_id, device_id), input_type, frequency) }
}

/// The body of `dcmi_get_device_frequency` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_frequency`.
pub(crate) unsafe fn frequency(call: ChipCall, input_type: dcmi_freq_type, frequency: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(frequency) }?;
        let index = sim.resolve(call)?;
        let freq_type = c_int::try_from(input_type.0).map_err(|_| code::INVALID_PARAMETER)?;
        if !capabilities::freq_type::ALL.contains(&freq_type) {
            return Err(code::INVALID_PARAMETER);
        }
        *target = sampler(&sim).frequency(sim.config(index).1, freq_type).ok_or(code::NOT_SUPPORTED)?;
        Ok(())
    })
}

/// Utilization in percent of one unit type (the family's supported set; others -8255, unknown -8001).
///
/// # Safety
/// `utilization_rate` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_utilization_rate(
    card_id: c_int,
    device_id: c_int,
    input_type: c_int,
    utilization_rate: *mut c_uint,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::utilization(
            ChipCall::v1(Function::GetDeviceUtilizationRate, card_id, device_id),
            input_type,
            utilization_rate,
        )
    }
}

/// The body of `dcmi_get_device_utilization_rate` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_utilization_rate`.
pub(crate) unsafe fn utilization(call: ChipCall, input_type: c_int, utilization_rate: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(utilization_rate) }?;
        let index = sim.resolve(call)?;
        if !capabilities::util_type::ALL.contains(&input_type) {
            return Err(code::INVALID_PARAMETER);
        }
        let overriding = sim.chips[index].dynamic.lock().aicore_utilization;
        *target = sampler(&sim)
            .utilization(sim.config(index).1, input_type, overriding.as_ref())
            .ok_or(code::NOT_SUPPORTED)?;
        Ok(())
    })
}

/// The body of the multi-utilization calls of both API families.
///
/// # Safety
/// `util_info` must be null or writable.
pub(crate) unsafe fn multi_utilization(
    call: ChipCall,
    util_info: *mut dcmi_multi_utilization_info,
) -> super::CallResult {
    let sim = sim()?;
    // SAFETY: null or the caller's struct.
    let target = unsafe { out(util_info) }?;
    let index = sim.resolve(call)?;
    let overriding = sim.chips[index].dynamic.lock().aicore_utilization;
    let [aic, aiv, aicore, npu] = sampler(&sim).multi_utilization(sim.config(index).1, overriding.as_ref());
    *target = dcmi_multi_utilization_info {
        aic_util: aic,
        aiv_util: aiv,
        aicore_util: aicore,
        npu_util: npu,
        reserved: [0; 8],
    };
    Ok(())
}

/// AI Cube, vector, AI Core and NPU utilization in one call.
///
/// # Safety
/// `util_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_multi_utilization_rate(
    card_id: c_int,
    device_id: c_int,
    util_info: *mut dcmi_multi_utilization_info,
) -> c_int {
    let call = ChipCall::v1(Function::GetDeviceMultiUtilizationRate, card_id, device_id);
    // SAFETY: the caller's pointer goes on under the same contract.
    guard(|| unsafe { multi_utilization(call, util_info) })
}

/// As `dcmi_get_device_multi_utilization_rate`, averaged over `period` s (≥ 1; the simulator's
/// values are already per tick, so the period only gets validated).
///
/// # Safety
/// `util_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_multi_utilization_rate_period(
    card_id: c_int,
    device_id: c_int,
    util_info: *mut dcmi_multi_utilization_info,
    period: c_int,
) -> c_int {
    guard(|| {
        if period < 1 {
            return Err(code::INVALID_PARAMETER);
        }
        let call = ChipCall::v1(Function::GetDeviceMultiUtilizationRatePeriod, card_id, device_id);
        // SAFETY: the caller's pointer goes on under the same contract.
        unsafe { multi_utilization(call, util_info) }
    })
}

/// HBM size/usage in MB, clock, temperature and bandwidth utilization (910 family).
///
/// # Safety
/// `hbm_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_hbm_info(
    card_id: c_int,
    device_id: c_int,
    hbm_info: *mut dcmi_hbm_info,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::hbm_info(ChipCall::v1(Function::GetDeviceHbmInfo, card_id, device_id), hbm_info) }
}

/// The body of `dcmi_get_device_hbm_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_hbm_info`.
pub(crate) unsafe fn hbm_info(call: ChipCall, hbm_info: *mut dcmi_hbm_info) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(hbm_info) }?;
        let index = sim.resolve(call)?;
        let hbm = sampler(&sim).hbm(sim.config(index).1);
        *target = dcmi_hbm_info {
            memory_size: hbm.size_mb,
            freq: hbm.freq_mhz,
            memory_usage: hbm.usage_mb,
            temp: hbm.temperature,
            bandwith_util_rate: hbm.bandwidth_util,
        };
        Ok(())
    })
}

/// DDR memory in MB (not on 910B / A3).
///
/// # Safety
/// `memory_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_memory_info_v3(
    card_id: c_int,
    device_id: c_int,
    memory_info: *mut dcmi_get_memory_info_stru,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(memory_info) }?;
        let index = sim.chip_call(Function::GetDeviceMemoryInfoV3, card_id, device_id)?;
        let chip = sim.config(index).1;
        let ddr = sampler(&sim).ddr(chip);
        let hugepage_free_mb = chip.ddr.hugepages_free * chip.ddr.hugepage_size_kb / 1024;
        *target = dcmi_get_memory_info_stru {
            memory_size: ddr.size_mb,
            memory_available: (ddr.available_mb + hugepage_free_mb).min(ddr.size_mb),
            freq: ddr.freq_mhz,
            hugepagesize: chip.ddr.hugepage_size_kb as c_ulong,
            hugepages_total: chip.ddr.hugepages_total as c_ulong,
            hugepages_free: chip.ddr.hugepages_free as c_ulong,
            utiliza: ddr.utilization,
            reserve: [0; 60],
        };
        Ok(())
    })
}

/// Legacy DDR memory summary.
///
/// # Safety
/// `device_memory_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_memory_info(
    card_id: c_int,
    device_id: c_int,
    device_memory_info: *mut dcmi_memory_info_stru,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(device_memory_info) }?;
        let index = sim.chip_call(Function::GetMemoryInfo, card_id, device_id)?;
        let ddr = sampler(&sim).ddr(sim.config(index).1);
        *target = dcmi_memory_info_stru { memory_size: ddr.size_mb, freq: ddr.freq_mhz, utiliza: ddr.utilization };
        Ok(())
    })
}

/// ECC counters of DDR (0, where the chip has DDR) or HBM (2, 910 family).
///
/// # Safety
/// `device_ecc_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_ecc_info(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_device_type,
    device_ecc_info: *mut dcmi_ecc_info,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::ecc_info(ChipCall::v1(Function::GetDeviceEccInfo, card_id, device_id), input_type, device_ecc_info) }
}

/// The body of `dcmi_get_device_ecc_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_ecc_info`.
pub(crate) unsafe fn ecc_info(
    call: ChipCall,
    input_type: dcmi_device_type,
    device_ecc_info: *mut dcmi_ecc_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(device_ecc_info) }?;
        let index = sim.resolve(call)?;
        if !capabilities::supports_ecc_type(sim.chips[index].chip_type, input_type.0 as c_int) {
            return Err(code::NOT_SUPPORTED);
        }
        let ecc = sim.chips[index].dynamic.lock().ecc;
        *target = dcmi_ecc_info {
            enable_flag: c_int::from(ecc.enable_flag),
            single_bit_error_cnt: ecc.single_bit_error_cnt,
            double_bit_error_cnt: ecc.double_bit_error_cnt,
            total_single_bit_error_cnt: ecc.total_single_bit_error_cnt,
            total_double_bit_error_cnt: ecc.total_double_bit_error_cnt,
            single_bit_isolated_pages_cnt: ecc.single_bit_isolated_pages_cnt,
            double_bit_isolated_pages_cnt: ecc.double_bit_isolated_pages_cnt,
            single_bit_next_isolated_pages_cnt: ecc.single_bit_next_isolated_pages_cnt,
            double_bit_next_isolated_pages_cnt: ecc.double_bit_next_isolated_pages_cnt,
        };
        Ok(())
    })
}

/// Processes using the chip with their memory in bytes (at most 32 entries are written).
///
/// # Safety
/// `proc_info` must be null or hold 32 entries; `proc_num` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_resource_info(
    card_id: c_int,
    device_id: c_int,
    proc_info: *mut dcmi_proc_mem_info,
    proc_num: *mut c_int,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::processes(ChipCall::v1(Function::GetDeviceResourceInfo, card_id, device_id), proc_info, proc_num) }
}

/// The body of `dcmi_get_device_resource_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_resource_info`.
pub(crate) unsafe fn processes(call: ChipCall, proc_info: *mut dcmi_proc_mem_info, proc_num: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let count = unsafe { out(proc_num) }?;
        // SAFETY: the caller's array holds 32 entries (MaxProcNum).
        let entries = unsafe { out_slice(proc_info, 32) }?;
        let index = sim.resolve(call)?;
        let dynamic = sim.chips[index].dynamic.lock();
        let mut written = 0;
        for (entry, process) in entries.iter_mut().zip(dynamic.processes.iter()) {
            *entry = dcmi_proc_mem_info { proc_id: process.pid, proc_mem_usage: process.memory_bytes as c_ulong };
            written += 1;
        }
        *count = written;
        Ok(())
    })
}

/// PCIe bandwidth `[min, max, avg]` in MB/ms over `profiling_time` ms (1..2000), derived from the
/// memory-bandwidth utilization (910B).
///
/// # Safety
/// `pcie_link_bandwidth_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_pcie_link_bandwidth_info(
    card_id: c_int,
    device_id: c_int,
    pcie_link_bandwidth_info: *mut dcmi_pcie_link_bandwidth_info,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::pcie_link_bandwidth(
            ChipCall::v1(Function::GetPcieLinkBandwidthInfo, card_id, device_id),
            pcie_link_bandwidth_info,
        )
    }
}

/// The body of `dcmi_get_pcie_link_bandwidth_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_pcie_link_bandwidth_info`.
pub(crate) unsafe fn pcie_link_bandwidth(
    call: ChipCall,
    pcie_link_bandwidth_info: *mut dcmi_pcie_link_bandwidth_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(pcie_link_bandwidth_info) }?;
        if !(1..=2000).contains(&target.profiling_time) {
            return Err(code::INVALID_PARAMETER);
        }
        let index = sim.resolve(call)?;
        let percent = sampler(&sim)
            .utilization(sim.config(index).1, capabilities::util_type::MEMORY_BANDWIDTH, None)
            .unwrap_or(0);
        // A PCIe 4.0 x16 link carries about 32 MB/ms.
        let average = 32 * percent / 100;
        let triple = [average / 2, average + average / 2, average];
        target.tx_p_bw = triple;
        target.tx_np_bw = triple.map(|value| value / 4);
        target.tx_cpl_bw = triple.map(|value| value / 2);
        target.tx_np_lantency = [1, 4, 2];
        target.rx_p_bw = triple;
        target.rx_np_bw = triple.map(|value| value / 4);
        target.rx_cpl_bw = triple.map(|value| value / 2);
        Ok(())
    })
}

/// Links counted in HCCS bandwidth and statistics.
pub(crate) const HCCS_LINKS: usize = 8;

/// HCCS bandwidth per link and in total (MB/ms) over `profiling_time` ms (1..1000), derived from the
/// HBM-bandwidth utilization (910B, A3).
///
/// # Safety
/// `hccs_bandwidth_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_hccs_link_bandwidth_info(
    card_id: c_int,
    device_id: c_int,
    hccs_bandwidth_info: *mut dcmi_hccs_bandwidth_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(hccs_bandwidth_info) }?;
        if !(1..=1000).contains(&target.profiling_time) {
            return Err(code::INVALID_PARAMETER);
        }
        let index = sim.chip_call(Function::GetHccsLinkBandwidthInfo, card_id, device_id)?;
        let percent =
            sampler(&sim).utilization(sim.config(index).1, capabilities::util_type::HBM_BANDWIDTH, None).unwrap_or(0);
        // One HCCS link carries about 56 MB/ms.
        let per_link = 56.0 * f64::from(percent) / 100.0;
        target.tx_bandwidth = [0.0; 16];
        target.rx_bandwidth = [0.0; 16];
        for link in 0..HCCS_LINKS {
            target.tx_bandwidth[link] = per_link;
            target.rx_bandwidth[link] = per_link;
        }
        target.total_txbw = per_link * HCCS_LINKS as f64;
        target.total_rxbw = per_link * HCCS_LINKS as f64;
        Ok(())
    })
}
