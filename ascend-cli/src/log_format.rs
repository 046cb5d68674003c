//! The `--log-format text|json` flag every daemon takes.
//!
//! Flatten [`LogArgs`] into a binary's clap parser. The flag has no environment variable of its own, because each
//! daemon documents its variables under its own prefix; a binary adds one with a command attribute:
//!
//! ```
//! use ascend_cli::{LogArgs, LogFormat};
//! use clap::Parser;
//!
//! #[derive(Parser)]
//! #[command(mut_arg("log_format", |arg| arg.env("MY_AGENT_LOG_FORMAT")))]
//! struct Args {
//!     #[command(flatten)]
//!     log: LogArgs,
//! }
//!
//! assert_eq!(Args::parse_from(["my-agent"]).log.log_format, LogFormat::Text);
//! ```

use clap::{Args, ValueEnum};

/// How log lines are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum LogFormat {
    /// Human-readable lines (coloured when stderr is a terminal).
    #[default]
    Text,
    /// One JSON object per line, for log collectors.
    Json,
}

/// The `--log-format` flag, to `#[command(flatten)]` into a parser.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Args)]
pub struct LogArgs {
    /// Log line format; `RUST_LOG` sets the level and filters (default `info`).
    #[arg(long = "log-format", value_name = "FORMAT", value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    #[derive(Debug, Parser)]
    #[command(mut_arg("log_format", |arg| arg.env("ASCEND_CLI_TEST_LOG_FORMAT")))]
    struct Daemon {
        #[command(flatten)]
        log: LogArgs,
    }

    #[test]
    fn flag_parses_both_formats_and_rejects_others() {
        assert_eq!(Daemon::try_parse_from(["d", "--log-format", "json"]).unwrap().log.log_format, LogFormat::Json);
        assert_eq!(Daemon::try_parse_from(["d", "--log-format=text"]).unwrap().log.log_format, LogFormat::Text);
        let error = Daemon::try_parse_from(["d", "--log-format", "yaml"]).unwrap_err();
        assert!(error.to_string().contains("yaml"), "{error}");
    }

    #[test]
    fn a_binary_can_give_the_flag_its_own_environment_variable() {
        let command = <Daemon as clap::CommandFactory>::command();
        let argument = command.get_arguments().find(|arg| arg.get_id() == "log_format").unwrap();
        assert_eq!(argument.get_env(), Some(std::ffi::OsStr::new("ASCEND_CLI_TEST_LOG_FORMAT")));
    }
}
