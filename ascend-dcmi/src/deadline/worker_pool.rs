//! [`WorkerPool`]: long-lived threads that take jobs from a bounded queue and make the driver calls in them.
//!
//! A call past its deadline cannot be cancelled, so its owner abandons the job ([`WorkerPool::worker_stuck`]): the
//! stuck worker stops counting as live and a replacement starts, up to `max_threads`, so every other key keeps being
//! served. When the stuck call returns, the worker rejoins the pool if it is short of live workers and ends
//! otherwise. Threads start only when the pool is short (at start and after a hang), never per job: a warm pool
//! allocates nothing per job when its job type does not.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use super::job_queue::JobQueue;
use super::thread_warm_up::warm_up_thread;

/// How a job ended, as its runner tells the worker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum JobEnd {
    /// Completed (or was stale and skipped): the worker takes the next job.
    Done,
    /// Its owner gave up on it while the worker was inside the driver: the worker was counted out and may have been
    /// replaced.
    Abandoned,
}

/// Runs the jobs of one worker; made on the worker's thread when it starts, so it can keep per-worker scratch state.
pub(crate) type Runner<J> = Box<dyn FnMut(J) -> JobEnd + Send>;

/// Makes a [`Runner`] for each worker thread.
pub(crate) type RunnerFactory<J> = Box<dyn Fn() -> Runner<J> + Send + Sync>;

/// The size of a pool.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PoolSize {
    /// Workers that take jobs.
    pub(crate) workers: usize,
    /// Threads at most, stuck ones included.
    pub(crate) max_threads: usize,
    /// Jobs the queue holds.
    pub(crate) queue: usize,
}

/// Worker threads for driver calls. Dropping the pool closes its queue; workers end after their current job.
pub(crate) struct WorkerPool<J: Send + 'static> {
    inner: Arc<PoolInner<J>>,
}

struct PoolInner<J> {
    name: &'static str,
    size: PoolSize,
    queue: JobQueue<J>,
    make_runner: RunnerFactory<J>,
    /// Threads taking jobs (not stuck in an abandoned call).
    live: AtomicUsize,
    /// Threads running, stuck ones included.
    threads: AtomicUsize,
    /// Threads that finished their start-up.
    started: AtomicUsize,
    serial: AtomicUsize,
    handles: Mutex<Vec<JoinHandle<()>>>,
}

impl<J: Send + 'static> WorkerPool<J> {
    /// A pool whose threads are named `<name>-<serial>`; no thread starts before [`Self::top_up`].
    pub(crate) fn new(name: &'static str, size: PoolSize, make_runner: RunnerFactory<J>) -> Self {
        let size = PoolSize { workers: size.workers.max(1), max_threads: size.max_threads.max(size.workers), ..size };
        let inner = PoolInner {
            name,
            size,
            queue: JobQueue::new(size.queue),
            make_runner,
            live: AtomicUsize::new(0),
            threads: AtomicUsize::new(0),
            started: AtomicUsize::new(0),
            serial: AtomicUsize::new(0),
            handles: Mutex::new(Vec::with_capacity(size.max_threads.min(64))),
        };
        Self { inner: Arc::new(inner) }
    }

    /// Queues a job without waiting; gives it back when the queue is full or closed.
    pub(crate) fn submit(&self, job: J) -> Result<(), J> {
        self.inner.queue.push(job)
    }

    /// Whether [`Self::close`] was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.inner.queue.is_closed()
    }

    /// Starts threads until the pool has its live workers, within `max_threads`.
    ///
    /// # Errors
    /// The OS error of starting a thread, when not one live worker is left.
    pub(crate) fn top_up(&self) -> std::io::Result<()> {
        let inner = &self.inner;
        if inner.live.load(Ordering::Acquire) >= inner.size.workers {
            return Ok(());
        }
        let mut handles = inner.handles.lock();
        handles.retain(|handle| !handle.is_finished());
        while !self.is_closed() && inner.threads.load(Ordering::Acquire) < inner.size.max_threads && inner.claim_live()
        {
            inner.threads.fetch_add(1, Ordering::AcqRel);
            let serial = inner.serial.fetch_add(1, Ordering::Relaxed);
            let pool = Arc::clone(inner);
            match thread::Builder::new().name(format!("{}-{serial}", inner.name)).spawn(move || pool.run_worker()) {
                Ok(handle) => handles.push(handle),
                Err(error) => {
                    inner.threads.fetch_sub(1, Ordering::AcqRel);
                    inner.live.fetch_sub(1, Ordering::AcqRel);
                    if inner.live.load(Ordering::Acquire) == 0 {
                        return Err(error);
                    }
                    // Fewer workers for now; the next top-up tries again.
                    break;
                }
            }
        }
        Ok(())
    }

    /// Whether any worker takes jobs.
    pub(crate) fn has_live_workers(&self) -> bool {
        self.inner.live.load(Ordering::Acquire) > 0
    }

    /// Owner: a job was abandoned while its worker is inside the driver. Counts the worker out and starts a
    /// replacement.
    ///
    /// # Errors
    /// As [`Self::top_up`].
    pub(crate) fn worker_stuck(&self) -> std::io::Result<()> {
        let _ = self.inner.live.fetch_update(Ordering::AcqRel, Ordering::Acquire, |live| live.checked_sub(1));
        self.top_up()
    }

    /// How many threads finished their start-up (thread data set up, first wait prepared).
    pub(crate) fn started(&self) -> usize {
        self.inner.started.load(Ordering::Acquire)
    }

    /// Waits until `count` workers have finished their start-up, so that their one-time allocations happen now rather
    /// than inside a later job; `false` if `timeout` passed first.
    pub(crate) fn wait_started(&self, count: usize, timeout: Duration) -> bool {
        let give_up_at = Instant::now() + timeout;
        while self.started() < count {
            if Instant::now() >= give_up_at {
                return false;
            }
            thread::sleep(Duration::from_micros(200));
        }
        true
    }

    /// Closes the queue and joins the workers, waiting at most `grace` for those busy in a call. Returns how many
    /// are still inside a driver call; they are detached and end when their call returns.
    pub(crate) fn close(&self, grace: Duration) -> usize {
        self.inner.queue.close();
        let mut workers = std::mem::take(&mut *self.inner.handles.lock());
        let give_up_at = Instant::now() + grace;
        while workers.iter().any(|worker| !worker.is_finished()) && Instant::now() < give_up_at {
            thread::sleep(Duration::from_millis(1));
        }
        let mut detached = 0;
        for worker in workers.drain(..) {
            if worker.is_finished() {
                // A runner never panics on driver results; if one did, the pool is going away regardless.
                let _ = worker.join();
            } else {
                detached += 1;
            }
        }
        detached
    }
}

impl<J: Send + 'static> Drop for WorkerPool<J> {
    fn drop(&mut self) {
        // No join: the last owner may be dropped on one of the pool's own threads. Idle workers see the queue close.
        self.inner.queue.close();
    }
}

impl<J: Send + 'static> PoolInner<J> {
    /// Counts one more live worker, unless the pool has its size.
    fn claim_live(&self) -> bool {
        self.live
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |live| (live < self.size.workers).then_some(live + 1))
            .is_ok()
    }

    fn run_worker(&self) {
        let mut runner = (self.make_runner)();
        warm_up_thread();
        self.started.fetch_add(1, Ordering::AcqRel);
        while let Some(job) = self.queue.pop() {
            // A worker whose job was abandoned was counted out; it rejoins only where no replacement took its place.
            if runner(job) == JobEnd::Abandoned && (self.queue.is_closed() || !self.claim_live()) {
                break;
            }
        }
        self.threads.fetch_sub(1, Ordering::AcqRel);
    }
}
