//! The dispatcher: runs one polling round (queue a chain per chip, wait, give up on chains past their deadline) on
//! the crate's driver-call worker pool ([`crate::deadline`]), which replaces the workers of abandoned chains.

use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::metric::GroupSet;
use super::shared::Shared;
use super::worker::{runner, Job};
use crate::deadline::thread_warm_up::warm_up_thread;
use crate::deadline::worker_pool::{PoolSize, WorkerPool};
use crate::error::{Error, Result};

/// How long [`crate::Sampler::new`] waits for its worker threads to start.
const WORKER_START_TIMEOUT: Duration = Duration::from_secs(10);

/// What one round did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PollSummary {
    /// The groups the round covered.
    pub groups: GroupSet,
    /// Chips the sampler knows.
    pub chips: usize,
    /// Chips whose chain completed within the deadline (each value fresh, or marked unsupported or failed).
    pub completed: usize,
    /// Chips whose chain missed the deadline this round.
    pub timed_out: usize,
    /// Chips skipped because a call from an earlier round still hangs (reported as timed out, not re-queued).
    pub still_hung: usize,
    /// Chips not started because no worker thread could be started (reported as timed out).
    pub not_started: usize,
    /// When the round started.
    pub started: Instant,
    /// How long the round took.
    pub elapsed: Duration,
}

impl PollSummary {
    /// When the round ended.
    pub fn ended(&self) -> Instant {
        self.started + self.elapsed
    }

    /// This round and `next`, run after it, as one: groups joined, the worse count of the two per outcome, from this
    /// round's start to the end of `next`.
    pub(crate) fn followed_by(&self, next: &PollSummary) -> PollSummary {
        PollSummary {
            groups: self.groups.union(next.groups),
            chips: self.chips,
            completed: self.completed.min(next.completed),
            timed_out: self.timed_out.max(next.timed_out),
            still_hung: self.still_hung.max(next.still_hung),
            not_started: self.not_started.max(next.not_started),
            started: self.started,
            elapsed: next.ended().saturating_duration_since(self.started),
        }
    }
}

/// Runs rounds; one at a time (a mutex), whether from [`crate::Sampler::poll`] or the background schedule.
pub(crate) struct Dispatcher {
    pub(crate) shared: Arc<Shared>,
    deadline: Duration,
    pool: WorkerPool<Job>,
    /// The number of the latest round; held for the whole of a round, so rounds run one at a time.
    round: Mutex<u64>,
    last_poll: Mutex<Option<PollSummary>>,
}

impl Dispatcher {
    /// Builds the dispatcher and starts `pool_size` workers (none when there is no chip), waiting until they are set
    /// up, so that their one-time start-up allocations (thread data, channel wait context) happen before the first
    /// poll rather than inside it.
    ///
    /// # Errors
    /// [`Error::Worker`] if not one worker thread can be started, or they do not start within
    /// [`WORKER_START_TIMEOUT`].
    pub(crate) fn start(shared: Arc<Shared>, deadline: Duration, pool_size: usize) -> Result<Self> {
        let chips = shared.chips.len();
        let pool_size = if chips == 0 { 0 } else { pool_size.clamp(1, chips) };
        // A chip has at most one live job and at most one worker stuck in its call: two queue places per chip (a full
        // queue needs stale jobs of rounds that had no worker), and stuck threads bounded by the chips.
        let size = PoolSize { workers: pool_size, max_threads: pool_size + chips, queue: chips.max(1) * 2 };
        let pool_shared = Arc::clone(&shared);
        let pool = WorkerPool::new("dcmi-sampler", size, Box::new(move || runner(Arc::clone(&pool_shared))));
        let dispatcher = Self { shared, deadline, pool, round: Mutex::new(0), last_poll: Mutex::new(None) };
        if pool_size > 0 {
            dispatcher.top_up()?;
            if !dispatcher.pool.wait_started(pool_size, WORKER_START_TIMEOUT) {
                return Err(Error::Worker(format!(
                    "only {} of {pool_size} DCMI sampler worker threads started within {WORKER_START_TIMEOUT:?}",
                    dispatcher.pool.started(),
                )));
            }
        }
        Ok(dispatcher)
    }

    pub(crate) fn last_poll(&self) -> Option<PollSummary> {
        *self.last_poll.lock()
    }

    /// Polls `groups` on every chip once and returns when every chain completed or was given up.
    ///
    /// # Errors
    /// [`Error::Worker`] if the sampler was stopped or no worker thread can be started.
    pub(crate) fn run_round(&self, groups: GroupSet) -> Result<PollSummary> {
        let mut latest_round = self.round.lock();
        if self.pool.is_closed() {
            return Err(Error::Worker("the sampler has been stopped; no more polls".to_owned()));
        }
        if !self.shared.chips.is_empty() {
            self.top_up()?;
        }
        warm_up_thread();
        *latest_round += 1;
        let round = *latest_round;
        let started = Instant::now();
        let mut summary = PollSummary {
            groups,
            chips: self.shared.chips.len(),
            completed: 0,
            timed_out: 0,
            still_hung: 0,
            not_started: 0,
            started,
            elapsed: Duration::ZERO,
        };
        let attempted = self.queue_chains(round, groups, &mut summary);
        self.wait_for_round(round, groups, &mut summary);
        summary.completed = attempted - summary.timed_out - summary.not_started;
        summary.elapsed = started.elapsed();
        *self.last_poll.lock() = Some(summary);
        Ok(summary)
    }

    /// Queues one job per chip that has no chain in flight; returns how many chips it tried to queue (those not
    /// stuck), including any the full queue turned away (counted in `not_started`).
    fn queue_chains(&self, round: u64, groups: GroupSet, summary: &mut PollSummary) -> usize {
        self.shared.begin_round();
        let mut queued = 0;
        for (index, slot) in self.shared.chips.iter().enumerate() {
            if !slot.call.try_queue(round) {
                summary.still_hung += 1;
                slot.sample.lock().time_out(groups, summary.started);
                continue;
            }
            self.shared.add_pending();
            let job = Job { chip: index as u32, groups, round };
            match self.pool.submit(job) {
                Ok(()) => queued += 1,
                // The queue holds two jobs per chip and a chip has at most one live job, so this needs stale jobs
                // of cancelled rounds filling it (or a stopped sampler); treat the chip as not started.
                Err(_) => {
                    slot.call.cancel(round);
                    self.shared.chain_given_up();
                    summary.not_started += 1;
                    slot.sample.lock().time_out(groups, summary.started);
                }
            }
        }
        self.shared.dispatch_done();
        queued + summary.not_started
    }

    /// Sleeps until the round's last chain completes or the earliest running chain reaches its deadline; then gives
    /// up on overdue chains and sleeps again.
    fn wait_for_round(&self, round: u64, groups: GroupSet, summary: &mut PollSummary) {
        // No chain can expire before a deadline after now: those running started after the round did.
        let mut next_check = Instant::now() + self.deadline;
        while !self.shared.wait_for_chains(next_check) {
            next_check = self.give_up_overdue(round, groups, summary);
        }
    }

    /// Abandons the chains past their deadline and replaces their workers; returns when to check next.
    fn give_up_overdue(&self, round: u64, groups: GroupSet, summary: &mut PollSummary) -> Instant {
        let now = Instant::now();
        let now_nanos = self.shared.nanos_since_epoch(now);
        let deadline_nanos = u64::try_from(self.deadline.as_nanos()).unwrap_or(u64::MAX);
        let mut next_check = now + self.deadline;
        for slot in self.shared.chips.iter() {
            let Some(Some(start)) = slot.call.running_since(round) else { continue };
            let expiry = start.saturating_add(deadline_nanos);
            if expiry > now_nanos {
                next_check = next_check.min(self.shared.instant_at(expiry));
                continue;
            }
            let mut sample = slot.sample.lock();
            if slot.call.abandon(round) {
                sample.time_out(groups, self.shared.instant_at(start));
                drop(sample);
                self.shared.chain_given_up();
                summary.timed_out += 1;
                // Without a worker left nobody takes the queued jobs: withdraw them.
                if self.pool.worker_stuck().is_err() || !self.pool.has_live_workers() {
                    self.cancel_unstarted(round, groups, summary);
                }
            }
        }
        next_check
    }

    /// Without any worker left, withdraws the jobs nobody will take.
    fn cancel_unstarted(&self, round: u64, groups: GroupSet, summary: &mut PollSummary) {
        for slot in self.shared.chips.iter() {
            if slot.call.cancel(round) {
                slot.sample.lock().time_out(groups, summary.started);
                self.shared.chain_given_up();
                summary.not_started += 1;
            }
        }
    }

    /// Starts workers until the pool has its size: at construction, and to replace a worker stuck in a hung call.
    ///
    /// # Errors
    /// [`Error::Worker`] if no worker is left and none can be started.
    fn top_up(&self) -> Result<()> {
        self.pool.top_up().map_err(|error| Error::Worker(format!("cannot start a DCMI sampler worker thread: {error}")))
    }

    /// Closes the queue and joins the workers, waiting at most `grace` for those busy in a call. Returns how many
    /// are still inside a driver call; they are detached and end when their call returns.
    pub(crate) fn close(&self, grace: Duration) -> usize {
        let _round = self.round.lock();
        self.pool.close(grace)
    }
}
