//! [`JobQueue`]: the bounded queue between a [`super::worker_pool::WorkerPool`]'s owner and its worker threads.
//!
//! A mutex-guarded ring of fixed capacity and a condition variable rather than a channel, because the pool's promise
//! is that a warm pool allocates nothing per job: crossbeam's channel grows its list of waiting receivers the first
//! time more threads wait at once than ever before, which on a loaded machine happened inside a measured poll
//! (`ascend-dcmi/tests/sampler_alloc_sim.rs` failed 3 times in 20 with five busy loops beside it). A parked
//! parking_lot waiter takes no memory, and the ring never grows past the capacity it is made with. The queue sees a
//! handful of jobs per poll, so one lock is no contention.

use std::collections::VecDeque;

use parking_lot::{Condvar, Mutex};

/// A bounded multi-producer, multi-consumer queue of jobs that can be closed.
pub(crate) struct JobQueue<J> {
    state: Mutex<QueueState<J>>,
    job_or_close: Condvar,
}

struct QueueState<J> {
    jobs: VecDeque<J>,
    capacity: usize,
    closed: bool,
}

impl<J> JobQueue<J> {
    /// A queue of `capacity` jobs (at least one), its memory taken now.
    pub(crate) fn new(capacity: usize) -> Self {
        let capacity = capacity.max(1);
        let state = QueueState { jobs: VecDeque::with_capacity(capacity), capacity, closed: false };
        Self { state: Mutex::new(state), job_or_close: Condvar::new() }
    }

    /// Queues `job` without waiting; gives it back when the queue is full or closed.
    pub(crate) fn push(&self, job: J) -> Result<(), J> {
        let mut state = self.state.lock();
        if state.closed || state.jobs.len() >= state.capacity {
            return Err(job);
        }
        state.jobs.push_back(job);
        drop(state);
        self.job_or_close.notify_one();
        Ok(())
    }

    /// The next job, waiting for one; `None` once the queue is closed and empty.
    pub(crate) fn pop(&self) -> Option<J> {
        let mut state = self.state.lock();
        loop {
            if let Some(job) = state.jobs.pop_front() {
                return Some(job);
            }
            if state.closed {
                return None;
            }
            self.job_or_close.wait(&mut state);
        }
    }

    /// Whether [`Self::close`] was called.
    pub(crate) fn is_closed(&self) -> bool {
        self.state.lock().closed
    }

    /// Refuses further jobs and wakes every waiting worker; the jobs already queued are still handed out.
    pub(crate) fn close(&self) {
        self.state.lock().closed = true;
        self.job_or_close.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::thread;

    use super::*;

    #[test]
    fn bounded_in_order_and_drained_after_close() {
        let queue = JobQueue::new(2);
        assert_eq!(queue.push(1), Ok(()));
        assert_eq!(queue.push(2), Ok(()));
        assert_eq!(queue.push(3), Err(3), "full");
        assert_eq!(queue.pop(), Some(1));
        assert!(!queue.is_closed());
        queue.close();
        assert!(queue.is_closed());
        assert_eq!(queue.push(4), Err(4), "closed");
        assert_eq!(queue.pop(), Some(2), "queued jobs outlive the close");
        assert_eq!(queue.pop(), None);
    }

    #[test]
    fn waiting_workers_get_the_jobs_and_the_close() {
        let queue = Arc::new(JobQueue::new(8));
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let queue = Arc::clone(&queue);
                thread::spawn(move || std::iter::from_fn(|| queue.pop()).collect::<Vec<u32>>())
            })
            .collect();
        for job in 0..8 {
            while queue.push(job).is_err() {
                thread::yield_now();
            }
        }
        queue.close();
        let mut taken: Vec<u32> = workers.into_iter().flat_map(|worker| worker.join().expect("worker")).collect();
        taken.sort_unstable();
        assert_eq!(taken, (0..8).collect::<Vec<_>>());
    }
}
