//! [`DriverCalls`]: closures that call the driver, run on a [`WorkerPool`] with a deadline, at most one per key.

use std::collections::HashMap;
use std::hash::Hash;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use parking_lot::Mutex;

use super::call_state::CallState;
use super::worker_pool::{JobEnd, PoolSize, Runner, WorkerPool};
use crate::error::{CallContext, Error, Result};
use crate::limits::MAX_CHIPS;

/// Whether [`DriverCalls::start`] started the call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use = "a call that was not started delivers nothing"]
pub enum Started {
    /// The call is queued for a worker.
    Started,
    /// A call for the same key is still queued, running, or stuck in the driver; no second one was started.
    StillBusy,
}

/// What a job does: the call, then `finished` (which frees its key), then the delivery of the result.
type Work = Box<dyn FnOnce(&dyn Fn()) + Send>;

struct CallJob {
    state: Arc<CallState>,
    round: u64,
    work: Work,
}

/// The state of one key: its call's state and the round that call belongs to.
struct KeyEntry {
    state: Arc<CallState>,
    round: u64,
}

/// Runs driver calls on worker threads with a deadline: the one mechanism behind [`crate::Dcmi::call_with_deadline`],
/// the [`crate::Sampler`]'s worker pool and the device plugin's and `ascend-smi`'s reads.
///
/// A DCMI call can block for seconds, or for good, on a dropped card, and cannot be cancelled. So every call runs on
/// one of `workers` long-lived threads; a call still running at its deadline is abandoned: its worker is counted out
/// and replaced (so every other chip is still served), the call's key stays busy until the call returns (so a hung
/// chip gets no second call piling up behind the first), and the late result is still delivered to whoever wants it.
///
/// Two ways to use it:
/// - [`Self::call`]: wait for one call's result at most the deadline ([`Error::Timeout`]); at most `workers` such
///   calls are in flight, hung ones included ([`Error::Worker`] beyond that), so hung calls cannot pile up threads.
/// - [`Self::start`] for event loops: a call per key (a chip, a task), its result handed to a closure on the worker;
///   [`Self::give_up_overdue`] abandons the calls past their deadline and names their keys, [`Self::next_deadline`]
///   says when to check next.
///
/// ```
/// use std::time::Duration;
/// use ascend_dcmi::deadline::{DriverCalls, Started};
/// use ascend_dcmi::CallContext;
///
/// let calls: DriverCalls<u32> = DriverCalls::new("example", 2, Duration::from_millis(200));
/// let answer = calls.call(CallContext::global("dcmi_get_dcmi_version"), || Ok(42))?;
/// assert_eq!(answer, 42);
///
/// let (sender, results) = std::sync::mpsc::channel();
/// assert_eq!(calls.start(7, || "chip 7's health", move |health| {
///     let _ = sender.send(health);
/// })?, Started::Started);
/// assert_eq!(results.recv_timeout(Duration::from_secs(5)).ok(), Some("chip 7's health"));
/// # Ok::<(), ascend_dcmi::Error>(())
/// ```
pub struct DriverCalls<K = ()> {
    pool: WorkerPool<CallJob>,
    keys: Mutex<HashMap<K, KeyEntry>>,
    round: AtomicU64,
    /// Calls queued, running or stuck.
    in_flight: Arc<AtomicUsize>,
    workers: usize,
    deadline: Duration,
    epoch: Instant,
}

impl<K> std::fmt::Debug for DriverCalls<K> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DriverCalls")
            .field("workers", &self.workers)
            .field("deadline", &self.deadline)
            .field("in_flight", &self.in_flight.load(Ordering::Relaxed))
            .finish_non_exhaustive()
    }
}

impl<K: Eq + Hash + Clone> DriverCalls<K> {
    /// Calls on `workers` threads named `<name>-<serial>` (started on first use), each bounded by `deadline`.
    ///
    /// Stuck workers are replaced up to [`MAX_STUCK`] threads beyond `workers`: one per chip the driver can report.
    pub fn new(name: &'static str, workers: usize, deadline: Duration) -> Self {
        let workers = workers.max(1);
        let in_flight = Arc::new(AtomicUsize::new(0));
        let epoch = Instant::now();
        let runner_in_flight = Arc::clone(&in_flight);
        let size = PoolSize { workers, max_threads: workers + MAX_STUCK, queue: workers + MAX_STUCK };
        let pool = WorkerPool::new(
            name,
            size,
            Box::new(move || -> Runner<CallJob> {
                let in_flight = Arc::clone(&runner_in_flight);
                Box::new(move |job| run_job(job, epoch, &in_flight))
            }),
        );
        Self { pool, keys: Mutex::new(HashMap::new()), round: AtomicU64::new(0), in_flight, workers, deadline, epoch }
    }

    /// The deadline of one call.
    pub fn deadline(&self) -> Duration {
        self.deadline
    }

    /// Runs `call` on a worker and waits at most the deadline for its result. A call that does not return in time
    /// keeps running (FFI calls cannot be cancelled) and counts as in flight until it returns.
    ///
    /// # Errors
    /// [`Error::Timeout`] with `context` when the deadline passes; [`Error::Worker`] when `workers` calls are already
    /// in flight, no worker thread can be started, or the call panicked; otherwise whatever `call` returns.
    pub fn call<T: Send + 'static>(
        &self,
        context: CallContext,
        call: impl FnOnce() -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let limit = self.workers;
        let admitted =
            self.in_flight.fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| (n < limit).then_some(n + 1)).is_ok();
        if !admitted {
            return Err(Error::Worker(format!(
                "{limit} DCMI calls already in flight (hung calls keep theirs); {context} not started"
            )));
        }
        let state = Arc::new(CallState::default());
        let round = 1;
        state.try_queue(round);
        let (sender, receiver) = crossbeam_channel::bounded(1);
        let work: Work = Box::new(move |finished| {
            // Caught here rather than by the worker, so that the place is free before the caller hears of it.
            let result = catch_unwind(AssertUnwindSafe(call))
                .unwrap_or_else(|_| Err(Error::Worker(format!("the worker running {context} panicked"))));
            finished();
            // The caller may have stopped waiting; then nobody wants the result.
            let _ = sender.send(result);
        });
        self.submit(CallJob { state: Arc::clone(&state), round, work }, &context.to_string())?;
        match receiver.recv_timeout(self.deadline) {
            Ok(result) => result,
            Err(RecvTimeoutError::Disconnected) => Err(Error::Worker(format!("the worker running {context} panicked"))),
            Err(RecvTimeoutError::Timeout) => {
                self.give_up(&state, round);
                // It may have completed between the timeout and giving up.
                receiver.try_recv().unwrap_or(Err(Error::Timeout { context, deadline: self.deadline }))
            }
        }
    }

    /// Queues `call` for `key` unless a call for that key is still queued, running or stuck. When `call` returns, the
    /// key is free again and `deliver` gets the result on the worker thread, also after the deadline passed.
    ///
    /// # Errors
    /// [`Error::Worker`] when no worker thread can be started or the queue is full.
    pub fn start<T: 'static>(
        &self,
        key: K,
        call: impl FnOnce() -> T + Send + 'static,
        deliver: impl FnOnce(T) + Send + 'static,
    ) -> Result<Started> {
        let round = self.round.fetch_add(1, Ordering::Relaxed) + 1;
        let state = {
            let mut keys = self.keys.lock();
            let entry = keys.entry(key).or_insert_with(|| KeyEntry { state: Arc::default(), round: 0 });
            if !entry.state.try_queue(round) {
                return Ok(Started::StillBusy);
            }
            entry.round = round;
            Arc::clone(&entry.state)
        };
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        let work: Work = Box::new(move |finished| {
            let value = call();
            finished();
            deliver(value);
        });
        self.submit(CallJob { state, round, work }, "a driver call")?;
        Ok(Started::Started)
    }

    /// Whether a call for `key` is queued, running or stuck.
    pub fn is_busy(&self, key: &K) -> bool {
        self.keys.lock().get(key).is_some_and(|entry| entry.state.is_busy())
    }

    /// Abandons the calls started with [`Self::start`] that are past their deadline at `now`, replacing their workers,
    /// and returns their keys (each once). The keys stay busy until the calls return.
    pub fn give_up_overdue(&self, now: Instant) -> Vec<K> {
        let overdue: Vec<(K, Arc<CallState>, u64)> = self
            .keys
            .lock()
            .iter()
            .filter(|(_, entry)| self.expiry(entry).is_some_and(|expiry| expiry <= now))
            .map(|(key, entry)| (key.clone(), Arc::clone(&entry.state), entry.round))
            .collect();
        overdue.into_iter().filter(|(_, state, round)| self.give_up(state, *round)).map(|(key, ..)| key).collect()
    }

    /// When the earliest running call started with [`Self::start`] reaches its deadline.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.keys.lock().values().filter_map(|entry| self.expiry(entry)).min()
    }

    /// Withdraws the queued (not yet running) call of `key`; `true` if there was one.
    pub fn withdraw(&self, key: &K) -> bool {
        let keys = self.keys.lock();
        let withdrawn = keys.get(key).is_some_and(|entry| entry.state.cancel(entry.round));
        if withdrawn {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
        }
        withdrawn
    }

    /// When a running call's deadline passes; `None` unless it is running.
    fn expiry(&self, entry: &KeyEntry) -> Option<Instant> {
        let started = entry.state.running_since(entry.round)?;
        // Not yet recorded means it started just now.
        let started = started.map_or_else(Instant::now, |nanos| self.epoch + Duration::from_nanos(nanos));
        Some(started + self.deadline)
    }

    /// Withdraws a queued job or abandons a running one (replacing its worker); `true` if it was abandoned.
    fn give_up(&self, state: &CallState, round: u64) -> bool {
        if state.cancel(round) {
            self.in_flight.fetch_sub(1, Ordering::AcqRel);
            return false;
        }
        if !state.abandon(round) {
            return false;
        }
        // Failing to start a replacement leaves fewer workers until the stuck one's call returns and it rejoins.
        let _ = self.pool.worker_stuck();
        true
    }

    fn submit(&self, job: CallJob, what: &str) -> Result<()> {
        let (state, round) = (Arc::clone(&job.state), job.round);
        let refused = |detail: String| {
            if state.cancel(round) {
                self.in_flight.fetch_sub(1, Ordering::AcqRel);
            }
            Error::Worker(detail)
        };
        self.pool.top_up().map_err(|error| refused(format!("cannot start a worker thread for {what}: {error}")))?;
        self.pool.submit(job).map_err(|_| refused(format!("the driver-call queue is full; {what} not started")))
    }
}

/// Worker: runs a job unless it was withdrawn, frees its key when the call returns, and says whether it had been
/// abandoned meanwhile. A panicking call frees its key too, and its caller sees the result channel close.
fn run_job(job: CallJob, epoch: Instant, in_flight: &AtomicUsize) -> JobEnd {
    let started = u64::try_from(epoch.elapsed().as_nanos()).unwrap_or(u64::MAX);
    if !job.state.start(job.round, started) {
        return JobEnd::Done;
    }
    let (state, round) = (&job.state, job.round);
    let abandoned = std::cell::Cell::new(None::<bool>);
    let finished = || {
        if abandoned.get().is_none() {
            let completed = state.finish(round);
            if !completed {
                state.release_abandoned(round);
            }
            in_flight.fetch_sub(1, Ordering::AcqRel);
            abandoned.set(Some(!completed));
        }
    };
    let work = job.work;
    let _ = catch_unwind(AssertUnwindSafe(|| work(&finished)));
    finished();
    if abandoned.get() == Some(true) {
        JobEnd::Abandoned
    } else {
        JobEnd::Done
    }
}

/// Threads a pool may start beyond its workers to replace stuck ones: one per chip DCMI can report.
pub const MAX_STUCK: usize = MAX_CHIPS;

#[cfg(test)]
mod tests {
    use std::sync::mpsc;

    use super::*;

    const DEADLINE: Duration = Duration::from_millis(150);
    const PATIENCE: Duration = Duration::from_secs(10);

    /// A call that blocks until the returned sender is dropped or sent to: a hung chip that can be released.
    fn hang() -> (mpsc::Sender<()>, impl FnOnce() + Send + 'static) {
        let (release, released) = mpsc::channel::<()>();
        (release, move || {
            let _ = released.recv();
        })
    }

    #[test]
    fn a_call_past_its_deadline_times_out_and_others_are_still_served() {
        let calls: DriverCalls = DriverCalls::new("test-call", 2, DEADLINE);
        let (release, hung) = hang();
        let started = Instant::now();
        let error = calls
            .call(CallContext::global("dcmi_hung"), move || {
                hung();
                Ok(())
            })
            .expect_err("the call hangs");
        assert!(matches!(&error, Error::Timeout { context, .. } if context.call == "dcmi_hung"), "{error}");
        assert!(started.elapsed() >= DEADLINE && started.elapsed() < PATIENCE);
        for answer in 0..4 {
            assert_eq!(calls.call(CallContext::global("dcmi_ok"), move || Ok(answer)).expect("answers"), answer);
        }
        drop(release);
    }

    #[test]
    fn hung_calls_keep_their_places_and_a_further_call_is_refused_at_once() {
        let calls: DriverCalls = DriverCalls::new("test-limit", 2, DEADLINE);
        let mut releases = Vec::new();
        for _ in 0..2 {
            let (release, hung) = hang();
            releases.push(release);
            let outcome = calls.call(CallContext::global("dcmi_hung"), move || {
                hung();
                Ok(())
            });
            assert!(matches!(outcome, Err(Error::Timeout { .. })));
        }
        let started = Instant::now();
        let error = calls.call(CallContext::global("dcmi_ok"), || Ok(())).expect_err("no place left");
        assert!(matches!(&error, Error::Worker(message) if message.contains("2 DCMI calls")), "{error}");
        assert!(started.elapsed() < DEADLINE, "refused without waiting");
        releases.clear();
        let deadline = Instant::now() + PATIENCE;
        while calls.call(CallContext::global("dcmi_ok"), || Ok(())).is_err() {
            assert!(Instant::now() < deadline, "the released calls give their places back");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Delivers a result of `key` into `results`.
    fn to(results: &mpsc::Sender<(u32, &'static str)>, key: u32) -> impl FnOnce(&'static str) + Send + 'static {
        let results = results.clone();
        move |value| {
            let _ = results.send((key, value));
        }
    }

    #[test]
    fn a_key_gets_no_second_call_while_its_first_hangs_and_its_late_result_still_arrives() {
        let calls = DriverCalls::new("test-keys", 1, DEADLINE);
        let (results, received) = mpsc::channel();
        let (release, hung) = hang();
        let late = move || {
            hung();
            "late"
        };
        assert_eq!(calls.start(3, late, to(&results, 3)).expect("starts"), Started::Started);
        assert_eq!(calls.start(3, || "second", to(&results, 3)).ok(), Some(Started::StillBusy));
        let give_up_at = Instant::now() + PATIENCE;
        let overdue = loop {
            let overdue = calls.give_up_overdue(Instant::now());
            if !overdue.is_empty() || Instant::now() > give_up_at {
                break overdue;
            }
            let next = calls.next_deadline().unwrap_or_else(Instant::now);
            std::thread::sleep(next.saturating_duration_since(Instant::now()).max(Duration::from_millis(1)));
        };
        assert_eq!(overdue, [3]);
        assert!(calls.give_up_overdue(Instant::now() + PATIENCE).is_empty(), "reported once");
        assert!(calls.is_busy(&3), "stuck until the call returns");
        // The stuck worker was replaced: another key is served by the one-worker pool.
        assert_eq!(calls.start(4, || "other", to(&results, 4)).ok(), Some(Started::Started));
        assert_eq!(received.recv_timeout(PATIENCE).ok(), Some((4, "other")));
        drop(release);
        assert_eq!(received.recv_timeout(PATIENCE).ok(), Some((3, "late")));
        assert!(!calls.is_busy(&3));
        assert_eq!(calls.start(3, || "again", to(&results, 3)).ok(), Some(Started::Started));
        assert_eq!(received.recv_timeout(PATIENCE).ok(), Some((3, "again")));
    }

    #[test]
    fn a_panicking_call_is_a_worker_error_and_frees_its_place() {
        let calls: DriverCalls = DriverCalls::new("test-panic", 1, Duration::from_secs(5));
        let error = calls
            .call(CallContext::global("dcmi_panics"), || -> Result<()> { panic!("a bug in the closure") })
            .expect_err("panicked");
        assert!(matches!(&error, Error::Worker(message) if message.contains("panicked")), "{error}");
        assert_eq!(calls.call(CallContext::global("dcmi_ok"), || Ok(1)).expect("the worker survived"), 1);
    }
}
