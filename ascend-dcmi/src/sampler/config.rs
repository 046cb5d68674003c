//! How a sampler polls: which metrics, how often per group, how long a chip may take, how many chips at once.

use std::time::Duration;

use super::metric::{MetricGroup, MetricSet};

/// The shortest group interval; shorter ones are raised to it (Huawei's scheduler has the same floor).
pub const MIN_INTERVAL: Duration = Duration::from_millis(50);

/// The shortest per-chip deadline; shorter ones are raised to it.
pub const MIN_DEADLINE: Duration = Duration::from_millis(1);

/// The most chips polled at once by default: the driver's "anti-attack protection" fails heavy concurrent calls.
pub const DEFAULT_CONCURRENCY: usize = 4;

/// How long one chip's chain of calls may take by default before the chip counts as timed out for the round.
pub const DEFAULT_DEADLINE: Duration = Duration::from_secs(2);

/// Sampler settings. Every setter clamps out-of-range values instead of failing, so a configuration is always valid.
///
/// ```
/// use std::time::Duration;
/// use ascend_dcmi::{Metric, MetricGroup, MetricSet, SamplerConfig};
///
/// let config = SamplerConfig::default()
///     .with_metrics(MetricSet::ALL.without(Metric::NetworkHealth))
///     .with_interval(MetricGroup::Utilization, Duration::from_millis(500))
///     .with_deadline(Duration::from_secs(1))
///     .with_concurrency(8);
/// assert_eq!(config.interval(MetricGroup::Memory), Duration::from_secs(10));
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SamplerConfig {
    metrics: MetricSet,
    intervals: [Duration; MetricGroup::ALL.len()],
    deadline: Duration,
    concurrency: usize,
}

impl Default for SamplerConfig {
    /// Every metric, Huawei's group intervals, [`DEFAULT_DEADLINE`], [`DEFAULT_CONCURRENCY`].
    fn default() -> Self {
        Self {
            metrics: MetricSet::ALL,
            intervals: MetricGroup::ALL.map(MetricGroup::default_interval),
            deadline: DEFAULT_DEADLINE,
            concurrency: DEFAULT_CONCURRENCY,
        }
    }
}

impl SamplerConfig {
    /// Selects the metrics to read; the others are never called and read as [`crate::SampleState::Disabled`].
    #[must_use]
    pub fn with_metrics(mut self, metrics: MetricSet) -> Self {
        self.metrics = metrics;
        self
    }

    /// Sets how often the background sampler polls `group` (at least [`MIN_INTERVAL`]).
    #[must_use]
    pub fn with_interval(mut self, group: MetricGroup, interval: Duration) -> Self {
        self.intervals[group.index()] = interval.max(MIN_INTERVAL);
        self
    }

    /// Sets how long one chip's chain of calls for a round may take (at least [`MIN_DEADLINE`]).
    #[must_use]
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline.max(MIN_DEADLINE);
        self
    }

    /// Sets how many chips are polled at once (at least 1): the number of worker threads taking jobs.
    #[must_use]
    pub fn with_concurrency(mut self, concurrency: usize) -> Self {
        self.concurrency = concurrency.max(1);
        self
    }

    /// The selected metrics.
    pub fn metrics(&self) -> MetricSet {
        self.metrics
    }

    /// The background interval of `group`.
    pub fn interval(&self, group: MetricGroup) -> Duration {
        self.intervals[group.index()]
    }

    /// The per-chip deadline.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// The concurrency limit.
    pub fn concurrency(&self) -> usize {
        self.concurrency
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn setters_clamp_instead_of_failing() {
        let config = SamplerConfig::default()
            .with_interval(MetricGroup::Utilization, Duration::ZERO)
            .with_deadline(Duration::ZERO)
            .with_concurrency(0);
        assert_eq!(config.interval(MetricGroup::Utilization), MIN_INTERVAL);
        assert_eq!(config.deadline(), MIN_DEADLINE);
        assert_eq!(config.concurrency(), 1);
        assert_eq!(config.interval(MetricGroup::Identity), Duration::from_secs(60));
    }
}
