//! The one error type of the configuration files (topology and overlay).

use std::path::{Path, PathBuf};

/// A topology or overlay file that cannot be used.
///
/// The message always names the file, the field (a dotted path such as `card[1].chip[0].logic_id`, or
/// `(file)` when the problem is the whole file) and what is wrong, on one line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("dcmi-sim: {}: field `{field}`: {problem}", file.display())]
pub struct ConfigError {
    /// The file that was read (or the name of an embedded sample).
    pub file: PathBuf,
    /// Dotted path of the offending field.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ConfigError {
    /// A problem with `field` of `file`.
    pub fn new(file: &Path, field: impl Into<String>, problem: impl Into<String>) -> Self {
        Self { file: file.to_path_buf(), field: field.into(), problem: problem.into() }
    }
}
