//! dcmi-sim for the benches: a sample or replicated topology, an overlay file to inject latency, and handles to the
//! library.

use std::path::{Path, PathBuf};
use std::time::Duration;

use ascend_dcmi::Dcmi;
use tempfile::TempDir;

use crate::replicated_topology::{replicated_topology, write_topology};

/// A simulated host: `DCMI_SIM_CONFIG` names a sample topology or a topology file, `DCMI_SIM_OVERLAY` a file this
/// type writes.
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
        if dcmi_sim::samples::by_name(sample).is_none() {
            return Err(format!("dcmi-sim has no sample topology {sample:?}"));
        }
        let directory = temporary_directory()?;
        SimHost::start_with(format!("sample:{sample}"), directory)
    }

    /// As [`SimHost::start`], on a host of `chips` copies of the first chip of `sample`
    /// ([`crate::replicated_topology::replicated_topology`]), written to a file in the host's temporary directory.
    /// One host at a time: the simulator is one per process, and the next [`SimHost::dcmi`] replaces it with this
    /// host's topology. Start it while no thread calls the simulator (no sampler of an earlier host alive).
    ///
    /// # Errors
    /// As [`SimHost::start`], and the topology's own errors (chip count, file).
    pub fn start_replicated(sample: &str, chips: usize) -> Result<SimHost, String> {
        let topology = replicated_topology(sample, chips)?;
        let directory = temporary_directory()?;
        let path = directory.path().join(format!("{sample}-x{chips}.toml"));
        write_topology(&topology, &path)?;
        SimHost::start_with(path.display().to_string(), directory)
    }

    fn start_with(config: String, directory: TempDir) -> Result<SimHost, String> {
        let library = dcmi_sim::library_path().map_err(|error| error.to_string())?;
        let overlay = directory.path().join("overlay.toml");
        std::env::set_var(dcmi_sim::CONFIG_ENV, config);
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

fn temporary_directory() -> Result<TempDir, String> {
    tempfile::tempdir().map_err(|error| format!("cannot create a temporary directory: {error}"))
}
