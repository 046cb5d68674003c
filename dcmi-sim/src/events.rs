//! Fault-event subscriptions and their delivery on a simulator thread.
//!
//! State changes queue [`FaultEvent`]s; the simulator's background thread drains the queue and calls
//! each matching subscriber. Subscribers are plain Rust closures here; the ABI layer wraps the C
//! callback of `dcmi_subscribe_fault_event` in one.

use std::collections::VecDeque;
use std::sync::Arc;

use parking_lot::Mutex;

bitflags::bitflags! {
    /// The bits of `filter_flag` (`DCMI_EVENT_FILTER_FLAG_*`, values from the header); none set passes every event.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
    pub struct FilterFlags: u64 {
        /// Only events with `event_id`.
        const EVENT_ID = dcmi_sys::DCMI_EVENT_FILTER_FLAG_EVENT_ID;
        /// Only events with severity ≥ `severity`.
        const SEVERITY = dcmi_sys::DCMI_EVENT_FILTER_FLAG_SERVERITY;
        /// Only events with `node_type`.
        const NODE_TYPE = dcmi_sys::DCMI_EVENT_FILTER_FLAG_NODE_TYPE;
    }
}

/// Assertion value of a raised fault.
pub const ASSERTION_RAISED: u8 = 1;
/// Assertion value of a cleared fault (recovery).
pub const ASSERTION_CLEARED: u8 = 0;

/// One fault occurrence or recovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FaultEvent {
    /// Logic id of the chip (`deviceid` of `struct dcmi_dms_fault_event`).
    pub logic_id: u32,
    /// Fault code (`event_id`).
    pub code: u32,
    /// 0 warning, 1 minor, 2 major, 3 critical.
    pub severity: u8,
    /// 1 raised, 0 cleared.
    pub assertion: u8,
    /// Unix seconds when it happened.
    pub raised_time: u64,
    /// Serial number, counting from 1 per simulator instance.
    pub serial: i32,
}

/// `struct dcmi_event_filter` in Rust form.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EventFilter {
    /// Which of the fields below apply; unknown bits are kept and ignored, as the driver ignores them.
    pub flags: FilterFlags,
    /// Wanted event id.
    pub event_id: u32,
    /// Minimum severity.
    pub severity: u8,
    /// Wanted node type (simulated events have node type 0).
    pub node_type: u8,
}

impl EventFilter {
    /// True when `event` passes the filter.
    pub fn accepts(&self, event: &FaultEvent) -> bool {
        (!self.flags.contains(FilterFlags::EVENT_ID) || event.code == self.event_id)
            && (!self.flags.contains(FilterFlags::SEVERITY) || event.severity >= self.severity)
            && (!self.flags.contains(FilterFlags::NODE_TYPE) || self.node_type == 0)
    }
}

/// Receives events on the simulator thread.
pub type EventSink = Arc<dyn Fn(&FaultEvent) + Send + Sync>;

struct Subscription {
    /// `None` = every chip.
    logic_id: Option<u32>,
    filter: EventFilter,
    sink: EventSink,
}

/// Subscriptions and the queue of undelivered events.
#[derive(Default)]
pub struct EventHub {
    subscriptions: Mutex<Vec<Subscription>>,
    queue: Mutex<VecDeque<FaultEvent>>,
    serial: std::sync::atomic::AtomicI32,
}

impl EventHub {
    /// Adds a subscription for one chip (`Some(logic id)`) or all (`None`).
    pub fn subscribe(&self, logic_id: Option<u32>, filter: EventFilter, sink: EventSink) {
        self.subscriptions.lock().push(Subscription { logic_id, filter, sink });
    }

    /// Queues an event (numbered here) for delivery.
    pub fn publish(&self, logic_id: u32, code: u32, severity: u8, assertion: u8) {
        let serial = self.serial.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
        let raised_time = crate::generator::unix_now_ms() / 1000;
        self.queue.lock().push_back(FaultEvent { logic_id, code, severity, assertion, raised_time, serial });
    }

    /// Delivers every queued event to the matching subscribers (on the calling thread). Events with
    /// no subscriber are dropped, as the driver does.
    pub fn deliver(&self) {
        loop {
            let Some(event) = self.queue.lock().pop_front() else { return };
            let sinks: Vec<EventSink> = self
                .subscriptions
                .lock()
                .iter()
                .filter(|subscription| {
                    subscription.logic_id.is_none_or(|wanted| wanted == event.logic_id)
                        && subscription.filter.accepts(&event)
                })
                .map(|subscription| Arc::clone(&subscription.sink))
                .collect();
            for sink in sinks {
                // A panicking Rust subscriber must not kill the simulator thread.
                let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| sink(&event)));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_scopes() {
        let hub = EventHub::default();
        let seen: Arc<Mutex<Vec<(u32, u32, u8)>>> = Arc::default();
        let all = Arc::clone(&seen);
        hub.subscribe(
            None,
            EventFilter::default(),
            Arc::new(move |event| all.lock().push((0, event.code, event.assertion))),
        );
        let severe = Arc::clone(&seen);
        hub.subscribe(
            Some(3),
            EventFilter { flags: FilterFlags::SEVERITY, severity: 3, ..EventFilter::default() },
            Arc::new(move |event| severe.lock().push((3, event.code, event.assertion))),
        );
        hub.publish(3, 0x10, 3, ASSERTION_RAISED);
        hub.publish(3, 0x11, 1, ASSERTION_RAISED);
        hub.publish(4, 0x12, 3, ASSERTION_CLEARED);
        hub.deliver();
        assert_eq!(*seen.lock(), vec![(0, 0x10, 1), (3, 0x10, 1), (0, 0x11, 1), (0, 0x12, 0)]);
    }
}
