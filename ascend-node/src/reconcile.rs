//! The one reconcile loop of the node daemons: a round runs at once, then whenever something it watches changes, when
//! its resync is due, and after a failure once [`Backoff`]'s wait is over, until shutdown.
//!
//! What the loop does between rounds, in one place for every daemon that keeps an object in step with the node (the
//! labeller's Node labels, the device plugin's device-info ConfigMap and Node condition):
//!
//! - **Wake-ups.** A change of a [`watch`] channel ([`ReconcileLoop::wake_on_change`]: the health monitor's
//!   snapshots, an `ascend_kube::Watched` copy of an API object) or a [`Notify`]
//!   ([`ReconcileLoop::wake_on_notify`]: "Allocate served a pod", "reconcile now") starts a round. A round reads the
//!   latest of everything, so the changes that woke the loop are all marked seen before it runs: changes of several
//!   sources at once make one round, not one each. A closed channel ends the loop (whoever fed it has stopped),
//!   unless it was added with [`ReconcileLoop::wake_on_change_while_open`] (a watch that may end while the loop's
//!   work goes on): then the loop logs it and goes on without it.
//! - **Resync.** After a successful round the next one runs after [`ReconcileLoop::resync_every`] even if nothing
//!   woke the loop, or sooner when the round asks for it (its `Ok(Some(after))`, such as a heartbeat that falls due).
//! - **Backoff.** After a failed round the loop waits [`Backoff`]'s next wait (exponential, jitter, the server's
//!   `Retry-After` honoured, [`RetryAfter`]) and logs the error with the wait. Wake-ups during that wait do not
//!   cut it short: a fleet of nodes whose API server failed must not come back in step because their chips or pods
//!   changed meanwhile; the round after the wait reads what changed. The first success resets the waits.
//! - **Shutdown.** When the shutdown future completes the loop returns at once, also in the middle of a round (the
//!   round's future is dropped: a reconcile must leave nothing half done that the next start cannot redo).
//!
//! ```
//! use std::time::Duration;
//! use ascend_node::{BackoffPolicy, Reconcile, ReconcileLoop, RetryAfter, Stopped};
//!
//! struct Unreachable;
//! impl std::fmt::Display for Unreachable {
//!     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
//!         f.write_str("API server unreachable")
//!     }
//! }
//! impl RetryAfter for Unreachable {}
//!
//! /// Counts its rounds; a real one reads the chips and writes an object.
//! struct Labels(u32);
//! impl Reconcile for Labels {
//!     type Error = Unreachable;
//!     async fn reconcile(&mut self) -> Result<Option<Duration>, Unreachable> {
//!         self.0 += 1;
//!         Ok(None)
//!     }
//! }
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let (changes, changed) = tokio::sync::watch::channel(0_u64);
//! let rounds = ReconcileLoop::new("node labels", BackoffPolicy::default())
//!     .wake_on_change(changed)
//!     .resync_every(Duration::from_secs(60));
//! let shutdown = async { tokio::time::sleep(Duration::from_millis(10)).await };
//! assert_eq!(rounds.run(Labels(0), shutdown).await, Stopped::Shutdown);
//! # drop(changes);
//! # }
//! ```

use std::fmt::Display;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use tokio::sync::{watch, Notify};
use tokio::time::Instant;

use crate::backoff::{Backoff, BackoffPolicy, RetryAfter};

/// One round of a reconcile loop: read what is, compare with what should be, write the difference.
pub trait Reconcile: Send {
    /// Why a round failed; logged, and its `Retry-After` honoured.
    type Error: RetryAfter + Display + Send;

    /// Runs one round. `Ok(Some(after))` asks for the next round within `after` even if nothing wakes the loop
    /// (sooner than the loop's resync); `Ok(None)` leaves it to the resync and the wake-ups.
    ///
    /// # Errors
    /// What stopped the round; the loop runs it again after the backoff's wait.
    fn reconcile(&mut self) -> impl Future<Output = Result<Option<Duration>, Self::Error>> + Send;
}

/// Why [`ReconcileLoop::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    /// The shutdown future completed.
    Shutdown,
    /// A watched channel's sender was dropped: whoever fed the loop has stopped.
    SourceClosed,
}

/// Something whose change wakes the loop.
trait WakeSource: Send {
    /// Completes at the next change: `false` when the source is closed.
    fn changed(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>>;
    /// Forgets the changes so far (the round about to run reads them).
    fn mark_seen(&mut self);
}

impl<T: Send + Sync> WakeSource for watch::Receiver<T> {
    fn changed(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(async move { watch::Receiver::changed(self).await.is_ok() })
    }

    fn mark_seen(&mut self) {
        self.mark_unchanged();
    }
}

impl WakeSource for Arc<Notify> {
    fn changed(&mut self) -> Pin<Box<dyn Future<Output = bool> + Send + '_>> {
        Box::pin(async move {
            self.notified().await;
            true
        })
    }

    fn mark_seen(&mut self) {}
}

/// A wake-up source and what its closing means.
struct Wake {
    source: Box<dyn WakeSource>,
    /// Whether the loop ends when the source closes (otherwise it goes on without it).
    ends_loop: bool,
}

/// What ended a wait for the sources.
enum Woken {
    /// A source changed.
    Changed,
    /// The source at this index closed.
    Closed(usize),
}

/// A reconcile loop: its name, backoff, resync and wake-ups (see the module docs).
pub struct ReconcileLoop {
    what: String,
    policy: BackoffPolicy,
    resync: Option<Duration>,
    wakes: Vec<Wake>,
}

impl std::fmt::Debug for ReconcileLoop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ReconcileLoop")
            .field("what", &self.what)
            .field("policy", &self.policy)
            .field("resync", &self.resync)
            .field("wake_sources", &self.wakes.len())
            .finish()
    }
}

impl ReconcileLoop {
    /// A loop that keeps `what` current (named in its log lines, e.g. `"node labels of worker-1"`), waiting by
    /// `policy` after a failure; no resync and no wake-ups yet: after its first round it runs only after failures.
    pub fn new(what: impl Into<String>, policy: BackoffPolicy) -> Self {
        ReconcileLoop { what: what.into(), policy, resync: None, wakes: Vec::new() }
    }

    /// Runs a round `period` after the last successful one when nothing woke the loop before.
    #[must_use]
    pub fn resync_every(mut self, period: Duration) -> Self {
        self.resync = Some(period);
        self
    }

    /// Runs a round when `changes` changes; the loop ends when its sender is dropped.
    #[must_use]
    pub fn wake_on_change<T: Send + Sync + 'static>(mut self, changes: watch::Receiver<T>) -> Self {
        self.wakes.push(Wake { source: Box::new(changes), ends_loop: true });
        self
    }

    /// Runs a round when `changes` changes; when its sender is dropped the loop logs it and goes on without it (for
    /// a wake-up the loop can do without, such as a watch that may stop while the resync and the other sources go on).
    #[must_use]
    pub fn wake_on_change_while_open<T: Send + Sync + 'static>(mut self, changes: watch::Receiver<T>) -> Self {
        self.wakes.push(Wake { source: Box::new(changes), ends_loop: false });
        self
    }

    /// Runs a round when `notify` is notified (`notify_one` while a round runs makes one more round).
    #[must_use]
    pub fn wake_on_notify(mut self, notify: Arc<Notify>) -> Self {
        self.wakes.push(Wake { source: Box::new(notify), ends_loop: true });
        self
    }

    /// Runs `round` at once and then as the module docs say, until `shutdown` completes or a watched channel closes.
    pub async fn run<R: Reconcile>(mut self, mut round: R, shutdown: impl Future<Output = ()>) -> Stopped {
        tokio::pin!(shutdown);
        let mut backoff = Backoff::new(self.policy);
        // When the next round is due without a wake-up; `None`: only when woken.
        let mut due: Option<Instant> = Some(Instant::now());
        let mut failing = false;
        loop {
            let timer = async {
                match due {
                    Some(at) => tokio::time::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            // While failing, the backoff's wait holds whatever changes meanwhile.
            let woken = async {
                if failing {
                    std::future::pending().await
                } else {
                    any_change(&mut self.wakes).await
                }
            };
            tokio::select! {
                biased;
                () = &mut shutdown => return Stopped::Shutdown,
                () = timer => {}
                woken = woken => match woken {
                    Woken::Changed => {}
                    Woken::Closed(index) if self.wakes[index].ends_loop => {
                        tracing::debug!(reconcile = %self.what, "a watched channel closed; the reconcile loop stops");
                        return Stopped::SourceClosed;
                    }
                    Woken::Closed(index) => {
                        self.wakes.remove(index);
                        tracing::warn!("{}: a watched channel closed; going on without it", self.what);
                        continue;
                    }
                },
            }
            for wake in &mut self.wakes {
                wake.source.mark_seen();
            }
            let outcome = tokio::select! {
                biased;
                () = &mut shutdown => return Stopped::Shutdown,
                outcome = round.reconcile() => outcome,
            };
            match outcome {
                Ok(asked) => {
                    backoff.reset();
                    failing = false;
                    let after = match (asked, self.resync) {
                        (Some(asked), Some(resync)) => Some(asked.min(resync)),
                        (asked, resync) => asked.or(resync),
                    };
                    due = after.map(|after| Instant::now() + after);
                }
                Err(error) => {
                    let retry_in = backoff.next_delay(&error);
                    tracing::warn!(%error, ?retry_in, "{} not reconciled; retrying", self.what);
                    failing = true;
                    due = Some(Instant::now() + retry_in);
                }
            }
        }
    }
}

/// Completes at the first change of any source, or when one is closed. Never completes without sources.
async fn any_change(wakes: &mut [Wake]) -> Woken {
    let mut waits: Vec<_> = wakes.iter_mut().map(|wake| wake.source.changed()).collect();
    std::future::poll_fn(|cx| {
        for (index, wait) in waits.iter_mut().enumerate() {
            if let Poll::Ready(open) = wait.as_mut().poll(cx) {
                return Poll::Ready(if open { Woken::Changed } else { Woken::Closed(index) });
            }
        }
        Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;
    use std::sync::Mutex;

    use tokio::time::Instant;

    use super::*;

    #[derive(Debug)]
    struct Refused(Option<Duration>);

    impl Display for Refused {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("refused")
        }
    }

    impl RetryAfter for Refused {
        fn retry_after(&self) -> Option<Duration> {
            self.0
        }
    }

    /// What a scripted round answers.
    type Answer = Result<Option<Duration>, Refused>;

    /// Records when each round started and answers from a script (then `Ok(None)`); a round takes `takes`.
    #[derive(Clone)]
    struct Scripted {
        started: Arc<Mutex<Vec<Instant>>>,
        script: Arc<Mutex<VecDeque<Answer>>>,
        takes: Duration,
    }

    impl Scripted {
        fn new(script: Vec<Answer>) -> Self {
            Scripted { started: Arc::default(), script: Arc::new(Mutex::new(script.into())), takes: Duration::ZERO }
        }

        fn taking(mut self, takes: Duration) -> Self {
            self.takes = takes;
            self
        }

        /// When each round started, from `since`.
        fn rounds(&self, since: Instant) -> Vec<Duration> {
            self.started.lock().unwrap().iter().map(|at| *at - since).collect()
        }
    }

    impl Reconcile for Scripted {
        type Error = Refused;

        async fn reconcile(&mut self) -> Result<Option<Duration>, Refused> {
            {
                let mut started = self.started.lock().unwrap();
                assert!(started.len() < 1000, "the loop spins: {} rounds", started.len());
                started.push(Instant::now());
            }
            tokio::time::sleep(self.takes).await;
            self.script.lock().unwrap().pop_front().unwrap_or(Ok(None))
        }
    }

    /// Runs the loop beside `driver` (which changes its sources); a loop still running after a day of (paused) time
    /// is a failure, not a hung test.
    async fn until_stopped(rounds: impl Future<Output = Stopped>, driver: impl Future<Output = ()>) -> Stopped {
        let driver = async {
            driver.await;
            std::future::pending::<()>().await;
        };
        tokio::select! {
            stopped = rounds => stopped,
            () = driver => unreachable!(),
            () = tokio::time::sleep(secs(24 * 3600)) => panic!("the loop did not stop"),
        }
    }

    fn policy() -> BackoffPolicy {
        BackoffPolicy { first: Duration::from_secs(1), max: Duration::from_secs(60) }
    }

    fn secs(seconds: u64) -> Duration {
        Duration::from_secs(seconds)
    }

    #[tokio::test(start_paused = true)]
    async fn failures_wait_longer_each_time_and_a_success_starts_over() {
        let refused = || Err(Refused(None));
        let round = Scripted::new(vec![refused(), refused(), refused(), Ok(None), refused(), Ok(None)]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy()).resync_every(secs(100));
        let stopped = until_stopped(rounds.run(round.clone(), tokio::time::sleep(secs(250))), async {}).await;
        assert_eq!(stopped, Stopped::Shutdown);
        let rounds = round.rounds(start);
        assert_eq!(rounds[0], Duration::ZERO, "the first round runs at once");
        let gaps: Vec<Duration> = rounds.windows(2).map(|pair| pair[1] - pair[0]).collect();
        assert_eq!(gaps.len(), 6, "{rounds:?}");
        for (failure, gap) in gaps.iter().take(3).enumerate() {
            let base = secs(1 << failure);
            assert!(*gap >= base && *gap < base * 2, "wait {failure}: {gap:?} not in [{base:?}, 2x): {gaps:?}");
        }
        assert_eq!(gaps[3], secs(100), "a success waits for the resync: {gaps:?}");
        assert!(gaps[4] >= secs(1) && gaps[4] < secs(2), "after a success the waits start over: {gaps:?}");
        assert_eq!(gaps[5], secs(100), "{gaps:?}");
    }

    #[tokio::test(start_paused = true)]
    async fn a_server_that_asks_for_time_gets_it() {
        let round = Scripted::new(vec![Err(Refused(Some(secs(30))))]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy()).run(round.clone(), tokio::time::sleep(secs(100)));
        assert_eq!(until_stopped(rounds, async {}).await, Stopped::Shutdown);
        assert_eq!(round.rounds(start), vec![Duration::ZERO, secs(30)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_change_or_a_notification_wakes_a_round_and_changes_of_several_sources_make_one() {
        let (first, first_changes) = watch::channel(0_u32);
        let (second, second_changes) = watch::channel(0_u32);
        let notify = Arc::new(Notify::new());
        let round = Scripted::new(vec![]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy())
            .wake_on_change(first_changes)
            .wake_on_change(second_changes)
            .wake_on_notify(Arc::clone(&notify))
            .run(round.clone(), tokio::time::sleep(secs(100)));
        let driver = async {
            tokio::time::sleep(secs(10)).await;
            first.send_replace(1);
            tokio::time::sleep(secs(10)).await;
            notify.notify_one();
            tokio::time::sleep(secs(10)).await;
            // Both at once, and again before the loop ran: one round reads them all.
            first.send_replace(2);
            second.send_replace(1);
            second.send_replace(2);
        };
        assert_eq!(until_stopped(rounds, driver).await, Stopped::Shutdown);
        assert_eq!(round.rounds(start), vec![Duration::ZERO, secs(10), secs(20), secs(30)]);
    }

    #[tokio::test(start_paused = true)]
    async fn changes_during_the_backoff_wait_do_not_cut_it_short() {
        let (changes, changed) = watch::channel(0_u32);
        let round = Scripted::new(vec![Err(Refused(Some(secs(40))))]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy())
            .wake_on_change(changed)
            .run(round.clone(), tokio::time::sleep(secs(100)));
        let driver = async {
            for value in 1..=5 {
                tokio::time::sleep(secs(5)).await;
                changes.send_replace(value);
            }
        };
        assert_eq!(until_stopped(rounds, driver).await, Stopped::Shutdown);
        assert_eq!(round.rounds(start), vec![Duration::ZERO, secs(40)], "held for the server's 40 s, then one round");
    }

    #[tokio::test(start_paused = true)]
    async fn resync_runs_rounds_when_nothing_changes_and_a_round_can_ask_sooner() {
        let round = Scripted::new(vec![Ok(None), Ok(Some(secs(5))), Ok(Some(secs(500)))]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy()).resync_every(secs(60));
        assert_eq!(
            until_stopped(rounds.run(round.clone(), tokio::time::sleep(secs(200))), async {}).await,
            Stopped::Shutdown
        );
        assert_eq!(round.rounds(start), vec![Duration::ZERO, secs(60), secs(65), secs(125), secs(185)]);
    }

    #[tokio::test(start_paused = true)]
    async fn shutdown_ends_a_wait_and_a_round_at_once() {
        let (_changes, changed) = watch::channel(0_u32);
        let idle = Scripted::new(vec![]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy()).wake_on_change(changed);
        let stopped = until_stopped(rounds.run(idle.clone(), tokio::time::sleep(secs(7))), async {}).await;
        assert_eq!((stopped, start.elapsed()), (Stopped::Shutdown, secs(7)));

        let stuck = Scripted::new(vec![]).taking(secs(3600));
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy()).run(stuck.clone(), tokio::time::sleep(secs(7)));
        let stopped = until_stopped(rounds, async {}).await;
        assert_eq!((stopped, start.elapsed()), (Stopped::Shutdown, secs(7)), "a hung round does not hold shutdown");
        assert_eq!(stuck.rounds(start), vec![Duration::ZERO]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_channel_the_loop_can_do_without_is_forgotten_when_it_closes() {
        let (optional, optional_changes) = watch::channel(0_u32);
        let (needed, needed_changes) = watch::channel(0_u32);
        let round = Scripted::new(vec![Ok(Some(secs(25)))]);
        let start = Instant::now();
        let rounds = ReconcileLoop::new("test", policy())
            .wake_on_change_while_open(optional_changes)
            .wake_on_change(needed_changes)
            .run(round.clone(), tokio::time::sleep(secs(40)));
        let driver = async {
            tokio::time::sleep(secs(10)).await;
            drop(optional);
            tokio::time::sleep(secs(20)).await;
            needed.send_replace(1);
        };
        assert_eq!(until_stopped(rounds, driver).await, Stopped::Shutdown);
        // The closing at 10 s neither ends the loop, nor runs a round, nor moves the round the first one asked for
        // (at 25 s); the other source still wakes the loop (at 30 s).
        assert_eq!(round.rounds(start), vec![Duration::ZERO, secs(25), secs(30)]);
    }

    #[tokio::test(start_paused = true)]
    async fn a_closed_channel_ends_the_loop() {
        let (changes, changed) = watch::channel(0_u32);
        let round = Scripted::new(vec![]);
        let start = Instant::now();
        let rounds =
            ReconcileLoop::new("test", policy()).wake_on_change(changed).run(round.clone(), std::future::pending());
        let driver = async {
            tokio::time::sleep(secs(10)).await;
            drop(changes);
        };
        assert_eq!(until_stopped(rounds, driver).await, Stopped::SourceClosed);
        assert_eq!(start.elapsed(), secs(10));
    }
}
