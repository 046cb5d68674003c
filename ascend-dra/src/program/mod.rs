//! The `ascend-dra-driver` program (feature `cli`): flags, loading the driver library and connecting to the API
//! server (each failing with a message that says which is missing), `/healthz` and `/metrics`, and [`crate::run`].
//! The bundled binary is [`Args`]`::parse()`, logging, and [`run`].
//!
//! These modules are the program's top level, so they report with `anyhow`: what they return goes to a human on
//! stderr as a chain of contexts; everything they call keeps the typed [`crate::Error`].

mod cli;
mod main_loop;

pub use cli::Args;
pub use main_loop::run;
