//! Kubernetes Events on the Node object (`events.k8s.io/v1`, through kube-rs's event recorder), so that
//! `kubectl describe node` and `kubectl get events` show NPU faults where operators look. (Huawei's plugin puts its
//! fault Events on its own pod in `kube-system`, where nobody looks; ascend-device-plugin `doWriteFaultToEvent`.)
//!
//! Recording never blocks and never fails the caller: [`NodeEvents::record`] puts the event in a bounded queue that
//! a background task drains. A full queue, or an API server that answers 500 or not at all, costs only events
//! (counted in [`EventStats`]), never a health update or an Allocate.
//!
//! A flapping chip cannot flood the API server:
//! - kube-rs's recorder aggregates repeats: the same reason and action on the Node within six minutes become one
//!   Event whose `series.count` grows (a PATCH, not a new object);
//! - a token bucket ([`NodeEventsConfig::burst`] events at once, then one per [`NodeEventsConfig::refill`]; by
//!   default 10 and 6 s, Huawei's `WriteEventRateLimit` of 10 a minute) bounds the requests; events over the budget
//!   are dropped and the next Event that is sent says how many were suppressed.
//!
//! Cluster-scoped objects' Events live in `default`, as the kubelet's Node Events do; `regarding` is the Node
//! with its UID (read once; the node name, the kubelet's convention, when it cannot be read), which is what
//! `kubectl describe node` searches for.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use k8s_openapi::api::core::v1::{Node, ObjectReference};
use kube::api::Api;
use kube::runtime::events::{Event, EventType, Recorder, Reporter};
use tokio::sync::mpsc;

use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::error::Result;

/// One Event about the node.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeEvent {
    /// Warning (a fault) or Normal (a recovery).
    pub warning: bool,
    /// What happened, PascalCase (`NpuFaultRaised`, `NpuFaultRecovered`, `NpuCardDropped`, `NpuChipHung` ...).
    pub reason: String,
    /// The chip concerned (`Ascend910-3`): with the reason, what aggregation groups by.
    pub action: String,
    /// The message: chip ids, fault codes, level.
    pub note: String,
}

/// Rate limits and queue size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NodeEventsConfig {
    /// Events that may be sent at once.
    pub burst: u32,
    /// One more event may be sent after each such period.
    pub refill: Duration,
    /// Events waiting to be sent; more are dropped.
    pub queue: usize,
    /// How long one API request may take.
    pub request_timeout: Duration,
    /// The Events' `reportingController`: the program that records them (the device plugin's name by default,
    /// [`crate::DRA_DRIVER_FIELD_MANAGER`] for the DRA driver).
    pub reporting_controller: &'static str,
}

impl Default for NodeEventsConfig {
    fn default() -> Self {
        NodeEventsConfig {
            burst: 10,
            refill: Duration::from_secs(6),
            queue: 256,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            reporting_controller: DEVICE_PLUGIN_FIELD_MANAGER,
        }
    }
}

/// What happened to the recorded events.
#[derive(Debug, Default)]
pub struct EventStats {
    published: AtomicU64,
    suppressed: AtomicU64,
    failed: AtomicU64,
}

impl EventStats {
    /// Events the API server accepted (new Events and repeats folded into a series).
    pub fn published(&self) -> u64 {
        self.published.load(Ordering::Relaxed)
    }

    /// Events dropped by the rate limit or a full queue.
    pub fn suppressed(&self) -> u64 {
        self.suppressed.load(Ordering::Relaxed)
    }

    /// Events the API server refused or did not answer in time.
    pub fn failed(&self) -> u64 {
        self.failed.load(Ordering::Relaxed)
    }
}

/// The Event sink of one node.
#[derive(Clone)]
pub struct NodeEvents {
    queue: mpsc::Sender<NodeEvent>,
    stats: Arc<EventStats>,
}

impl std::fmt::Debug for NodeEvents {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NodeEvents").field("stats", &self.stats).finish_non_exhaustive()
    }
}

impl NodeEvents {
    /// Starts the sender task on the current Tokio runtime; it ends when every [`NodeEvents`] clone is dropped.
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    pub fn start(client: kube::Client, node: &str, config: NodeEventsConfig) -> Result<Self> {
        check_node_name(node)?;
        let (queue, receiver) = mpsc::channel(config.queue.max(1));
        let stats = Arc::new(EventStats::default());
        let sender = Sender {
            recorder: Recorder::new(
                client.clone(),
                Reporter { controller: config.reporting_controller.into(), instance: Some(node.to_owned()) },
            ),
            nodes: Api::all(client),
            node: node.to_owned(),
            reference: None,
            config,
            bucket: TokenBucket::new(config.burst, config.refill),
            stats: Arc::clone(&stats),
        };
        tokio::spawn(sender.run(receiver));
        Ok(NodeEvents { queue, stats })
    }

    /// Queues an event; never waits. A full queue drops it (counted as suppressed).
    pub fn record(&self, event: NodeEvent) {
        if self.queue.try_send(event).is_err() {
            self.stats.suppressed.fetch_add(1, Ordering::Relaxed);
        }
    }

    /// What happened to the events so far.
    pub fn stats(&self) -> &EventStats {
        &self.stats
    }
}

struct Sender {
    recorder: Recorder,
    nodes: Api<Node>,
    node: String,
    reference: Option<ObjectReference>,
    config: NodeEventsConfig,
    bucket: TokenBucket,
    stats: Arc<EventStats>,
}

impl Sender {
    async fn run(mut self, mut receiver: mpsc::Receiver<NodeEvent>) {
        let mut untold: u64 = 0;
        while let Some(event) = receiver.recv().await {
            if !self.bucket.take(Instant::now()) {
                self.stats.suppressed.fetch_add(1, Ordering::Relaxed);
                untold += 1;
                tracing::debug!(reason = %event.reason, chip = %event.action, "node Event suppressed by the rate limit");
                continue;
            }
            let mut note = event.note;
            if untold > 0 {
                note.push_str(&format!(" ({untold} earlier NPU Events suppressed by the rate limit)"));
            }
            let reference = self.reference().await;
            let published = Event {
                type_: if event.warning { EventType::Warning } else { EventType::Normal },
                reason: event.reason.clone(),
                note: Some(note),
                action: event.action.clone(),
                secondary: None,
            };
            let object = format!("events/default (Node {})", self.node);
            match request("create", object, self.config.request_timeout, self.recorder.publish(&published, &reference))
                .await
            {
                Ok(()) => {
                    self.stats.published.fetch_add(1, Ordering::Relaxed);
                    untold = 0;
                }
                Err(error) => {
                    self.stats.failed.fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(reason = %event.reason, chip = %event.action, %error, "node Event not recorded");
                }
            }
        }
    }

    /// The Node's reference, with its UID once it could be read.
    async fn reference(&mut self) -> ObjectReference {
        if let Some(reference) = &self.reference {
            return reference.clone();
        }
        let node = self.node.clone();
        let read = request("get", format!("nodes/{node}"), self.config.request_timeout, self.nodes.get(&node)).await;
        let reference = ObjectReference {
            api_version: Some("v1".into()),
            kind: Some("Node".into()),
            name: Some(node.clone()),
            uid: Some(match &read {
                Ok(found) => found.metadata.uid.clone().unwrap_or_else(|| node.clone()),
                Err(_) => node.clone(),
            }),
            ..ObjectReference::default()
        };
        if read.is_ok() {
            self.reference = Some(reference.clone());
        }
        reference
    }
}

/// At most `burst` takes at once, one more per `refill`.
#[derive(Debug, Clone)]
struct TokenBucket {
    burst: u32,
    refill: Duration,
    tokens: u32,
    last: Option<Instant>,
}

impl TokenBucket {
    fn new(burst: u32, refill: Duration) -> Self {
        TokenBucket { burst: burst.max(1), refill, tokens: burst.max(1), last: None }
    }

    fn take(&mut self, now: Instant) -> bool {
        let last = *self.last.get_or_insert(now);
        if !self.refill.is_zero() {
            let earned = (now.saturating_duration_since(last).as_nanos() / self.refill.as_nanos()) as u32;
            if earned > 0 {
                self.tokens = self.tokens.saturating_add(earned).min(self.burst);
                self.last = Some(last + self.refill * earned);
            }
        }
        if self.tokens == 0 {
            return false;
        }
        self.tokens -= 1;
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bucket_allows_a_burst_then_one_per_refill() {
        let start = Instant::now();
        let mut bucket = TokenBucket::new(3, Duration::from_secs(6));
        assert_eq!((0..5).filter(|_| bucket.take(start)).count(), 3);
        assert!(!bucket.take(start + Duration::from_secs(5)));
        assert!(bucket.take(start + Duration::from_secs(6)));
        assert!(!bucket.take(start + Duration::from_secs(7)));
        assert_eq!((0..5).filter(|_| bucket.take(start + Duration::from_secs(600))).count(), 3, "never above burst");
    }
}
