//! The `npu-exporter` program (feature `cli`): its flags ([`Args`]), the wiring of every stage from them
//! ([`Exporter`]) and [`run`], the whole exporter until the shutdown future completes. The bundled binary is
//! [`Args`]`::parse()`, logging, and [`run`] with the termination signals.

mod app;
mod cli;

pub use app::{run, Exporter};
pub use cli::{Args, DEFAULT_LISTEN_ADDRESS};
