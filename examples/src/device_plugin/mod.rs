//! The `ascend-device-plugin` daemon: flags, driver loading with retries, the plugin, and its own `/healthz` and
//! `/metrics` endpoint.

pub mod cli;
pub mod daemon;
pub mod http;
pub mod metrics;
