//! A process using a chip (`[[card.chip.process]]` of a topology, `processes` of an overlay; public as
//! `topology::Process`).

use serde::{Deserialize, Serialize};

/// `[[card.chip.process]]`: a process using the chip.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Process {
    /// Process id.
    pub pid: i32,
    /// Device memory in bytes.
    pub memory_bytes: u64,
}
