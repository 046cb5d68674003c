//! The polling source of fault events: each interval, every polled chip's fault codes are read (with the handle's
//! deadline) and diffed with the previous read. Used for chip types without subscription (the 310 family) and for
//! every chip when subscribing fails.

use std::collections::HashMap;
use std::time::{Duration, SystemTime};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};

use crate::chip::Chip;
use crate::error::{Error, Result};
use crate::fault_events::event::{Assertion, EventSource, FaultEvent};
use crate::health::{FaultCode, FaultCodes};
use crate::ids::LogicId;

/// Diffs fault codes between polls.
pub(super) struct Poller {
    previous: HashMap<LogicId, FaultCodes>,
    sender: Sender<FaultEvent>,
}

impl Poller {
    /// A poller that sends into `sender` and has seen nothing yet.
    pub(super) fn new(sender: Sender<FaultEvent>) -> Self {
        Self { previous: HashMap::new(), sender }
    }

    /// Reports what is active now on every chip. Fails only when no chip's faults can be read at all because the
    /// functions are missing or unsupported, and the stream would have no source for polled chips.
    pub(super) fn first_pass(&mut self, all: &[Chip], polled: &[Chip]) -> Result<()> {
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

    pub(super) fn run(mut self, chips: &[Chip], interval: Duration, stop: &Receiver<()>) {
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
