//! Nearest-rank percentiles of a set of latencies (the smallest sample at or above the rank), in milliseconds for
//! reports: the one percentile helper of the benches, the exporter's load test and the DRA driver's bench.

use std::time::Duration;

/// p50, p90, p99 and the maximum of a set of latencies.
#[derive(Debug, Clone, Copy)]
pub struct Percentiles {
    /// How many samples.
    pub count: usize,
    /// The median.
    pub p50: Duration,
    /// The 90th percentile.
    pub p90: Duration,
    /// The 99th percentile.
    pub p99: Duration,
    /// The slowest sample.
    pub max: Duration,
}

impl Percentiles {
    /// Sorts `samples` and picks the nearest-rank percentiles; `None` when there are none.
    pub fn of(mut samples: Vec<Duration>) -> Option<Percentiles> {
        if samples.is_empty() {
            return None;
        }
        samples.sort();
        let rank = |fraction: f64| {
            let index = (fraction * samples.len() as f64).ceil() as usize;
            samples[index.clamp(1, samples.len()) - 1]
        };
        Some(Percentiles {
            count: samples.len(),
            p50: rank(0.50),
            p90: rank(0.90),
            p99: rank(0.99),
            max: samples[samples.len() - 1],
        })
    }

    /// The figures as a JSON object, milliseconds with microsecond resolution.
    pub fn to_json(self) -> serde_json::Value {
        let millis = |duration: Duration| (duration.as_secs_f64() * 1e6).round() / 1e3;
        serde_json::json!({
            "count": self.count,
            "p50_ms": millis(self.p50),
            "p90_ms": millis(self.p90),
            "p99_ms": millis(self.p99),
            "max_ms": millis(self.max),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_of_one_to_hundred() {
        let samples: Vec<Duration> = (1..=100).rev().map(Duration::from_millis).collect();
        let figures = Percentiles::of(samples).expect("samples");
        assert_eq!(figures.p50, Duration::from_millis(50));
        assert_eq!(figures.p90, Duration::from_millis(90));
        assert_eq!(figures.p99, Duration::from_millis(99));
        assert_eq!(figures.max, Duration::from_millis(100));
        assert!(Percentiles::of(Vec::new()).is_none());
    }
}
