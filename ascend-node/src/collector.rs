//! Reads every chip through a [`DeviceManager`] into a [`HostReport`], each chip on a driver-call worker with a
//! deadline.
//!
//! A DCMI call can block for seconds, or forever, on a dropped card, and cannot be cancelled. So every chip is read by
//! ascend-dcmi's [`DriverCalls`] on a worker that fills in its report field by field; when the deadline passes the
//! fields read so far are kept and the chip is marked [`ChipStatus::Timeout`]. A read that is still blocked when the
//! next refresh comes (in `watch`) is not joined by a second one: the chip is reported as still not answering, so a
//! hung chip costs one thread, not one per refresh.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use ascend_dcmi::deadline::{DriverCalls, Started};
use ascend_dcmi::{
    ChipIdentity, ChipIds, DeviceManager, Error as DcmiError, FaultCode, FaultLevel, FaultPolicy, FrequencyKind,
    LogicId, Power, UtilizationKind,
};

use crate::host_report::{
    ChipDetails, ChipIdsReport, ChipReport, ChipStatus, FaultReport, FieldError, HealthDetails, HostReport, MemoryKind,
    MemoryReport, PowerReport, PowerScope, ProcessReport, SCHEMA_VERSION,
};
use crate::installed_software::InstalledSoftware;

/// The environment variable an application uses to choose and renumber the chips it sees.
pub const RT_VISIBLE_DEVICES_ENV: &str = "ASCEND_RT_VISIBLE_DEVICES";

/// The fault policy's level for a code, `None` when the policy does not list it. A chip's unlisted codes take the
/// chip's overall level (which the driver handle graded).
pub type FaultGrader = Arc<dyn Fn(FaultCode) -> Option<FaultLevel> + Send + Sync>;

/// Grades with a fault policy's lists (the vendor's `faultCode.json` format).
pub fn policy_grader(policy: FaultPolicy) -> FaultGrader {
    Arc::new(move |code| policy.listed_level(code))
}

/// Where process names come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProcessNames {
    /// Not looked up (the simulator's processes do not exist on this host).
    None,
    /// `<root>/proc/<pid>/comm`.
    Proc {
        /// The host root, `/` normally.
        root: PathBuf,
    },
}

impl ProcessNames {
    fn lookup(&self, pid: i32) -> Option<String> {
        match self {
            ProcessNames::None => None,
            ProcessNames::Proc { root } => {
                let path = root.join("proc").join(pid.to_string()).join("comm");
                let name = std::fs::read_to_string(path).ok()?;
                let name = name.trim();
                (!name.is_empty()).then(|| name.to_owned())
            }
        }
    }
}

/// How to collect.
#[derive(Clone)]
pub struct CollectOptions {
    /// How long every chip may take in total; enumeration gets the same deadline.
    pub deadline: Duration,
    /// Whether to read the `info -v` details too.
    pub verbose: bool,
    /// The logic ids of `ASCEND_RT_VISIBLE_DEVICES`, in order, when it is set.
    pub visible_devices: Option<Vec<u32>>,
    /// Where process names come from.
    pub process_names: ProcessNames,
    /// The firmware version to report (read from the host's files by the caller).
    pub firmware_version: Option<String>,
    /// The installed driver, firmware and CANN packages to report (read from the host's files by the caller).
    pub software: Option<InstalledSoftware>,
    /// Grades each fault code.
    pub grader: FaultGrader,
    /// The version of the tool writing the report, [`HostReport::tool_version`] (default: this crate's).
    pub tool_version: String,
}

impl std::fmt::Debug for CollectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CollectOptions")
            .field("deadline", &self.deadline)
            .field("verbose", &self.verbose)
            .field("visible_devices", &self.visible_devices)
            .field("process_names", &self.process_names)
            .field("firmware_version", &self.firmware_version)
            .field("software", &self.software.is_some())
            .field("tool_version", &self.tool_version)
            .finish_non_exhaustive()
    }
}

impl Default for CollectOptions {
    /// Five seconds, no details, no visible-device filter, no process names, the built-in fault policy, this crate's
    /// version.
    fn default() -> Self {
        Self {
            deadline: Duration::from_secs(5),
            verbose: false,
            visible_devices: None,
            process_names: ProcessNames::None,
            firmware_version: None,
            software: None,
            grader: policy_grader(FaultPolicy::default()),
            tool_version: env!("CARGO_PKG_VERSION").to_owned(),
        }
    }
}

/// Parses `ASCEND_RT_VISIBLE_DEVICES`: a comma list of logic ids. Entries that are not numbers are skipped, as the
/// runtime skips them.
pub fn parse_visible_devices(value: &str) -> Vec<u32> {
    value.split(',').filter_map(|entry| entry.trim().parse().ok()).collect()
}

/// Why no chip could be reported at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CollectError {
    /// Enumerating the chips failed.
    #[error("cannot list the NPUs: {0}")]
    Enumerate(String),
    /// Enumerating the chips did not finish in time.
    #[error("the driver did not list the NPUs within {0:?}; it may be hung (see /var/log/ascend)")]
    EnumerateTimeout(Duration),
    /// A worker thread could not be started.
    #[error("cannot start a worker thread: {0}")]
    Thread(String),
}

struct Progress {
    report: ChipReport,
    reading: &'static str,
}

type Shared = Arc<Mutex<Progress>>;

fn lock(shared: &Shared) -> std::sync::MutexGuard<'_, Progress> {
    shared.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What a driver call of the collector reads: the chip list, or one chip by logic id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Read {
    Enumeration,
    Chip(u32),
}

/// Collects [`HostReport`]s; keep one for the life of a `watch` so hung chips are remembered.
pub struct Collector {
    manager: Arc<dyn DeviceManager>,
    options: CollectOptions,
    calls: DriverCalls<Read>,
    /// The report each chip's latest read fills in, kept to show how far a read that still hangs got.
    progress: Mutex<HashMap<u32, Shared>>,
}

impl std::fmt::Debug for Collector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Collector").field("options", &self.options).finish_non_exhaustive()
    }
}

struct Enumeration {
    chips: Result<Vec<ChipIds>, DcmiError>,
    driver_version: Result<String, DcmiError>,
}

impl Collector {
    /// A collector over `manager`.
    pub fn new(manager: Arc<dyn DeviceManager>, options: CollectOptions) -> Self {
        let calls = DriverCalls::new("smi-read", ascend_dcmi::DEFAULT_WORKER_CONCURRENCY, options.deadline);
        Self { manager, options, calls, progress: Mutex::new(HashMap::new()) }
    }

    /// The options in use.
    pub fn options(&self) -> &CollectOptions {
        &self.options
    }

    /// Reads every chip.
    ///
    /// # Errors
    /// [`CollectError`] when the chips cannot be listed (a driver error or hang) or no thread can be started. Errors
    /// of single chips are not errors here: they are in the chip's report.
    pub fn collect(&self) -> Result<HostReport, CollectError> {
        let started = Instant::now();
        let enumeration = self.enumerate()?;
        let chips = enumeration.chips.map_err(|error| CollectError::Enumerate(error.to_string()))?;
        let mut errors = Vec::new();
        let driver_version = match enumeration.driver_version {
            Ok(version) => Some(version),
            Err(error) => {
                errors.push(FieldError { field: "driver_version".into(), message: error.to_string() });
                None
            }
        };
        let remaining = self.options.deadline.saturating_sub(started.elapsed());
        let chips = self.read_chips(&chips, remaining)?;
        Ok(HostReport {
            schema_version: SCHEMA_VERSION,
            tool_version: self.options.tool_version.clone(),
            driver_version,
            firmware_version: self.options.firmware_version.clone(),
            software: self.options.software.clone(),
            chips,
            errors,
        })
    }

    fn enumerate(&self) -> Result<Enumeration, CollectError> {
        let (sender, receiver) = mpsc::channel();
        let manager = Arc::clone(&self.manager);
        let list = move || Enumeration { chips: manager.chips(), driver_version: manager.driver_version() };
        // The receiver is gone only when the deadline passed; nothing is waiting for the result then.
        let deliver = move |enumeration| {
            let _ = sender.send(enumeration);
        };
        match self.calls.start(Read::Enumeration, list, deliver) {
            Ok(Started::Started) => {}
            Ok(Started::StillBusy) => return Err(CollectError::EnumerateTimeout(self.options.deadline)),
            Err(error) => return Err(CollectError::Thread(error.to_string())),
        }
        receiver.recv_timeout(self.options.deadline).map_err(|_| {
            self.calls.give_up_overdue(Instant::now());
            CollectError::EnumerateTimeout(self.options.deadline)
        })
    }

    fn read_chips(&self, chips: &[ChipIds], deadline: Duration) -> Result<Vec<ChipReport>, CollectError> {
        let (done_sender, done_receiver) = mpsc::channel::<u32>();
        let mut shared_reports = Vec::with_capacity(chips.len());
        let mut pending = Vec::with_capacity(chips.len());
        for ids in chips {
            let key = ids.logic.get();
            let shared: Shared = Arc::new(Mutex::new(Progress {
                report: ChipReport::empty(self.ids_report(ids), ChipStatus::Timeout),
                reading: "identity",
            }));
            let (manager, options, progress) = (Arc::clone(&self.manager), self.options.clone(), Arc::clone(&shared));
            let logic = ids.logic;
            let read = move || read_chip(manager.as_ref(), &options, logic, &progress);
            let done = done_sender.clone();
            let started = self
                .calls
                .start(Read::Chip(key), read, move |()| {
                    let _ = done.send(key);
                })
                .map_err(|error| CollectError::Thread(error.to_string()))?;
            let mut progress = self.progress.lock().unwrap_or_else(PoisonError::into_inner);
            match started {
                Started::Started => {
                    progress.insert(key, Arc::clone(&shared));
                    shared_reports.push((shared, false));
                    pending.push(key);
                }
                Started::StillBusy => shared_reports.push((progress.get(&key).cloned().unwrap_or(shared), true)),
            }
        }
        drop(done_sender);
        let until = Instant::now() + deadline;
        while !pending.is_empty() {
            match done_receiver.recv_timeout(until.saturating_duration_since(Instant::now())) {
                Ok(key) => pending.retain(|pending| *pending != key),
                Err(_) => break,
            }
        }
        // Reads that never started are withdrawn (reported as timed out below); hung ones are given up, so that their
        // workers are replaced while they keep their chips busy.
        for key in pending {
            self.calls.withdraw(&Read::Chip(key));
        }
        self.calls.give_up_overdue(Instant::now());
        Ok(shared_reports.into_iter().map(|(shared, was_hung)| self.finish(&shared, was_hung)).collect())
    }

    /// The chip's report now: complete, or what was read before the deadline, marked as timed out.
    fn finish(&self, shared: &Shared, was_hung: bool) -> ChipReport {
        let progress = lock(shared);
        let mut report = progress.report.clone();
        let finished = progress.reading == DONE;
        if !finished {
            report.status = ChipStatus::Timeout;
            let message = if was_hung {
                format!("still blocked in the {} query of an earlier refresh; the chip may be hung", progress.reading)
            } else {
                format!(
                    "no answer to the {} query within {:?}; the chip may be hung",
                    progress.reading, self.options.deadline
                )
            };
            report.errors.push(FieldError { field: progress.reading.to_owned(), message });
        }
        report
    }

    fn ids_report(&self, ids: &ChipIds) -> ChipIdsReport {
        let logic = ids.logic.get();
        let visible_id = match &self.options.visible_devices {
            None => Some(logic),
            Some(list) => list.iter().position(|id| *id == logic).and_then(|p| u32::try_from(p).ok()),
        };
        ChipIdsReport {
            logic_id: logic,
            phy_id: ids.phy.get(),
            card_id: ids.locator.map(|locator| locator.card.get()),
            device_id: ids.locator.map(|locator| locator.device.get()),
            visible_id,
        }
    }
}

const DONE: &str = "done";

/// Records a failed read, unless the chip simply lacks the quantity.
fn record_error(shared: &Shared, field: &str, error: &DcmiError) {
    if error.is_unsupported() {
        return;
    }
    lock(shared).report.errors.push(FieldError { field: field.to_owned(), message: error.to_string() });
}

fn begin(shared: &Shared, field: &'static str) {
    lock(shared).reading = field;
}

fn read_chip(manager: &dyn DeviceManager, options: &CollectOptions, chip: LogicId, shared: &Shared) {
    begin(shared, "name");
    let identity = match manager.identity(chip) {
        Ok(identity) => {
            apply_identity(shared, &identity, options.verbose);
            Some(identity)
        }
        Err(error) => {
            record_error(shared, "name", &error);
            None
        }
    };
    read_health(manager, options, chip, shared);
    read_telemetry(manager, chip, identity.as_ref(), shared);
    begin(shared, "processes");
    match manager.processes(chip) {
        Ok(list) => {
            let processes = list
                .as_slice()
                .iter()
                .map(|process| ProcessReport {
                    pid: process.pid,
                    name: options.process_names.lookup(process.pid),
                    memory_bytes: process.memory_bytes,
                })
                .collect();
            lock(shared).report.processes = Some(processes);
        }
        Err(error) => record_error(shared, "processes", &error),
    }
    if options.verbose {
        read_details(manager, chip, shared);
    }
    begin(shared, DONE);
}

fn apply_identity(shared: &Shared, identity: &ChipIdentity, verbose: bool) {
    let mut progress = lock(shared);
    progress.report.name = Some(identity.info.chip_name.clone());
    progress.report.chip_type = identity.chip_type.map(|t| t.as_str().to_owned());
    progress.report.pcie_address = identity.pcie_address.map(|address| address.to_string());
    if verbose {
        progress.report.details = Some(ChipDetails {
            model_name: Some(identity.info.model_name()),
            product_type: identity.product_type.clone(),
            aicore_count: Some(identity.info.aicore_count),
            numa_node: identity.numa_node,
            affinity_cpus: identity.affinity_cpus.clone(),
            die_id: identity.die_id.map(|d| d.to_string()),
            serial_number: identity.serial_number().map(str::to_owned),
            board_id: identity.board.and_then(|b| b.board_id),
            voltage_volts: None,
            aicore_frequency_mhz: None,
            firmware_version: None,
        });
    }
}

fn read_health(manager: &dyn DeviceManager, options: &CollectOptions, chip: LogicId, shared: &Shared) {
    begin(shared, "health");
    match manager.health(chip) {
        Ok(report) => {
            let faults = report
                .faults
                .as_slice()
                .iter()
                .map(|code| {
                    let level = (options.grader)(*code).unwrap_or(report.level);
                    FaultReport { code: code.to_string(), level: level.name().to_owned(), meaning: code.meaning(level) }
                })
                .collect();
            let details = HealthDetails {
                dcmi: report.dcmi.map(|word| word.name().to_owned()),
                level: report.level.name().to_owned(),
                level_meaning: report.level.meaning().to_owned(),
                card_dropped: report.card_dropped,
                faults,
            };
            let mut progress = lock(shared);
            progress.report.status = if report.is_healthy() { ChipStatus::Ok } else { ChipStatus::Unhealthy };
            progress.report.health = Some(details);
        }
        Err(error) => {
            let status =
                if matches!(error, DcmiError::Timeout { .. }) { ChipStatus::Timeout } else { ChipStatus::Error };
            let mut progress = lock(shared);
            progress.report.status = status;
            progress.report.errors.push(FieldError { field: "health".into(), message: error.to_string() });
        }
    }
}

fn read_telemetry(manager: &dyn DeviceManager, chip: LogicId, identity: Option<&ChipIdentity>, shared: &Shared) {
    begin(shared, "temperature_celsius");
    match manager.temperature(chip) {
        Ok(value) => lock(shared).report.temperature_celsius = Some(value.0),
        Err(error) => record_error(shared, "temperature_celsius", &error),
    }
    begin(shared, "power");
    match manager.power(chip) {
        Ok(power) => {
            let scope = match power {
                Power::Chip(_) => PowerScope::Chip,
                Power::Card(_) => PowerScope::Card,
            };
            lock(shared).report.power = Some(PowerReport { watts: power.watts().0, scope });
        }
        Err(error) => record_error(shared, "power", &error),
    }
    begin(shared, "aicore_percent");
    match manager.utilization(chip, UtilizationKind::AiCore) {
        Ok(value) => lock(shared).report.aicore_percent = Some(value.get()),
        Err(error) => record_error(shared, "aicore_percent", &error),
    }
    begin(shared, "memory");
    if let Some(memory) = read_memory(manager, chip, identity, shared) {
        lock(shared).report.memory = Some(memory);
    }
}

/// HBM on chips that have it, DDR on the others; with an unknown chip type, HBM then DDR.
fn read_memory(
    manager: &dyn DeviceManager,
    chip: LogicId,
    identity: Option<&ChipIdentity>,
    shared: &Shared,
) -> Option<MemoryReport> {
    let has_hbm = identity.and_then(|identity| identity.chip_type).map(|chip_type| chip_type.has_hbm());
    if has_hbm != Some(false) {
        match manager.hbm_memory(chip) {
            Ok(hbm) => {
                return Some(MemoryReport {
                    kind: MemoryKind::Hbm,
                    used_bytes: hbm.used_bytes,
                    total_bytes: hbm.total_bytes,
                })
            }
            Err(error) if error.is_unsupported() && has_hbm.is_none() => {}
            Err(error) => {
                record_error(shared, "memory", &error);
                return None;
            }
        }
    }
    match manager.ddr_memory(chip) {
        Ok(ddr) => {
            Some(MemoryReport { kind: MemoryKind::Ddr, used_bytes: ddr.used_bytes(), total_bytes: ddr.total_bytes })
        }
        Err(error) => {
            record_error(shared, "memory", &error);
            None
        }
    }
}

fn read_details(manager: &dyn DeviceManager, chip: LogicId, shared: &Shared) {
    begin(shared, "details.voltage_volts");
    let voltage = manager.voltage(chip);
    if let Err(error) = &voltage {
        record_error(shared, "details.voltage_volts", error);
    }
    begin(shared, "details.aicore_frequency_mhz");
    let frequency = manager.frequency(chip, FrequencyKind::AiCoreCurrent);
    if let Err(error) = &frequency {
        record_error(shared, "details.aicore_frequency_mhz", error);
    }
    begin(shared, "details.firmware_version");
    let firmware = manager.firmware_version(chip);
    if let Err(error) = &firmware {
        record_error(shared, "details.firmware_version", error);
    }
    let mut progress = lock(shared);
    let details = progress.report.details.get_or_insert_with(ChipDetails::default);
    details.voltage_volts = voltage.ok().map(|v| v.0);
    details.aicore_frequency_mhz = frequency.ok().map(|f| f.0);
    details.firmware_version = firmware.ok();
}
