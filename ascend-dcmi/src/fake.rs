//! An in-process [`DeviceManager`] for load and deadline tests (feature `fake`): heap-free
//! answers for every call the sampler makes, a configurable latency per call, chips that hang until released,
//! metrics that answer -8255 (not supported), and call counters.
//!
//! **Outside the semver promise.** A test double (feature `fake`): it follows what this workspace's tests need, and its
//! API may change in any release, patch releases included. Use it from `[dev-dependencies]`, and pin the exact version
//! (`=0.1.x`) if your tests depend on its details.
//!
//! Where `MockDeviceManager` (feature `mock`) checks *which* calls code makes, this fake
//! answers thousands of calls a second as a driver would, so code built on the [`Sampler`](crate::Sampler) can be
//! tested and benchmarked under latency and hangs without a driver or the simulator. The crate's own sampler tests and
//! the `ascend-benches` crate use it, so that tests and benches measure the same thing.
//!
//! ```
//! use std::time::Duration;
//! use ascend_dcmi::fake::FakeManager;
//! use ascend_dcmi::{DeviceManager, LogicId};
//!
//! let host = FakeManager::new(8).with_latency(Duration::from_micros(50));
//! assert_eq!(host.chips()?.len(), 8);
//! assert_eq!(host.temperature(LogicId(3))?, ascend_dcmi::fake::fake_temperature(LogicId(3)));
//! assert_eq!(host.calls(LogicId(3)), 1);
//! # Ok::<(), ascend_dcmi::Error>(())
//! ```

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, PoisonError};
use std::thread;
use std::time::Duration;

use crate::{
    BandwidthStats, BootStatus, CallContext, CardId, Celsius, ChipIdentity, ChipIds, ChipInfo, ChipLocator,
    ChipProcess, DdrMemory, DeviceId, DeviceManager, EccComponent, EccCounters, Error, FaultEventStream, FrequencyKind,
    HbmMemory, HccsBandwidth, HccsStatistics, HealthReport, LogicId, MegaHertz, Metric, NetworkHealth, PcieBandwidth,
    Percent, PhyId, Power, ProcessList, Result, SioCrcErrors, UtilizationKind, VnpuId, VnpuInventory, Volts, Watts,
};

/// How many metrics the sampler knows (one counter each per chip).
const METRICS: usize = crate::sampler::METRIC_COUNT;

/// A fake host with `n` chips: logic id = physical id = card id = index, device 0.
pub struct FakeManager {
    chips: Vec<ChipIds>,
    latency_nanos: AtomicU64,
    calls: Vec<[AtomicUsize; METRICS]>,
    unsupported: Vec<AtomicU64>,
    hung: Vec<AtomicBool>,
    hang_lock: Mutex<()>,
    released: Condvar,
    blocked: AtomicUsize,
}

impl FakeManager {
    /// A host with `chips` chips answering instantly.
    pub fn new(chips: usize) -> Self {
        let chip_ids = (0..chips)
            .map(|index| {
                let raw = u32::try_from(index).expect("fewer than 2^32 chips");
                ChipIds {
                    logic: LogicId(raw),
                    phy: PhyId(raw),
                    locator: Some(ChipLocator {
                        card: CardId(i32::try_from(raw).expect("small id")),
                        device: DeviceId(0),
                    }),
                }
            })
            .collect();
        Self {
            chips: chip_ids,
            latency_nanos: AtomicU64::new(0),
            calls: (0..chips).map(|_| std::array::from_fn(|_| AtomicUsize::new(0))).collect(),
            unsupported: (0..chips).map(|_| AtomicU64::new(0)).collect(),
            hung: (0..chips).map(|_| AtomicBool::new(false)).collect(),
            hang_lock: Mutex::new(()),
            released: Condvar::new(),
            blocked: AtomicUsize::new(0),
        }
    }

    /// Every call sleeps this long before answering (a blocking ioctl, as the real driver does).
    pub fn with_latency(self, latency: Duration) -> Self {
        self.set_latency(latency);
        self
    }

    /// Changes the latency of later calls.
    pub fn set_latency(&self, latency: Duration) {
        self.latency_nanos.store(u64::try_from(latency.as_nanos()).unwrap_or(u64::MAX), Ordering::Relaxed);
    }

    /// `metric` answers -8255 on `chip` from now on.
    ///
    /// # Panics
    /// If the host has no chip `chip` (a mistake in the test, not a driver answer).
    pub fn set_unsupported(&self, chip: LogicId, metric: Metric) {
        self.unsupported[chip.0 as usize].fetch_or(1 << metric.index(), Ordering::Relaxed);
    }

    /// Every later call to `chip` blocks until [`FakeManager::release`].
    ///
    /// # Panics
    /// If the host has no chip `chip`.
    pub fn hang(&self, chip: LogicId) {
        self.hung[chip.0 as usize].store(true, Ordering::SeqCst);
    }

    /// Lets the calls blocked on `chip` return.
    pub fn release(&self, chip: LogicId) {
        let _guard = self.hang_lock.lock().unwrap_or_else(PoisonError::into_inner);
        self.hung[chip.0 as usize].store(false, Ordering::SeqCst);
        self.released.notify_all();
    }

    /// Calls made to `chip` so far, of every metric (none for a chip the host does not have).
    pub fn calls(&self, chip: LogicId) -> usize {
        self.calls
            .get(chip.0 as usize)
            .map_or(0, |counts| counts.iter().map(|count| count.load(Ordering::SeqCst)).sum())
    }

    /// Calls of one metric made to `chip` so far (none for a chip the host does not have).
    pub fn calls_of(&self, chip: LogicId, metric: Metric) -> usize {
        self.calls.get(chip.0 as usize).map_or(0, |counts| counts[metric.index()].load(Ordering::SeqCst))
    }

    /// Calls blocked in a hang right now.
    pub fn blocked_calls(&self) -> usize {
        self.blocked.load(Ordering::SeqCst)
    }

    /// The per-chip part of every call: count it, then answer -8255, hang, or wait out the latency.
    fn answer(&self, chip: LogicId, metric: Metric, call: &'static str) -> Result<()> {
        let index = chip.0 as usize;
        let Some(calls) = self.calls.get(index) else {
            return Err(Error::NoSuchChip(format!("logic id {chip}")));
        };
        calls[metric.index()].fetch_add(1, Ordering::SeqCst);
        let context = CallContext::chip(call, self.chips[index].locator, Some(chip));
        if self.unsupported[index].load(Ordering::Relaxed) & (1 << metric.index()) != 0 {
            return Err(Error::from_code(-8255, context));
        }
        if self.hung[index].load(Ordering::SeqCst) {
            self.blocked.fetch_add(1, Ordering::SeqCst);
            let mut guard = self.hang_lock.lock().unwrap_or_else(PoisonError::into_inner);
            while self.hung[index].load(Ordering::SeqCst) {
                guard = self.released.wait(guard).unwrap_or_else(PoisonError::into_inner);
            }
            drop(guard);
            self.blocked.fetch_sub(1, Ordering::SeqCst);
        }
        let latency = self.latency_nanos.load(Ordering::Relaxed);
        if latency > 0 {
            thread::sleep(Duration::from_nanos(latency));
        }
        Ok(())
    }
}

/// The temperature the fake reports for a chip: 40 °C plus its logic id.
pub fn fake_temperature(chip: LogicId) -> Celsius {
    Celsius(40 + i32::try_from(chip.0).unwrap_or(0))
}

/// The utilisation the fake reports: the chip's logic id plus the kind's raw value, modulo 101.
pub fn fake_utilization(chip: LogicId, kind: UtilizationKind) -> Percent {
    let value = (chip.0 + u32::try_from(kind.raw()).unwrap_or(0)) % 101;
    Percent::new(value).unwrap_or_default()
}

fn unsupported(call: &'static str) -> Error {
    Error::from_code(-8255, CallContext::global(call))
}

impl DeviceManager for FakeManager {
    fn chips(&self) -> Result<Vec<ChipIds>> {
        Ok(self.chips.clone())
    }

    fn driver_version(&self) -> Result<String> {
        Ok("fake 1.0".to_owned())
    }

    fn cards(&self) -> Result<Vec<CardId>> {
        let mut cards: Vec<CardId> = self.chips.iter().filter_map(|ids| ids.locator.map(|l| l.card)).collect();
        cards.dedup();
        Ok(cards)
    }

    fn identity(&self, chip: LogicId) -> Result<ChipIdentity> {
        self.answer(chip, Metric::Identity, "dcmi_get_device_chip_info")?;
        Ok(ChipIdentity {
            ids: self.chips[chip.0 as usize],
            chip_type: None,
            info: ChipInfo {
                chip_type: "Ascend".to_owned(),
                chip_name: "910B3".to_owned(),
                chip_version: "V1".to_owned(),
                aicore_count: 20,
                npu_name: None,
            },
            product_type: None,
            board: None,
            mainboard_id: None,
            pcie_address: None,
            numa_node: None,
            affinity_cpus: None,
            die_id: None,
            elabel: None,
        })
    }

    fn health(&self, chip: LogicId) -> Result<HealthReport> {
        self.answer(chip, Metric::Health, "dcmi_get_device_health")?;
        Ok(HealthReport::healthy())
    }

    fn temperature(&self, chip: LogicId) -> Result<Celsius> {
        self.answer(chip, Metric::Temperature, "dcmi_get_device_temperature")?;
        Ok(fake_temperature(chip))
    }

    fn power(&self, chip: LogicId) -> Result<Power> {
        self.answer(chip, Metric::Power, "dcmi_get_device_power_info")?;
        Ok(Power::Chip(Watts(72.5)))
    }

    fn voltage(&self, chip: LogicId) -> Result<Volts> {
        self.answer(chip, Metric::Voltage, "dcmi_get_device_voltage")?;
        Ok(Volts(0.85))
    }

    fn frequency(&self, chip: LogicId, kind: FrequencyKind) -> Result<MegaHertz> {
        self.answer(chip, Metric::Frequency(kind), "dcmi_get_device_frequency")?;
        Ok(MegaHertz(1000 + u32::try_from(kind.raw()).unwrap_or(0)))
    }

    fn utilization(&self, chip: LogicId, kind: UtilizationKind) -> Result<Percent> {
        self.answer(chip, Metric::Utilization(kind), "dcmi_get_device_utilization_rate")?;
        Ok(fake_utilization(chip, kind))
    }

    fn ddr_memory(&self, chip: LogicId) -> Result<DdrMemory> {
        self.answer(chip, Metric::DdrMemory, "dcmi_get_device_memory_info_v3")?;
        Ok(DdrMemory { total_bytes: 16 << 30, available_bytes: 8 << 30, ..DdrMemory::default() })
    }

    fn hbm_memory(&self, chip: LogicId) -> Result<HbmMemory> {
        self.answer(chip, Metric::HbmMemory, "dcmi_get_device_hbm_info")?;
        Ok(HbmMemory { total_bytes: 64 << 30, used_bytes: 3 << 30, ..HbmMemory::default() })
    }

    fn ecc(&self, chip: LogicId, component: EccComponent) -> Result<EccCounters> {
        self.answer(chip, Metric::Ecc(component), "dcmi_get_device_ecc_info")?;
        Ok(EccCounters { enabled: true, ..EccCounters::default() })
    }

    fn processes(&self, chip: LogicId) -> Result<ProcessList> {
        self.answer(chip, Metric::Processes, "dcmi_get_device_resource_info")?;
        Ok(ProcessList::from_slice(&[ChipProcess { pid: 4242, memory_bytes: 1 << 30 }]))
    }

    fn hccs_statistics(&self, chip: LogicId) -> Result<HccsStatistics> {
        self.answer(chip, Metric::HccsStatistics, "dcmi_get_device_info")?;
        let calls = self.calls_of(chip, Metric::HccsStatistics) as u64;
        // Counters that grow by one message per read on every link, so that a test sees them advance.
        Ok(HccsStatistics { tx_messages: [calls; 16], rx_messages: [calls; 16], crc_errors: [0; 16] })
    }

    fn sio_crc_errors(&self, chip: LogicId) -> Result<SioCrcErrors> {
        self.answer(chip, Metric::SioCrcErrors, "dcmi_get_device_info")?;
        Ok(SioCrcErrors::default())
    }

    /// Waits out the profiling window as the driver does, then answers.
    fn pcie_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<PcieBandwidth> {
        self.answer(chip, Metric::PcieBandwidth, "dcmi_get_pcie_link_bandwidth_info")?;
        thread::sleep(profiling);
        let stats = BandwidthStats { min: 1, max: 3, avg: 2 };
        Ok(PcieBandwidth { profiling, tx_posted: stats, rx_posted: stats, ..PcieBandwidth::default() })
    }

    /// Waits out the profiling window as the driver does, then answers.
    fn hccs_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<HccsBandwidth> {
        self.answer(chip, Metric::HccsBandwidth, "dcmi_get_hccs_link_bandwidth_info")?;
        thread::sleep(profiling);
        Ok(HccsBandwidth { profiling, total_tx: 8.0, total_rx: 8.0, ..HccsBandwidth::default() })
    }

    fn network_health(&self, chip: LogicId) -> Result<NetworkHealth> {
        self.answer(chip, Metric::NetworkHealth, "dcmi_get_device_network_health")?;
        Ok(NetworkHealth::Ok)
    }

    fn vnpus(&self, _chip: LogicId) -> Result<VnpuInventory> {
        Err(unsupported("dcmi_get_device_info"))
    }

    fn create_vnpu(&self, _chip: LogicId, _template: &str) -> Result<VnpuId> {
        Err(unsupported("dcmi_create_vdevice"))
    }

    fn destroy_vnpu(&self, _chip: LogicId, _vnpu: VnpuId) -> Result<()> {
        Err(unsupported("dcmi_set_destroy_vdevice"))
    }

    fn boot_status(&self, _chip: LogicId) -> Result<BootStatus> {
        Ok(BootStatus::Finished)
    }

    fn reset(&self, _chip: LogicId, _timeout: Duration) -> Result<()> {
        Err(unsupported("dcmi_set_device_reset"))
    }

    fn fault_events(&self, _poll_interval: Duration) -> Result<FaultEventStream> {
        Err(unsupported("dcmi_subscribe_fault_event"))
    }
}
