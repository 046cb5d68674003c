//! Entry points for the fuzz harness (`fuzz/` in the repository). Each feeds arbitrary bytes to the code that
//! decodes what the driver hands back, exactly as the calls of [`crate::Chip`] use it, and panics when an invariant
//! the rest of the crate relies on breaks. A driver can return garbage: unterminated strings, invalid UTF-8, CPU
//! lists and PCIe addresses that are not. Not an API: hidden from the docs, behind the `fuzzing` feature, and free to
//! change with the harness.

use std::ffi::{c_char, c_int, c_uint};

use dcmi_sys as sys;

use crate::chip_type::ChipType;
use crate::ffi::{c_string, c_string_is, decode_device_list, decode_elabel, decode_fault_codes, RawChipInfo};
use crate::identity::PcieAddress;
use crate::limits::{MAX_CHIPS, MAX_FAULT_CODES};
use crate::numa::{overlap, parse_cpulist};

/// The size of the driver's fixed string fields in `dcmi_chip_info(_v2)`.
const FIELD: usize = 32;

/// Decodes `data` as driver output: the first bytes fill `dcmi_chip_info_v2` and `dcmi_chip_info` field by field (a
/// short input leaves the rest zero, as a driver that writes less would), the whole input is also a product-type
/// string (in the signed `c_char` buffers the calls use), an affine CPU list and a PCIe address.
///
/// # Panics
/// When decoding and the allocation-free comparison disagree (an identity would then never match itself, and every
/// refresh would re-read the chip), or when a parsed PCIe address does not print back to itself.
pub fn driver_output(data: &[u8]) {
    let mut fields = data.chunks(FIELD);
    let mut next_field = || {
        let mut field = [0u8; FIELD];
        if let Some(chunk) = fields.next() {
            field[..chunk.len()].copy_from_slice(chunk);
        }
        field
    };
    let v2 = sys::dcmi_chip_info_v2 {
        chip_type: next_field(),
        chip_name: next_field(),
        chip_ver: next_field(),
        aicore_cnt: u32::from_le_bytes(next_field()[..4].try_into().unwrap_or_default()),
        npu_name: next_field(),
    };
    let v1 = sys::dcmi_chip_info {
        chip_type: v2.chip_type,
        chip_name: v2.chip_name,
        chip_ver: v2.chip_ver,
        aicore_cnt: v2.aicore_cnt,
    };
    let all_text = [&v2.chip_type, &v2.chip_name, &v2.chip_ver];
    for (raw, valid) in [
        (RawChipInfo::V2(v2), all_text.iter().chain([&&v2.npu_name]).all(|field| decodes_cleanly(&field[..]))),
        (RawChipInfo::V1(v1), all_text.iter().all(|field| decodes_cleanly(&field[..]))),
    ] {
        let decoded = raw.decode();
        assert_eq!(raw.is(&decoded), valid, "in-place comparison disagrees with decoding for {decoded:?}");
        let board_id = data.get(..4).and_then(|bytes| bytes.try_into().ok()).map(u32::from_le_bytes);
        let _ = ChipType::classify(&decoded.chip_name, board_id);
    }

    let signed: Vec<c_char> = data.iter().map(|byte| c_char::from_ne_bytes([*byte])).collect();
    let text = c_string(&signed);
    assert_eq!(c_string_is(&signed, &text), decodes_cleanly(data), "product type {text:?}");

    if let Some(ranges) = parse_cpulist(&text) {
        let _ = overlap(&ranges, &ranges);
    }
    if let Ok(address) = text.parse::<PcieAddress>() {
        assert_eq!(address.to_string().parse::<PcieAddress>().ok(), Some(address), "PCIe address {text:?}");
    }
}

/// What a driver fills for the V2 calls (`dcmiv2_*`, and their V1 twins), from `data` (missing bytes are zero, as a
/// driver that writes less leaves them): the count and list of `dcmiv2_get_device_list`, the count and list of
/// `dcmiv2_get_device_error_code_list`, then the five 256-byte strings of `dcmiv2_get_device_elabel_info`. Counts are
/// read first: a driver that claims more entries than the buffer it was given is the case to survive.
///
/// # Panics
/// When a list decodes more entries than its buffer holds or keeps a negative id or a zero code, or a label field
/// decodes with a NUL or longer than the lossy decoding of its whole buffer.
pub fn driver_v2_output(data: &[u8]) {
    let mut bytes = data.iter().copied().chain(std::iter::repeat(0));
    let mut word = || i32::from_le_bytes(std::array::from_fn(|_| bytes.next().unwrap_or(0)));
    let device_count = word();
    let devices: Vec<c_int> = (0..MAX_CHIPS).map(|_| word()).collect();
    let code_count = word();
    let codes: Vec<c_uint> = (0..MAX_FAULT_CODES).map(|_| word() as c_uint).collect();

    let logic_ids = decode_device_list(&devices, device_count);
    assert!(logic_ids.len() <= devices.len(), "{} ids from a list of {}", logic_ids.len(), devices.len());
    assert!(logic_ids.iter().all(|id| i32::try_from(id.0).is_ok()), "a negative id decoded: {logic_ids:?}");
    let faults = decode_fault_codes(&codes, code_count);
    assert!(faults.len() <= codes.len(), "{} codes from a list of {}", faults.len(), codes.len());
    assert!(faults.as_slice().iter().all(|code| code.0 != 0), "a zero slot decoded as a fault");

    let label_bytes = data.get(4 * (2 + MAX_CHIPS + MAX_FAULT_CODES)..).unwrap_or_default();
    let mut label_bytes = label_bytes.iter().copied().chain(std::iter::repeat(0));
    let mut text = || -> [c_char; LABEL_FIELD] {
        std::array::from_fn(|_| c_char::from_ne_bytes([label_bytes.next().unwrap_or(0)]))
    };
    let raw = sys::dcmi_elabel_info {
        product_name: text(),
        model: text(),
        manufacturer: text(),
        manufacturer_date: text(),
        serial_number: text(),
    };
    let label = decode_elabel(&raw);
    for (field, buffer) in [
        (&label.product_name, &raw.product_name),
        (&label.model, &raw.model),
        (&label.manufacturer, &raw.manufacturer),
        (&label.manufacturer_date, &raw.manufacturer_date),
        (&label.serial_number, &raw.serial_number),
    ] {
        assert!(!field.contains('\0'), "a NUL in {field:?}");
        // Each invalid byte becomes one U+FFFD (3 bytes): the decoded text is at most three times the buffer.
        assert!(field.len() <= 3 * buffer.len(), "{} bytes decoded from {}", field.len(), buffer.len());
        assert!(
            c_string_is(buffer, field) || field.contains('\u{FFFD}'),
            "label field {field:?} does not match itself"
        );
    }
}

/// The size of each string of `dcmi_elabel_info`.
const LABEL_FIELD: usize = 256;

/// Whether a fixed buffer, cut at its first NUL, is valid UTF-8 (the case in which decoding replaces nothing).
fn decodes_cleanly(buffer: &[u8]) -> bool {
    let length = buffer.iter().position(|byte| *byte == 0).unwrap_or(buffer.len());
    std::str::from_utf8(&buffer[..length]).is_ok()
}
