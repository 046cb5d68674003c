//! Identity of chips and cards: PCIe, chip strings, board, product, electronic label, die ids,
//! NUMA affinity, work mode.

use std::os::raw::{c_char, c_int, c_uchar, c_uint};

use dcmi_sys::{
    dcmi_board_info, dcmi_chip_info, dcmi_chip_info_v2, dcmi_die_id, dcmi_die_type, dcmi_elabel_info,
    dcmi_pcie_info_all,
};

use super::{card_first_chip, copy_c_str, copy_str, guard, out, out_slice, sim};
use crate::function::Function;
use crate::state::{code, ChipCall, Sim};

/// PCI ids and bus address.
///
/// # Safety
/// `pcie_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_pcie_info_v2(
    card_id: c_int,
    device_id: c_int,
    pcie_info: *mut dcmi_pcie_info_all,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::pcie_info(ChipCall::v1(Function::GetDevicePcieInfoV2, card_id, device_id), pcie_info) }
}

/// The body of `dcmi_get_device_pcie_info_v2` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_pcie_info_v2`.
pub(crate) unsafe fn pcie_info(call: ChipCall, pcie_info: *mut dcmi_pcie_info_all) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(pcie_info) }?;
        let index = sim.resolve(call)?;
        let pcie = &sim.config(index).1.pcie;
        let bdf = pcie.parsed_bdf().map_err(|_| code::INTERNAL_ERROR)?;
        *target = dcmi_pcie_info_all {
            venderid: pcie.vendor_id,
            subvenderid: pcie.subvendor_id,
            deviceid: pcie.device_id,
            subdeviceid: pcie.subdevice_id,
            domain: bdf.domain as c_int,
            bdf_busid: bdf.bus,
            bdf_deviceid: bdf.device,
            bdf_funcid: bdf.function,
            reserve: [0; 32],
        };
        Ok(())
    })
}

/// Chip type/name/version strings and AI-core count.
///
/// # Safety
/// `chip_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_chip_info(
    card_id: c_int,
    device_id: c_int,
    chip_info: *mut dcmi_chip_info,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(chip_info) }?;
        let index = sim.chip_call(Function::GetDeviceChipInfo, card_id, device_id)?;
        let chip = sim.config(index).1;
        *target = dcmi_chip_info::default();
        copy_str(&mut target.chip_type, CHIP_TYPE_STRING);
        copy_str(&mut target.chip_name, &chip.chip_name);
        copy_str(&mut target.chip_ver, &chip.chip_version);
        target.aicore_cnt = chip.aicore_count;
        Ok(())
    })
}

/// As `dcmi_get_device_chip_info` plus the NPU name.
///
/// # Safety
/// `chip_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_chip_info_v2(
    card_id: c_int,
    device_id: c_int,
    chip_info: *mut dcmi_chip_info_v2,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::chip_info_v2(ChipCall::v1(Function::GetDeviceChipInfoV2, card_id, device_id), chip_info) }
}

/// The body of `dcmi_get_device_chip_info_v2` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_chip_info_v2`.
pub(crate) unsafe fn chip_info_v2(call: ChipCall, chip_info: *mut dcmi_chip_info_v2) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(chip_info) }?;
        let index = sim.resolve(call)?;
        let chip = sim.config(index).1;
        *target = dcmi_chip_info_v2::default();
        copy_str(&mut target.chip_type, CHIP_TYPE_STRING);
        copy_str(&mut target.chip_name, &chip.chip_name);
        copy_str(&mut target.chip_ver, &chip.chip_version);
        target.aicore_cnt = chip.aicore_count;
        copy_str(&mut target.npu_name, &chip.npu_name);
        Ok(())
    })
}

/// The `chip_type` string the driver reports for every family ("Ascend"); the family is told by
/// chip name and board id (as `GetDevType` in Huawei's `Ascend/mind-cluster`,
/// `component/ascend-common/devmanager/common/utils.go`).
const CHIP_TYPE_STRING: &str = "Ascend";

/// Board, PCB, BOM and slot ids.
///
/// # Safety
/// `board_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_board_info(
    card_id: c_int,
    device_id: c_int,
    board_info: *mut dcmi_board_info,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::board_info(ChipCall::v1(Function::GetDeviceBoardInfo, card_id, device_id), board_info) }
}

/// The body of `dcmi_get_device_board_info` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_board_info`.
pub(crate) unsafe fn board_info(call: ChipCall, board_info: *mut dcmi_board_info) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(board_info) }?;
        let index = sim.resolve(call)?;
        let board = sim.config(index).1.board;
        *target = dcmi_board_info {
            board_id: board.board_id,
            pcb_id: board.pcb_id,
            bom_id: board.bom_id,
            slot_id: board.slot_id,
        };
        Ok(())
    })
}

/// Mainboard id.
///
/// # Safety
/// `mainboard_id` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_mainboard_id(card_id: c_int, device_id: c_int, mainboard_id: *mut c_uint) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::mainboard_id(ChipCall::v1(Function::GetMainboardId, card_id, device_id), mainboard_id) }
}

/// The body of `dcmi_get_mainboard_id` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_mainboard_id`.
pub(crate) unsafe fn mainboard_id(call: ChipCall, mainboard_id: *mut c_uint) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's unsigned int.
        let target = unsafe { out(mainboard_id) }?;
        let index = sim.resolve(call)?;
        *target = sim.config(index).1.mainboard_id;
        Ok(())
    })
}

/// Product type string of the card (310 family; -8255 elsewhere or when the topology has none).
///
/// # Safety
/// `product_type_str` must be null or point to `buf_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_product_type(
    card_id: c_int,
    device_id: c_int,
    product_type_str: *mut c_char,
    buf_size: c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        let size = usize::try_from(buf_size).map_err(|_| code::INVALID_PARAMETER)?;
        // SAFETY: null or `buf_size` writable bytes.
        let buffer = unsafe { out_slice(product_type_str, size) }?;
        let index = sim.chip_call(Function::GetProductType, card_id, device_id)?;
        let product = &sim.config(index).0.product_type;
        if product.is_empty() {
            return Err(code::NOT_SUPPORTED);
        }
        if size <= product.len() {
            return Err(code::INVALID_PARAMETER);
        }
        copy_c_str(buffer, product);
        Ok(())
    })
}

/// The smallest buffer `dcmi_get_version` accepts (the driver's `DRIVER_VERSION_MIN_LEN`; Huawei's DCMI API
/// reference: "the size of version_str, at least 64").
const VERSION_MIN_LEN: usize = 64;

/// The firmware version the chip runs (`firmware_version` of the topology's chip, else the default fake host's
/// firmware); `*len` receives the length written. A buffer under 64 bytes is -8001, as the driver refuses it.
///
/// # Safety
/// `version_str` must be null or point to `version_len` writable bytes; `len` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_version(
    card_id: c_int,
    device_id: c_int,
    version_str: *mut c_char,
    version_len: c_uint,
    len: *mut c_int,
) -> c_int {
    guard(|| {
        let sim = sim()?;
        let size = usize::try_from(version_len).map_err(|_| code::INVALID_PARAMETER)?;
        if size < VERSION_MIN_LEN {
            return Err(code::INVALID_PARAMETER);
        }
        // SAFETY: null or `version_len` writable bytes.
        let buffer = unsafe { out_slice(version_str, size) }?;
        // SAFETY: null or the caller's int.
        let written = unsafe { out(len) }?;
        let index = sim.chip_call(Function::GetVersion, card_id, device_id)?;
        let version = crate::topology::Topology::firmware_version_of(sim.config(index).1);
        copy_c_str(buffer, version);
        *written = c_int::try_from(version.len()).map_err(|_| code::INVALID_PARAMETER)?;
        Ok(())
    })
}

/// Electronic label of a card.
///
/// # Safety
/// `elabel_info` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_card_elabel_v2(card_id: c_int, elabel_info: *mut dcmi_elabel_info) -> c_int {
    guard(|| {
        let sim = sim()?;
        let index = card_first_chip(&sim, card_id)?;
        sim.indexed_call(Function::GetCardElabelV2, index)?;
        // SAFETY: null or the caller's struct.
        unsafe { write_elabel(&sim, index, elabel_info) }
    })
}

/// Writes the electronic label of chip `index`'s card (V2 reads it per chip; in a V2 topology every
/// chip's label is that of its `[[card]]`).
///
/// # Safety
/// `elabel_info` must be null or writable.
pub(crate) unsafe fn write_elabel(sim: &Sim, index: usize, elabel_info: *mut dcmi_elabel_info) -> super::CallResult {
    // SAFETY: null or the caller's struct.
    let target = unsafe { out(elabel_info) }?;
    let elabel = &sim.config(index).0.elabel;
    copy_c_str(&mut target.product_name, &elabel.product_name);
    copy_c_str(&mut target.model, &elabel.model);
    copy_c_str(&mut target.manufacturer, &elabel.manufacturer);
    copy_c_str(&mut target.manufacturer_date, &elabel.manufacturer_date);
    copy_c_str(&mut target.serial_number, &elabel.serial_number);
    Ok(())
}

/// Die id: VDIE (1) on every chip, NDIE (0) on the 910 family.
///
/// # Safety
/// `die_id` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_device_die_v2(
    card_id: c_int,
    device_id: c_int,
    input_type: dcmi_die_type,
    die_id: *mut dcmi_die_id,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe { self::die_id(ChipCall::v1(Function::GetDeviceDieV2, card_id, device_id), input_type, die_id) }
}

/// The body of `dcmi_get_device_die_v2` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_device_die_v2`.
pub(crate) unsafe fn die_id(call: ChipCall, input_type: dcmi_die_type, die_id: *mut dcmi_die_id) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's struct.
        let target = unsafe { out(die_id) }?;
        let index = sim.resolve(call)?;
        let chip = sim.config(index).1;
        target.soc_die = match input_type {
            dcmi_die_type::VDIE => chip.die_id.vdie,
            dcmi_die_type::NDIE if chip.chip_type.is_910_family() => chip.die_id.ndie,
            // Ascend950's DDIE: the simulator reports the NDIE words.
            dcmi_die_type::DDIE if chip.chip_type == crate::chip_type::ChipType::Ascend950 => chip.die_id.ndie,
            dcmi_die_type::NDIE => return Err(code::NOT_SUPPORTED),
            _ => return Err(code::INVALID_PARAMETER),
        };
        Ok(())
    })
}

/// CPU list of the chip's NUMA-affine cores, NUL-terminated; `*length` = its length.
///
/// # Safety
/// `affinity_cpu` must be null or hold at least 33 bytes (the topology limits the list to 32);
/// `length` null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_affinity_cpu_info_by_device_id(
    card_id: c_int,
    device_id: c_int,
    affinity_cpu: *mut c_char,
    length: *mut c_int,
) -> c_int {
    // SAFETY: the caller's pointers go on under the same contract.
    unsafe {
        self::affinity_cpu(
            ChipCall::v1(Function::GetAffinityCpuInfoByDeviceId, card_id, device_id),
            affinity_cpu,
            length,
        )
    }
}

/// The body of `dcmi_get_affinity_cpu_info_by_device_id` and of its V2 twin, for the chip `call` names.
///
/// # Safety
/// As `dcmi_get_affinity_cpu_info_by_device_id`.
pub(crate) unsafe fn affinity_cpu(call: ChipCall, affinity_cpu: *mut c_char, length: *mut c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's int.
        let length = unsafe { out(length) }?;
        let index = sim.resolve(call)?;
        let cpus = &sim.config(index).1.affinity_cpus;
        // SAFETY: the caller provides at least 33 bytes; validation keeps the list at ≤ 32 bytes.
        let buffer = unsafe { out_slice(affinity_cpu, cpus.len() + 1) }?;
        copy_c_str(buffer, cpus);
        *length = cpus.len() as c_int;
        Ok(())
    })
}

/// 0 AMP / 1 SMP (910A only).
///
/// # Safety
/// `work_mode` must be null or writable.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_npu_work_mode(card_id: c_int, work_mode: *mut c_uchar) -> c_int {
    guard(|| {
        let sim = sim()?;
        // SAFETY: null or the caller's byte.
        let target = unsafe { out(work_mode) }?;
        let index = card_first_chip(&sim, card_id)?;
        sim.indexed_call(Function::GetNpuWorkMode, index)?;
        *target = sim.config(index).1.work_mode;
        Ok(())
    })
}
