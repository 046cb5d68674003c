//! The subscription source of fault events: the driver takes one C callback per process, so one process-wide
//! registry of open streams receives what the FFI layer's callback copies out, and each library is subscribed once.
//!
//! The FFI layer knows nothing of streams: [`ensure_subscribed`] hands it [`deliver`] as the sink at subscription.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use crossbeam_channel::{Sender, TrySendError};
use once_cell::sync::Lazy;
use parking_lot::Mutex;

use crate::dcmi::Dcmi;
use crate::error::Result;
use crate::fault_events::event::{Assertion, EventSource, FaultEvent, Severity};
use crate::ffi::RawFaultEvent;
use crate::health::FaultCode;
use crate::ids::LogicId;

/// An open stream fed by the driver's callback: its id and its sending end.
type Subscriber = (u64, Sender<FaultEvent>);

/// Open streams fed by the driver's callback.
static SUBSCRIBERS: Lazy<Mutex<Vec<Subscriber>>> = Lazy::new(|| Mutex::new(Vec::new()));

/// Libraries (by path) this process has subscribed with: the driver keeps one callback, subscribing twice would
/// duplicate events.
static SUBSCRIBED_LIBRARIES: Lazy<Mutex<HashSet<PathBuf>>> = Lazy::new(|| Mutex::new(HashSet::new()));

static NEXT_SUBSCRIBER: AtomicU64 = AtomicU64::new(1);

/// The sink the FFI callback is given: converts a copied event and offers it to every open stream. A full stream
/// drops the event rather than block the driver's thread; a gone one is removed.
fn deliver(raw: RawFaultEvent) {
    let event = FaultEvent {
        logic: LogicId(u32::from(raw.logic)),
        code: FaultCode(u64::from(raw.event_id)),
        severity: Some(Severity::from_raw(raw.severity)),
        assertion: Assertion::from_raw(raw.assertion),
        name: raw.name,
        seen_at: SystemTime::now(),
        source: EventSource::Subscription,
    };
    SUBSCRIBERS
        .lock()
        .retain(|(_, sender)| !matches!(sender.try_send(event.clone()), Err(TrySendError::Disconnected(_))));
}

/// Subscribes the handle's library once per process, with [`deliver`] as the sink; later calls reuse the
/// subscription.
pub(super) fn ensure_subscribed(dcmi: &Dcmi) -> Result<()> {
    let path = dcmi.library_path().to_path_buf();
    let mut subscribed = SUBSCRIBED_LIBRARIES.lock();
    if subscribed.contains(&path) {
        return Ok(());
    }
    dcmi.library().subscribe_fault_events(deliver)?;
    subscribed.insert(path);
    Ok(())
}

/// One stream's place among the subscribers; dropping it stops the deliveries to that stream.
#[derive(Debug)]
pub(super) struct Subscription {
    id: u64,
}

impl Subscription {
    /// Adds `sender` to the streams the callback feeds.
    pub(super) fn register(sender: Sender<FaultEvent>) -> Self {
        let id = NEXT_SUBSCRIBER.fetch_add(1, Ordering::SeqCst);
        SUBSCRIBERS.lock().push((id, sender));
        Self { id }
    }
}

impl Drop for Subscription {
    fn drop(&mut self) {
        SUBSCRIBERS.lock().retain(|(other, _)| *other != self.id);
    }
}
