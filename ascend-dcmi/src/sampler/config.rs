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

/// The profiling window of each bandwidth call by default: Huawei's `--profilingTime` and `--hccsBWProfilingTime`
/// (Ascend/mind-cluster component/npu-exporter/cmd/npu-exporter/main.go).
pub const DEFAULT_PROFILING: Duration = Duration::from_millis(200);

/// The longest HCCS bandwidth window the driver takes (`dcmi_get_hccs_link_bandwidth_info`: 1..=1000 ms).
pub const MAX_HCCS_PROFILING: Duration = Duration::from_millis(1000);

/// The longest PCIe bandwidth window the driver takes (`dcmi_get_pcie_link_bandwidth_info`: 1..=2000 ms).
pub const MAX_PCIE_PROFILING: Duration = Duration::from_millis(2000);

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
    profiling: Profiling,
    bandwidth_deadline: Option<Duration>,
}

/// The profiling windows of the bandwidth calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Profiling {
    pub(crate) hccs: Duration,
    pub(crate) pcie: Duration,
}

impl Default for SamplerConfig {
    /// Every metric, Huawei's group intervals, [`DEFAULT_DEADLINE`], [`DEFAULT_CONCURRENCY`].
    fn default() -> Self {
        Self {
            metrics: MetricSet::ALL,
            intervals: MetricGroup::ALL.map(MetricGroup::default_interval),
            deadline: DEFAULT_DEADLINE,
            concurrency: DEFAULT_CONCURRENCY,
            profiling: Profiling { hccs: DEFAULT_PROFILING, pcie: DEFAULT_PROFILING },
            bandwidth_deadline: None,
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

    /// Sets the profiling windows of the HCCS and PCIe bandwidth calls (clamped to 1 ms up to what the driver takes:
    /// [`MAX_HCCS_PROFILING`], [`MAX_PCIE_PROFILING`]).
    #[must_use]
    pub fn with_profiling(mut self, hccs: Duration, pcie: Duration) -> Self {
        let floor = Duration::from_millis(1);
        self.profiling =
            Profiling { hccs: hccs.clamp(floor, MAX_HCCS_PROFILING), pcie: pcie.clamp(floor, MAX_PCIE_PROFILING) };
        self
    }

    /// Sets how long one chip's bandwidth chain may take (at least [`MIN_DEADLINE`]). By default it is the deadline
    /// plus both profiling windows, since the chain waits out each window in the driver.
    #[must_use]
    pub fn with_bandwidth_deadline(mut self, deadline: Duration) -> Self {
        self.bandwidth_deadline = Some(deadline.max(MIN_DEADLINE));
        self
    }

    /// The profiling window of the HCCS bandwidth call.
    pub fn hccs_profiling(&self) -> Duration {
        self.profiling.hccs
    }

    /// The profiling window of the PCIe bandwidth call.
    pub fn pcie_profiling(&self) -> Duration {
        self.profiling.pcie
    }

    pub(crate) fn profiling(&self) -> Profiling {
        self.profiling
    }

    /// The per-chip deadline of the [slow](MetricGroup::is_slow) bandwidth group.
    pub fn bandwidth_deadline(&self) -> Duration {
        self.bandwidth_deadline.unwrap_or(self.deadline + self.profiling.hccs + self.profiling.pcie)
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
