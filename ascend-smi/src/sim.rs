//! `--sim [TOPOLOGY]`: run against the simulated `libdcmi.so` instead of the host's driver.
//!
//! The simulator library is the one cargo built next to this binary (found by `dcmi_sim::library_path`), and the
//! topology is a file or one of the simulator's sample names. `DCMI_SIM_CONFIG` is set for this process before
//! `dcmi_init`, which is when the simulator reads it.

#[cfg(feature = "sim")]
use std::path::Path;
use std::path::PathBuf;

/// The topology `--sim` uses when none is named: an 8-chip Atlas 800T A2 training server.
pub const DEFAULT_SIM_TOPOLOGY: &str = "atlas-800t-a2";

/// A resolved simulator setup.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SimSetup {
    /// The built `libdcmi_sim.so`.
    pub library: PathBuf,
    /// The value for `DCMI_SIM_CONFIG`: an absolute topology path or `sample:<name>`.
    pub config: String,
}

/// Why `--sim` cannot run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SimError {
    /// The topology is neither a file nor a sample name.
    #[error("--sim: {0:?} is neither a topology file nor a sample (samples: {1})")]
    UnknownTopology(String, String),
    /// The simulator library was not built.
    #[error("--sim: {0}")]
    Library(String),
    /// This build left the simulator out (cargo feature `sim` of `ascend-smi`, on in the tools' default build).
    #[error("--sim: this build has no simulator; build with the cargo feature `sim` (the default of ascend-programs)")]
    NotBuilt,
}

/// The `DCMI_SIM_CONFIG` value for a `--sim` argument: an existing file (made absolute), else a sample name with or
/// without the `sample:` prefix.
///
/// # Errors
/// [`SimError::UnknownTopology`] naming the samples.
#[cfg(feature = "sim")]
pub fn config_value(topology: &str) -> Result<String, SimError> {
    let path = Path::new(topology);
    if path.is_file() {
        let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        return Ok(absolute.to_string_lossy().into_owned());
    }
    let name = topology.strip_prefix("sample:").unwrap_or(topology);
    if dcmi_sim::samples::by_name(name).is_some() {
        return Ok(format!("sample:{name}"));
    }
    let names: Vec<&str> = dcmi_sim::SAMPLES.iter().map(|sample| sample.name).collect();
    Err(SimError::UnknownTopology(topology.to_owned(), names.join(", ")))
}

/// Resolves the library and topology, and points this process's `DCMI_SIM_CONFIG` at the topology. Call it before
/// any thread is started: changing the environment is only sound while the process is single-threaded.
///
/// # Errors
/// [`SimError`] when the topology is unknown or the simulator library was not built.
#[cfg(feature = "sim")]
pub fn prepare(topology: &str) -> Result<SimSetup, SimError> {
    let config = config_value(topology)?;
    let library = dcmi_sim::library_path().map_err(|error| SimError::Library(error.to_string()))?;
    std::env::set_var(dcmi_sim::CONFIG_ENV, &config);
    Ok(SimSetup { library, config })
}

/// Without the simulator compiled in, every `--sim` is [`SimError::NotBuilt`].
///
/// # Errors
/// Always [`SimError::NotBuilt`].
#[cfg(not(feature = "sim"))]
pub fn prepare(_topology: &str) -> Result<SimSetup, SimError> {
    Err(SimError::NotBuilt)
}

#[cfg(all(test, feature = "sim"))]
mod tests {
    use super::*;

    #[test]
    fn samples_and_files_are_accepted() {
        assert_eq!(config_value(DEFAULT_SIM_TOPOLOGY), Ok(format!("sample:{DEFAULT_SIM_TOPOLOGY}")));
        assert_eq!(config_value("sample:edge-310"), Ok("sample:edge-310".to_owned()));
        let file = dcmi_sim::samples::by_name("edge-310").map(|sample| sample.source_path());
        let file = file.expect("sample exists");
        assert_eq!(config_value(&file.to_string_lossy()), Ok(file.to_string_lossy().into_owned()));
        let error = config_value("no-such-thing").expect_err("unknown");
        assert!(error.to_string().contains("atlas-300i-duo"), "{error}");
    }
}
