//! Cards, chips and the id conversions (card/device ↔ logic ↔ physical).

use std::os::raw::{c_int, c_uint};

use dcmi_sys::dcmi_unit_type;

use super::{guard, out, out_slice, sim};
use crate::function::Function;
use crate::state::{code, ChipCall, Sim};

fn card_list(
    sim: &Sim,
    function: Function,
    card_num: *mut c_int,
    card_list: *mut c_int,
    list_len: c_int,
) -> super::CallResult {
    sim.global_call(function)?;
    // SAFETY: `card_num` is null or the caller's int.
    let count = unsafe { out(card_num) }?;
    let ids = sim.card_ids();
    let capacity = usize::try_from(list_len).map_err(|_| code::INVALID_PARAMETER)?;
    if capacity < ids.len() {
        return Err(code::INVALID_PARAMETER);
    }
    // SAFETY: the caller provides `list_len` ints at `card_list`.
    let list = unsafe { out_slice(card_list, capacity) }?;
    list[..ids.len()].copy_from_slice(ids);
    *count = ids.len() as c_int;
    Ok(())
}

/// Card count and ids (`list_len` must hold every card: 64 always does).
///
/// # Safety
/// `card_num` must be null or a writable int; `card_list` null or `list_len` writable ints.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_card_list(card_num: *mut c_int, card_list: *mut c_int, list_len: c_int) -> c_int {
    guard(|| self::card_list(&*sim()?, Function::GetCardList, card_num, card_list, list_len))
}

/// Same as `dcmi_get_card_list` (exported by libdcmi, absent from the vendor header).
///
/// # Safety
/// As `dcmi_get_card_list`.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_card_num_list(card_num: *mut c_int, card_list: *mut c_int, list_len: c_int) -> c_int {
    guard(|| self::card_list(&*sim()?, Function::GetCardNumList, card_num, card_list, list_len))
}

/// Number of chips on a card.
///
/// # Safety
/// `device_num` must be null or a writable int.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_num_in_card(card_id: c_int, device_num: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        sim.global_call(Function::GetDeviceNumInCard)?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(device_num) }?;
        *target = sim.card(card_id).ok_or(code::INVALID_DEVICE_ID)?.chips.len() as c_int;
        Ok(())
    })
}

/// Highest chip id on the card (`device_id_max` = chip count − 1) and the MCU/CPU unit ids.
///
/// # Safety
/// Each pointer must be null or a writable int.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_id_in_card(
    card_id: c_int,
    device_id_max: *mut c_int,
    mcu_id: *mut c_int,
    cpu_id: *mut c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        sim.global_call(Function::GetDeviceIdInCard)?;
        // SAFETY: each is null or the caller's int.
        let (max, mcu, cpu) = unsafe { (out(device_id_max)?, out(mcu_id)?, out(cpu_id)?) };
        let card = sim.card(card_id).ok_or(code::INVALID_DEVICE_ID)?;
        *max = card.chips.iter().map(|chip| chip.device_id).max().unwrap_or(0);
        *mcu = card.mcu_id;
        *cpu = card.cpu_id;
        Ok(())
    })
}

/// Unit type behind (card, device): always NPU for simulated chips.
///
/// # Safety
/// `device_type` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_type(
    card_id: c_int,
    device_id: c_int,
    device_type: *mut dcmi_unit_type,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::device_type(ChipCall::v1(Function::GetDeviceType, card_id, device_id), device_type) }
}

/// The body of `dcmi_get_device_type` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_type`.
pub(crate) unsafe fn device_type(call: ChipCall, device_type: *mut dcmi_unit_type) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's enum.
        let target = unsafe { out(device_type) }?;
        sim.resolve(call)?;
        *target = dcmi_unit_type::NPU_TYPE;
        Ok(())
    })
}

/// Logic id of (card, device).
///
/// # Safety
/// `device_logic_id` must be null or a writable int.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_logic_id(
    device_logic_id: *mut c_int,
    card_id: c_int,
    device_id: c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let target = unsafe { out(device_logic_id) }?;
        let index = sim.chip_call(Function::GetDeviceLogicId, card_id, device_id)?;
        *target = sim.chips[index].logic_id as c_int;
        Ok(())
    })
}

/// Physical id of a logic id.
///
/// # Safety
/// `phyid` must be null or a writable unsigned int.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_phyid_from_logicid(logicid: c_uint, phyid: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(phyid) }?;
        let index = sim.chip_by_logic(logicid).ok_or(code::INVALID_DEVICE_ID)?;
        sim.indexed_call(Function::GetDevicePhyidFromLogicid, index)?;
        *target = sim.config(index).1.phy_id;
        Ok(())
    })
}

/// Logic id of a physical id.
///
/// # Safety
/// `logicid` must be null or a writable unsigned int.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_logicid_from_phyid(phyid: c_uint, logicid: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(logicid) }?;
        let index = sim.chip_by_phy(phyid).ok_or(code::INVALID_DEVICE_ID)?;
        sim.indexed_call(Function::GetDeviceLogicidFromPhyid, index)?;
        *target = sim.chips[index].logic_id;
        Ok(())
    })
}

fn write_card_device(sim: &Sim, index: usize, card_id: *mut c_int, device_id: *mut c_int) -> super::CallResult {
    let (card, chip) = sim.config(index);
    // SAFETY: each is null or the caller's int.
    let (card_target, device_target) = unsafe { (out(card_id)?, out(device_id)?) };
    *card_target = card.card_id;
    *device_target = chip.device_id;
    Ok(())
}

/// (card, device) of a logic id.
///
/// # Safety
/// `card_id` and `device_id` must be null or writable ints.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_card_id_device_id_from_logicid(
    card_id: *mut c_int,
    device_id: *mut c_int,
    device_logic_id: c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        if card_id.is_null() || device_id.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        let index = sim.chip_by_logic(device_logic_id).ok_or(code::INVALID_DEVICE_ID)?;
        sim.indexed_call(Function::GetCardIdDeviceIdFromLogicid, index)?;
        write_card_device(&sim, index, card_id, device_id)
    })
}

/// (card, device) of a physical id.
///
/// # Safety
/// `card_id` and `device_id` must be null or writable ints.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_card_id_device_id_from_phyid(
    card_id: *mut c_int,
    device_id: *mut c_int,
    device_phy_id: c_uint,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        if card_id.is_null() || device_id.is_null() {
            return Err(code::INVALID_PARAMETER);
        }
        let index = sim.chip_by_phy(device_phy_id).ok_or(code::INVALID_DEVICE_ID)?;
        sim.indexed_call(Function::GetCardIdDeviceIdFromPhyid, index)?;
        write_card_device(&sim, index, card_id, device_id)
    })
}
