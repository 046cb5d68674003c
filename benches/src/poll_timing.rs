//! Direct timing of slow polls, where criterion's sampling would take minutes: a few repeats, their median, and the
//! ideal a concurrent poll is measured against.

use std::time::{Duration, Instant};

/// Runs `poll` `repeats` times and returns each run's wall time.
pub fn time_repeats(repeats: usize, mut poll: impl FnMut()) -> Vec<Duration> {
    (0..repeats)
        .map(|_| {
            let started = Instant::now();
            poll();
            started.elapsed()
        })
        .collect()
}

/// The median of `samples` (the upper middle one for an even count); `None` for no samples.
pub fn median(samples: &[Duration]) -> Option<Duration> {
    let mut sorted = samples.to_vec();
    sorted.sort_unstable();
    sorted.get(sorted.len() / 2).copied()
}

/// How many rounds of at most `concurrency` chips a poll of `chips` chips needs: `ceil(chips / concurrency)`
/// (`chips` itself for a concurrency of 0, which the sampler raises to 1).
pub fn waves(chips: usize, concurrency: usize) -> usize {
    chips.div_ceil(concurrency.max(1))
}

/// The best a poll with `concurrency` chips at a time can do when every call waits on the driver: one chip's chain
/// of calls per wave.
pub fn ideal_poll(chain: Duration, chips: usize, concurrency: usize) -> Duration {
    chain.saturating_mul(u32::try_from(waves(chips, concurrency)).unwrap_or(u32::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even_counts_and_of_nothing() {
        let ms = Duration::from_millis;
        assert_eq!(median(&[ms(9), ms(1), ms(5)]), Some(ms(5)));
        assert_eq!(median(&[ms(4), ms(1), ms(3), ms(2)]), Some(ms(3)));
        assert_eq!(median(&[]), None);
    }

    #[test]
    fn waves_round_up_and_the_ideal_multiplies_the_chain() {
        assert_eq!(waves(8, 4), 2);
        assert_eq!(waves(9, 4), 3);
        assert_eq!(waves(256, 4), 64);
        assert_eq!(waves(5, 0), 5);
        assert_eq!(ideal_poll(Duration::from_millis(70), 64, 4), Duration::from_millis(1120));
    }

    #[test]
    fn every_repeat_is_timed() {
        let mut calls = 0;
        let times = time_repeats(3, || {
            calls += 1;
            std::thread::sleep(Duration::from_millis(2));
        });
        assert_eq!(calls, 3);
        assert!(times.iter().all(|time| *time >= Duration::from_millis(2)), "{times:?}");
    }
}
