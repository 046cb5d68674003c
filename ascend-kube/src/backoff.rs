//! The one retry policy of every daemon's API writes: exponential backoff with jitter that honours `Retry-After`.
//!
//! A fleet of thousands of nodes runs the same DaemonSets; when the API server fails, throttles or restarts, every
//! node's daemon sees it at the same moment. Retrying at a fixed interval would bring them all back at once, over and
//! over; retrying at once would be a storm. So after each failure the wait doubles (from
//! [`BackoffPolicy::first`] up to [`BackoffPolicy::max`]), each wait is spread at random over `[d, 2d)` so that nodes
//! drift apart, and a server that said when to come back (`Retry-After`, [`crate::Error::retry_after`]) is not asked
//! sooner. The first success resets the wait.
//!
//! Watches need none of this: kube-runtime's watcher has its own backoff with jitter (`default_backoff`), which
//! [`crate::Watched`] uses.
//!
//! ```
//! use std::time::Duration;
//! use ascend_kube::{Backoff, BackoffPolicy};
//!
//! let mut backoff = Backoff::new(BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(300) });
//! let transport_error = ascend_kube::Error::NoChips; // any error without Retry-After
//! let first = backoff.next_delay(&transport_error);
//! assert!(first >= Duration::from_secs(1) && first < Duration::from_secs(2));
//! let second = backoff.next_delay(&transport_error);
//! assert!(second >= Duration::from_secs(2) && second < Duration::from_secs(4));
//! backoff.reset();
//! ```

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};

use crate::error::Error;

/// Where the waits start and where they stop growing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BackoffPolicy {
    /// The wait after the first failure (before jitter).
    pub first: Duration,
    /// No wait is longer, jitter included (a `Retry-After` longer than this is still honoured).
    pub max: Duration,
}

impl Default for BackoffPolicy {
    /// 1 s doubling to at most 5 min: client-go's default for the informers' backoff is 800 ms to 30 s, and a
    /// daemon that writes a few times an hour can wait longer without anyone noticing.
    fn default() -> Self {
        BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(300) }
    }
}

/// The waits of one retrying loop.
#[derive(Debug)]
pub struct Backoff {
    policy: BackoffPolicy,
    delays: ExponentialBackoff,
}

impl Backoff {
    /// A backoff with no failure yet.
    pub fn new(policy: BackoffPolicy) -> Self {
        Backoff { policy, delays: Self::delays(policy) }
    }

    fn delays(policy: BackoffPolicy) -> ExponentialBackoff {
        // backon's jitter adds up to the current delay again, so the cap before jitter is half the maximum.
        let first = policy.first.min(policy.max / 2);
        ExponentialBuilder::new()
            .with_min_delay(first)
            .with_max_delay((policy.max / 2).max(first))
            .with_factor(2.0)
            .with_jitter()
            .without_max_times()
            .build()
    }

    /// How long to wait before the next attempt after `error`: the next exponential wait with jitter, or the
    /// server's `Retry-After` when that is longer.
    pub fn next_delay(&mut self, error: &Error) -> Duration {
        let backoff = self.delays.next().unwrap_or(self.policy.max).min(self.policy.max);
        error.retry_after().map_or(backoff, |asked| asked.max(backoff))
    }

    /// Forgets the failures: the next failure waits [`BackoffPolicy::first`] again.
    pub fn reset(&mut self) {
        self.delays = Self::delays(self.policy);
    }

    /// The policy.
    pub fn policy(&self) -> BackoffPolicy {
        self.policy
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn throttled(seconds: u64) -> Error {
        Error::Api {
            verb: "patch",
            object: "nodes/worker-1".into(),
            code: 429,
            reason: "TooManyRequests".into(),
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(seconds)),
        }
    }

    #[test]
    fn waits_double_with_jitter_up_to_the_maximum() {
        let policy = BackoffPolicy { first: Duration::from_millis(100), max: Duration::from_secs(2) };
        let mut backoff = Backoff::new(policy);
        let waits: Vec<Duration> = (0..8).map(|_| backoff.next_delay(&Error::NoChips)).collect();
        for (attempt, wait) in waits.iter().enumerate().take(4) {
            let base = Duration::from_millis(100 << attempt);
            assert!(*wait >= base && *wait < base * 2, "attempt {attempt}: {wait:?} not in [{base:?}, 2x)");
        }
        assert!(waits.iter().all(|wait| *wait <= policy.max), "{waits:?}");
        assert!(waits[7] >= policy.max / 2, "at the cap: {waits:?}");
        backoff.reset();
        assert!(backoff.next_delay(&Error::NoChips) < Duration::from_millis(200), "reset starts over");
    }

    #[test]
    fn jitter_spreads_a_fleet() {
        let policy = BackoffPolicy::default();
        let firsts: std::collections::BTreeSet<Duration> =
            (0..50).map(|_| Backoff::new(policy).next_delay(&Error::NoChips)).collect();
        assert!(firsts.len() > 40, "50 nodes failing at once come back at different times: {firsts:?}");
    }

    #[test]
    fn retry_after_is_honoured_and_never_shortened() {
        let mut backoff = Backoff::new(BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(60) });
        assert_eq!(backoff.next_delay(&throttled(30)), Duration::from_secs(30));
        // Past the server's number, the own backoff wins.
        let mut late = Backoff::new(BackoffPolicy { first: Duration::from_secs(8), max: Duration::from_secs(60) });
        let wait = late.next_delay(&throttled(1));
        assert!(wait >= Duration::from_secs(8), "{wait:?}");
        // A server asking for longer than the maximum is still obeyed.
        assert_eq!(backoff.next_delay(&throttled(600)), Duration::from_secs(600));
    }
}
