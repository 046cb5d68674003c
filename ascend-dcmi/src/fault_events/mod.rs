//! Fault events: a fault raised or cleared on a chip, from the driver's subscription or from polling where
//! subscription is unavailable, delivered as one [`FaultEventStream`].
//!
//! - [`event`]: the event, its severity and assertion, and the stream a reader holds;
//! - [`subscription`]: the driver's callback feeds every open stream through a process-wide registry (the driver takes
//!   one C callback per process); the FFI layer copies each event inside `catch_unwind` and hands it to the sink it
//!   was given at subscription. A full stream drops events rather than blocking the driver's thread;
//! - [`polling`]: chips whose type has no subscription (the 310 family), and every chip when subscribing fails, are
//!   polled: each `poll_interval` their fault codes are read and diffed with the previous read, producing the same
//!   events (without severity, with [`EventSource::Polling`]). A first poll of every chip reports the faults already
//!   active when the stream opens.

pub(crate) mod event;
mod polling;
mod subscription;

use std::time::Duration;

use crossbeam_channel::Sender;

use crate::chip::Chip;
use crate::dcmi::Dcmi;
use crate::error::{Error, Result};
pub use event::{Assertion, EventSource, FaultEvent, FaultEventStream, Severity};
use polling::Poller;
use subscription::Subscription;

/// Events a stream holds before new ones are dropped.
pub const EVENT_QUEUE_CAPACITY: usize = 4096;

/// Ends a stream's sources when the stream is dropped.
struct StreamGuard {
    _subscription: Option<Subscription>,
    /// Dropping this wakes and stops the polling thread.
    _stop_polling: Option<Sender<()>>,
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
        let subscribes = |chip: &Chip| chip.chip_type().ok().flatten().is_some_and(|t| t.supports_fault_subscription());
        let subscribed = chips.iter().any(subscribes) && subscription::ensure_subscribed(self).is_ok();
        let subscription = subscribed.then(|| Subscription::register(sender.clone()));
        let polled: Vec<Chip> = chips.iter().filter(|chip| !subscribed || !subscribes(chip)).cloned().collect();
        let mut poller = Poller::new(sender);
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
        Ok(FaultEventStream::new(receiver, StreamGuard { _subscription: subscription, _stop_polling: stop }))
    }
}
