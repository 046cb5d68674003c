//! Hot reset and boot status.
//!
//! `dcmi_set_device_reset` starts a reset: for `simulation.reset_duration_ms` the chip answers
//! -8012 and its boot status goes 1 (BIOS), 2 (OS), then 16, the value the driver reports once
//! booted. A finished reset brings a dropped chip back and clears its faults.

use std::os::raw::c_int;

use dcmi_sys::{dcmi_boot_status, dcmi_reset_channel};

use super::{guard, out, sim};
use crate::function::Function;
use crate::state::code;

/// Starts a hot reset through the in-band (1) or out-of-band (0) channel.
#[no_mangle]
pub extern "C" fn dcmi_set_device_reset(card_id: c_int, device_id: c_int, channel_type: dcmi_reset_channel) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.chip_call(Function::SetDeviceReset, card_id, device_id)?;
        if channel_type != dcmi_reset_channel::INBAND_CHANNEL && channel_type != dcmi_reset_channel::OUTBAND_CHANNEL {
            return Err(code::INVALID_PARAMETER);
        }
        sim.start_reset(index);
        Ok(())
    })
}

/// 1: out-of-band reset is possible (910 family).
///
/// # Safety
/// `channel_state` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_outband_channel_state(
    card_id: c_int,
    device_id: c_int,
    channel_state: *mut c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(channel_state) }?;
        sim.chip_call(Function::GetDeviceOutbandChannelState, card_id, device_id)?;
        *target = 1;
        Ok(())
    })
}

/// Prepares an out-of-band reset (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmi_pre_reset_soc(card_id: c_int, device_id: c_int) -> c_int {
    guard(|| sim()?.chip_call(Function::PreResetSoc, card_id, device_id).map(drop))
}

/// Triggers a PCIe rescan (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmi_rescan_soc(card_id: c_int, device_id: c_int) -> c_int {
    guard(|| sim()?.chip_call(Function::RescanSoc, card_id, device_id).map(drop))
}

/// The card sharing the chip's network device (`brother_card_id`, default the card itself).
///
/// # Safety
/// `brother_card_id` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_netdev_brother_device(
    card_id: c_int,
    device_id: c_int,
    brother_card_id: *mut c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(brother_card_id) }?;
        let index = sim.chip_call(Function::GetNetdevBrotherDevice, card_id, device_id)?;
        let card = sim.config(index).0;
        *target = card.brother_card_id.unwrap_or(card.card_id);
        Ok(())
    })
}

/// Boot status: 16 when booted, 1/2 during a reset, 0 while dropped.
///
/// # Safety
/// `boot_status` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_boot_status(
    card_id: c_int,
    device_id: c_int,
    boot_status: *mut dcmi_boot_status,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's enum.
        let target = unsafe { out(boot_status) }?;
        let index = sim.chip_call(Function::GetDeviceBootStatus, card_id, device_id)?;
        *target = dcmi_boot_status(sim.boot_status(index) as u32);
        Ok(())
    })
}
