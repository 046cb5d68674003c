//! Control of a running simulator: the overlay TOML file named by `DCMI_SIM_OVERLAY` ([`Overlay`] says how it is read).

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::chip_process::Process;
use crate::ecc::Ecc;
use crate::error::Error;
use crate::generator::Signal;
use crate::injection::InjectionRule;
use crate::state_change::StateChange;
use crate::topology::FaultSpec;

/// Environment variable naming the overlay file.
pub const OVERLAY_ENV: &str = "DCMI_SIM_OVERLAY";

/// How often the file's metadata is checked at most.
pub const OVERLAY_POLL: Duration = Duration::from_millis(20);

/// How long after an atomic write the change is guaranteed to be visible to calls.
pub const OVERLAY_SETTLE: Duration = Duration::from_millis(80);

/// The overlay file: control of a running simulator, named by [`OVERLAY_ENV`].
///
/// The file is re-read when its modification time, size or inode changes, checked at most every 20 ms
/// (`OVERLAY_POLL`). Each read applies the listed chip fields as assignments (fields that are absent leave the state
/// alone) and replaces the overlay's injection rules. Write it atomically (write a temporary file, then rename;
/// [`write_overlay`] does this) and wait [`OVERLAY_SETTLE`] before expecting the change: then a test changes a running
/// consumer's state deterministically.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Overlay {
    /// Per-chip assignments (`[[chip]]`).
    #[serde(default, rename = "chip")]
    pub chips: Vec<ChipOverlay>,
    /// Injection rules (`[[inject]]`), replacing those of the previous overlay read; their windows
    /// and call counts start when the overlay is applied. Topology rules stay in force.
    #[serde(default, rename = "inject")]
    pub injections: Vec<InjectionRule>,
}

/// `[[chip]]` of the overlay: every field but `logic_id` is optional.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ChipOverlay {
    /// The chip.
    pub logic_id: u32,
    /// Health 0..3.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub health: Option<u32>,
    /// Dropped off the bus (`true`) or present.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dropped: Option<bool>,
    /// The complete set of raised faults (raised/cleared events for the difference).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub faults: Option<Vec<FaultSpec>>,
    /// Temperature in °C replacing the topology's signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<Signal>,
    /// Chip power in 0.1 W replacing the topology's signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub power: Option<Signal>,
    /// AI-core utilization in percent replacing the topology's signal.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aicore_utilization: Option<Signal>,
    /// ECC counters.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ecc: Option<Ecc>,
    /// Processes using the chip.
    #[serde(default, skip_serializing_if = "Option::is_none", rename = "process")]
    pub processes: Option<Vec<Process>>,
    /// Start a hot reset when this value differs from the previous read's (the first value read
    /// counts as a change); e.g. a counter the test increments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reset_generation: Option<u64>,
    /// Faults of the chip's network port and of `hccn_tool` about it, read by the simulated `hccn_tool` only.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::network_port::NetworkOverlay>,
}

impl ChipOverlay {
    /// The state changes this entry makes, in a fixed order (faults after health and drop).
    pub fn changes(&self) -> Vec<StateChange> {
        let mut changes = Vec::new();
        if let Some(health) = self.health {
            changes.push(StateChange::SetHealth(health));
        }
        if let Some(dropped) = self.dropped {
            changes.push(StateChange::SetDropped(dropped));
        }
        if let Some(faults) = &self.faults {
            changes.push(StateChange::SetFaults(faults.iter().map(|fault| (fault.code(), fault.severity())).collect()));
        }
        if self.temperature.is_some() {
            changes.push(StateChange::SetTemperature(self.temperature));
        }
        if self.power.is_some() {
            changes.push(StateChange::SetPower(self.power));
        }
        if self.aicore_utilization.is_some() {
            changes.push(StateChange::SetAicoreUtilization(self.aicore_utilization));
        }
        if let Some(ecc) = self.ecc {
            changes.push(StateChange::SetEcc(ecc));
        }
        if let Some(processes) = &self.processes {
            changes.push(StateChange::SetProcesses(processes.clone()));
        }
        changes
    }
}

impl Overlay {
    /// An overlay of network faults only: one `[chip.network]` entry per `(logic id, faults)`.
    pub fn network_faults(entries: &[(u32, crate::network_port::NetworkOverlay)]) -> Overlay {
        let chips = entries
            .iter()
            .map(|(logic_id, network)| ChipOverlay {
                logic_id: *logic_id,
                network: Some(*network),
                ..Default::default()
            })
            .collect();
        Overlay { chips, ..Default::default() }
    }

    /// Parses overlay text; `origin` names it in errors.
    ///
    /// # Errors
    /// [`Error`] with the field path and the problem.
    pub fn from_toml_str(text: &str, origin: &Path) -> Result<Overlay, Error> {
        let overlay: Overlay = crate::toml_fields::parse(text, origin)?;
        for (index, chip) in overlay.chips.iter().enumerate() {
            if chip.health.is_some_and(|health| health > 3) {
                return Err(Error::config(origin, format!("chip[{index}].health"), "must be 0..3"));
            }
            if let Some(network) = &chip.network {
                crate::network_port::validate_network_overlay(network, &format!("chip[{index}]"), origin)?;
            }
        }
        for (index, rule) in overlay.injections.iter().enumerate() {
            crate::validation::validate_rule(rule, &format!("inject[{index}]"), origin)?;
        }
        Ok(overlay)
    }

    /// Serialises the overlay to TOML.
    ///
    /// # Errors
    /// A message if a value cannot be represented in TOML.
    pub fn to_toml_string(&self) -> Result<String, String> {
        toml::to_string(self).map_err(|error| error.to_string())
    }
}

/// Writes `overlay` to `path` atomically (temporary file + rename) so a running simulator never
/// reads a half-written file. Wait [`OVERLAY_SETTLE`] afterwards before relying on the change.
///
/// # Errors
/// The I/O or serialisation error, with the path.
pub fn write_overlay(path: &Path, overlay: &Overlay) -> std::io::Result<()> {
    let text = overlay.to_toml_string().map_err(std::io::Error::other)?;
    let mut temporary = path.as_os_str().to_owned();
    temporary.push(".tmp");
    let temporary = PathBuf::from(temporary);
    std::fs::write(&temporary, text)
        .and_then(|()| std::fs::rename(&temporary, path))
        .map_err(|error| std::io::Error::new(error.kind(), format!("{}: {error}", path.display())))
}

/// Identity of one version of the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Stamp {
    modified_ns: i128,
    size: u64,
    inode: u64,
}

/// Watches the overlay file; owned by the simulator state and polled under its refresh lock.
pub struct OverlayWatcher {
    path: PathBuf,
    last: Option<Stamp>,
    reset_generations: std::collections::HashMap<u32, u64>,
}

impl OverlayWatcher {
    /// Watches `path` (which need not exist yet).
    pub fn new(path: PathBuf) -> OverlayWatcher {
        OverlayWatcher { path, last: None, reset_generations: Default::default() }
    }

    /// The watched path.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Reads the file if it changed since the last poll. `Ok(None)` when unchanged or absent.
    ///
    /// # Errors
    /// [`Error`] for an unreadable or invalid file (the simulator keeps the previous state).
    pub fn poll(&mut self) -> Result<Option<Overlay>, Error> {
        let Ok(metadata) = std::fs::metadata(&self.path) else {
            self.last = None;
            return Ok(None);
        };
        let stamp = Stamp {
            modified_ns: i128::from(metadata.mtime()) * 1_000_000_000 + i128::from(metadata.mtime_nsec()),
            size: metadata.len(),
            inode: metadata.ino(),
        };
        if self.last == Some(stamp) {
            return Ok(None);
        }
        self.last = Some(stamp);
        let text = std::fs::read_to_string(&self.path)
            .map_err(|error| Error::config(&self.path, "(file)", format!("cannot read: {error}")))?;
        Overlay::from_toml_str(&text, &self.path).map(Some)
    }

    /// True when `chip`'s `reset_generation` differs from the value seen at the previous read.
    pub fn reset_requested(&mut self, chip: &ChipOverlay) -> bool {
        let Some(generation) = chip.reset_generation else { return false };
        self.reset_generations.insert(chip.logic_id, generation) != Some(generation)
    }
}
