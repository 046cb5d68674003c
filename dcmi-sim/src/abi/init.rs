//! `dcmi_init`, the version string, and the simulator's own diagnostics export.

use std::os::raw::{c_char, c_int};

use super::{guard, out_slice, sim};
use crate::function::Function;
use crate::instance;
use crate::state::code;

/// Initialises the library: reads the topology named by `DCMI_SIM_CONFIG` (and watches
/// `DCMI_SIM_OVERLAY`). Calling it again keeps the running instance when neither variable nor the
/// topology file changed, and otherwise starts a fresh one.
/// A bad topology returns -8005 and prints one line naming the file, the field and the problem.
/// On an Ascend950 (V2) topology it fails with -8005, as on real hardware; call `dcmiv2_init`.
#[no_mangle]
pub extern "C" fn dcmi_init() -> c_int {
    initialise(Function::Init)
}

/// The body of `dcmi_init` and `dcmiv2_init`: load the topology, then answer for `function`'s
/// family ([`crate::state::Sim::check_api`]). The instance stays loaded either way, so a consumer
/// that tries V1 and then V2 keeps one instance.
pub(crate) fn initialise(function: Function) -> c_int {
    guard(|| {
        instance::init_from_env().map_err(|_| code::INTERNAL_ERROR)?;
        sim()?.global_call(function)
    })
}

/// Writes the driver version of the topology (`simulation.driver_version`).
///
/// # Safety
/// `dcmi_ver` must be null or point to `buf_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dcmi_get_dcmi_version(dcmi_ver: *mut c_char, buf_size: c_int) -> c_int {
    // SAFETY: the caller's buffer goes on under the same contract.
    unsafe { driver_version(Function::GetDcmiVersion, dcmi_ver, buf_size) }
}

/// The body of `dcmi_get_dcmi_version` and its V2 twin.
///
/// # Safety
/// As `dcmi_get_dcmi_version`.
pub(crate) unsafe fn driver_version(function: Function, dcmi_ver: *mut c_char, buf_size: c_int) -> c_int {
    guard(|| {
        let sim = sim()?;
        sim.global_call(function)?;
        let version = &sim.topology.simulation.driver_version;
        let size = usize::try_from(buf_size).map_err(|_| code::INVALID_PARAMETER)?;
        if size <= version.len() {
            return Err(code::INVALID_PARAMETER);
        }
        // SAFETY: the caller provides `buf_size` writable bytes at `dcmi_ver`.
        let buffer = unsafe { out_slice(dcmi_ver, size) }?;
        super::copy_c_str(buffer, version);
        Ok(())
    })
}

/// Simulator extension (not in the vendor library): copies the message of the last failed
/// `dcmi_init` into `buffer` (NUL-terminated, truncated to `len`); returns its full length, or 0 when
/// the last init succeeded, or -8001 for a null buffer.
///
/// # Safety
/// `buffer` must be null or point to `len` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn dcmi_sim_last_error(buffer: *mut c_char, len: c_int) -> c_int {
    let mut full_length = 0;
    let status = guard(|| {
        let message = instance::last_error().unwrap_or_default();
        let size = usize::try_from(len).map_err(|_| code::INVALID_PARAMETER)?;
        // SAFETY: the caller provides `len` writable bytes at `buffer`.
        let target = unsafe { out_slice(buffer, size) }?;
        let mut keep = message.len().min(size - 1);
        while !message.is_char_boundary(keep) {
            keep -= 1;
        }
        super::copy_c_str(target, &message[..keep]);
        full_length = c_int::try_from(message.len()).unwrap_or(c_int::MAX);
        Ok(())
    });
    if status == 0 {
        full_length
    } else {
        status
    }
}
