//! The background schedule: polls each group on its own interval until told to stop.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError};

use super::config::SamplerConfig;
use super::dispatcher::Dispatcher;
use super::metric::{GroupSet, MetricGroup};

/// Polls `groups` through `dispatcher` until `stop` is disconnected (or receives anything). Every group is due at
/// once when it starts; groups due together share one round, so a chip sees one chain of calls for them. The sampler
/// runs one schedule for the fast groups and one for the slow ones, each on its own dispatcher, so a round that waits
/// out profiling windows never delays the others.
pub(crate) fn run_schedule(
    dispatcher: &Arc<Dispatcher>,
    config: &SamplerConfig,
    groups: GroupSet,
    stop: &Receiver<()>,
) {
    let intervals = MetricGroup::ALL.map(|group| config.interval(group));
    let start = Instant::now();
    let mut next_due = [start; MetricGroup::ALL.len()];
    loop {
        let now = Instant::now();
        let selection = dispatcher.shared.selection();
        let mut due = GroupSet::EMPTY;
        for group in groups.iter() {
            let index = group.index();
            if next_due[index] <= now {
                next_due[index] = advance(next_due[index], intervals[index], now);
                if selection.selects_any_of(group) {
                    due = due.with(group);
                }
            }
        }
        if !due.is_empty() {
            // A failed round (no worker thread could be started) marks its chips timed out; the next round retries.
            let _ = dispatcher.run_round(due);
        }
        let wake = groups.iter().map(|group| next_due[group.index()]).min().unwrap_or(now + intervals[0]);
        match stop.recv_deadline(wake) {
            Err(RecvTimeoutError::Timeout) => {}
            Ok(()) | Err(RecvTimeoutError::Disconnected) => return,
        }
    }
}

/// The next due time: one interval on, or one interval from now if rounds fell behind (missed polls are skipped,
/// not made up in a burst).
fn advance(due: Instant, interval: Duration, now: Instant) -> Instant {
    let next = due + interval;
    if next <= now {
        now + interval
    } else {
        next
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn late_rounds_skip_instead_of_bursting() {
        let start = Instant::now();
        let second = Duration::from_secs(1);
        assert_eq!(advance(start, second, start), start + second);
        let late = start + Duration::from_millis(3500);
        assert_eq!(advance(start, second, late), late + second);
    }
}
