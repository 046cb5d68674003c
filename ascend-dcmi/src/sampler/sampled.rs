//! One sampled value: the last value read, how the latest attempt went, and when the value was read.

use std::time::{Duration, Instant};

use crate::error::Error;

/// How the latest attempt to read a value went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum SampleState {
    /// Not attempted yet.
    #[default]
    Pending,
    /// Read successfully in the latest round.
    Fresh,
    /// The chip's chain of calls missed its deadline in the latest round; the value (if any) is older.
    TimedOut,
    /// The chip or driver lacks this call (-8255 or a missing symbol); it is not asked again.
    Unsupported,
    /// The latest call failed; `code` is the DCMI return code when there was one.
    Failed {
        /// The DCMI return code, `None` for failures that are not a return code (an out-of-range value, ...).
        code: Option<i32>,
    },
    /// The metric is not selected.
    Disabled,
}

/// A value as the sampler last saw it.
///
/// A failed or timed-out attempt keeps the previous value: [`Sampled::value`] returns it with its read time, so a
/// caller can show it as stale; [`Sampled::fresh`] returns only a value read in the latest round.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sampled<T> {
    value: Option<T>,
    state: SampleState,
    read_at: Option<Instant>,
}

impl<T> Default for Sampled<T> {
    fn default() -> Self {
        Self { value: None, state: SampleState::Pending, read_at: None }
    }
}

impl<T> Sampled<T> {
    /// The last value read successfully, however old.
    pub fn value(&self) -> Option<&T> {
        self.value.as_ref()
    }

    /// The value, only if the latest attempt read it.
    pub fn fresh(&self) -> Option<&T> {
        match self.state {
            SampleState::Fresh => self.value.as_ref(),
            _ => None,
        }
    }

    /// How the latest attempt went.
    pub fn state(&self) -> SampleState {
        self.state
    }

    /// When [`Sampled::value`] was read.
    pub fn read_at(&self) -> Option<Instant> {
        self.read_at
    }

    /// How old [`Sampled::value`] is at `now`.
    pub fn age(&self, now: Instant) -> Option<Duration> {
        self.read_at.map(|read_at| now.saturating_duration_since(read_at))
    }

    /// Stores the outcome of one call made at `now`.
    pub(crate) fn record(&mut self, result: Result<T, Error>, now: Instant) {
        match result {
            Ok(value) => {
                self.value = Some(value);
                self.state = SampleState::Fresh;
                self.read_at = Some(now);
            }
            Err(error) if error.is_unsupported() => self.state = SampleState::Unsupported,
            Err(error) => self.state = SampleState::Failed { code: error.code() },
        }
    }

    /// The chain this value belongs to missed its deadline. Values that were not going to be read anyway keep their
    /// state.
    pub(crate) fn mark_timed_out(&mut self) {
        if !matches!(self.state, SampleState::Unsupported | SampleState::Disabled) {
            self.state = SampleState::TimedOut;
        }
    }

    /// The call is known to be unsupported and was skipped.
    pub(crate) fn mark_unsupported(&mut self) {
        self.state = SampleState::Unsupported;
    }

    /// The metric is not selected: forget its value so that nobody exports it.
    pub(crate) fn disable(&mut self) {
        *self = Self { value: None, state: SampleState::Disabled, read_at: None };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::CallContext;
    use crate::units::Celsius;

    #[test]
    fn failures_keep_the_last_value_but_not_its_freshness() {
        let start = Instant::now();
        let mut sampled = Sampled::default();
        assert_eq!(sampled.state(), SampleState::Pending);
        sampled.record(Ok(Celsius(40)), start);
        assert_eq!(sampled.fresh(), Some(&Celsius(40)));
        let context = CallContext::global("dcmi_get_device_temperature");
        sampled.record(Err(Error::from_code(-8005, context)), start + Duration::from_secs(1));
        assert_eq!(sampled.state(), SampleState::Failed { code: Some(-8005) });
        assert_eq!(sampled.fresh(), None);
        assert_eq!(sampled.value(), Some(&Celsius(40)));
        assert_eq!(sampled.age(start + Duration::from_secs(3)), Some(Duration::from_secs(3)));
        sampled.mark_timed_out();
        assert_eq!(sampled.state(), SampleState::TimedOut);
        sampled.record(Err(Error::from_code(-8255, context)), start);
        assert_eq!(sampled.state(), SampleState::Unsupported);
        sampled.mark_timed_out();
        assert_eq!(sampled.state(), SampleState::Unsupported, "timeouts do not hide unsupported calls");
        sampled.disable();
        assert_eq!(sampled.value(), None);
    }
}
