//! The topology beside the library: a host laid out by [`crate::fake_host`] needs no environment variable
//! ([`CONFIG_FILE_NAME`] says how).

use std::ffi::{c_void, CStr, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// The topology file read beside the library when `DCMI_SIM_CONFIG` is unset.
///
/// On a real Atlas server the daemons find `libdcmi.so` in the driver directory and know nothing of a simulator; our
/// manifests mount that directory and set no simulator variable. So that the same manifests run unchanged on a fake
/// host ([`crate::fake_host`]), `dcmi_init` without `DCMI_SIM_CONFIG` reads this file from the directory of the
/// `libdcmi.so` it was loaded as (links resolved), and without `DCMI_SIM_OVERLAY` watches [`OVERLAY_FILE_NAME`] there.
pub const CONFIG_FILE_NAME: &str = "dcmi-sim.toml";

/// The overlay file watched beside the library when `DCMI_SIM_OVERLAY` is unset (it may not exist yet).
pub const OVERLAY_FILE_NAME: &str = "dcmi-sim-overlay.toml";

/// The directory of the loaded simulator library, links resolved; for a program that links the crate statically, the
/// directory of that program.
pub fn library_directory() -> Option<PathBuf> {
    let mut info = std::mem::MaybeUninit::<libc::Dl_info>::zeroed();
    let address = library_directory as fn() -> Option<PathBuf> as *const c_void;
    // SAFETY: dladdr only reads the loader's tables for an address of this very object and fills `info`.
    if unsafe { libc::dladdr(address, info.as_mut_ptr()) } == 0 {
        return None;
    }
    // SAFETY: dladdr returned non-zero, so it filled the structure (zeroed before, so unset pointers are null).
    let info = unsafe { info.assume_init() };
    if info.dli_fname.is_null() {
        return None;
    }
    // SAFETY: dli_fname is a NUL-terminated string owned by the loader for as long as the object stays loaded.
    let name = unsafe { CStr::from_ptr(info.dli_fname) };
    let path = std::fs::canonicalize(OsStr::from_bytes(name.to_bytes())).ok()?;
    path.parent().map(Path::to_path_buf)
}
