//! The health monitor: one thread that owns the chips' state and publishes a [`Snapshot`] whenever it changes.
//!
//! Every DCMI call runs on ascend-dcmi's driver-call workers ([`DriverCalls`]) and reports back through a channel, so
//! the monitor itself never blocks on the driver. A call still running after `health_deadline` marks its chip
//! Unhealthy and its worker is replaced; no second call for that chip is started until the hung one returns. Each poll re-lists the chips, so a chip that was absent or
//! unreadable at start is advertised as soon as it answers, and health moves both ways as faults rise and clear.
//! Fault events wake the monitor to re-check the chip at once instead of waiting for the next poll: the monitor thread
//! waits on its messages and the event stream at once, so an idle monitor wakes only for its poll (a short-lived
//! thread subscribes, since subscribing calls the driver, and hands the stream over).

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use ascend_dcmi::deadline::DriverCalls;
use ascend_dcmi::{
    ChipIds, DeviceManager, Error as DcmiError, FaultEventStream, HealthReport, LogicId, PhyId, VnpuId, VnpuInventory,
    VnpuTemplate, DEFAULT_WORKER_CONCURRENCY,
};
use crossbeam_channel::{Receiver, RecvTimeoutError, Select, Sender};
use tokio::sync::watch;

use crate::error::{Error, Result};
use crate::health_observer::HealthObserver;
use crate::inventory::{ChipCondition, ChipDetails, ChipRecord, Health, InventoryOptions, Snapshot, UnhealthyCause};

/// How the monitor polls.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MonitorConfig {
    /// How chips become resources.
    pub inventory: InventoryOptions,
    /// Time between full re-checks of every chip.
    pub poll_interval: Duration,
    /// How long one DCMI call may take before its chip counts as Unhealthy.
    pub health_deadline: Duration,
    /// Subscribe to the driver's fault events (re-check a chip as soon as a fault rises or clears).
    pub fault_events: bool,
}

impl Default for MonitorConfig {
    fn default() -> Self {
        Self {
            inventory: InventoryOptions::default(),
            poll_interval: Duration::from_secs(5),
            health_deadline: Duration::from_secs(10),
            fault_events: true,
        }
    }
}

/// How many waiting messages the monitor handles before it publishes a snapshot.
const BURST: usize = 256;

/// A running health monitor. Dropping it stops the monitor thread.
pub struct HealthMonitor {
    snapshot: watch::Receiver<Arc<Snapshot>>,
    messages: Sender<Message>,
    thread: Option<JoinHandle<()>>,
}

impl std::fmt::Debug for HealthMonitor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HealthMonitor").field("running", &self.thread.is_some()).finish()
    }
}

impl HealthMonitor {
    /// Starts the monitor thread; the first snapshot (possibly empty) is published within one DCMI round trip.
    ///
    /// # Errors
    /// [`Error::Config`] for a zero poll interval or deadline, [`Error::Monitor`] if the thread cannot start.
    pub fn start(
        manager: Arc<dyn DeviceManager>,
        config: MonitorConfig,
        observer: Arc<dyn HealthObserver>,
    ) -> Result<Self> {
        if config.poll_interval.is_zero() || config.health_deadline.is_zero() {
            return Err(Error::Config("poll interval and health deadline must be greater than zero".to_owned()));
        }
        let (sender, receiver) = crossbeam_channel::unbounded();
        let (snapshot_sender, snapshot) = watch::channel(Arc::new(Snapshot::default()));
        let state = MonitorState::new(manager, config, observer, sender.clone(), snapshot_sender);
        let thread = std::thread::Builder::new()
            .name("ascend-health".to_owned())
            .spawn(move || state.run(&receiver))
            .map_err(|e| Error::Monitor(format!("cannot start the monitor thread: {e}")))?;
        Ok(Self { snapshot, messages: sender, thread: Some(thread) })
    }

    /// A receiver that sees every published snapshot.
    pub fn subscribe(&self) -> watch::Receiver<Arc<Snapshot>> {
        self.snapshot.clone()
    }

    /// The latest snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.borrow().clone()
    }

    /// Asks the monitor to re-check every chip now (for example after SIGHUP).
    pub fn refresh(&self) {
        let _ = self.messages.send(Message::Refresh);
    }

    /// A handle that takes chips out of service by hand (Volcano's `ManuallySeparateNPU`).
    pub fn separations(&self) -> Separations {
        Separations(self.messages.clone())
    }

    /// A handle through which recovery withdraws the chips it resets ([`crate::recovery::RecoveryRunner`]).
    pub fn withdrawals(&self) -> RecoveryWithdrawals {
        RecoveryWithdrawals(self.messages.clone())
    }
}

/// Withdraws chips while recovery resets them: a withdrawn chip is advertised Unhealthy
/// ([`UnhealthyCause::Recovering`]), whatever the driver says meanwhile, until it is no longer in the set.
#[derive(Clone)]
pub struct RecoveryWithdrawals(Sender<Message>);

impl std::fmt::Debug for RecoveryWithdrawals {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RecoveryWithdrawals")
    }
}

impl crate::recovery::Withdrawals for RecoveryWithdrawals {
    fn set(&self, chips: BTreeSet<PhyId>) {
        let _ = self.0.send(Message::Withdraw(chips));
    }
}

/// Takes chips out of service by hand: a separated chip is advertised Unhealthy, whatever the driver says, until
/// it is no longer in the set. Cheap to clone; usable from any thread or task.
#[derive(Clone)]
pub struct Separations(Sender<Message>);

impl std::fmt::Debug for Separations {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Separations")
    }
}

impl Separations {
    /// Replaces the set of separated chips (physical ids).
    pub fn set(&self, chips: BTreeSet<PhyId>) {
        let _ = self.0.send(Message::Separate(chips));
    }
}

impl Drop for HealthMonitor {
    fn drop(&mut self) {
        let _ = self.messages.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            // The monitor thread never waits on the driver, so this join is short.
            let _ = thread.join();
        }
    }
}

/// What worker threads, the event reader and the handle tell the monitor.
enum Message {
    Chips(std::result::Result<Vec<ChipIds>, String>),
    Identity(ChipIds, std::result::Result<Option<(ChipRecord, ChipDetails)>, String>),
    // Boxed: a health report holds 128 fault codes inline.
    Probe(PhyId, Box<ProbeOutcome>),
    Fault(LogicId),
    Separate(BTreeSet<PhyId>),
    Withdraw(BTreeSet<PhyId>),
    /// The subscription thread's stream, or why subscribing failed.
    Events(std::result::Result<FaultEventStream, String>),
    EventsEnded(String),
    Refresh,
    Stop,
}

struct ProbeOutcome {
    health: std::result::Result<HealthReport, String>,
    vnpus: Option<std::result::Result<VnpuInventory, DcmiError>>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Task {
    Enumerate,
    Identify(PhyId),
    Probe(PhyId),
}

struct MonitorState {
    manager: Arc<dyn DeviceManager>,
    config: MonitorConfig,
    observer: Arc<dyn HealthObserver>,
    messages: Sender<Message>,
    snapshot: watch::Sender<Arc<Snapshot>>,
    chips: BTreeMap<PhyId, ChipRecord>,
    details: BTreeMap<PhyId, ChipDetails>,
    unsupported: BTreeSet<PhyId>,
    absent: BTreeSet<PhyId>,
    /// Chips being identified: until each answers (or hangs past the deadline) the first view is not settled.
    identifying: BTreeSet<PhyId>,
    /// The driver's chip list answered at least once.
    listed: bool,
    health: BTreeMap<PhyId, Health>,
    /// What the last health answer of each chip said (faults, level), for the device-info map and Events.
    conditions: BTreeMap<PhyId, ChipCondition>,
    /// Chips an operator took out of service.
    separated: BTreeSet<PhyId>,
    withdrawn: BTreeSet<PhyId>,
    /// The driver calls, at most one per task.
    calls: DriverCalls<Task>,
    reprobe: BTreeSet<PhyId>,
    /// A subscription is being made or read (else the next poll subscribes again).
    events_running: bool,
    /// The fault events, read by this thread beside its messages.
    events: Option<FaultEventStream>,
}

impl MonitorState {
    fn new(
        manager: Arc<dyn DeviceManager>,
        config: MonitorConfig,
        observer: Arc<dyn HealthObserver>,
        messages: Sender<Message>,
        snapshot: watch::Sender<Arc<Snapshot>>,
    ) -> Self {
        let calls = DriverCalls::new("ascend-dcmi-call", DEFAULT_WORKER_CONCURRENCY, config.health_deadline);
        Self {
            manager,
            config,
            observer,
            messages,
            snapshot,
            chips: BTreeMap::new(),
            details: BTreeMap::new(),
            unsupported: BTreeSet::new(),
            absent: BTreeSet::new(),
            identifying: BTreeSet::new(),
            listed: false,
            health: BTreeMap::new(),
            conditions: BTreeMap::new(),
            separated: BTreeSet::new(),
            withdrawn: BTreeSet::new(),
            calls,
            reprobe: BTreeSet::new(),
            events_running: false,
            events: None,
        }
    }

    fn run(mut self, receiver: &Receiver<Message>) {
        let mut next_poll = Instant::now();
        loop {
            let now = Instant::now();
            if now >= next_poll {
                self.start_poll();
                next_poll = now + self.config.poll_interval;
            }
            self.mark_overdue(now);
            self.publish();
            let wake_at = self.next_deadline().map_or(next_poll, |deadline| deadline.min(next_poll));
            let mut next = self.next_message(receiver, wake_at);
            // What already waits is handled before the next snapshot (a poll's answers come in a burst, and one
            // snapshot for the burst is enough), up to a bound so that a flood of events cannot hold it back.
            for handled in 1.. {
                match next {
                    Ok(Message::Stop) | Err(RecvTimeoutError::Disconnected) => return,
                    Ok(Message::Refresh) => next_poll = Instant::now(),
                    Ok(message) => self.handle(message),
                    Err(RecvTimeoutError::Timeout) => break,
                }
                if handled == BURST {
                    break;
                }
                next = self.next_message(receiver, Instant::now());
            }
        }
    }

    /// The next message, or a fault event as [`Message::Fault`] (an ended stream as [`Message::EventsEnded`]),
    /// whichever comes first; waits until `wake_at` at most.
    fn next_message(
        &self,
        receiver: &Receiver<Message>,
        wake_at: Instant,
    ) -> std::result::Result<Message, RecvTimeoutError> {
        let Some(events) = &self.events else { return receiver.recv_deadline(wake_at) };
        let mut select = Select::new();
        let messages = select.recv(receiver);
        let faults = select.recv(events.receiver());
        let ready = match select.select_deadline(wake_at) {
            Ok(ready) => ready,
            Err(_) => return Err(RecvTimeoutError::Timeout),
        };
        if ready.index() == messages {
            return ready.recv(receiver).map_err(|_| RecvTimeoutError::Disconnected);
        }
        debug_assert_eq!(ready.index(), faults);
        Ok(match ready.recv(events.receiver()) {
            Ok(event) => {
                tracing::debug!(logic = %event.logic, code = %event.code, assertion = ?event.assertion, "fault event");
                Message::Fault(event.logic)
            }
            Err(_) => Message::EventsEnded("the fault-event source ended".to_owned()),
        })
    }

    fn start_poll(&mut self) {
        if self.config.fault_events && !self.events_running {
            self.start_event_reader();
        }
        let manager = Arc::clone(&self.manager);
        self.spawn(Task::Enumerate, move || Message::Chips(manager.chips().map_err(|e| e.to_string())));
        // Probe without waiting for the chip list, so a hanging list call cannot stop health checks.
        let present: Vec<PhyId> = self.chips.keys().filter(|phy| !self.absent.contains(phy)).copied().collect();
        for phy in present {
            self.probe(phy);
        }
    }

    fn handle(&mut self, message: Message) {
        match message {
            Message::Chips(listed) => self.on_chips(listed),
            Message::Identity(ids, identified) => self.on_identity(ids, identified),
            Message::Probe(phy, outcome) => {
                self.on_probe(phy, *outcome);
                if self.reprobe.remove(&phy) {
                    self.probe(phy);
                }
            }
            Message::Fault(logic) => {
                let phy = self.chips.values().find(|chip| chip.ids.logic == logic).map(|chip| chip.ids.phy);
                match phy {
                    Some(phy) if self.calls.is_busy(&Task::Probe(phy)) => {
                        self.reprobe.insert(phy);
                    }
                    Some(phy) => self.probe(phy),
                    None => tracing::debug!(%logic, "fault event for a chip that is not advertised"),
                }
            }
            Message::Separate(chips) => {
                if chips != self.separated {
                    tracing::info!(?chips, "manually separated chips changed");
                    self.separated = chips;
                }
            }
            Message::Withdraw(chips) => {
                if chips != self.withdrawn {
                    tracing::info!(?chips, "chips withdrawn for recovery changed");
                    self.withdrawn = chips;
                }
            }
            Message::Events(Ok(stream)) => self.events = Some(stream),
            Message::Events(Err(reason)) | Message::EventsEnded(reason) => {
                tracing::warn!(%reason, "fault events stopped; polling only until the next poll resubscribes");
                self.events = None;
                self.events_running = false;
            }
            Message::Refresh | Message::Stop => {}
        }
    }

    fn on_chips(&mut self, listed: std::result::Result<Vec<ChipIds>, String>) {
        let listed = match listed {
            Ok(listed) => listed,
            Err(reason) => {
                tracing::warn!(%reason, "listing the chips failed");
                let phys: Vec<PhyId> = self.chips.keys().copied().collect();
                for phy in phys {
                    self.set_health(phy, Health::Unhealthy(UnhealthyCause::ListingFailed(reason.clone())));
                }
                return;
            }
        };
        self.listed = true;
        let listed_phys: BTreeSet<PhyId> = listed.iter().map(|ids| ids.phy).collect();
        let known: Vec<PhyId> = self.chips.keys().copied().collect();
        for phy in known.into_iter().filter(|phy| !listed_phys.contains(phy)) {
            self.absent.insert(phy);
            self.set_health(phy, Health::Unhealthy(UnhealthyCause::Absent));
        }
        for ids in listed {
            match self.chips.get(&ids.phy) {
                Some(record) if record.ids == ids => {
                    if self.absent.remove(&ids.phy) {
                        self.probe(ids.phy);
                    }
                }
                _ if self.unsupported.contains(&ids.phy) => {}
                _ => self.identify(ids),
            }
        }
    }

    fn on_identity(
        &mut self,
        ids: ChipIds,
        identified: std::result::Result<Option<(ChipRecord, ChipDetails)>, String>,
    ) {
        self.identifying.remove(&ids.phy);
        match identified {
            Ok(Some((record, details))) => {
                self.details.insert(ids.phy, details);
                self.absent.remove(&ids.phy);
                tracing::info!(chip = %ids, chip_type = %record.chip_type, numa = ?record.numa_node, "found chip");
                self.chips.insert(ids.phy, record);
                self.probe(ids.phy);
            }
            Ok(None) => {
                tracing::warn!(chip = %ids, "chip type not supported; not advertised");
                self.unsupported.insert(ids.phy);
            }
            Err(reason) => tracing::warn!(chip = %ids, %reason, "cannot identify chip; retrying at the next poll"),
        }
    }

    fn on_probe(&mut self, phy: PhyId, outcome: ProbeOutcome) {
        let health = match &outcome.health {
            Ok(report) => {
                let previous = self.conditions.remove(&phy);
                self.conditions.insert(phy, ChipCondition::from_report(report, previous.as_ref(), unix_millis()));
                Health::from_report(report)
            }
            Err(reason) => {
                self.conditions.remove(&phy);
                Health::Unhealthy(UnhealthyCause::HealthCallFailed(reason.clone()))
            }
        };
        if let (Some(vnpus), Some(record)) = (outcome.vnpus, self.chips.get_mut(&phy)) {
            match vnpus {
                Ok(inventory) => {
                    let (vnpus, rejected) = vnpus_with_templates(&inventory, record.chip_type);
                    if vnpus != record.vnpus {
                        for (vnpu, template) in rejected {
                            tracing::warn!(
                                chip = %record.ids, %vnpu, %template,
                                "vNPU has a template this chip type does not allow; not advertised"
                            );
                        }
                        record.vnpus = vnpus;
                    }
                }
                Err(DcmiError::NotSupported(_)) => record.vnpus.clear(),
                Err(error) => tracing::debug!(%phy, %error, "reading vNPUs failed; keeping the last list"),
            }
        }
        self.set_health(phy, health);
    }

    /// Reads what the daemons publish about a chip, once: its identity, its HBM size and the driver's version (the
    /// last two optional: a chip without HBM, a driver that does not say).
    fn identify(&mut self, ids: ChipIds) {
        let manager = Arc::clone(&self.manager);
        self.identifying.insert(ids.phy);
        self.spawn(Task::Identify(ids.phy), move || {
            let identified = manager.identity(ids.logic).map(|identity| {
                identity.chip_type.map(|chip_type| {
                    let record = ChipRecord { ids, chip_type, numa_node: identity.numa_node, vnpus: Vec::new() };
                    let details = ChipDetails {
                        model: identity.info.chip_name.clone(),
                        pcie_address: identity.pcie_address,
                        aicore: identity.info.aicore_count,
                        memory_bytes: manager.hbm_memory(ids.logic).ok().map(|hbm| hbm.total_bytes),
                        driver_version: manager.driver_version().ok(),
                    };
                    (record, details)
                })
            });
            Message::Identity(ids, identified.map_err(|e| e.to_string()))
        });
    }

    fn probe(&mut self, phy: PhyId) {
        let Some(record) = self.chips.get(&phy) else { return };
        let logic = record.ids.logic;
        let read_vnpus =
            self.config.inventory.advertise_vnpus && VnpuTemplate::for_chip_type(record.chip_type).next().is_some();
        let manager = Arc::clone(&self.manager);
        self.spawn(Task::Probe(phy), move || {
            let health = manager.health(logic).map_err(|e| e.to_string());
            let vnpus = read_vnpus.then(|| manager.vnpus(logic));
            Message::Probe(phy, Box::new(ProbeOutcome { health, vnpus }))
        });
    }

    /// Runs `call` on a driver-call worker unless the same task is still running (then its chip waits for it).
    fn spawn(&mut self, task: Task, call: impl FnOnce() -> Message + Send + 'static) {
        let messages = self.messages.clone();
        if let Err(error) = self.calls.start(task, call, move |message| {
            let _ = messages.send(message);
        }) {
            tracing::error!(?task, %error, "cannot start a DCMI call");
        }
    }

    /// Gives up on the calls past the deadline (their workers are replaced) and says so, once per call.
    fn mark_overdue(&mut self, now: Instant) {
        let deadline = self.config.health_deadline;
        for task in self.calls.give_up_overdue(now) {
            match task {
                Task::Probe(phy) => self.set_health(phy, Health::Unhealthy(UnhealthyCause::Hung(deadline))),
                Task::Enumerate => tracing::warn!(?deadline, "listing the chips hangs"),
                Task::Identify(phy) => {
                    // Left out until it answers: the first view settles without it, and the next poll tries again.
                    self.identifying.remove(&phy);
                    tracing::warn!(%phy, ?deadline, "identifying the chip hangs");
                }
            }
        }
    }

    fn next_deadline(&self) -> Option<Instant> {
        self.calls.next_deadline()
    }

    fn set_health(&mut self, phy: PhyId, health: Health) {
        let Some(record) = self.chips.get(&phy) else { return };
        let previous = self.health.get(&phy);
        if previous == Some(&health) {
            return;
        }
        // Only a change between healthy and unhealthy is a transition; a new reason is logged at debug level.
        if previous.map(Health::is_healthy) != Some(health.is_healthy()) {
            match &health {
                Health::Healthy => tracing::info!(chip = %record.ids, "chip healthy"),
                Health::Unhealthy(cause) => tracing::warn!(chip = %record.ids, reason = %cause, "chip unhealthy"),
            }
            self.observer.health_changed(&record.ids, &health);
        } else {
            tracing::debug!(chip = %record.ids, %health, "health reason changed");
        }
        self.health.insert(phy, health);
    }

    fn publish(&self) {
        let chips: Vec<ChipRecord> = self.chips.values().cloned().collect();
        let mut health = self.health.clone();
        for phy in &self.withdrawn {
            if health.contains_key(phy) {
                health.insert(*phy, Health::Unhealthy(UnhealthyCause::Recovering));
            }
        }
        for phy in &self.separated {
            if health.contains_key(phy) {
                health.insert(*phy, Health::Unhealthy(UnhealthyCause::Separated));
            }
        }
        let mut conditions = self.conditions.clone();
        for (phy, condition) in &mut conditions {
            condition.separated = self.separated.contains(phy);
        }
        let settled = self.listed
            && self.identifying.is_empty()
            && self.chips.keys().all(|phy| self.absent.contains(phy) || self.health.contains_key(phy));
        let snapshot = Snapshot::build(&chips, &health, &self.config.inventory)
            .with_conditions(conditions)
            .with_details(self.details.clone())
            .with_settled(settled);
        self.snapshot.send_if_modified(|current| {
            if **current == snapshot {
                false
            } else {
                *current = Arc::new(snapshot);
                true
            }
        });
    }

    /// Subscribes to fault events on a thread of its own (subscribing calls the driver, which may hang), which hands
    /// the stream to this thread and ends.
    fn start_event_reader(&mut self) {
        let manager = Arc::clone(&self.manager);
        let messages = self.messages.clone();
        let poll_interval = self.config.poll_interval;
        let spawned = std::thread::Builder::new().name("ascend-fault-events".to_owned()).spawn(move || {
            let subscribed = manager
                .fault_events(poll_interval)
                .map_err(|error| format!("subscribing to fault events failed: {error}"));
            // A monitor stopped meanwhile drops the stream with the message.
            let _ = messages.send(Message::Events(subscribed));
        });
        match spawned {
            Ok(_) => self.events_running = true,
            Err(error) => tracing::error!(%error, "cannot start the fault-event thread; polling only"),
        }
    }
}

fn unix_millis() -> i64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |since| since.as_millis() as i64)
}

/// vNPUs not advertised: id and the template the driver reported.
type RejectedVnpus = Vec<(VnpuId, String)>;

/// The vNPUs whose template the chip type allows (by driver name or resource suffix), sorted by id, and the
/// `(id, template)` of the others.
fn vnpus_with_templates(
    inventory: &VnpuInventory,
    chip_type: ascend_dcmi::ChipType,
) -> (Vec<(VnpuId, &'static VnpuTemplate)>, RejectedVnpus) {
    let mut vnpus = Vec::new();
    let mut rejected = Vec::new();
    for vnpu in &inventory.vnpus {
        let template =
            VnpuTemplate::by_name(&vnpu.template).or_else(|| VnpuTemplate::by_resource_suffix(&vnpu.template));
        match template {
            Some(template) if template.allows(chip_type) => vnpus.push((vnpu.id, template)),
            _ => rejected.push((vnpu.id, vnpu.template.clone())),
        }
    }
    vnpus.sort_by_key(|(id, _)| *id);
    (vnpus, rejected)
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{ChipType, Vnpu};

    use super::*;

    #[test]
    fn vnpus_with_foreign_templates_are_set_aside() {
        let vnpu = |id, template: &str| Vnpu {
            id: VnpuId(id),
            template: template.to_owned(),
            aicore: 2.0,
            memory_bytes: 0,
            in_use: false,
            aicore_utilization: None,
            activity_memory_total_kb: None,
            activity_memory_used_kb: None,
        };
        let inventory = VnpuInventory {
            vnpus: vec![vnpu(102, "vir04"), vnpu(100, "2c"), vnpu(101, "vir12_3c_32g")],
            ..VnpuInventory::default()
        };
        let (kept, rejected) = vnpus_with_templates(&inventory, ChipType::Ascend310P);
        let kept: Vec<(u32, &str)> = kept.iter().map(|(id, t)| (id.0, t.resource_suffix)).collect();
        assert_eq!(kept, [(100, "2c"), (102, "4c")]);
        assert_eq!(rejected, [(VnpuId(101), "vir12_3c_32g".to_owned())]);
    }

    /// Polls `snapshot` until `done`, at most 5 s.
    fn wait_until(monitor: &HealthMonitor, what: &str, done: impl Fn(&Snapshot) -> bool) -> Arc<Snapshot> {
        let started = Instant::now();
        loop {
            let snapshot = monitor.snapshot();
            if done(&snapshot) {
                return snapshot;
            }
            assert!(started.elapsed() < Duration::from_secs(5), "{what}: not within 5 s; last {snapshot:?}");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    #[test]
    fn the_first_view_settles_once_every_listed_chip_is_identified_and_checked() {
        use ascend_dcmi::{ChipIdentity, ChipInfo};
        let ids = |n: u32| ChipIds { logic: LogicId(n), phy: PhyId(n), locator: None };
        let mut manager = ascend_dcmi::MockDeviceManager::new();
        manager.expect_chips().returning(move || Ok(vec![ids(0), ids(1)]));
        // Chip 1's identity waits until the test releases it. Its own expectation: mockall holds an expectation's
        // lock while its closure runs, so with one expectation for both chips a blocked call for chip 1 that came
        // first held chip 0's back as well (seen once under load).
        let (release, released) = std::sync::mpsc::channel::<()>();
        let released = std::sync::Mutex::new(released);
        let identity = move |logic: LogicId| {
            let info = ChipInfo { chip_name: "910B3".into(), aicore_count: 24, ..ChipInfo::default() };
            Ok(ChipIdentity { numa_node: Some(0), ..a_910b(ids(logic.get()), info) })
        };
        manager.expect_identity().withf(|logic| *logic == LogicId(1)).returning(move |logic| {
            let _ = released.lock().expect("release channel").recv_timeout(Duration::from_secs(5));
            identity(logic)
        });
        manager.expect_identity().withf(|logic| *logic != LogicId(1)).returning(identity);
        manager.expect_hbm_memory().returning(|_| Err(DcmiError::FunctionMissing("dcmi_get_device_hbm_info")));
        manager.expect_driver_version().returning(|| Ok("24.1.rc2".to_owned()));
        manager.expect_health().returning(|_| Ok(HealthReport::healthy()));
        let config = MonitorConfig {
            inventory: InventoryOptions { advertise_vnpus: false, ..InventoryOptions::default() },
            poll_interval: Duration::from_millis(50),
            fault_events: false,
            ..MonitorConfig::default()
        };
        let monitor = HealthMonitor::start(Arc::new(manager), config, Arc::new(crate::NoopObserver)).expect("started");

        let partial = wait_until(&monitor, "chip 0 checked", |snapshot| {
            snapshot.chips().any(|(chip, health)| chip.ids.phy == PhyId(0) && health.is_checked())
        });
        assert!(!partial.is_settled(), "chip 1 is still being identified");
        assert_eq!(partial.chips().count(), 1);

        release.send(()).expect("release chip 1");
        let settled = wait_until(&monitor, "the first view settled", Snapshot::is_settled);
        let chips: Vec<(PhyId, bool)> =
            settled.chips().map(|(chip, health)| (chip.ids.phy, health.is_healthy())).collect();
        assert_eq!(chips, [(PhyId(0), true), (PhyId(1), true)]);
        let details = settled.details(PhyId(1)).expect("chip 1's details");
        assert_eq!((details.model.as_str(), details.aicore), ("910B3", 24));
        assert_eq!((details.memory_bytes, details.driver_version.as_deref()), (None, Some("24.1.rc2")));
    }

    /// An Ascend 910B with `info` and nothing else known.
    fn a_910b(ids: ChipIds, info: ascend_dcmi::ChipInfo) -> ascend_dcmi::ChipIdentity {
        ascend_dcmi::ChipIdentity {
            ids,
            chip_type: Some(ChipType::Ascend910B),
            info,
            product_type: None,
            board: None,
            mainboard_id: None,
            pcie_address: None,
            numa_node: None,
            affinity_cpus: None,
            die_id: None,
            elabel: None,
        }
    }

    /// The threads of this process named `name` (Linux: /proc/self/task, where a name is cut to 15 bytes).
    fn threads_named(name: &str) -> usize {
        let name = &name[..name.len().min(15)];
        let tasks = std::fs::read_dir("/proc/self/task").expect("/proc/self/task");
        tasks
            .filter_map(|task| std::fs::read_to_string(task.ok()?.path().join("comm")).ok())
            .filter(|comm| comm.trim_end() == name)
            .count()
    }

    #[test]
    fn the_monitor_thread_reads_fault_events_itself_and_no_reader_thread_stays() {
        use ascend_dcmi::{Assertion, ChipInfo, EventSource, FaultCode, FaultEvent, FaultLevel};
        use std::sync::atomic::{AtomicBool, Ordering};
        let ids = ChipIds { logic: LogicId(0), phy: PhyId(0), locator: None };
        let mut manager = ascend_dcmi::MockDeviceManager::new();
        manager.expect_chips().returning(move || Ok(vec![ids]));
        manager.expect_identity().returning(move |_| Ok(a_910b(ids, ChipInfo::default())));
        manager.expect_hbm_memory().returning(|_| Err(DcmiError::FunctionMissing("dcmi_get_device_hbm_info")));
        manager.expect_driver_version().returning(|| Ok("24.1.rc2".to_owned()));
        let faulty = Arc::new(AtomicBool::new(false));
        let reported = Arc::clone(&faulty);
        manager.expect_health().returning(move |_| {
            let mut report = HealthReport::healthy();
            if reported.load(Ordering::SeqCst) {
                report.faults.push(FaultCode(0x80E0_1801));
                report.level = FaultLevel::RestartRequest;
            }
            Ok(report)
        });
        let (events, stream) = crossbeam_channel::unbounded();
        let stream = std::sync::Mutex::new(Some(stream));
        manager.expect_fault_events().returning(move |_| {
            let receiver = stream.lock().expect("stream").take().expect("one subscription");
            Ok(FaultEventStream::new(receiver, ()))
        });
        // A poll far longer than the test: only the event can explain a fast change.
        let config = MonitorConfig {
            inventory: InventoryOptions { advertise_vnpus: false, ..InventoryOptions::default() },
            poll_interval: Duration::from_secs(60),
            ..MonitorConfig::default()
        };
        let monitor = HealthMonitor::start(Arc::new(manager), config, Arc::new(crate::NoopObserver)).expect("started");
        wait_until(&monitor, "chip 0 healthy", |snapshot| snapshot.chips().any(|(_, health)| health.is_healthy()));
        // The subscribing thread hands the stream over and ends: nothing but the monitor waits on it.
        let started = Instant::now();
        while threads_named("ascend-fault-events") > 0 {
            assert!(started.elapsed() < Duration::from_secs(5), "a fault-event thread stays");
            std::thread::sleep(Duration::from_millis(10));
        }

        faulty.store(true, Ordering::SeqCst);
        let event = FaultEvent {
            logic: LogicId(0),
            code: FaultCode(0x80E0_1801),
            severity: None,
            assertion: Assertion::Occur,
            name: String::new(),
            seen_at: std::time::SystemTime::now(),
            source: EventSource::Polling,
        };
        events.send(event).expect("the monitor holds the stream");
        wait_until(&monitor, "chip 0 unhealthy after the event", |snapshot| {
            snapshot.chips().any(|(_, health)| !health.is_healthy())
        });
    }

    #[test]
    fn zero_intervals_are_rejected() {
        let config = MonitorConfig { poll_interval: Duration::ZERO, ..MonitorConfig::default() };
        let manager: Arc<dyn DeviceManager> = Arc::new(ascend_dcmi::MockDeviceManager::new());
        let started = HealthMonitor::start(manager, config, Arc::new(crate::NoopObserver));
        assert!(matches!(started, Err(Error::Config(_))));
    }
}
