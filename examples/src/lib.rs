//! Shared code of the bundled Ascend NPU tools; each binary in `src/bin` is a thin main over it.
#![forbid(unsafe_code)]

pub mod ctk;
pub mod device_plugin;
pub mod doctor;
pub mod dra_driver;
pub mod exporter;
pub mod node_labeller;
pub mod shutdown;
pub mod smi;
