//! The one retry policy of the node daemons: exponential backoff with jitter that honours a server's `Retry-After`.
//!
//! A fleet of thousands of nodes runs the same DaemonSets; when the API server (or the kubelet) fails, throttles or
//! restarts, every node's daemon sees it at the same moment. Retrying at a fixed interval would bring them all back at
//! once, over and over; retrying at once would be a storm. So after each failure the wait doubles (from
//! [`BackoffPolicy::first`] up to [`BackoffPolicy::max`]), each wait is spread at random over `[d, 2d)` so that nodes
//! drift apart, and a server that said when to come back ([`RetryAfter`], such as `ascend_kube::Error`'s
//! `Retry-After`) is not asked sooner. The first success resets the wait.
//!
//! [`crate::ReconcileLoop`] is the loop built on it; the exporter's reconnects to the kubelet use [`Backoff`] alone.
//!
//! ```
//! use std::time::Duration;
//! use ascend_node::{Backoff, BackoffPolicy};
//!
//! let mut backoff = Backoff::new(BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(300) });
//! let first = backoff.next_wait();
//! assert!(first >= Duration::from_secs(1) && first < Duration::from_secs(2));
//! let second = backoff.next_wait();
//! assert!(second >= Duration::from_secs(2) && second < Duration::from_secs(4));
//! backoff.reset();
//! ```

use std::time::Duration;

use backon::{BackoffBuilder, ExponentialBackoff, ExponentialBuilder};

/// An error that may carry the server's wish of when to be asked again (HTTP `Retry-After`).
pub trait RetryAfter {
    /// How long the server asked to wait before the next attempt, when it said so.
    fn retry_after(&self) -> Option<Duration> {
        None
    }
}

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

    /// How long to wait before the next attempt after a failure that says nothing about when to come back: the next
    /// exponential wait with jitter.
    pub fn next_wait(&mut self) -> Duration {
        self.delays.next().unwrap_or(self.policy.max).min(self.policy.max)
    }

    /// How long to wait before the next attempt after `error`: the next exponential wait with jitter, or the
    /// server's `Retry-After` when that is longer.
    pub fn next_delay<E: RetryAfter + ?Sized>(&mut self, error: &E) -> Duration {
        let backoff = self.next_wait();
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

    /// An error that may say when to come back.
    struct Refused(Option<Duration>);

    impl RetryAfter for Refused {
        fn retry_after(&self) -> Option<Duration> {
            self.0
        }
    }

    fn throttled(seconds: u64) -> Refused {
        Refused(Some(Duration::from_secs(seconds)))
    }

    #[test]
    fn waits_double_with_jitter_up_to_the_maximum() {
        let policy = BackoffPolicy { first: Duration::from_millis(100), max: Duration::from_secs(2) };
        let mut backoff = Backoff::new(policy);
        let waits: Vec<Duration> = (0..8).map(|_| backoff.next_delay(&Refused(None))).collect();
        for (attempt, wait) in waits.iter().enumerate().take(4) {
            let base = Duration::from_millis(100 << attempt);
            assert!(*wait >= base && *wait < base * 2, "attempt {attempt}: {wait:?} not in [{base:?}, 2x)");
        }
        assert!(waits.iter().all(|wait| *wait <= policy.max), "{waits:?}");
        assert!(waits[7] >= policy.max / 2, "at the cap: {waits:?}");
        backoff.reset();
        assert!(backoff.next_wait() < Duration::from_millis(200), "reset starts over");
    }

    #[test]
    fn jitter_spreads_a_fleet() {
        let policy = BackoffPolicy::default();
        let firsts: std::collections::BTreeSet<Duration> = (0..50).map(|_| Backoff::new(policy).next_wait()).collect();
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
