//! A change to one chip's runtime state, made by the timeline or the overlay file.

use crate::chip_process::Process;
use crate::ecc::Ecc;
use crate::generator::Signal;

/// One change to a chip. Fault changes produce fault events for subscribers.
#[derive(Debug, Clone, PartialEq)]
pub enum StateChange {
    /// Raise a fault (no-op if already raised).
    RaiseFault {
        /// Fault event id.
        code: u32,
        /// Severity 0..3.
        severity: u8,
    },
    /// Clear a fault (no-op if not raised).
    ClearFault {
        /// Fault event id.
        code: u32,
    },
    /// Replace the set of raised faults: (code, severity); the difference produces events.
    SetFaults(Vec<(u32, u8)>),
    /// Set the health value.
    SetHealth(u32),
    /// Drop the chip off the bus (`true`) or bring it back.
    SetDropped(bool),
    /// Start a hot reset.
    Reset,
    /// Override (or with `None` restore) the temperature signal.
    SetTemperature(Option<Signal>),
    /// Override (or restore) the chip power signal.
    SetPower(Option<Signal>),
    /// Override (or restore) the AI-core utilization signal.
    SetAicoreUtilization(Option<Signal>),
    /// Replace the ECC counters.
    SetEcc(Ecc),
    /// Replace the process list.
    SetProcesses(Vec<Process>),
}
