//! Our node daemons' requests as the real API server of the test bed saw them: its audit log
//! (`scripts/cluster/config/audit-policy.yaml`) has every request's user agent, verb and resource, and each of our
//! daemons sends `User-Agent: <daemon>/<version>` (`ascend_kube::connect_as`).
//!
//! A request is counted once: a watch when it starts (audit stage `ResponseStarted`), anything else when it completes
//! (`ResponseComplete`). Used by `perf-api-requests` (one node) and `perf-fleet` (a simulated fleet).

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use k8s_openapi::jiff::Timestamp;
use serde_json::json;

/// The user agents of our daemons (`ascend_kube::connect_as`).
pub const OUR_AGENTS: [&str; 4] = ["ascend-device-plugin", "ascend-node-labeller", "ascend-dra-driver", "npu-exporter"];

/// The API server's audit log, read from a mark on.
#[derive(Debug, Clone)]
pub struct AuditLog {
    /// The file (scripts/cluster/lib.sh's `CLUSTER_LOGS`/audit.log).
    pub path: PathBuf,
}

/// Where a window starts: the log's length and the time.
#[derive(Debug, Clone, Copy)]
pub struct Mark {
    offset: u64,
    at: Timestamp,
}

impl AuditLog {
    /// The log's end, now.
    ///
    /// # Errors
    /// The log cannot be read.
    pub fn mark(&self) -> Result<Mark> {
        let offset = std::fs::metadata(&self.path).with_context(|| format!("{}", self.path.display()))?.len();
        Ok(Mark { offset, at: Timestamp::now() })
    }

    /// Our daemons' requests received since `mark`, by agent, verb and resource, and by second.
    ///
    /// # Errors
    /// The log cannot be read.
    pub fn counted_since(&self, mark: &Mark) -> Result<Counts> {
        let mut file = std::fs::File::open(&self.path).with_context(|| format!("{}", self.path.display()))?;
        let length = file.metadata()?.len();
        // A rotated log starts again from the beginning.
        file.seek(SeekFrom::Start(if length < mark.offset { 0 } else { mark.offset }))?;
        let mut text = String::new();
        file.read_to_string(&mut text)?;
        let mut counts = Counts::default();
        for line in text.lines() {
            let Ok(event) = serde_json::from_str::<serde_json::Value>(line) else { continue };
            if let Some((key, received)) = our_request(&event, mark.at) {
                *counts.by_request.entry(key).or_default() += 1;
                let second = u64::try_from(received.duration_since(mark.at).as_secs()).unwrap_or(0);
                *counts.by_second.entry(second).or_default() += 1;
            }
        }
        Ok(counts)
    }
}

/// Counts our daemons' requests made while `during` runs and for at least `length`.
///
/// # Errors
/// The log cannot be read.
pub async fn window(audit: &AuditLog, length: Duration, during: impl Future<Output = ()>) -> Result<Counts> {
    let mark = audit.mark()?;
    let started = Instant::now();
    during.await;
    tokio::time::sleep(length.saturating_sub(started.elapsed())).await;
    audit.counted_since(&mark)
}

/// (agent, verb, resource) of an audit event that counts one request of ours received after `since`, and when.
fn our_request(event: &serde_json::Value, since: Timestamp) -> Option<((String, String, String), Timestamp)> {
    let verb = event["verb"].as_str()?;
    let stage = event["stage"].as_str()?;
    let counted_stage = if verb == "watch" { "ResponseStarted" } else { "ResponseComplete" };
    if stage != counted_stage {
        return None;
    }
    let received: Timestamp = event["requestReceivedTimestamp"].as_str()?.parse().ok()?;
    let agent = event["userAgent"].as_str()?.split('/').next()?;
    if received < since || !OUR_AGENTS.contains(&agent) {
        return None;
    }
    let object = &event["objectRef"];
    let resource = match object["subresource"].as_str() {
        Some(sub) => format!("{}/{sub}", object["resource"].as_str().unwrap_or("-")),
        None => object["resource"].as_str().unwrap_or("-").to_owned(),
    };
    Some(((agent.to_owned(), verb.to_owned(), resource), received))
}

/// Requests by (agent, verb, resource), and by second since the mark.
#[derive(Debug, Default)]
pub struct Counts {
    by_request: BTreeMap<(String, String, String), u64>,
    by_second: BTreeMap<u64, u64>,
}

impl Counts {
    /// All requests.
    pub fn total(&self) -> u64 {
        self.by_request.values().sum()
    }

    /// Requests of these verbs.
    pub fn of_verbs(&self, verbs: &[&str]) -> u64 {
        self.by_request.iter().filter(|((_, verb, _), _)| verbs.contains(&verb.as_str())).map(|(_, n)| n).sum()
    }

    /// The busiest second's requests.
    pub fn peak_per_second(&self) -> u64 {
        self.by_second.values().copied().max().unwrap_or(0)
    }

    /// The counts, their total and, over a window of `seconds`, the rate per minute.
    pub fn to_json(&self, seconds: Option<u64>) -> serde_json::Value {
        let total = self.total();
        let requests: Vec<_> = self
            .by_request
            .iter()
            .map(|((agent, verb, resource), count)| json!({"agent": agent, "verb": verb, "resource": resource, "count": count}))
            .collect();
        let per_minute = seconds.map(|seconds| total as f64 * 60.0 / seconds as f64);
        json!({
            "seconds": seconds, "total": total, "per_minute": per_minute,
            "peak_per_second": self.peak_per_second(), "requests": requests,
        })
    }
}
