//! What recovery did, as Prometheus metrics (feature `metrics`): the same three series in every daemon that runs
//! recovery, under the daemon's prefix (`ascend_device_plugin_chip_resets_total`, `ascend_dra_driver_...`).

use std::time::Duration;

use ascend_dcmi::ChipIds;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

use super::planner::HeldOut;
use super::runner::RecoveryObserver;

/// The buckets of the time from a reset's start to its group's boot, in seconds (Huawei's boot wait ends at 180 s).
const RESET_SECONDS_BUCKETS: [f64; 8] = [1.0, 5.0, 10.0, 30.0, 60.0, 90.0, 120.0, 180.0];

/// Labels of chip resets.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct ResetLabels {
    /// `booted`, `failed` or `aborted` (a chip of the group was taken before the reset started).
    pub outcome: String,
}

/// Labels of chips held out by recovery.
#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
pub struct HeldOutLabels {
    /// `budget_used`, `reset_failed` or `faulted_again`.
    pub why: String,
}

/// `chip_resets_total{outcome}`, `chip_reset_seconds`, `chips_held_out_total{why}` (each time a chip was held out)
/// and `held_out_chips` (how many are out now: what an alert watches), fed as a [`RecoveryObserver`].
#[derive(Debug)]
pub struct RecoveryMetrics {
    resets: Family<ResetLabels, Counter>,
    reset_seconds: Histogram,
    held_out: Family<HeldOutLabels, Counter>,
    held_out_now: Gauge,
}

impl Default for RecoveryMetrics {
    fn default() -> Self {
        RecoveryMetrics {
            resets: Family::default(),
            reset_seconds: Histogram::new(RESET_SECONDS_BUCKETS),
            held_out: Family::default(),
            held_out_now: Gauge::default(),
        }
    }
}

impl RecoveryMetrics {
    /// Registers the three metrics in `registry` (which carries the daemon's prefix).
    pub fn register(&self, registry: &mut Registry) {
        registry.register("chip_resets", "Hot resets of faulty chips by recovery, by outcome", self.resets.clone());
        registry.register(
            "chip_reset_seconds",
            "Time from a recovery reset's start to its reset group's boot",
            self.reset_seconds.clone(),
        );
        registry.register(
            "chips_held_out",
            "Chips recovery held out of service until an operator acts, by reason",
            self.held_out.clone(),
        );
        registry.register(
            "held_out_chips",
            "Chips recovery holds out of service now (until an operator acts or they read healthy)",
            self.held_out_now.clone(),
        );
    }
}

impl RecoveryObserver for RecoveryMetrics {
    fn reset_finished(&self, _chip: ChipIds, outcome: &Result<Duration, String>) {
        let outcome = match outcome {
            Ok(took) => {
                self.reset_seconds.observe(took.as_secs_f64());
                "booted"
            }
            Err(_) => "failed",
        };
        self.resets.get_or_create(&ResetLabels { outcome: outcome.to_owned() }).inc();
    }

    fn reset_aborted(&self, _chip: ChipIds, _taken: &[ChipIds]) {
        self.resets.get_or_create(&ResetLabels { outcome: "aborted".to_owned() }).inc();
    }

    fn held_out(&self, _chip: ChipIds, why: &HeldOut) {
        let why = match why {
            HeldOut::BudgetUsed => "budget_used",
            HeldOut::ResetFailed(_) => "reset_failed",
            HeldOut::FaultedAgain { .. } => "faulted_again",
        };
        self.held_out.get_or_create(&HeldOutLabels { why: why.to_owned() }).inc();
    }

    fn held_out_now(&self, chips: &[ChipIds]) {
        self.held_out_now.set(i64::try_from(chips.len()).unwrap_or(i64::MAX));
    }
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{LogicId, PhyId};
    use prometheus_client::encoding::text::encode;

    use super::*;

    #[test]
    fn each_outcome_is_counted_under_the_registrys_prefix() {
        let metrics = RecoveryMetrics::default();
        let mut registry = Registry::with_prefix("ascend_test");
        metrics.register(&mut registry);
        let chip = ChipIds { logic: LogicId(0), phy: PhyId(2), locator: None };
        metrics.reset_finished(chip, &Ok(Duration::from_secs(12)));
        metrics.reset_finished(chip, &Err("boot timed out".to_owned()));
        metrics.reset_aborted(chip, &[chip]);
        metrics.held_out(chip, &HeldOut::FaultedAgain { after: Duration::from_secs(30) });
        metrics.held_out_now(&[chip]);
        let mut text = String::new();
        encode(&mut text, &registry).expect("encodes");
        for line in [
            "ascend_test_chip_resets_total{outcome=\"booted\"} 1",
            "ascend_test_chip_resets_total{outcome=\"failed\"} 1",
            "ascend_test_chip_resets_total{outcome=\"aborted\"} 1",
            "ascend_test_chip_reset_seconds_count 1",
            "ascend_test_chip_reset_seconds_sum 12.0",
            "ascend_test_chips_held_out_total{why=\"faulted_again\"} 1",
            "ascend_test_held_out_chips 1",
        ] {
            assert!(text.lines().any(|have| have == line), "{line} missing from:\n{text}");
        }
    }
}
