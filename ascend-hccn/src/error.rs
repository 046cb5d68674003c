//! The crate's errors: a parse error names the command and the offending line; a run error names the command line.

use std::time::Duration;

/// An output of `hccn_tool` that does not have the form the command prints.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("hccn_tool {command}: {reason}{}", line.as_ref().map(|line| format!(" (line `{line}`)")).unwrap_or_default())]
pub struct ParseError {
    command: &'static str,
    line: Option<String>,
    reason: String,
}

/// The longest offending line kept in an error: a damaged output can be one very long line.
const LINE_LIMIT: usize = 200;

impl ParseError {
    pub(crate) fn new(command: &'static str, reason: impl Into<String>) -> ParseError {
        ParseError { command, line: None, reason: reason.into() }
    }

    pub(crate) fn at(command: &'static str, line: &str, reason: impl Into<String>) -> ParseError {
        let mut kept: String = line.chars().take(LINE_LIMIT).collect();
        if kept.len() < line.len() {
            kept.push('…');
        }
        ParseError { command, line: Some(kept), reason: reason.into() }
    }

    /// The command's arguments as the parser knows them, e.g. `-link -g`.
    pub fn command(&self) -> &'static str {
        self.command
    }

    /// The line that did not parse (cut at 200 characters), if one line is to blame.
    pub fn line(&self) -> Option<&str> {
        self.line.as_deref()
    }

    /// What is wrong.
    pub fn reason(&self) -> &str {
        &self.reason
    }
}

/// Running `hccn_tool` failed, or its output did not parse.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The tool could not be started (missing, not executable).
    #[error("{command}: cannot start: {source}")]
    Spawn {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// Reading the tool's output or waiting for it failed.
    #[error("{command}: {source}")]
    Io {
        /// The command line.
        command: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
    /// The tool did not exit within the deadline; it was killed.
    #[error("{command}: no answer within {deadline:?}; killed")]
    TimedOut {
        /// The command line.
        command: String,
        /// The deadline of the call.
        deadline: Duration,
    },
    /// Not run: a query about the same device, ahead of this one in the device's turns, timed out while this one
    /// waited. The tool hangs on that device; the next query about it tries again.
    #[error("{command}: not run: the query before it about the same device timed out")]
    DeviceTimedOut {
        /// The command line.
        command: String,
    },
    /// The tool exited with a failure status.
    #[error("{command}: exited with {status}{}", if stderr.is_empty() { String::new() } else { format!(": {stderr}") })]
    Failed {
        /// The command line.
        command: String,
        /// The exit status as the OS reports it (`exit status: 1`, `signal: 9`).
        status: std::process::ExitStatus,
        /// The first non-empty line of its standard error (empty when there was none).
        stderr: String,
    },
    /// The tool wrote more than the runner's output limit; it was killed.
    #[error("{command}: wrote more than {limit} bytes; killed")]
    OutputTooLarge {
        /// The command line.
        command: String,
        /// The limit in bytes.
        limit: usize,
    },
    /// The output did not parse.
    #[error("{command}: {source}")]
    Parse {
        /// The command line.
        command: String,
        /// What did not parse.
        #[source]
        source: ParseError,
    },
}
