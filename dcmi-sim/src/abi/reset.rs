//! Hot reset and boot status.
//!
//! `dcmi_set_device_reset` starts a reset: for `simulation.reset_duration_ms` the chip answers
//! -8012 and its boot status goes 1 (BIOS), 2 (OS), then 16, the value the driver reports once
//! booted. A finished reset brings a dropped chip back and clears its faults. A reset of a chip of an Atlas 300I Duo
//! card resets both chips of the card ([`crate::topology::Card::resets_as_one`]).

use std::os::raw::c_int;

use dcmi_sys::{dcmi_boot_status, dcmi_reset_channel};

use super::{guard, out, sim};
use crate::function::Function;
use crate::state::{code, ChipCall};

/// Starts a hot reset through the in-band (1) or out-of-band (0) channel.
#[no_mangle]
pub extern "C" fn dcmi_set_device_reset(card_id: c_int, device_id: c_int, channel_type: dcmi_reset_channel) -> c_int {
    self::reset(ChipCall::v1(Function::SetDeviceReset, card_id, device_id), channel_type)
}

/// The body of `dcmi_set_device_reset` and of its V2 twin, for the chip `call` names.
pub(crate) fn reset(call: ChipCall, channel_type: dcmi_reset_channel) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = sim.resolve(call)?;
        if channel_type != dcmi_reset_channel::INBAND_CHANNEL && channel_type != dcmi_reset_channel::OUTBAND_CHANNEL {
            return Err(code::INVALID_PARAMETER);
        }
        // A card that resets as one (an Atlas 300I Duo) restarts every chip on it.
        let card = sim.chips[index].card_index;
        let whole_card = sim.config(index).0.resets_as_one();
        for (chip, state) in sim.chips.iter().enumerate() {
            if chip == index || (whole_card && state.card_index == card) {
                sim.start_reset(chip);
            }
        }
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
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::outband_channel_state(
            ChipCall::v1(Function::GetDeviceOutbandChannelState, card_id, device_id),
            channel_state,
        )
    }
}

/// The body of `dcmi_get_device_outband_channel_state` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_outband_channel_state`.
pub(crate) unsafe fn outband_channel_state(call: ChipCall, channel_state: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(channel_state) }?;
        sim.resolve(call)?;
        *target = 1;
        Ok(())
    })
}

/// Prepares an out-of-band reset (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmi_pre_reset_soc(card_id: c_int, device_id: c_int) -> c_int {
    self::pre_reset(ChipCall::v1(Function::PreResetSoc, card_id, device_id))
}

/// The body of `dcmi_pre_reset_soc` and of its V2 twin, for the chip `call` names.
pub(crate) fn pre_reset(call: ChipCall) -> c_int {
    guard(|| sim()?.resolve(call).map(drop))
}

/// Triggers a PCIe rescan (accepted, no effect).
#[no_mangle]
pub extern "C" fn dcmi_rescan_soc(card_id: c_int, device_id: c_int) -> c_int {
    self::rescan(ChipCall::v1(Function::RescanSoc, card_id, device_id))
}

/// The body of `dcmi_rescan_soc` and of its V2 twin, for the chip `call` names.
pub(crate) fn rescan(call: ChipCall) -> c_int {
    guard(|| sim()?.resolve(call).map(drop))
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
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::boot_status(ChipCall::v1(Function::GetDeviceBootStatus, card_id, device_id), boot_status) }
}

/// The body of `dcmi_get_device_boot_status` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_boot_status`.
pub(crate) unsafe fn boot_status(call: ChipCall, boot_status: *mut dcmi_boot_status) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's enum.
        let target = unsafe { out(boot_status) }?;
        let index = sim.resolve(call)?;
        *target = dcmi_boot_status(sim.boot_status(index) as u32);
        Ok(())
    })
}
