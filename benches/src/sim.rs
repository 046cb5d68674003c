//! dcmi-sim for the benches: a sample topology, an overlay file to inject latency, and handles to the library.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ascend_dcmi::Dcmi;
use tempfile::TempDir;

/// A simulated host: `DCMI_SIM_CONFIG` names a sample topology, `DCMI_SIM_OVERLAY` a file this type writes.
pub struct SimHost {
    _directory: TempDir,
    overlay: PathBuf,
    library: PathBuf,
}

impl SimHost {
    /// Locates the built `libdcmi_sim.so` and points the simulator at the sample topology `sample` (for example
    /// `atlas-800t-a2`) and an empty overlay. Call it before anything loads the library, from the main thread
    /// before other threads start: it sets environment variables.
    ///
    /// # Errors
    /// A message naming what is missing: the library (build it with `cargo build -p dcmi-sim --release`), the
    /// sample, or the temporary directory.
    pub fn start(sample: &str) -> Result<SimHost, String> {
        let library = dcmi_sim::library_path().map_err(|error| error.to_string())?;
        if dcmi_sim::samples::by_name(sample).is_none() {
            return Err(format!("dcmi-sim has no sample topology {sample:?}"));
        }
        let directory = tempfile::tempdir().map_err(|error| format!("cannot create a temporary directory: {error}"))?;
        let overlay = directory.path().join("overlay.toml");
        std::env::set_var(dcmi_sim::CONFIG_ENV, format!("sample:{sample}"));
        std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
        let host = SimHost { _directory: directory, overlay, library };
        host.set_latency(Duration::ZERO).map_err(|error| format!("{}: {error}", host.overlay.display()))?;
        Ok(host)
    }

    /// The simulated library file.
    pub fn library(&self) -> &Path {
        &self.library
    }

    /// Makes every DCMI call of the simulator take `latency` (whole milliseconds) from now on, and waits until the
    /// simulator has read the change.
    ///
    /// # Errors
    /// The I/O error of writing the overlay file.
    pub fn set_latency(&self, latency: Duration) -> std::io::Result<()> {
        let millis = latency.as_millis();
        let text =
            if millis == 0 { String::new() } else { format!("[[inject]]\nfunction = \"*\"\nlatency_ms = {millis}\n") };
        let staging = self.overlay.with_extension("toml.new");
        std::fs::write(&staging, text)?;
        std::fs::rename(&staging, &self.overlay)?;
        std::thread::sleep(dcmi_sim::OVERLAY_SETTLE);
        Ok(())
    }

    /// A [`Dcmi`] handle on the simulator. The ownership check is off: the simulator lives in cargo's target
    /// directory, not in a root-owned driver directory.
    ///
    /// # Errors
    /// Whatever [`ascend_dcmi::DcmiBuilder::init`] reports.
    pub fn dcmi(&self) -> ascend_dcmi::Result<Dcmi> {
        Dcmi::builder().library_path(&self.library).verify_library_ownership(false).init()
    }
}
