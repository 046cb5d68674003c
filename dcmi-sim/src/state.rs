//! Runtime state of one simulator instance: chips, their dynamic state, clocks, and the refresh
//! step that applies the timeline and the overlay file.
//!
//! The hot path ([`Sim::chip_call`]) takes no long locks and allocates nothing: an index lookup, an
//! optional injection check, and a brief per-chip mutex for the presence check.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};

use crate::capabilities;
use crate::chip_process::Process;
use crate::chip_type::{Api, ChipType};
use crate::ecc::Ecc;
use crate::error::Error;
use crate::events::{EventHub, ASSERTION_CLEARED, ASSERTION_RAISED};
use crate::function::Function;
use crate::generator::{self, Signal};
use crate::injection::Injector;
use crate::overlay::{Overlay, OverlayWatcher, OVERLAY_POLL};
use crate::state_change::StateChange;
use crate::timeline::Timeline;
use crate::topology::{Card, Chip, Topology};
use crate::validation::vnpu_memory_mb;
use crate::vnpu::VnpuPool;

/// DCMI return codes used by the simulator.
pub mod code {
    /// Invalid parameter (also: null pointer).
    pub const INVALID_PARAMETER: i32 = -8001;
    /// Internal error (also: not initialised, bad topology).
    pub const INTERNAL_ERROR: i32 = -8005;
    /// Invalid device id.
    pub const INVALID_DEVICE_ID: i32 = -8007;
    /// Not ready yet (chip dropped or resetting).
    pub const NOT_READY: i32 = -8012;
    /// Not supported.
    pub const NOT_SUPPORTED: i32 = -8255;
}

/// Boot status a chip reports once booted (the driver's "finished" value, not the enum's 3).
pub const BOOT_FINISHED: i32 = 16;

/// Functions that still answer while a chip is dropped or resetting: identity and reset control.
fn answers_while_absent(function: Function) -> bool {
    use Function::*;
    matches!(
        function,
        GetDeviceLogicId
            | GetDevicePhyidFromLogicid
            | GetDeviceLogicidFromPhyid
            | GetCardIdDeviceIdFromLogicid
            | GetCardIdDeviceIdFromPhyid
            | GetDeviceNumInCard
            | GetDeviceIdInCard
            | SetDeviceReset
            | PreResetSoc
            | RescanSoc
            | GetDeviceBootStatus
            | SubscribeFaultEvent
            | GetDeviceOutbandChannelState
            | V2GetChipPhyIdByDevId
            | V2GetDevIdByChipPhyId
            | V2ResetDevice
            | V2PreResetDevice
            | V2RescanDevice
            | V2GetDeviceBootStatus
            | V2SubscribeFaultEvent
            | V2GetDeviceOutbandChannelState
    )
}

/// How an export names its chip: V1 calls take (card, device), V2 calls one `dev_id`, the logic id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChipAddress {
    /// `(card_id, device_id)` of a V1 call.
    Pair {
        /// Card id.
        card_id: i32,
        /// Chip index on the card.
        device_id: i32,
    },
    /// `dev_id` of a V2 call.
    Logic(i32),
}

/// One export's call: the function (for injection and support) and the chip it names. V1 and V2
/// exports that do the same thing share one body that takes a `ChipCall`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipCall {
    /// The exported function.
    pub function: Function,
    /// The chip.
    pub address: ChipAddress,
}

impl ChipCall {
    /// A V1 call addressed to (card, device).
    pub fn v1(function: Function, card_id: i32, device_id: i32) -> ChipCall {
        ChipCall { function, address: ChipAddress::Pair { card_id, device_id } }
    }

    /// A V2 call addressed to a logic id.
    pub fn v2(function: Function, dev_id: i32) -> ChipCall {
        ChipCall { function, address: ChipAddress::Logic(dev_id) }
    }
}

/// What changes while the simulator runs.
#[derive(Debug, Clone)]
pub struct ChipDynamic {
    /// Health value before faults are taken into account.
    pub health: u32,
    /// Raised faults: (code, severity).
    pub faults: Vec<(u32, u8)>,
    /// Off the bus.
    pub dropped: bool,
    /// When a hot reset started.
    pub reset_started: Option<Instant>,
    /// Temperature override.
    pub temperature: Option<Signal>,
    /// Power override.
    pub power: Option<Signal>,
    /// AI-core utilization override.
    pub aicore_utilization: Option<Signal>,
    /// ECC counters.
    pub ecc: Ecc,
    /// Processes.
    pub processes: Vec<Process>,
}

impl ChipDynamic {
    /// Reported health: the larger of the set value and the worst raised fault's severity.
    pub fn effective_health(&self) -> u32 {
        let worst = self.faults.iter().map(|(_, severity)| u32::from(*severity)).max().unwrap_or(0);
        self.health.max(worst)
    }
}

/// A chip at run time.
pub struct ChipState {
    /// Index into `topology.cards`.
    pub card_index: usize,
    /// Index into that card's chips.
    pub chip_index: usize,
    /// Logic id.
    pub logic_id: u32,
    /// Family.
    pub chip_type: ChipType,
    support: u128,
    /// Dynamic state (hold briefly).
    pub dynamic: Mutex<ChipDynamic>,
}

impl ChipState {
    /// True when the chip answers `function` (family default adjusted by the topology).
    pub fn supports(&self, function: Function) -> bool {
        self.support & (1u128 << function.index()) != 0
    }
}

/// Host-wide state other than the chips: die policy, super-pod status, ping-mesh tasks.
#[derive(Debug, Default)]
pub struct HostState {
    /// `dcmi_get_multi_die_policy`.
    pub multi_die_policy: u32,
    /// Super-pod node status per (chip index, sdid).
    pub spod_status: std::collections::HashMap<(usize, u32), u32>,
    /// HCCS ping-mesh tasks per (chip index, task id).
    pub ping_tasks: std::collections::HashMap<(usize, u32), PingTask>,
}

/// A started HCCS ping-mesh task.
#[derive(Debug, Clone)]
pub struct PingTask {
    /// Destination addresses.
    pub destinations: Vec<String>,
    /// Packets per destination per round.
    pub packets: u32,
    /// When it started.
    pub started: Instant,
    /// Stopped by `dcmi_stop_hccsping_mesh`.
    pub stopped: bool,
}

/// One simulator instance (created by `dcmi_init`).
pub struct Sim {
    /// The topology it runs.
    pub topology: Topology,
    /// Where the topology came from.
    pub origin: PathBuf,
    started: Instant,
    /// Chips in enumeration order.
    pub chips: Vec<ChipState>,
    card_ids: Vec<i32>,
    card_chips: Vec<[Option<usize>; 4]>,
    by_logic: Vec<Option<usize>>,
    by_phy: Vec<Option<usize>>,
    injector: Injector,
    overlay_injector: RwLock<(Arc<Injector>, Instant)>,
    overlay_has_rules: AtomicBool,
    timeline: Timeline,
    overlay: Mutex<Option<OverlayWatcher>>,
    next_overlay_poll_ms: AtomicU64,
    resets_pending: AtomicUsize,
    refresh_lock: Mutex<()>,
    /// Fault subscriptions and queue.
    pub events: EventHub,
    /// vNPUs per chip index.
    pub vnpus: Mutex<Vec<VnpuPool>>,
    /// Host-wide state other than the chips.
    pub host: Mutex<HostState>,
    /// The last overlay problem (the previous state stays in force).
    pub overlay_error: Mutex<Option<Error>>,
    /// The API family the simulated driver serves (validation keeps one family per topology).
    pub api: Api,
}

impl Sim {
    /// Builds the runtime state and starts the background thread (timeline, overlay, event delivery).
    ///
    /// # Errors
    /// [`Error`] if a preset vNPU cannot be created (validation normally catches this first).
    pub fn start(topology: Topology, origin: PathBuf, overlay: Option<PathBuf>) -> Result<Arc<Sim>, Error> {
        let sim = Arc::new(Sim::new(topology, origin, overlay)?);
        let weak = Arc::downgrade(&sim);
        // The thread only holds a weak reference: it ends once the instance is replaced or dropped.
        let spawned = std::thread::Builder::new().name("dcmi-sim".into()).spawn(move || background(weak));
        if let Err(error) = spawned {
            return Err(Error::config(&sim.origin, "(runtime)", format!("cannot start the simulator thread: {error}")));
        }
        Ok(sim)
    }

    fn new(topology: Topology, origin: PathBuf, overlay: Option<PathBuf>) -> Result<Sim, Error> {
        let mut chips = Vec::new();
        let mut pools = Vec::new();
        let mut card_ids = Vec::new();
        let mut card_chips = Vec::new();
        let mut by_logic = vec![None; 256];
        let mut by_phy = vec![None; 256];
        for (card_index, card) in topology.cards.iter().enumerate() {
            card_ids.push(card.card_id);
            let mut slots = [None; 4];
            for (chip_index, chip) in card.chips.iter().enumerate() {
                let index = chips.len();
                if let Some(slot) = usize::try_from(chip.device_id).ok().and_then(|device| slots.get_mut(device)) {
                    *slot = Some(index);
                }
                if let Some(slot) = by_logic.get_mut(chip.logic_id as usize) {
                    *slot = Some(index);
                }
                if let Some(slot) = by_phy.get_mut(chip.phy_id as usize) {
                    *slot = Some(index);
                }
                let mut pool = VnpuPool::new(chip.chip_type, chip.aicore_count, vnpu_memory_mb(chip));
                for (preset_index, preset) in chip.vnpus.iter().enumerate() {
                    let taken = |id: u32| {
                        pools.iter().chain(std::iter::once(&pool)).any(|other: &VnpuPool| other.get(id).is_some())
                    };
                    let taken: Vec<u32> = (100..1124).filter(|id| taken(*id)).collect();
                    pool.create(&preset.template, preset.vdev_id, None, |id| taken.contains(&id)).map_err(|error| {
                        Error::config(
                            &origin,
                            format!("card[{card_index}].chip[{chip_index}].vnpu[{preset_index}]"),
                            error.to_string(),
                        )
                    })?;
                }
                pools.push(pool);
                chips.push(ChipState {
                    card_index,
                    chip_index,
                    logic_id: chip.logic_id,
                    chip_type: chip.chip_type,
                    support: support_bits(chip),
                    dynamic: Mutex::new(ChipDynamic {
                        health: chip.health,
                        faults: chip.faults.iter().map(|fault| (fault.code(), fault.severity())).collect(),
                        dropped: false,
                        reset_started: None,
                        temperature: None,
                        power: None,
                        aicore_utilization: None,
                        ecc: chip.ecc,
                        processes: chip.processes.clone(),
                    }),
                });
            }
            card_chips.push(slots);
        }
        let simulation = &topology.simulation;
        let injector = Injector::new(&topology.injections, simulation.seed, Duration::from_millis(simulation.hang_ms));
        let host = HostState { multi_die_policy: simulation.multi_die_policy, ..HostState::default() };
        Ok(Sim {
            timeline: Timeline::new(&topology.timeline),
            injector,
            overlay_injector: RwLock::new((Arc::new(Injector::empty()), Instant::now())),
            overlay_has_rules: AtomicBool::new(false),
            overlay: Mutex::new(overlay.map(OverlayWatcher::new)),
            next_overlay_poll_ms: AtomicU64::new(0),
            resets_pending: AtomicUsize::new(0),
            refresh_lock: Mutex::new(()),
            events: EventHub::default(),
            vnpus: Mutex::new(pools),
            host: Mutex::new(host),
            overlay_error: Mutex::new(None),
            api: topology.api(),
            started: Instant::now(),
            chips,
            card_ids,
            card_chips,
            by_logic,
            by_phy,
            topology,
            origin,
        })
    }

    /// Milliseconds since `dcmi_init`.
    pub fn elapsed_ms(&self) -> u64 {
        self.started.elapsed().as_millis() as u64
    }

    /// The current telemetry tick.
    pub fn tick(&self) -> u64 {
        generator::tick_at(generator::unix_now_ms(), self.topology.simulation.sample_period_ms)
    }

    /// Card ids in enumeration order.
    pub fn card_ids(&self) -> &[i32] {
        &self.card_ids
    }

    /// Index of card `card_id`.
    pub fn card_position(&self, card_id: i32) -> Option<usize> {
        self.card_ids.iter().position(|id| *id == card_id)
    }

    /// The card with `card_id`.
    pub fn card(&self, card_id: i32) -> Option<&Card> {
        self.card_position(card_id).map(|position| &self.topology.cards[position])
    }

    /// Chip index at (card, device).
    pub fn chip_index(&self, card_id: i32, device_id: i32) -> Option<usize> {
        let slots = self.card_chips.get(self.card_position(card_id)?)?;
        *slots.get(usize::try_from(device_id).ok()?)?
    }

    /// Chip index of a logic id.
    pub fn chip_by_logic(&self, logic_id: u32) -> Option<usize> {
        *self.by_logic.get(logic_id as usize)?
    }

    /// Chip index of a physical id.
    pub fn chip_by_phy(&self, phy_id: u32) -> Option<usize> {
        *self.by_phy.get(phy_id as usize)?
    }

    /// The configuration of chip `index`.
    pub fn config(&self, index: usize) -> (&Card, &Chip) {
        let state = &self.chips[index];
        let card = &self.topology.cards[state.card_index];
        (card, &card.chips[state.chip_index])
    }

    /// Entry of a call not addressed to a chip: refresh, injection.
    ///
    /// # Errors
    /// The injected return code.
    pub fn global_call(&self, function: Function) -> Result<(), i32> {
        self.before_call(function, None)
    }

    /// Entry of a call addressed to (card, device): lookup, refresh, injection, support, presence.
    ///
    /// # Errors
    /// As [`Sim::resolve`].
    pub fn chip_call(&self, function: Function, card_id: i32, device_id: i32) -> Result<usize, i32> {
        self.resolve(ChipCall::v1(function, card_id, device_id))
    }

    /// Entry of a call addressed to a chip by either family: family check, lookup, refresh,
    /// injection, support, presence.
    ///
    /// # Errors
    /// The other family's code ([`Sim::check_api`]), -8007 unknown chip, an injected code, -8255
    /// unsupported, -8012 dropped or resetting.
    pub fn resolve(&self, call: ChipCall) -> Result<usize, i32> {
        self.check_api(call.function)?;
        let index = match call.address {
            ChipAddress::Pair { card_id, device_id } => self.chip_index(card_id, device_id),
            ChipAddress::Logic(dev_id) => u32::try_from(dev_id).ok().and_then(|logic_id| self.chip_by_logic(logic_id)),
        };
        self.indexed_call(call.function, index.ok_or(code::INVALID_DEVICE_ID)?)
    }

    /// A driver serves one API family. On an Ascend950 (V2) host, V1 calls fail as they do after
    /// a failed `dcmi_init` (-8005); on an older host the V2 calls answer -8255 (drivers before
    /// Ascend950 do not export them at all, which one library cannot model per topology).
    ///
    /// # Errors
    /// -8005 for a V1 call on a V2 host, -8255 for a V2 call on a V1 host.
    pub fn check_api(&self, function: Function) -> Result<(), i32> {
        match (function.api(), self.api) {
            (wanted, served) if wanted == served => Ok(()),
            (Api::V1, _) => Err(code::INTERNAL_ERROR),
            (Api::V2, _) => Err(code::NOT_SUPPORTED),
        }
    }

    /// As [`Sim::chip_call`] for a chip already found by index.
    ///
    /// # Errors
    /// An injected code, -8255 unsupported, -8012 dropped or resetting.
    pub fn indexed_call(&self, function: Function, index: usize) -> Result<usize, i32> {
        let chip = &self.chips[index];
        self.before_call(function, Some(chip.logic_id))?;
        if !chip.supports(function) {
            return Err(code::NOT_SUPPORTED);
        }
        if !answers_while_absent(function) && !self.is_present(index) {
            return Err(code::NOT_READY);
        }
        Ok(index)
    }

    fn before_call(&self, function: Function, logic_id: Option<u32>) -> Result<(), i32> {
        self.check_api(function)?;
        self.maybe_refresh();
        let mut outcome = if self.injector.is_empty() {
            crate::injection::Outcome::default()
        } else {
            self.injector.check(function, logic_id, self.elapsed_ms())
        };
        if self.overlay_has_rules.load(Ordering::Acquire) {
            let (injector, since) = {
                let guard = self.overlay_injector.read();
                (Arc::clone(&guard.0), guard.1)
            };
            let more = injector.check(function, logic_id, since.elapsed().as_millis() as u64);
            outcome.delay += more.delay;
            outcome.code = outcome.code.or(more.code);
        }
        if !outcome.delay.is_zero() {
            std::thread::sleep(outcome.delay);
        }
        outcome.code.map_or(Ok(()), Err)
    }

    /// True when chip `index` is on the bus and not resetting (completes a finished reset).
    pub fn is_present(&self, index: usize) -> bool {
        let mut dynamic = self.chips[index].dynamic.lock();
        if let Some(started) = dynamic.reset_started {
            if started.elapsed() < self.reset_duration() {
                return false;
            }
            self.finish_reset(index, &mut dynamic);
        }
        !dynamic.dropped
    }

    fn reset_duration(&self) -> Duration {
        Duration::from_millis(self.topology.simulation.reset_duration_ms)
    }

    /// `dcmi_get_device_boot_status` of chip `index`: 0 while dropped, 1 then 2 during a reset, 16
    /// once booted.
    pub fn boot_status(&self, index: usize) -> i32 {
        let mut dynamic = self.chips[index].dynamic.lock();
        if let Some(started) = dynamic.reset_started {
            let elapsed = started.elapsed();
            let duration = self.reset_duration();
            if elapsed < duration / 2 {
                return 1;
            }
            if elapsed < duration {
                return 2;
            }
            self.finish_reset(index, &mut dynamic);
        }
        if dynamic.dropped {
            0
        } else {
            BOOT_FINISHED
        }
    }

    /// A reset brings a dropped chip back and clears its faults (cleared events) and health.
    fn finish_reset(&self, index: usize, dynamic: &mut ChipDynamic) {
        dynamic.reset_started = None;
        dynamic.dropped = false;
        dynamic.health = 0;
        let logic_id = self.chips[index].logic_id;
        for (code, severity) in std::mem::take(&mut dynamic.faults) {
            self.events.publish(logic_id, code, severity, ASSERTION_CLEARED);
        }
        self.resets_pending.fetch_sub(1, Ordering::AcqRel);
    }

    /// Applies `change` to chip `logic_id` (unknown ids are ignored: validation rejects them).
    pub fn apply(&self, logic_id: u32, change: StateChange) {
        let Some(index) = self.chip_by_logic(logic_id) else { return };
        let mut dynamic = self.chips[index].dynamic.lock();
        match change {
            StateChange::RaiseFault { code, severity } => {
                if !dynamic.faults.iter().any(|(raised, _)| *raised == code) {
                    dynamic.faults.push((code, severity));
                    self.events.publish(logic_id, code, severity, ASSERTION_RAISED);
                }
            }
            StateChange::ClearFault { code } => {
                if let Some(position) = dynamic.faults.iter().position(|(raised, _)| *raised == code) {
                    let (_, severity) = dynamic.faults.remove(position);
                    self.events.publish(logic_id, code, severity, ASSERTION_CLEARED);
                }
            }
            StateChange::SetFaults(wanted) => {
                let is_wanted = |code: u32| wanted.iter().any(|(wanted_code, _)| *wanted_code == code);
                for (code, severity) in dynamic.faults.iter().filter(|(code, _)| !is_wanted(*code)) {
                    self.events.publish(logic_id, *code, *severity, ASSERTION_CLEARED);
                }
                dynamic.faults.retain(|(code, _)| is_wanted(*code));
                for (code, severity) in wanted {
                    if !dynamic.faults.iter().any(|(raised, _)| *raised == code) {
                        dynamic.faults.push((code, severity));
                        self.events.publish(logic_id, code, severity, ASSERTION_RAISED);
                    }
                }
            }
            StateChange::SetHealth(health) => dynamic.health = health,
            StateChange::SetDropped(dropped) => dynamic.dropped = dropped,
            StateChange::Reset => self.start_reset_locked(&mut dynamic),
            StateChange::SetTemperature(signal) => dynamic.temperature = signal,
            StateChange::SetPower(signal) => dynamic.power = signal,
            StateChange::SetAicoreUtilization(signal) => dynamic.aicore_utilization = signal,
            StateChange::SetEcc(ecc) => dynamic.ecc = ecc,
            StateChange::SetProcesses(processes) => dynamic.processes = processes,
        }
    }

    /// Starts a hot reset of chip `index`.
    pub fn start_reset(&self, index: usize) {
        let mut dynamic = self.chips[index].dynamic.lock();
        self.start_reset_locked(&mut dynamic);
    }

    fn start_reset_locked(&self, dynamic: &mut ChipDynamic) {
        if dynamic.reset_started.is_none() {
            self.resets_pending.fetch_add(1, Ordering::AcqRel);
        }
        dynamic.reset_started = Some(Instant::now());
    }

    fn maybe_refresh(&self) {
        let elapsed = self.elapsed_ms();
        if elapsed >= self.timeline.next_due_ms() || elapsed >= self.next_overlay_poll_ms.load(Ordering::Acquire) {
            self.refresh();
        }
    }

    /// Applies due timeline entries, re-reads a changed overlay and completes finished resets.
    pub fn refresh(&self) {
        let _guard = self.refresh_lock.lock();
        let elapsed = self.elapsed_ms();
        for (logic_id, change) in self.timeline.take_due(elapsed) {
            self.apply(logic_id, change);
        }
        if elapsed >= self.next_overlay_poll_ms.load(Ordering::Acquire) {
            self.next_overlay_poll_ms.store(elapsed + OVERLAY_POLL.as_millis() as u64, Ordering::Release);
            self.poll_overlay();
        }
        if self.resets_pending.load(Ordering::Acquire) > 0 {
            for index in 0..self.chips.len() {
                let _ = self.is_present(index);
            }
        }
    }

    fn poll_overlay(&self) {
        let mut watcher = self.overlay.lock();
        let Some(watcher) = watcher.as_mut() else {
            self.next_overlay_poll_ms.store(u64::MAX, Ordering::Release);
            return;
        };
        match watcher.poll() {
            Ok(None) => {}
            Ok(Some(overlay)) => match self.check_overlay_ids(&overlay, watcher.path()) {
                Ok(()) => {
                    *self.overlay_error.lock() = None;
                    self.apply_overlay(&overlay, watcher);
                }
                Err(error) => {
                    eprintln!("{error} (overlay ignored, previous state kept)");
                    *self.overlay_error.lock() = Some(error);
                }
            },
            Err(error) => {
                eprintln!("{error} (overlay ignored, previous state kept)");
                *self.overlay_error.lock() = Some(error);
            }
        }
    }

    /// Every logic id the overlay names must exist in the topology.
    fn check_overlay_ids(&self, overlay: &Overlay, path: &std::path::Path) -> Result<(), Error> {
        let unknown = |logic_id: u32| self.chip_by_logic(logic_id).is_none();
        if let Some(index) = overlay.chips.iter().position(|chip| unknown(chip.logic_id)) {
            let problem = format!("no chip has logic id {}", overlay.chips[index].logic_id);
            return Err(Error::config(path, format!("chip[{index}].logic_id"), problem));
        }
        if let Some(index) = overlay.injections.iter().position(|rule| rule.logic_id.is_some_and(unknown)) {
            let problem = format!("no chip has logic id {}", overlay.injections[index].logic_id.unwrap_or_default());
            return Err(Error::config(path, format!("inject[{index}].logic_id"), problem));
        }
        Ok(())
    }

    fn apply_overlay(&self, overlay: &Overlay, watcher: &mut OverlayWatcher) {
        for chip in &overlay.chips {
            for change in chip.changes() {
                self.apply(chip.logic_id, change);
            }
            if watcher.reset_requested(chip) {
                self.apply(chip.logic_id, StateChange::Reset);
            }
        }
        let simulation = &self.topology.simulation;
        let injector = Injector::new(&overlay.injections, simulation.seed, Duration::from_millis(simulation.hang_ms));
        self.overlay_has_rules.store(!injector.is_empty(), Ordering::Release);
        *self.overlay_injector.write() = (Arc::new(injector), Instant::now());
    }
}

// One bit per exported function.
const _: () = assert!(Function::COUNT <= 128);

fn support_bits(chip: &Chip) -> u128 {
    let mut bits = 0u128;
    for function in Function::ALL {
        let name = function.name();
        let default = capabilities::supports(chip.chip_type, *function);
        let supported = (default || chip.supported.iter().any(|wanted| wanted == name))
            && !chip.unsupported.iter().any(|unwanted| unwanted == name);
        if supported {
            bits |= 1u128 << function.index();
        }
    }
    bits
}

/// The simulator thread: every 10 ms, refresh state and deliver queued events.
fn background(sim: Weak<Sim>) {
    loop {
        std::thread::sleep(Duration::from_millis(10));
        let Some(sim) = sim.upgrade() else { return };
        sim.refresh();
        sim.events.deliver();
    }
}
