//! `dcmi-sim`'s topology files and overlays: what the simulated hardware of every test and demo is made of.

use std::path::Path;

use dcmi_sim::topology::Topology;
use dcmi_sim::Overlay;

use crate::text;

/// A topology file. What validates prints back to a topology that validates and is equal.
pub fn sim_topology(data: &[u8]) {
    let Some(text) = text(data) else { return };
    let origin = Path::new("fuzzed.toml");
    let Ok(topology) = Topology::from_toml_str(text, origin) else { return };
    let printed = topology.to_toml_string().unwrap_or_else(|e| panic!("topology does not serialise: {e}"));
    let reparsed = Topology::from_toml_str(&printed, origin)
        .unwrap_or_else(|e| panic!("printed topology is refused: {e}\n{printed}"));
    assert_eq!(reparsed.to_toml_string().ok(), Some(printed));
}

/// An overlay, the file a running simulator watches for state changes.
pub fn sim_overlay(data: &[u8]) {
    let Some(text) = text(data) else { return };
    if let Ok(overlay) = Overlay::from_toml_str(text, Path::new("overlay.toml")) {
        for chip in &overlay.chips {
            let _ = chip.changes();
        }
    }
}
