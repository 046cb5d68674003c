//! How reports are printed: colours or not, and the time ages are counted to.

/// How to print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Style {
    /// ANSI colours (only for a terminal, and not under `NO_COLOR`).
    pub colour: bool,
    /// The time ages are counted to.
    pub now: k8s_openapi::jiff::Timestamp,
}

impl Style {
    /// Plain text, ages counted to now.
    pub fn plain() -> Style {
        Style { colour: false, now: k8s_openapi::jiff::Timestamp::now() }
    }
}
