//! The `ascend-device-plugin` program (feature `cli`): flags, driver loading with retries, the plugin, and its
//! own `/healthz` and `/metrics` endpoint. The bundled binary is [`Args`]`::parse()`, logging, and [`run`];
//! [`PluginMetrics`] are what its `/metrics` serves.
//!
//! These modules are the program's top level, so they report with `anyhow`: what they return goes to a human on
//! stderr as a chain of contexts, and no caller matches on it; everything they call keeps the typed [`crate::Error`].

mod cli;
mod main_loop;
mod metrics;

pub use cli::{Args, Delivery, Mode};
pub use main_loop::run;
pub use metrics::PluginMetrics;
