//! A simulated `hccn_tool`, the driver's network tool that Huawei's npu-exporter runs for its RoCE, link,
//! bandwidth and optical metrics (the `hccn_tool` binary of this crate is a thin main over [`run`]).
//!
//! It accepts the command lines the exporter runs (training cards: `-i <phy_id> -link|-speed|-link_stat|-stat|
//! -optical|-bandwidth -g`; Ascend950: `-g -dev_info -i <logic_id>`, `-g -link|-speed|-stat|-optical|-bandwidth -i
//! <logic_id> -u <udie> -p <port> [-time <ms>]`) and prints what the real tool prints, answering from the same
//! topology the simulated library reads (`DCMI_SIM_CONFIG` and `DCMI_SIM_OVERLAY`, or else the files beside the
//! library of the fake host the tool is installed in): each chip's `[card.chip.network]` ([`Network`], defaults from
//! the chip family), counters that advance with wall time ([`PortState`]), and the overlay's
//! `[chip.network]` faults ([`NetworkOverlay`]): link down, a flapping link, falling receive power, a slow or hung
//! tool. A chip without network (310 family) gets the error exit a device without the feature gets.

mod args;
mod output;
mod port_settings;
mod port_state;
mod source;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use args::{parse as parse_args, Query, Request};
pub use port_settings::PortSettings;
pub use port_state::{Faults, Optical, PortState};

use crate::chip_type::ChipType;
pub use crate::network_port::{Link, Network, NetworkOverlay};
use crate::topology::{Chip, Topology};

/// Exit status of a command line the tool does not accept.
pub const EXIT_USAGE: u8 = 2;

/// Exit status when the tool cannot answer: no such device or port, a device without network, no topology.
pub const EXIT_FAILED: u8 = 1;

/// Environment variable naming the built simulated tool for [`built_tool`] (checked first).
pub const TOOL_ENV: &str = "DCMI_SIM_HCCN_TOOL";

/// The built `hccn_tool` binary: `$DCMI_SIM_HCCN_TOOL` if set, else beside the current executable or in its parent
/// directory (cargo puts binaries in `target/<profile>/`, test executables in `target/<profile>/deps/`). `None` when
/// it is not there, as when dcmi-sim is only a dependency (cargo builds no binary of a dependency).
pub fn built_tool() -> Option<PathBuf> {
    if let Some(explicit) = std::env::var_os(TOOL_ENV) {
        return Some(PathBuf::from(explicit)).filter(|path| path.is_file());
    }
    let executable = std::env::current_exe().ok()?;
    let directory = executable.parent()?;
    [directory.join("hccn_tool"), directory.parent()?.join("hccn_tool")].into_iter().find(|path| path.is_file())
}

/// Runs the tool installed at `program` with `args` (without the program name), writing to `out` and `err`;
/// returns the exit status.
pub fn run(program: &Path, args: &[String], out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let request = match parse_args(args) {
        Ok(request) => request,
        Err(message) => {
            let _ = writeln!(err, "hccn_tool: {message}");
            return EXIT_USAGE;
        }
    };
    match answer(program, &request) {
        Ok(text) => {
            let _ = out.write_all(text.as_bytes());
            0
        }
        Err(message) => {
            let _ = writeln!(err, "hccn_tool: {message}");
            EXIT_FAILED
        }
    }
}

fn answer(program: &Path, request: &Request) -> Result<String, String> {
    let (topology, overlay_path) = source::locate(program).map_err(|error| error.to_string())?;
    let ub_form = request.port.is_some() || request.query == Query::DevInfo;
    let chip =
        if ub_form { topology.chip_by_logic_id(request.device) } else { topology.chip_by_phy_id(request.device) }
            .map(|found| found.chip)
            .ok_or_else(|| format!("device {} not found", request.device))?;
    let settings = PortSettings::for_chip(chip)
        .ok_or_else(|| format!("device {} ({}) does not support this command", request.device, chip.chip_type))?;
    let is_950 = chip.chip_type == ChipType::Ascend950;
    if is_950 != ub_form || (is_950 && request.query == Query::LinkStat) {
        return Err(if is_950 {
            format!("device {} is an Ascend950: name a port with -u and -p (or ask -dev_info)", request.device)
        } else {
            format!("device {} has no UB port: use -i <phy_id> {{query}} -g", request.device)
        });
    }
    let faults = faults_of(chip, overlay_path.as_deref())?;
    if let Some(overlay) = faults.map(|faults| faults.overlay) {
        if overlay.tool_hangs == Some(true) {
            std::thread::sleep(Duration::from_millis(topology.simulation.hang_ms));
        }
        if let Some(delay) = overlay.tool_delay_ms {
            std::thread::sleep(Duration::from_millis(delay));
        }
    }
    let state = PortState::at(&settings, faults.as_ref(), now_ms(&topology));
    if !is_950 {
        return Ok(match request.query {
            Query::Link => output::link(&state),
            Query::Speed => output::speed(&settings, &state),
            Query::LinkStat => output::link_stat(chip.phy_id, &state),
            Query::Stat => output::stat(&state),
            Query::Optical => output::optical(&state),
            Query::Bandwidth => output::bandwidth(&state),
            Query::DevInfo => return Err("-dev_info is for Ascend950 chips".to_owned()),
        });
    }
    let Some(port) = request.port else {
        let ports = ub_ports(chip).map(|(udie, port)| (udie, port, state)).collect::<Vec<_>>();
        return Ok(output::dev_info(&settings, &ports));
    };
    if !ub_ports(chip).any(|known| known == port) {
        return Err(format!("device {} has no port {} on die {}", request.device, port.1, port.0));
    }
    Ok(match request.query {
        Query::Link => output::link(&state),
        Query::Speed => output::ub_speed(&settings, port, &state),
        Query::Stat => output::ub_stat(&state),
        Query::Optical => output::ub_optical(&state, port),
        Query::Bandwidth => output::bandwidth(&state),
        Query::LinkStat | Query::DevInfo => return Err(format!("{:?} takes no -u and -p", request.query)),
    })
}

/// The (die, port) pairs of an Ascend950 chip, from `[card.chip.ub]`.
fn ub_ports(chip: &Chip) -> impl Iterator<Item = (u32, u32)> {
    let ports = chip.ub.ports;
    (0..chip.ub.dies).flat_map(move |udie| (0..ports).map(move |port| (udie, port)))
}

fn faults_of(chip: &Chip, overlay_path: Option<&Path>) -> Result<Option<Faults>, String> {
    let Some(path) = overlay_path else { return Ok(None) };
    let Some((overlay, since_ms)) = source::read_overlay(path).map_err(|error| error.to_string())? else {
        return Ok(None);
    };
    let entry = overlay.chips.iter().rev().find(|entry| entry.logic_id == chip.logic_id);
    Ok(entry.and_then(|entry| entry.network).map(|overlay| Faults { overlay, since_ms }))
}

/// Now in ms since the Unix epoch, at the start of the current telemetry tick.
fn now_ms(topology: &Topology) -> u64 {
    let since = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let now = u64::try_from(since.as_millis()).unwrap_or(u64::MAX);
    let tick = topology.simulation.sample_period_ms.max(1);
    now - now % tick
}
