//! A fault event, and the stream that delivers them to a reader.

use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, TryRecvError};

use crate::health::FaultCode;
use crate::ids::LogicId;

/// How serious the driver says an event is (`severity` of `dcmi_dms_fault_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum Severity {
    /// 0.
    Warning,
    /// 1.
    Minor,
    /// 2.
    Major,
    /// 3.
    Critical,
    /// Any other value.
    Other(u8),
}

impl Severity {
    /// Maps the raw byte.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Severity::Warning,
            1 => Severity::Minor,
            2 => Severity::Major,
            3 => Severity::Critical,
            other => Severity::Other(other),
        }
    }
}

/// Whether a fault began, ended or happened once (`assertion` of `dcmi_dms_fault_event`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
#[non_exhaustive]
pub enum Assertion {
    /// 0: the fault cleared.
    Recovery,
    /// 1: the fault was raised.
    Occur,
    /// 2: a one-off notice.
    OneOff,
    /// Any other value.
    Other(u8),
}

impl Assertion {
    /// Maps the raw byte.
    pub fn from_raw(raw: u8) -> Self {
        match raw {
            0 => Assertion::Recovery,
            1 => Assertion::Occur,
            2 => Assertion::OneOff,
            other => Assertion::Other(other),
        }
    }
}

/// Where an event came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub enum EventSource {
    /// The driver's fault-event subscription.
    Subscription,
    /// Diffing the active fault codes between polls (chips without subscription, such as the 310 family).
    Polling,
}

/// One fault raised or cleared on one chip.
#[derive(Debug, Clone, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct FaultEvent {
    /// The chip (fault events carry logic ids).
    pub logic: LogicId,
    /// The fault.
    pub code: FaultCode,
    /// How serious the driver says it is; `None` for events synthesised by polling.
    pub severity: Option<Severity>,
    /// Raised, cleared, or one-off.
    pub assertion: Assertion,
    /// The event name the driver gave, empty when polling.
    pub name: String,
    /// When this host saw the event.
    pub seen_at: SystemTime,
    /// Subscription or polling.
    pub source: EventSource,
}

/// A stream of fault events; dropping it ends the subscription or the polling behind it.
///
/// It is a blocking channel: read it from a thread, or from `tokio::task::spawn_blocking`.
pub struct FaultEventStream {
    receiver: Receiver<FaultEvent>,
    _keep_alive: Box<dyn Send + Sync>,
}

impl std::fmt::Debug for FaultEventStream {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FaultEventStream").field("pending", &self.receiver.len()).finish()
    }
}

impl FaultEventStream {
    /// Wraps a receiver; `keep_alive` is dropped with the stream (for example the guard that unsubscribes or stops a
    /// polling thread). Mocks and tests build streams from a plain channel this way.
    pub fn new(receiver: Receiver<FaultEvent>, keep_alive: impl Send + Sync + 'static) -> Self {
        Self { receiver, _keep_alive: Box::new(keep_alive) }
    }

    /// Waits for the next event; `None` once the source has ended.
    pub fn recv(&self) -> Option<FaultEvent> {
        self.receiver.recv().ok()
    }

    /// Waits at most `timeout` for the next event.
    ///
    /// # Errors
    /// [`RecvTimeoutError::Timeout`] when nothing came, [`RecvTimeoutError::Disconnected`] once the source ended.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<FaultEvent, RecvTimeoutError> {
        self.receiver.recv_timeout(timeout)
    }

    /// The channel itself, for waiting on it beside other channels (`crossbeam_channel::Select`): a reader that
    /// has other work waits on both at once instead of waking on a timer to look at each.
    pub fn receiver(&self) -> &Receiver<FaultEvent> {
        &self.receiver
    }

    /// Takes an event if one is waiting.
    ///
    /// # Errors
    /// [`TryRecvError::Empty`] when none is waiting, [`TryRecvError::Disconnected`] once the source ended.
    pub fn try_recv(&self) -> Result<FaultEvent, TryRecvError> {
        self.receiver.try_recv()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raw_bytes_map_to_variants() {
        assert_eq!(Severity::from_raw(3), Severity::Critical);
        assert_eq!(Severity::from_raw(9), Severity::Other(9));
        assert_eq!(Assertion::from_raw(0), Assertion::Recovery);
        assert_eq!(Assertion::from_raw(1), Assertion::Occur);
    }

    #[test]
    fn stream_ends_when_the_sender_goes() {
        let (sender, receiver) = crossbeam_channel::unbounded();
        let stream = FaultEventStream::new(receiver, ());
        let event = FaultEvent {
            logic: LogicId(2),
            code: FaultCode(0x80E0_1801),
            severity: Some(Severity::Major),
            assertion: Assertion::Occur,
            name: String::new(),
            seen_at: SystemTime::UNIX_EPOCH,
            source: EventSource::Polling,
        };
        sender.send(event.clone()).expect("receiver alive");
        drop(sender);
        assert_eq!(stream.recv(), Some(event));
        assert_eq!(stream.recv(), None);
    }
}
