//! The `ascend-device-plugin` program (feature `cli`): flags, driver loading with retries, the plugin, and its
//! own `/healthz` and `/metrics` endpoint. The bundled binary is `Args::parse()`, logging, and [`run`].
//!
//! These modules are the program's top level, so they report with `anyhow`: what they return goes to a human on
//! stderr as a chain of contexts, and no caller matches on it; everything they call keeps the typed [`crate::Error`].

pub mod cli;
mod main_loop;
pub mod metrics;

pub use main_loop::run;
