//! A polling event stream owns a thread; dropping the stream ends it. Alone in its binary, because it counts this
//! process's threads by name.

mod support;

use std::time::{Duration, Instant};

/// Threads of this process whose name is `name` (Linux `/proc/self/task/*/comm`).
fn threads_named(name: &str) -> usize {
    std::fs::read_dir("/proc/self/task")
        .expect("/proc/self/task")
        .flatten()
        .filter(|task| std::fs::read_to_string(task.path().join("comm")).is_ok_and(|comm| comm.trim() == name))
        .count()
}

/// Waits up to two seconds for `condition` (a new thread names itself only once it runs).
fn eventually(condition: impl Fn() -> bool) -> bool {
    let deadline = Instant::now() + Duration::from_secs(2);
    while !condition() {
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    true
}

#[test]
fn dropping_the_stream_stops_its_polling_thread() {
    let (dcmi, _sim) = support::start("edge-310");
    assert_eq!(threads_named("dcmi-fault-poll"), 0);
    let events = dcmi.fault_events(Duration::from_millis(50)).expect("polling stream");
    assert!(eventually(|| threads_named("dcmi-fault-poll") == 1), "the 310 is polled by one thread");
    drop(events);
    assert!(eventually(|| threads_named("dcmi-fault-poll") == 0), "the polling thread outlived its stream");
}
