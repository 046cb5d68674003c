//! How often chips may be reset: a token bucket per chip and one for the node.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use ascend_dcmi::LogicId;

/// A bucket of `capacity` tokens, filled up again `refill` after it was last filled (Huawei's device plugin: 3 resets
/// a chip per 6 hours, mind-cluster `component/ascend-device-plugin/pkg/server/token_bucket.go`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Budget {
    /// Tokens when full.
    pub capacity: u32,
    /// How long after the last fill the bucket is full again.
    pub refill: Duration,
}

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: u32,
    filled: Instant,
}

impl Bucket {
    fn full(budget: Budget, now: Instant) -> Self {
        Bucket { tokens: budget.capacity, filled: now }
    }

    fn refilled(mut self, budget: Budget, now: Instant) -> Self {
        if now.saturating_duration_since(self.filled) >= budget.refill {
            self = Bucket::full(budget, now);
        }
        self
    }
}

/// The node's and every chip's bucket.
#[derive(Debug)]
pub(crate) struct Limiter {
    per_chip: Budget,
    per_node: Budget,
    chips: BTreeMap<LogicId, Bucket>,
    node: Option<Bucket>,
}

/// Why a reset may not start now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// The chip has used its resets: it needs an operator (or the refill).
    ChipExhausted,
    /// The node has used its resets for now: try again later.
    NodeBusy,
}

impl Limiter {
    pub(crate) fn new(per_chip: Budget, per_node: Budget) -> Self {
        Limiter { per_chip, per_node, chips: BTreeMap::new(), node: None }
    }

    /// Takes a token from the chip's and the node's bucket, or neither.
    pub(crate) fn take(&mut self, chip: LogicId, now: Instant) -> Result<(), Refusal> {
        let chip_bucket = self.chips.get(&chip).copied().unwrap_or(Bucket::full(self.per_chip, now));
        let chip_bucket = chip_bucket.refilled(self.per_chip, now);
        let node_bucket = self.node.unwrap_or(Bucket::full(self.per_node, now)).refilled(self.per_node, now);
        if chip_bucket.tokens == 0 {
            return Err(Refusal::ChipExhausted);
        }
        if node_bucket.tokens == 0 {
            return Err(Refusal::NodeBusy);
        }
        self.chips.insert(chip, Bucket { tokens: chip_bucket.tokens - 1, ..chip_bucket });
        self.node = Some(Bucket { tokens: node_bucket.tokens - 1, ..node_bucket });
        Ok(())
    }

    /// Resets the chip may still take now.
    pub(crate) fn left(&self, chip: LogicId, now: Instant) -> u32 {
        self.chips.get(&chip).map_or(self.per_chip.capacity, |bucket| bucket.refilled(self.per_chip, now).tokens)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chip_gets_its_tokens_then_waits_for_the_refill_and_the_node_limits_all_chips() {
        let start = Instant::now();
        let hour = Duration::from_secs(3600);
        let mut limiter = Limiter::new(Budget { capacity: 2, refill: 6 * hour }, Budget { capacity: 3, refill: hour });
        assert_eq!(limiter.take(LogicId(0), start), Ok(()));
        assert_eq!(limiter.take(LogicId(0), start), Ok(()));
        assert_eq!(limiter.take(LogicId(0), start), Err(Refusal::ChipExhausted));
        assert_eq!(limiter.left(LogicId(0), start), 0);
        assert_eq!(limiter.take(LogicId(1), start), Ok(()));
        assert_eq!(limiter.take(LogicId(2), start), Err(Refusal::NodeBusy), "three resets on the node this hour");
        assert_eq!(limiter.take(LogicId(2), start + hour), Ok(()), "the node's bucket refills after an hour");
        assert_eq!(limiter.take(LogicId(0), start + hour), Err(Refusal::ChipExhausted));
        assert_eq!(limiter.left(LogicId(0), start + 6 * hour), 2, "the chip's bucket refills after six hours");
    }
}
