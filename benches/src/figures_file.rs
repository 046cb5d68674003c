//! How the perf helpers (`perf-device-plugin`, `perf-dra-driver`) hand their figures to `benches/run.sh`: one JSON
//! file, written only when the measurement finished, with percentiles in one shape.

use std::future::Future;
use std::path::Path;
use std::time::Duration;

use anyhow::{anyhow, bail, Context, Result};

use latency_stats::Percentiles;

/// The percentiles of `samples` as JSON; an error naming `what` when there are none.
pub fn summary(samples: Vec<Duration>, what: &str) -> Result<serde_json::Value> {
    Percentiles::of(samples).map(Percentiles::to_json).ok_or_else(|| anyhow!("no samples of {what}"))
}

/// Runs `measurement` and writes its figures to `out` (pretty JSON), printing the path. A SIGTERM (from `timeout` or
/// run.sh's exit trap) drops the measurement, and with it every process it started, and writes nothing.
pub async fn measure_into(out: &Path, measurement: impl Future<Output = Result<serde_json::Value>>) -> Result<()> {
    let mut terminate = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
    let figures = tokio::select! {
        figures = measurement => figures?,
        _ = terminate.recv() => bail!("stopped by SIGTERM"),
    };
    let text = serde_json::to_string_pretty(&figures)?;
    std::fs::write(out, text + "\n").with_context(|| format!("cannot write {}", out.display()))?;
    println!("{}", out.display());
    Ok(())
}
