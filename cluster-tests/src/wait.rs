//! Waiting for the cluster to reach a state, and timing how long it took.

use std::future::Future;
use std::time::{Duration, Instant};

/// Polls `check` every 100 ms until it returns `Some`, for at most `limit`; panics naming `what` and the last
/// observation (`check`'s `Err`) when the time runs out.
pub async fn wait_until<T, F, Fut>(what: &str, limit: Duration, mut check: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, String>>,
{
    let started = Instant::now();
    loop {
        let observed = match check().await {
            Ok(value) => return value,
            Err(observed) => observed,
        };
        if started.elapsed() >= limit {
            panic!("{what}: not reached within {limit:?}; last seen: {observed}");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Polls `items` like [`wait_until`] until the collection it returns is empty (files left, devices published ...);
/// panics naming `what` and the last collection seen.
pub async fn wait_until_empty<C, F, Fut>(what: &str, limit: Duration, mut items: F)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<C, String>>,
    C: std::fmt::Debug,
    for<'a> &'a C: IntoIterator,
{
    wait_until(what, limit, || {
        let listed = items();
        async move {
            let listed = listed.await?;
            if (&listed).into_iter().next().is_none() {
                Ok(())
            } else {
                Err(format!("{listed:?}"))
            }
        }
    })
    .await;
}

/// Measures the steps of a test and prints each with its duration, so the test log shows where the time goes.
#[derive(Debug)]
pub struct Timer {
    test: &'static str,
    started: Instant,
}

impl Timer {
    /// Starts timing `test`.
    pub fn start(test: &'static str) -> Timer {
        Timer { test, started: Instant::now() }
    }

    /// Prints the time since the last mark and restarts the clock; returns the time.
    pub fn mark(&mut self, step: &str) -> Duration {
        let elapsed = self.started.elapsed();
        println!("[{}] {step}: {:.2} s", self.test, elapsed.as_secs_f64());
        self.started = Instant::now();
        elapsed
    }
}
