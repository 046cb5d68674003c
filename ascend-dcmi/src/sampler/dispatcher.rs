//! The dispatcher: runs one polling round (queue a chain per chip, wait, give up on chains past their deadline) and
//! keeps the worker pool at its size.

use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use parking_lot::Mutex;

use super::metric::GroupSet;
use super::shared::Shared;
use super::thread_warm_up::warm_up_thread;
use super::worker::{spawn_worker, Job};
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

/// Runs rounds; one at a time (a mutex), whether from [`crate::Sampler::poll`] or the background schedule.
pub(crate) struct Dispatcher {
    pub(crate) shared: Arc<Shared>,
    deadline: Duration,
    /// Workers that are not stuck in a hung call.
    pool_size: usize,
    round: Mutex<RoundState>,
    last_poll: Mutex<Option<PollSummary>>,
}

struct RoundState {
    /// `None` once the sampler is stopped: workers see the queue close and end.
    jobs: Option<Sender<Job>>,
    /// Handed to replacement workers.
    job_receiver: Receiver<Job>,
    round_done: Receiver<u64>,
    round: u64,
    /// Workers that take jobs; a worker whose chain was abandoned no longer counts.
    live_workers: usize,
    workers: Vec<JoinHandle<()>>,
}

impl Dispatcher {
    /// Builds the dispatcher and starts `pool_size` workers (none when there is no chip).
    ///
    /// # Errors
    /// [`Error::Worker`] if not one worker thread can be started.
    pub(crate) fn start(
        shared: Arc<Shared>,
        jobs: (Sender<Job>, Receiver<Job>),
        round_done: Receiver<u64>,
        deadline: Duration,
        pool_size: usize,
    ) -> Result<Self> {
        let pool_size = if shared.chips.is_empty() { 0 } else { pool_size.clamp(1, shared.chips.len()) };
        let dispatcher = Self {
            shared,
            deadline,
            pool_size,
            round: Mutex::new(RoundState {
                jobs: Some(jobs.0),
                job_receiver: jobs.1,
                round_done,
                round: 0,
                live_workers: 0,
                workers: Vec::with_capacity(pool_size * 2),
            }),
            last_poll: Mutex::new(None),
        };
        dispatcher.top_up(&mut dispatcher.round.lock())?;
        dispatcher.wait_for_workers_to_start()?;
        Ok(dispatcher)
    }

    /// Waits until the first workers are set up, so that their one-time start-up allocations (thread data, channel
    /// wait context) happen before the first poll rather than inside it.
    ///
    /// # Errors
    /// [`Error::Worker`] if they do not start within [`WORKER_START_TIMEOUT`].
    fn wait_for_workers_to_start(&self) -> Result<()> {
        let give_up_at = Instant::now() + WORKER_START_TIMEOUT;
        while self.shared.workers_started() < self.pool_size {
            if Instant::now() >= give_up_at {
                return Err(Error::Worker(format!(
                    "only {} of {} DCMI sampler worker threads started within {WORKER_START_TIMEOUT:?}",
                    self.shared.workers_started(),
                    self.pool_size
                )));
            }
            std::thread::sleep(Duration::from_micros(200));
        }
        Ok(())
    }

    pub(crate) fn last_poll(&self) -> Option<PollSummary> {
        *self.last_poll.lock()
    }

    /// Polls `groups` on every chip once and returns when every chain completed or was given up.
    ///
    /// # Errors
    /// [`Error::Worker`] if the sampler was stopped or no worker thread can be started.
    pub(crate) fn run_round(&self, groups: GroupSet) -> Result<PollSummary> {
        let mut guard = self.round.lock();
        let state = &mut *guard;
        let Some(jobs) = state.jobs.clone() else {
            return Err(Error::Worker("the sampler has been stopped; no more polls".to_owned()));
        };
        self.top_up(state)?;
        warm_up_thread();
        while state.round_done.try_recv().is_ok() {}
        state.round += 1;
        let round = state.round;
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
        let attempted = self.queue_chains(&jobs, round, groups, &mut summary);
        self.wait_for_round(state, round, groups, &mut summary);
        summary.completed = attempted - summary.timed_out - summary.not_started;
        summary.elapsed = started.elapsed();
        *self.last_poll.lock() = Some(summary);
        Ok(summary)
    }

    /// Queues one job per chip that has no chain in flight; returns how many chips it tried to queue (those not
    /// stuck), including any the full queue turned away (counted in `not_started`).
    fn queue_chains(&self, jobs: &Sender<Job>, round: u64, groups: GroupSet, summary: &mut PollSummary) -> usize {
        self.shared.begin_round();
        let mut queued = 0;
        for (index, slot) in self.shared.chips.iter().enumerate() {
            if !slot.control.try_queue(round) {
                summary.still_hung += 1;
                slot.sample.lock().time_out(groups, summary.started);
                continue;
            }
            self.shared.add_pending();
            let job = Job { chip: index as u32, groups, round };
            match jobs.try_send(job) {
                Ok(()) => queued += 1,
                // The queue holds two jobs per chip and a chip has at most one live job, so this needs stale jobs
                // of cancelled rounds filling it; treat the chip as not started.
                Err(TrySendError::Full(_) | TrySendError::Disconnected(_)) => {
                    slot.control.cancel(round);
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
    fn wait_for_round(&self, state: &mut RoundState, round: u64, groups: GroupSet, summary: &mut PollSummary) {
        // No chain can expire before a deadline after now: those running started after the round did.
        let mut next_check = Instant::now() + self.deadline;
        while self.shared.pending() > 0 {
            match state.round_done.recv_deadline(next_check) {
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => next_check = self.give_up_overdue(state, round, groups, summary),
                // The shared state holds a sender for as long as this receiver lives.
                Err(RecvTimeoutError::Disconnected) => break,
            }
        }
    }

    /// Abandons the chains past their deadline and replaces their workers; returns when to check next.
    fn give_up_overdue(
        &self,
        state: &mut RoundState,
        round: u64,
        groups: GroupSet,
        summary: &mut PollSummary,
    ) -> Instant {
        let now = Instant::now();
        let now_nanos = self.shared.nanos_since_epoch(now);
        let deadline_nanos = u64::try_from(self.deadline.as_nanos()).unwrap_or(u64::MAX);
        let mut next_check = now + self.deadline;
        for slot in self.shared.chips.iter() {
            let Some(Some(start)) = slot.control.running_since(round) else { continue };
            let expiry = start.saturating_add(deadline_nanos);
            if expiry > now_nanos {
                next_check = next_check.min(self.shared.instant_at(expiry));
                continue;
            }
            let mut sample = slot.sample.lock();
            if slot.control.abandon(round) {
                sample.time_out(groups, self.shared.instant_at(start));
                drop(sample);
                self.shared.chain_given_up();
                summary.timed_out += 1;
                state.live_workers = state.live_workers.saturating_sub(1);
            }
        }
        if self.top_up(state).is_err() {
            self.cancel_unstarted(round, groups, summary);
        }
        next_check
    }

    /// Without any worker left, withdraws the jobs nobody will take.
    fn cancel_unstarted(&self, round: u64, groups: GroupSet, summary: &mut PollSummary) {
        for slot in self.shared.chips.iter() {
            if slot.control.cancel(round) {
                slot.sample.lock().time_out(groups, summary.started);
                self.shared.chain_given_up();
                summary.not_started += 1;
            }
        }
    }

    /// Starts workers until `pool_size` take jobs. Threads are only started here: at construction, and to replace a
    /// worker stuck in a hung call.
    ///
    /// # Errors
    /// [`Error::Worker`] if no worker is left and none can be started.
    fn top_up(&self, state: &mut RoundState) -> Result<()> {
        state.workers.retain(|worker| !worker.is_finished());
        while state.live_workers < self.pool_size {
            match spawn_worker(Arc::clone(&self.shared), state.job_receiver.clone()) {
                Ok(worker) => {
                    state.workers.push(worker);
                    state.live_workers += 1;
                }
                Err(error) if state.live_workers == 0 => {
                    return Err(Error::Worker(format!("cannot start a DCMI sampler worker thread: {error}")));
                }
                // Fewer workers for now; the next round tries again.
                Err(_) => break,
            }
        }
        Ok(())
    }

    /// Closes the queue and joins the workers, waiting at most `grace` for those busy in a call. Returns how many
    /// are still inside a driver call; they are detached and end when their call returns.
    pub(crate) fn close(&self, grace: Duration) -> usize {
        let mut workers = {
            let mut state = self.round.lock();
            state.jobs = None;
            std::mem::take(&mut state.workers)
        };
        let give_up_at = Instant::now() + grace;
        while workers.iter().any(|worker| !worker.is_finished()) && Instant::now() < give_up_at {
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut detached = 0;
        for worker in workers.drain(..) {
            if worker.is_finished() {
                // A worker never panics on driver results; if it did, the sampler is going away regardless.
                let _ = worker.join();
            } else {
                detached += 1;
            }
        }
        detached
    }
}
