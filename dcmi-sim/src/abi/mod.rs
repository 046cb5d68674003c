//! The exported C functions, grouped by area, and the helpers they share.
//!
//! Every export wraps its body in [`guard`], which catches panics (returning -8005 instead of
//! unwinding into C) and turns `Err(code)` into the return code. Null output pointers give -8001.

use std::os::raw::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::instance;
use crate::state::{code, Sim};
use crate::telemetry::Sampler;

mod cluster;
mod device_info;
mod enumeration;
mod health;
mod identity;
mod init;
mod reset;
mod signatures;
mod telemetry;
mod v2;
mod vnpu;

/// Result of an export's body: `Err` carries the DCMI return code.
pub(crate) type CallResult = Result<(), c_int>;

/// Runs an export's body, never letting a panic cross the C boundary.
pub(crate) fn guard(body: impl FnOnce() -> CallResult) -> c_int {
    match catch_unwind(AssertUnwindSafe(body)) {
        Ok(Ok(())) => 0,
        Ok(Err(code)) => code,
        Err(_) => code::INTERNAL_ERROR,
    }
}

/// The running simulator (`dcmi_init` not called or failed: -8005).
pub(crate) fn sim() -> Result<Arc<Sim>, c_int> {
    instance::current().ok_or(code::INTERNAL_ERROR)
}

/// A sampler at the current time.
pub(crate) fn sampler(sim: &Sim) -> Sampler {
    Sampler::at_tick(&sim.topology, sim.tick())
}

/// Turns an output pointer into a reference.
///
/// # Safety
/// `pointer` must be null or valid for writes of one `T` (properly aligned) for the rest of the call.
pub(crate) unsafe fn out<'a, T>(pointer: *mut T) -> Result<&'a mut T, c_int> {
    // SAFETY: the caller guarantees a non-null `pointer` is valid and aligned for the call.
    unsafe { pointer.as_mut() }.ok_or(code::INVALID_PARAMETER)
}

/// Turns an input pointer into a reference.
///
/// # Safety
/// `pointer` must be null or valid for reads of one `T` for the rest of the call.
pub(crate) unsafe fn input<'a, T>(pointer: *const T) -> Result<&'a T, c_int> {
    // SAFETY: the caller guarantees a non-null `pointer` is valid and aligned for the call.
    unsafe { pointer.as_ref() }.ok_or(code::INVALID_PARAMETER)
}

/// Turns a caller's buffer of `len` elements into a slice (`len` ≤ 0 or null: -8001).
///
/// # Safety
/// `pointer` must be null or valid for writes of `len` elements for the rest of the call.
pub(crate) unsafe fn out_slice<'a, T>(pointer: *mut T, len: usize) -> Result<&'a mut [T], c_int> {
    if pointer.is_null() || len == 0 {
        return Err(code::INVALID_PARAMETER);
    }
    // SAFETY: non-null, and the caller guarantees room for `len` elements.
    Ok(unsafe { std::slice::from_raw_parts_mut(pointer, len) })
}

/// Copies `text` into a fixed C string field, truncating and NUL-terminating when there is room.
pub(crate) fn copy_str<T: Copy + From<u8>>(field: &mut [T], text: &str) {
    let bytes = text.as_bytes();
    for (slot, value) in field.iter_mut().zip(bytes.iter().copied().chain(std::iter::repeat(0))) {
        *slot = T::from(value);
    }
}

/// Copies `text` into a `c_char` field (which is `i8` on x86_64 and `u8` on aarch64).
pub(crate) fn copy_c_str(field: &mut [std::os::raw::c_char], text: &str) {
    let bytes = text.as_bytes();
    for (slot, value) in field.iter_mut().zip(bytes.iter().copied().chain(std::iter::repeat(0))) {
        *slot = value as std::os::raw::c_char;
    }
}

/// Reads a NUL-terminated (or full-length) C string field.
pub(crate) fn read_c_str(field: &[std::os::raw::c_char]) -> String {
    let bytes: Vec<u8> = field.iter().map(|byte| *byte as u8).take_while(|byte| *byte != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Index of the first chip of card `card_id` (card-level calls take the family from it).
pub(crate) fn card_first_chip(sim: &Sim, card_id: c_int) -> Result<usize, c_int> {
    (0..4).find_map(|device| sim.chip_index(card_id, device)).ok_or(code::INVALID_DEVICE_ID)
}
