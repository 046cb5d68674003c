//! Driver calls on worker threads with a deadline: the crate's one mechanism for it.
//!
//! DCMI calls block (for seconds, or for good, on a dropped card) and cannot be cancelled. Every caller that must not
//! wait on a hung chip runs its calls here:
//!
//! - [`DriverCalls`]: closures on a pool of worker threads, each bounded by a deadline, at most one per key; what
//!   [`crate::Dcmi::call_with_deadline`], the fault-event poller, the device plugin's health monitor and `ascend-smi`
//!   use;
//! - the [`crate::Sampler`] runs each chip's chain of calls as a `Copy` job on the same pool type, with the same
//!   per-call state, so that a warm poll allocates nothing.
//!
//! Underneath, in `call_state.rs`, one atomic per key holds where its call is (idle, queued, running since when,
//! abandoned while still inside the driver) with a round number that keeps stale jobs from running; in
//! `worker_pool.rs`, long-lived worker threads take jobs from a bounded queue and a worker stuck in an abandoned call
//! is replaced, so the other chips keep being served, while its key stays busy until the call returns, so no second
//! call piles up behind a hung one.

pub(crate) mod call_state;
mod driver_calls;
mod job_queue;
pub(crate) mod thread_warm_up;
pub(crate) mod worker_pool;

pub use driver_calls::{DriverCalls, Started, MAX_STUCK};
