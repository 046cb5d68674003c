//! The one logging set-up of the daemons: `tracing` events to stderr, filtered by `RUST_LOG`.

use tracing_subscriber::EnvFilter;

use crate::log_format::{LogArgs, LogFormat};

/// The level used when `RUST_LOG` is unset or cannot be read.
pub const DEFAULT_FILTER: &str = "info";

/// Logging could not be set up.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoggingError {
    /// A global subscriber is already installed (set-up called twice in one process).
    #[error("logging is already set up in this process: {0}")]
    AlreadySet(String),
}

/// Installs the global subscriber: stderr (stdout stays free for a tool's output), `RUST_LOG` filtering with
/// [`DEFAULT_FILTER`] as the fallback, ANSI colours only when stderr is a terminal and the format is text.
///
/// A `RUST_LOG` that does not parse is not fatal (a daemon must not crash-loop over a typo in its manifest): the
/// default applies and the first log line is a warning quoting the variable's problem.
///
/// # Errors
/// [`LoggingError::AlreadySet`] when a subscriber was installed before.
pub fn init_logging(format: LogFormat) -> Result<(), LoggingError> {
    let (filter, filter_problem) = match EnvFilter::try_from_default_env() {
        Ok(filter) => (filter, None),
        Err(error) => {
            let problem = std::env::var_os(EnvFilter::DEFAULT_ENV).map(|_| error.to_string());
            (EnvFilter::new(DEFAULT_FILTER), problem)
        }
    };
    let colours = format == LogFormat::Text && std::io::IsTerminal::is_terminal(&std::io::stderr());
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_ansi(colours);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder.json().try_init(),
    };
    installed.map_err(|error| LoggingError::AlreadySet(error.to_string()))?;
    if let Some(problem) = filter_problem {
        tracing::warn!(%problem, "RUST_LOG cannot be read; logging at {DEFAULT_FILTER}");
    }
    Ok(())
}

impl LogArgs {
    /// [`init_logging`] in the format the flag chose.
    ///
    /// # Errors
    /// See [`init_logging`].
    pub fn init_logging(&self) -> Result<(), LoggingError> {
        init_logging(self.log_format)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_set_up_is_an_error_not_a_panic() {
        init_logging(LogFormat::Json).unwrap();
        let error = LogArgs { log_format: LogFormat::Text }.init_logging().unwrap_err();
        assert!(error.to_string().contains("already set up"), "{error}");
    }
}
