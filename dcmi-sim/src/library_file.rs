//! The simulated library's file name, and the variable that names its path (public as `locate::{LIBRARY_FILE,
//! LIBRARY_ENV}`).

/// Environment variable that names the library explicitly (checked first).
pub const LIBRARY_ENV: &str = "DCMI_SIM_LIBRARY";

/// File name of the simulated library.
pub const LIBRARY_FILE: &str = "libdcmi_sim.so";
