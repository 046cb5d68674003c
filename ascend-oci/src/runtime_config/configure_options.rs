//! What to register with an engine ([`ConfigureOptions`], public as `runtime_config::ConfigureOptions`): the one
//! input every engine's editor takes.

use std::path::PathBuf;

/// What to register.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigureOptions {
    /// The runtime (handler) name.
    pub runtime_name: String,
    /// The absolute path of the runtime binary (`ascend-ctk` invoked as a runtime, or a link
    /// named `ascend-runtime`).
    pub runtime_path: PathBuf,
    /// Make it the engine's default runtime.
    pub set_as_default: bool,
    /// Turn CDI on (containerd: `enable_cdi`; Docker: `features.cdi`; CRI-O: spec dirs).
    pub enable_cdi: bool,
}
