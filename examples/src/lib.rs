//! What remains shared by the bundled binaries before it moves into library crates: the node labeller. Every binary
//! in `src/bin` is a thin main; see the `[features]` comment in `Cargo.toml`.
#![forbid(unsafe_code)]

#[cfg(feature = "node-labeller")]
pub mod node_labeller;
#[cfg(any(feature = "exporter", feature = "node-labeller"))]
pub mod shutdown;
