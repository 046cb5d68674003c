//! What the bundled binaries share beyond their library crates: the node labeller's program (its flags and modes,
//! [`node_labeller`]) and the stop signals. Every binary in `src/bin` is a thin main; see the `[features]` comment in
//! `Cargo.toml`.
#![forbid(unsafe_code)]

#[cfg(feature = "node-labeller")]
pub mod node_labeller;
#[cfg(any(feature = "exporter", feature = "node-labeller"))]
pub mod shutdown;
