//! Shared by the integration tests: a private simulator per test, control of it through the overlay file, and an
//! "older driver" made by hiding symbols of a copy of the simulator.
//!
//! Every test loads its own copy of `libdcmi_sim.so` from its own temporary directory. The dynamic loader maps a
//! different file as a different library, so each copy has its own simulator state and tests of one binary can run
//! in parallel. The simulator reads `DCMI_SIM_CONFIG` and `DCMI_SIM_OVERLAY` in `dcmi_init`; setting them and
//! initialising happen under one lock.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use ascend_dcmi::{Dcmi, DcmiBuilder, Result};

static ENVIRONMENT: Mutex<()> = Mutex::new(());

/// A running simulator copy and the files that control it.
pub struct Sim {
    /// Keeps the copy and the overlay alive.
    pub dir: tempfile::TempDir,
    /// The copied library.
    pub library: PathBuf,
    /// The overlay file the simulator watches.
    pub overlay: PathBuf,
}

impl Sim {
    /// Replaces the overlay (atomically) and waits until the simulator applied it.
    pub fn overlay(&self, toml: &str) {
        let temporary = self.overlay.with_extension("tmp");
        std::fs::write(&temporary, toml).expect("write overlay");
        std::fs::rename(&temporary, &self.overlay).expect("rename overlay");
        std::thread::sleep(dcmi_sim::OVERLAY_SETTLE + Duration::from_millis(40));
    }
}

/// The built simulator.
pub fn simulator_library() -> PathBuf {
    dcmi_sim::library_path().expect("libdcmi_sim.so is built with the tests (dcmi-sim is a dev-dependency)")
}

/// Copies the simulator into a new temporary directory, renaming the listed C symbols so that the copy looks like
/// an older driver without them (the names are changed in the string tables, same length, so the file stays a
/// valid library).
pub fn copy_simulator(hidden_symbols: &[&str]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("temporary directory");
    let library = dir.path().join("libdcmi.so");
    let mut bytes = std::fs::read(simulator_library()).expect("read libdcmi_sim.so");
    for symbol in hidden_symbols {
        assert!(symbol.starts_with("dcmi_"), "{symbol} is not a DCMI symbol");
        let needle: Vec<u8> = symbol.bytes().chain([0]).collect();
        let mut patched = 0;
        let mut start = 0;
        while let Some(offset) = find(&bytes[start..], &needle) {
            let at = start + offset;
            bytes[at] = b'x';
            patched += 1;
            start = at + needle.len();
        }
        assert!(patched > 0, "{symbol} not found in the simulator's symbol table");
    }
    std::fs::write(&library, bytes).expect("write the copy");
    (dir, library)
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// Starts a private simulator with a topology (a sample name such as `atlas-800t-a2`, or a file path) and loads it
/// through the builder that `configure` adjusts (the ownership check is off: the copy lives under `/tmp`).
pub fn start_with(
    topology: &str,
    hidden_symbols: &[&str],
    configure: impl FnOnce(DcmiBuilder) -> DcmiBuilder,
) -> (Result<Dcmi>, Sim) {
    let (dir, library) = copy_simulator(hidden_symbols);
    let overlay = dir.path().join("overlay.toml");
    std::fs::write(&overlay, "").expect("empty overlay");
    let config = if Path::new(topology).exists() { topology.to_owned() } else { format!("sample:{topology}") };
    let builder = configure(Dcmi::builder().library_path(&library).verify_library_ownership(false));
    let dcmi = with_environment(|| {
        std::env::set_var(dcmi_sim::CONFIG_ENV, &config);
        std::env::set_var(dcmi_sim::OVERLAY_ENV, &overlay);
        builder.init()
    });
    (dcmi, Sim { dir, library, overlay })
}

/// Runs `f` while no other test of this binary changes or reads the process environment for loading.
pub fn with_environment<T>(f: impl FnOnce() -> T) -> T {
    let _environment = ENVIRONMENT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
    f()
}

/// [`start_with`] with the default builder, expecting success.
pub fn start(topology: &str) -> (Dcmi, Sim) {
    let (dcmi, sim) = start_with(topology, &[], |builder| builder);
    (dcmi.unwrap_or_else(|error| panic!("loading the simulator with {topology}: {error}")), sim)
}

/// The sample topology's text, for tests that derive a topology from it.
pub fn sample_toml(name: &str) -> &'static str {
    dcmi_sim::samples::by_name(name).unwrap_or_else(|| panic!("no sample {name}")).toml
}
