//! One-time, per-thread set-up of the blocking primitives the sampler uses, so that it happens when a thread starts
//! polling rather than in some later round that first makes the thread wait.
//!
//! crossbeam creates a thread's wait context the first time the thread blocks on a channel, and parking_lot
//! registers a thread (possibly growing its global table) the first time it parks. Both allocate once per thread;
//! doing it here is what makes "no allocation per poll once warm" hold on a loaded machine too, where which thread
//! first blocks or parks is a matter of scheduling.

use std::cell::Cell;
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

thread_local! {
    static WARM: Cell<bool> = const { Cell::new(false) };
}

/// Sets up the calling thread once; later calls cost one thread-local read.
pub(crate) fn warm_up_thread() {
    if WARM.with(Cell::get) {
        return;
    }
    // A rendezvous channel with a live sender and no message blocks at once (no spinning first), which creates the
    // wait context; the zero timeout then ends the wait.
    let (_sender, receiver) = crossbeam_channel::bounded::<()>(0);
    let _ = receiver.recv_timeout(Duration::ZERO);
    // A zero-timeout condition-variable wait parks, which registers the thread with parking_lot.
    let lock = Mutex::new(());
    let _ = Condvar::new().wait_for(&mut lock.lock(), Duration::ZERO);
    WARM.with(|warm| warm.set(true));
}
