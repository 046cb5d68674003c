//! Fault events from the driver's subscription, or from polling where subscription is unavailable.
//!
//! The driver takes one C callback per process. It copies each event (in [`crate::ffi`], inside `catch_unwind`) and
//! hands it to [`deliver`], which pushes it into every open [`FaultEventStream`] through a global registry. A full
//! stream drops events rather than blocking the driver's thread.
//!
//! Chips whose type has no subscription (the 310 family), and every chip when subscribing fails, are polled: each
//! `poll_interval` their fault codes are read and diffed with the previous read, producing the same events (without
//! severity, with [`EventSource::Polling`]). A first poll of every chip reports the faults already active when the
//! stream opens.

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender, TrySendError};
use once_cell::sync::Lazy;
use parking_lot::Mutex;

use crate::chip::Chip;
use crate::dcmi::Dcmi;
use crate::error::{Error, Result};
use crate::event::{Assertion, EventSource, FaultEvent, FaultEventStream, Severity};
use crate::ffi::RawFaultEvent;
use crate::health::{FaultCode, FaultCodes};
use crate::ids::LogicId;

/// Events a stream holds before new ones are dropped.
pub const EVENT_QUEUE_CAPACITY: usize = 4096;

/// An open stream fed by the driver's callback: its id and its sending end.
type Subscriber = (u64, Sender<FaultEvent>);

/// Open streams fed by the driver's callback.
static SUBSCRIBERS: Lazy<Mutex<Vec<Subscriber>>> = Lazy::new(|| Mutex::new(Vec::new()));

/// Libraries (by path) this process has subscribed with: the driver keeps one callback, subscribing twice would
/// duplicate events.
static SUBSCRIBED_LIBRARIES: Lazy<Mutex<HashSet<PathBuf>>> = Lazy::new(|| Mutex::new(HashSet::new()));

static NEXT_SUBSCRIBER: AtomicU64 = AtomicU64::new(1);

/// Called from the C callback with a copied event: converts it and offers it to every open stream.
pub(crate) fn deliver(raw: RawFaultEvent) {
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

/// Ends a stream's sources when the stream is dropped.
struct StreamGuard {
    subscriber: Option<u64>,
    /// Dropping this wakes and stops the polling thread.
    _stop_polling: Option<Sender<()>>,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if let Some(id) = self.subscriber {
            SUBSCRIBERS.lock().retain(|(other, _)| *other != id);
        }
    }
}

impl Dcmi {
    /// Fault events of every chip: by driver subscription for chip types that support it, by polling every
    /// `poll_interval` for the others and whenever subscribing fails. Dropping the stream stops its polling.
    ///
    /// ```no_run
    /// use std::time::Duration;
    /// use ascend_dcmi::Dcmi;
    ///
    /// let dcmi = Dcmi::init()?;
    /// let events = dcmi.fault_events(Duration::from_secs(5))?;
    /// while let Some(event) = events.recv() {
    ///     let level = dcmi.fault_policy().grade(event.code, event.severity);
    ///     println!("chip {} {:?} {} -> {level}", event.logic, event.assertion, event.code);
    /// }
    /// # Ok::<(), ascend_dcmi::Error>(())
    /// ```
    ///
    /// # Errors
    /// The enumeration error; or, when subscription is unavailable, the error that makes polling impossible too
    /// (for example [`Error::FunctionMissing`] of `dcmi_get_device_errorcode_v2`).
    #[doc(alias = "dcmi_subscribe_fault_event")]
    pub fn fault_events(&self, poll_interval: Duration) -> Result<FaultEventStream> {
        let chips: Vec<Chip> = self.chips()?.into_iter().map(|ids| Chip::new(self.clone(), ids)).collect();
        let (sender, receiver) = crossbeam_channel::bounded(EVENT_QUEUE_CAPACITY);
        let wants_subscription =
            chips.iter().any(|chip| chip.chip_type().ok().flatten().is_some_and(|t| t.supports_fault_subscription()));
        let subscribed = wants_subscription && self.ensure_subscribed().is_ok();
        let subscriber = subscribed.then(|| {
            let id = NEXT_SUBSCRIBER.fetch_add(1, Ordering::SeqCst);
            SUBSCRIBERS.lock().push((id, sender.clone()));
            id
        });
        let polled: Vec<Chip> = chips
            .iter()
            .filter(|chip| {
                !subscribed || !chip.chip_type().ok().flatten().is_some_and(|t| t.supports_fault_subscription())
            })
            .cloned()
            .collect();
        let mut poller = Poller { previous: HashMap::new(), sender };
        poller.first_pass(&chips, &polled)?;
        let stop = if polled.is_empty() {
            None
        } else {
            let (stop_sender, stop_receiver) = crossbeam_channel::bounded::<()>(0);
            std::thread::Builder::new()
                .name("dcmi-fault-poll".to_owned())
                .spawn(move || poller.run(&polled, poll_interval, &stop_receiver))
                .map_err(|error| Error::Worker(format!("cannot start the fault polling thread: {error}")))?;
            Some(stop_sender)
        };
        Ok(FaultEventStream::new(receiver, StreamGuard { subscriber, _stop_polling: stop }))
    }

    /// Subscribes this library once per process; later calls reuse the subscription.
    fn ensure_subscribed(&self) -> Result<()> {
        let path = self.library_path().to_path_buf();
        let mut subscribed = SUBSCRIBED_LIBRARIES.lock();
        if subscribed.contains(&path) {
            return Ok(());
        }
        self.library().subscribe_fault_events()?;
        subscribed.insert(path);
        Ok(())
    }
}

/// Diffs fault codes between polls.
struct Poller {
    previous: HashMap<LogicId, FaultCodes>,
    sender: Sender<FaultEvent>,
}

impl Poller {
    /// Reports what is active now on every chip. Fails only when no chip's faults can be read at all because the
    /// functions are missing or unsupported, and the stream would have no source for polled chips.
    fn first_pass(&mut self, all: &[Chip], polled: &[Chip]) -> Result<()> {
        let mut unsupported: Option<Error> = None;
        let mut any_read = false;
        for chip in all {
            match self.poll(chip) {
                Ok(()) => any_read = true,
                Err(error) if error.is_unsupported() => {
                    unsupported.get_or_insert(error);
                }
                Err(_) => {}
            }
        }
        match unsupported {
            Some(error) if !any_read && !polled.is_empty() => Err(error),
            _ => Ok(()),
        }
    }

    fn run(mut self, chips: &[Chip], interval: Duration, stop: &Receiver<()>) {
        loop {
            match stop.recv_timeout(interval) {
                Err(RecvTimeoutError::Timeout) => {}
                _ => return,
            }
            for chip in chips {
                // A chip that cannot be read this time (hung, busy) is tried again next time.
                let _ = self.poll(chip);
            }
        }
    }

    /// Reads one chip's codes (with a deadline) and sends the differences.
    fn poll(&mut self, chip: &Chip) -> Result<()> {
        let probe = chip.clone();
        let context = chip.context("dcmi_get_device_errorcode_v2");
        let report = chip.dcmi().call_with_deadline(context, move |_| probe.health())?;
        let logic = chip.logic();
        let previous = self.previous.remove(&logic).unwrap_or_default();
        let mut current = report.faults;
        if report.card_dropped {
            // The codes raised before the drop cannot be read now; they are not cleared by it.
            for code in previous.as_slice() {
                current.push(*code);
            }
        }
        for code in current.as_slice().iter().filter(|code| !previous.contains(**code)) {
            self.send(logic, *code, Assertion::Occur);
        }
        for code in previous.as_slice().iter().filter(|code| !current.contains(**code)) {
            self.send(logic, *code, Assertion::Recovery);
        }
        self.previous.insert(logic, current);
        Ok(())
    }

    fn send(&self, logic: LogicId, code: FaultCode, assertion: Assertion) {
        let event = FaultEvent {
            logic,
            code,
            severity: None,
            assertion,
            name: String::new(),
            seen_at: SystemTime::now(),
            source: EventSource::Polling,
        };
        // A full queue drops the event; a gone reader ends nothing here (the stop channel does).
        let _ = self.sender.try_send(event);
    }
}
