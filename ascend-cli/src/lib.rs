//! The conventions every bundled Ascend NPU binary shares, so that an operator learns them once:
//!
//! * [`lang`]: the language of messages: `--lang`, else `LC_ALL`, `LC_MESSAGES`, `LANG` (`zh_CN.*` is Chinese).
//! * [`duration`]: one grammar for durations in flags, environment variables and configuration files
//!   (`500ms`, `5s`, `1.5s`, `2m`, `1h30m`, or a plain number of seconds).
//! * [`log_format`]: the `--log-format text|json` flag, as a clap [`Args`](clap::Args) group to flatten.
//! * [`logging`] (feature `logging`): the one logging set-up: tracing to stderr, filtered by `RUST_LOG`
//!   (default `info`), in the chosen format.
//! * [`signal`] (feature `signal`): the termination signals a daemon honours (SIGTERM, SIGINT).
//! * [`health_endpoint`] (feature `health-endpoint`): a daemon's own `/healthz` and `/metrics`.
//! * [`text`]: the layout of human output: 80 columns, cells cut visibly, lines wrapped with a hanging indent.
//!
//! A daemon's flags, end to end:
//!
//! ```
//! use std::time::Duration;
//! use ascend_cli::{duration::parse_positive_duration, log_format::{LogArgs, LogFormat}};
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! #[command(name = "my-agent")]
//! struct Args {
//!     /// How often to poll.
//!     #[arg(long, default_value = "5s", value_parser = parse_positive_duration)]
//!     interval: Duration,
//!     #[command(flatten)]
//!     log: LogArgs,
//! }
//!
//! let args = Args::parse_from(["my-agent", "--interval", "1m30s", "--log-format", "json"]);
//! assert_eq!(args.interval, Duration::from_secs(90));
//! assert_eq!(args.log.log_format, LogFormat::Json);
//! // In main: args.log.init_logging()?; (feature `logging`)
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

/// The `Content-Type` of OpenMetrics text 1.0.0, as Prometheus asks for it: every daemon's `/metrics`.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

pub mod duration;
#[cfg(feature = "health-endpoint")]
pub mod health_endpoint;
pub mod lang;
pub mod log_format;
#[cfg(feature = "logging")]
pub mod logging;
#[cfg(feature = "signal")]
pub mod signal;
pub mod text;

pub use duration::{format_duration, parse_duration, DurationError};
pub use lang::{Lang, LangArgs};
pub use log_format::{LogArgs, LogFormat};
