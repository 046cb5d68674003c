//! Why the runtime role or the hook stopped on a container start ([`StartError`], public as
//! `crate::StartError`): what it was doing, and the error that stopped it.

use std::path::PathBuf;

use crate::error::Error;
use crate::runtime_env::RUNC_ENV;

/// Why the runtime role or the hook stopped: what it was doing, and the error that stopped it as the source.
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// A step of this crate failed.
    #[error("{context}")]
    Step {
        /// What was being done.
        context: String,
        /// The error (boxed: with the context beside it, this crate's error would make every `Result` of the
        /// start path large).
        #[source]
        source: Box<Error>,
    },
    /// A system call outside this crate's types failed.
    #[error("{context}")]
    Io {
        /// What was being done.
        context: String,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// An error that names its own context.
    #[error(transparent)]
    Plain(#[from] Error),
    /// No usable low-level runtime.
    #[error("no {} found (set --runc or {RUNC_ENV})", .0.display())]
    NoRunc(PathBuf),
}

impl StartError {
    pub(crate) fn step(context: impl Into<String>) -> impl FnOnce(Error) -> Self {
        let context = context.into();
        move |source| StartError::Step { context, source: Box::new(source) }
    }

    pub(crate) fn io(context: impl Into<String>) -> impl FnOnce(std::io::Error) -> Self {
        let context = context.into();
        move |source| StartError::Io { context, source }
    }
}
