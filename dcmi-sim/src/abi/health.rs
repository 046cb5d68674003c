//! Health, raised fault codes, fault-event subscription, and RoCE network health and address.

use std::os::raw::{c_int, c_uint};
use std::sync::Arc;

use dcmi_sys::{
    dcmi_dms_fault_event, dcmi_event, dcmi_event_event_t, dcmi_event_filter, dcmi_event_type,
    dcmi_fault_event_callback, dcmi_ip_addr, dcmi_ip_addr_type, dcmi_ip_addr_u_addr, dcmi_port_type,
    dcmi_rdfx_detect_result,
};

use super::{copy_c_str, guard, out, out_slice, sim};
use crate::events::{EventFilter, FaultEvent, FilterFlags};
use crate::function::Function;
use crate::state::{code, ChipCall};

/// Health 0..3 (the worse of the set value and the raised faults' severities); -8012 when dropped.
///
/// # Safety
/// `health` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_health(card_id: c_int, device_id: c_int, health: *mut c_uint) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::health(ChipCall::v1(Function::GetDeviceHealth, card_id, device_id), health) }
}

/// The body of `dcmi_get_device_health` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_health`.
pub(crate) unsafe fn health(call: ChipCall, health: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(health) }?;
        let index = sim.resolve(call)?;
        *target = sim.chips[index].dynamic.lock().effective_health();
        Ok(())
    })
}

/// Raised fault codes: `*error_count` = how many are raised; up to `list_len` are written.
///
/// # Safety
/// `error_count` must be null or writable; `error_code_list` null or `list_len` writable entries.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_errorcode_v2(
    card_id: c_int,
    device_id: c_int,
    error_count: *mut c_int,
    error_code_list: *mut c_uint,
    list_len: c_uint,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::error_codes(
            ChipCall::v1(Function::GetDeviceErrorcodeV2, card_id, device_id),
            error_count,
            error_code_list,
            list_len,
        )
    }
}

/// The body of `dcmi_get_device_errorcode_v2` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_errorcode_v2`.
pub(crate) unsafe fn error_codes(
    call: ChipCall,
    error_count: *mut c_int,
    error_code_list: *mut c_uint,
    list_len: c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let count = unsafe { out(error_count) }?;
        // SAFETY: null or `list_len` entries.
        let list = unsafe { out_slice(error_code_list, list_len as usize) }?;
        let index = sim.resolve(call)?;
        let dynamic = sim.chips[index].dynamic.lock();
        for (slot, (code, _)) in list.iter_mut().zip(dynamic.faults.iter()) {
            *slot = *code;
        }
        *count = dynamic.faults.len().min(list.len()) as c_int;
        Ok(())
    })
}

/// Legacy form: `*error_count` raised faults, the first one written to `*error_code` (the caller's
/// buffer size is unknown, so only one entry is written), `*error_width` = 4 bytes.
///
/// # Safety
/// Each pointer must be null or a writable element.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_errorcode(
    card_id: c_int,
    device_id: c_int,
    error_count: *mut c_int,
    error_code: *mut c_uint,
    error_width: *mut c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: each is null or the caller's element.
        let (count, first, width) = unsafe { (out(error_count)?, out(error_code)?, out(error_width)?) };
        let index = sim.chip_call(Function::GetDeviceErrorcode, card_id, device_id)?;
        let dynamic = sim.chips[index].dynamic.lock();
        *count = dynamic.faults.len() as c_int;
        *first = dynamic.faults.first().map_or(0, |(code, _)| *code);
        *width = 4;
        Ok(())
    })
}

/// Subscribes `callback` to fault events of one chip or, with card = device = -1, of all chips.
/// Only the 910 family supports it on V1 (-8255 on 310/310P); Ascend950 through the V2 twin. Events arrive on a simulator thread with
/// `deviceid` = logic id, `event_id` = fault code, severity and assertion (1 raised, 0 cleared).
///
/// # Safety
/// `callback` must be null (-8001) or a function that may be called from another thread for as
/// long as the library stays loaded.
#[no_mangle]
pub unsafe extern "C" fn dcmi_subscribe_fault_event(
    card_id: c_int,
    device_id: c_int,
    filter: dcmi_event_filter,
    callback: dcmi_fault_event_callback,
) -> c_int {
    let call = ChipCall::v1(Function::SubscribeFaultEvent, card_id, device_id);
    // SAFETY: the caller's callback goes on under the same contract.
    unsafe { subscribe(call, card_id == -1 && device_id == -1, filter, callback) }
}

/// The body of `dcmi_subscribe_fault_event` and of its V2 twin: `every_chip` subscribes to all chips
/// (V1: card = device = -1; V2: dev_id = -1), otherwise to the chip `call` names.
///
/// # Safety
/// As `dcmi_subscribe_fault_event`.
pub(crate) unsafe fn subscribe(
    call: ChipCall,
    every_chip: bool,
    filter: dcmi_event_filter,
    callback: dcmi_fault_event_callback,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        let callback = callback.ok_or(code::INVALID_PARAMETER)?;
        let scope = if every_chip {
            sim.global_call(call.function)?;
            if !sim.chips.iter().any(|chip| chip.supports(call.function)) {
                return Err(code::NOT_SUPPORTED);
            }
            None
        } else {
            let index = sim.resolve(call)?;
            Some(sim.chips[index].logic_id)
        };
        let filter = EventFilter {
            flags: FilterFlags::from_bits_retain(filter.filter_flag),
            event_id: filter.event_id,
            severity: filter.severity,
            node_type: filter.node_type,
        };
        sim.events.subscribe(scope, filter, Arc::new(move |event: &FaultEvent| deliver(callback, event)));
        Ok(())
    })
}

/// Calls a C subscriber with one event.
fn deliver(callback: unsafe extern "C" fn(*mut dcmi_event), event: &FaultEvent) {
    let mut dms = dcmi_dms_fault_event {
        event_id: event.code,
        deviceid: event.logic_id as u16,
        node_type: 0,
        node_id: 0,
        sub_node_type: 0,
        sub_node_id: 0,
        severity: event.severity,
        assertion: event.assertion,
        event_serial_num: event.serial,
        notify_serial_num: event.serial,
        alarm_raised_time: event.raised_time,
        event_name: [0; 256],
        additional_info: [0; 32],
        resv: [0; 32],
    };
    let name = if event.assertion == crate::events::ASSERTION_RAISED {
        "simulated fault raised"
    } else {
        "simulated fault cleared"
    };
    copy_c_str(&mut dms.event_name, name);
    let mut raw =
        dcmi_event { type_: dcmi_event_type::DCMI_DMS_FAULT_EVENT, event_t: dcmi_event_event_t { dms_event: dms } };
    // SAFETY: `raw` is a valid, initialised event that outlives the call; the subscriber promised a
    // function callable from this thread.
    unsafe { callback(&mut raw) };
}

/// RoCE network health: the chip's `network_health` (0 OK); 910 family.
///
/// # Safety
/// `result` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_network_health(
    card_id: c_int,
    device_id: c_int,
    result: *mut dcmi_rdfx_detect_result,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::network_health(ChipCall::v1(Function::GetDeviceNetworkHealth, card_id, device_id), result) }
}

/// The body of `dcmi_get_device_network_health` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_network_health`.
pub(crate) unsafe fn network_health(call: ChipCall, result: *mut dcmi_rdfx_detect_result) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's enum.
        let target = unsafe { out(result) }?;
        let index = sim.resolve(call)?;
        *target = dcmi_rdfx_detect_result(sim.config(index).1.network_health);
        Ok(())
    })
}

/// RoCE IPv4 address and mask of port 0 (910 family; -8255 without `roce_ip` or when IPv6 is asked).
///
/// # Safety
/// `ip` and `mask` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_ip(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_port_type,
    port_id: c_int,
    ip: *mut dcmi_ip_addr,
    mask: *mut dcmi_ip_addr,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: each is null or the caller's struct.
        let (ip, mask) = unsafe { (out(ip)?, out(mask)?) };
        let index = sim.chip_call(Function::GetDeviceIp, card_id, device_id)?;
        if input_type != dcmi_port_type::DCMI_ROCE_PORT || port_id != 0 {
            return Err(code::INVALID_PARAMETER);
        }
        if ip.ip_type == dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V6 {
            return Err(code::NOT_SUPPORTED);
        }
        let chip = sim.config(index).1;
        let address = chip.roce_ip.as_deref().ok_or(code::NOT_SUPPORTED)?;
        let address: std::net::Ipv4Addr = address.parse().map_err(|_| code::INTERNAL_ERROR)?;
        let netmask: std::net::Ipv4Addr = chip.roce_netmask.parse().map_err(|_| code::INTERNAL_ERROR)?;
        let v4 = |octets: [u8; 4]| {
            let mut bytes = [0u8; 16];
            bytes[..4].copy_from_slice(&octets);
            dcmi_ip_addr { u_addr: dcmi_ip_addr_u_addr { ip6: bytes }, ip_type: dcmi_ip_addr_type::DCMI_IPADDR_TYPE_V4 }
        };
        *ip = v4(address.octets());
        *mask = v4(netmask.octets());
        Ok(())
    })
}
