//! The mockable seam: everything the model offers, as a trait that returns owned data.
//!
//! [`crate::Dcmi`] implements it over the real (or simulated) library. Downstream crates take a
//! `Arc<dyn DeviceManager>` and use `MockDeviceManager` (feature `mock`) in their tests.
//!
//! On `Dcmi` the trait's methods are the [`crate::Chip`] methods of the chip with that logic id. The polled methods
//! go through a borrowed [`crate::chip_view::ChipView`] (a lock-free id lookup, no `Arc` clone), so the trait costs
//! what the owned handle costs. One deliberate difference: `network_health` runs on the calling thread, where
//! [`crate::Chip::network_health`] starts a worker thread with the handle's deadline. The trait's contract already
//! says every method may block and must be called from a thread; its main caller, the [`crate::Sampler`], bounds
//! each chip's whole chain with its own deadline and replaces a hung worker, so a second thread per call would only
//! add a thread start and its allocations to every round.

use std::time::Duration;

use crate::api_family::ApiFamily;
use crate::dcmi::Dcmi;
use crate::error::Result;
use crate::fault_events::event::FaultEventStream;
use crate::health::HealthReport;
use crate::identity::ChipIdentity;
use crate::ids::{CardId, ChipIds, LogicId};
use crate::links::{HccsStatistics, SioCrcErrors};
use crate::placement::SuperPodInfo;
use crate::reset::BootStatus;
use crate::telemetry::{
    DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth, NetworkHealth, PcieBandwidth, Power,
    ProcessList, UtilizationKind,
};
use crate::ub_port::{UbPort, UbPortCounters, UbPortStats};
use crate::units::{Celsius, MegaHertz, Percent, Volts};
use crate::vnpu::{VnpuId, VnpuInventory};

/// Management of the NPUs of one host. Chips are addressed by [`LogicId`], as the driver enumerates them.
///
/// Every method may block on the driver (seconds, on a dropped card): call it from a thread, never from an async
/// executor. [`crate::Sampler`] runs these calls on worker threads with deadlines.
#[cfg_attr(feature = "mock", mockall::automock)]
pub trait DeviceManager: Send + Sync {
    /// Every chip with all its ids, in logic-id order.
    ///
    /// # Errors
    /// Any DCMI error of the card list, chip count, logic id or physical id calls.
    fn chips(&self) -> Result<Vec<ChipIds>>;

    /// The driver (DCMI) version string.
    ///
    /// # Errors
    /// Any DCMI error of `dcmi_get_dcmi_version`.
    fn driver_version(&self) -> Result<String>;

    /// The cards the driver lists (`dcmi_get_card_list`). The default answers [`crate::Error::FunctionMissing`], for
    /// implementations that predate it.
    ///
    /// # Errors
    /// [`crate::Error::UnavailableOnApi`] on the V2 API, which has no cards, or any DCMI error.
    fn cards(&self) -> Result<Vec<CardId>> {
        Err(crate::Error::FunctionMissing("dcmi_get_card_list"))
    }

    /// What the chip is. Parts the chip type cannot report are `None`.
    ///
    /// # Errors
    /// [`crate::Error::NoSuchChip`], or the DCMI error of the chip info call (the only one that must work).
    fn identity(&self, chip: LogicId) -> Result<ChipIdentity>;

    /// Whether the chip still is what `known` (an earlier [`Self::identity`] of the same chip) says: how
    /// [`crate::Sampler`] refreshes its identity group without building a new identity while nothing changed.
    ///
    /// The default reads [`Self::identity`] and compares. `Dcmi` makes the same calls but compares the driver's
    /// buffers in place, so a refresh of an unchanged chip allocates nothing.
    ///
    /// # Errors
    /// As [`Self::identity`].
    fn identity_unchanged(&self, chip: LogicId, known: &ChipIdentity) -> Result<bool> {
        Ok(self.identity(chip)? == *known)
    }

    /// The firmware version the chip runs (`dcmi_get_version`), for example `"7.5.0.1.129"`.
    ///
    /// The default, for implementations that predate the call, answers [`crate::Error::FunctionMissing`], which
    /// [`crate::Error::is_unsupported`] counts as unsupported.
    ///
    /// # Errors
    /// [`crate::Error::UnavailableOnApi`] on the V2 API, or any DCMI error.
    fn firmware_version(&self, chip: LogicId) -> Result<String> {
        let _ = chip;
        Err(crate::Error::FunctionMissing("dcmi_get_version"))
    }

    /// Health word plus active fault codes, graded by the fault policy. A dropped card is reported as such, not as an
    /// error.
    ///
    /// # Errors
    /// DCMI errors other than a card drop.
    fn health(&self, chip: LogicId) -> Result<HealthReport>;

    /// Chip temperature.
    ///
    /// # Errors
    /// Any DCMI error; values below absolute zero are [`crate::Error::InvalidValue`].
    fn temperature(&self, chip: LogicId) -> Result<Celsius>;

    /// Power draw: the chip's, or the card's on 310P.
    ///
    /// # Errors
    /// Any DCMI error.
    fn power(&self, chip: LogicId) -> Result<Power>;

    /// Chip voltage.
    ///
    /// # Errors
    /// Any DCMI error.
    fn voltage(&self, chip: LogicId) -> Result<Volts>;

    /// One clock.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] for kinds the chip lacks, or any DCMI error.
    fn frequency(&self, chip: LogicId, kind: FrequencyKind) -> Result<MegaHertz>;

    /// One utilisation kind. The implementation remembers which DCMI call works and which kinds a chip lacks.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] for kinds the chip lacks, or any DCMI error.
    fn utilization(&self, chip: LogicId, kind: UtilizationKind) -> Result<Percent>;

    /// DDR memory (310 family, 910A).
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without DDR info, or any DCMI error.
    fn ddr_memory(&self, chip: LogicId) -> Result<DdrMemory>;

    /// HBM (910 family, 950).
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without HBM, or any DCMI error.
    fn hbm_memory(&self, chip: LogicId) -> Result<HbmMemory>;

    /// ECC counters of one memory component.
    ///
    /// # Errors
    /// Any DCMI error.
    fn ecc(&self, chip: LogicId, component: EccComponent) -> Result<EccCounters>;

    /// Processes using the chip and their device memory.
    ///
    /// # Errors
    /// Any DCMI error.
    fn processes(&self, chip: LogicId) -> Result<ProcessList>;

    /// PCIe bandwidth averaged over `profiling` (1..=2000 ms).
    ///
    /// # Errors
    /// Any DCMI error.
    fn pcie_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<PcieBandwidth>;

    /// HCCS bandwidth averaged over `profiling` (1..=1000 ms).
    ///
    /// # Errors
    /// Any DCMI error.
    fn hccs_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<HccsBandwidth>;

    /// RoCE network health (training cards).
    ///
    /// The call can block for a long time after a card drop. `Dcmi` makes it on the calling thread like every other
    /// method (the sampler bounds each chip's chain with its deadline); [`crate::Chip::network_health`] adds a
    /// worker thread with the handle's deadline for callers without one.
    ///
    /// # Errors
    /// Any DCMI error.
    fn network_health(&self, chip: LogicId) -> Result<NetworkHealth>;

    /// vNPU resources and the vNPUs that exist.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without vNPU support, or any DCMI error.
    fn vnpus(&self, chip: LogicId) -> Result<VnpuInventory>;

    /// Creates a vNPU from a template (by driver name, for example `"vir02"`).
    ///
    /// # Errors
    /// [`crate::Error::VnpuTemplateNotAllowed`] for a template the chip type does not allow, or any DCMI error (for
    /// example [`crate::Error::ResourceOccupied`] when the chip lacks the resources).
    fn create_vnpu(&self, chip: LogicId, template: &str) -> Result<VnpuId>;

    /// Destroys a vNPU.
    ///
    /// # Errors
    /// Any DCMI error.
    fn destroy_vnpu(&self, chip: LogicId, vnpu: VnpuId) -> Result<()>;

    /// The chip's boot status.
    ///
    /// # Errors
    /// Any DCMI error.
    fn boot_status(&self, chip: LogicId) -> Result<BootStatus>;

    /// Hot-resets the chip (in-band, falling back to out-of-band) and waits until it has booted or `timeout` passed.
    ///
    /// # Errors
    /// [`crate::Error::Timeout`] if it did not boot in time, or the DCMI error of the reset calls.
    fn reset(&self, chip: LogicId, timeout: Duration) -> Result<()>;

    /// Fault events of every chip: by driver subscription where the chips support it, else by polling the fault
    /// codes every `poll_interval`.
    ///
    /// # Errors
    /// The DCMI error of subscribing, when polling is not possible either.
    fn fault_events(&self, poll_interval: Duration) -> Result<FaultEventStream>;

    /// The API family the driver serves. The default is [`ApiFamily::V1`], for implementations that predate V2.
    fn api_family(&self) -> ApiFamily {
        ApiFamily::V1
    }

    /// Message and CRC-error counters of each HCCS link (910B, A3). The default answers
    /// [`crate::Error::FunctionMissing`], for implementations that predate it.
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without HCCS, or any DCMI error.
    fn hccs_statistics(&self, chip: LogicId) -> Result<HccsStatistics> {
        let _ = chip;
        Err(crate::Error::FunctionMissing("dcmi_get_device_info"))
    }

    /// CRC errors between the two dies of the card (A3, Ascend950). The default answers
    /// [`crate::Error::FunctionMissing`].
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without SIO, or any DCMI error.
    fn sio_crc_errors(&self, chip: LogicId) -> Result<SioCrcErrors> {
        let _ = chip;
        Err(crate::Error::FunctionMissing("dcmi_get_device_info"))
    }

    /// The chip's place in a super-pod (A3, Ascend950); see [`crate::Chip::super_pod_info`]. The default answers
    /// [`crate::Error::FunctionMissing`].
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips outside super-pod products, or any DCMI error.
    fn super_pod_info(&self, chip: LogicId) -> Result<SuperPodInfo> {
        let _ = chip;
        Err(crate::Error::FunctionMissing("dcmi_get_device_info"))
    }

    /// The IP address of the chip's RoCE port (910 family); see [`crate::Chip::roce_ip`]. The default answers
    /// [`crate::Error::FunctionMissing`].
    ///
    /// # Errors
    /// [`crate::Error::NotSupported`] on chips without a RoCE address, or any DCMI error.
    fn roce_ip(&self, chip: LogicId) -> Result<std::net::IpAddr> {
        let _ = chip;
        Err(crate::Error::FunctionMissing("dcmi_get_device_ip"))
    }

    /// Packet counters of one unified-bus port (Ascend950).
    ///
    /// # Errors
    /// [`crate::Error::UnavailableOnApi`] on the V1 API (the default), or any DCMI error.
    fn ub_port_stats(&self, chip: LogicId, port: UbPort) -> Result<UbPortStats> {
        let _ = (chip, port);
        Err(crate::Error::UnavailableOnApi { call: "dcmiv2_get_port_pkt_stats_info", family: ApiFamily::V1 })
    }

    /// Every counter of every UB port the chip has (Ascend950); see [`crate::Chip::ub_ports`].
    ///
    /// # Errors
    /// [`crate::Error::UnavailableOnApi`] on the V1 API (the default), or the DCMI error when no port answered.
    fn ub_ports(&self, chip: LogicId) -> Result<Vec<UbPortCounters>> {
        let _ = chip;
        Err(crate::Error::UnavailableOnApi { call: "dcmiv2_get_port_pkt_stats_info", family: ApiFamily::V1 })
    }
}

impl DeviceManager for Dcmi {
    fn chips(&self) -> Result<Vec<ChipIds>> {
        Dcmi::chips(self)
    }

    fn driver_version(&self) -> Result<String> {
        Dcmi::driver_version(self)
    }

    fn cards(&self) -> Result<Vec<CardId>> {
        Dcmi::cards(self)
    }

    fn identity(&self, chip: LogicId) -> Result<ChipIdentity> {
        self.chip(chip)?.identity()
    }

    fn identity_unchanged(&self, chip: LogicId, known: &ChipIdentity) -> Result<bool> {
        self.view(chip)?.identity_is(known)
    }

    fn firmware_version(&self, chip: LogicId) -> Result<String> {
        self.chip(chip)?.firmware_version()
    }

    fn health(&self, chip: LogicId) -> Result<HealthReport> {
        self.view(chip)?.health()
    }

    fn temperature(&self, chip: LogicId) -> Result<Celsius> {
        self.view(chip)?.temperature()
    }

    fn power(&self, chip: LogicId) -> Result<Power> {
        self.view(chip)?.power()
    }

    fn voltage(&self, chip: LogicId) -> Result<Volts> {
        self.view(chip)?.voltage()
    }

    fn frequency(&self, chip: LogicId, kind: FrequencyKind) -> Result<MegaHertz> {
        self.view(chip)?.frequency(kind)
    }

    fn utilization(&self, chip: LogicId, kind: UtilizationKind) -> Result<Percent> {
        self.view(chip)?.utilization(kind)
    }

    fn ddr_memory(&self, chip: LogicId) -> Result<DdrMemory> {
        self.view(chip)?.ddr_memory()
    }

    fn hbm_memory(&self, chip: LogicId) -> Result<HbmMemory> {
        self.view(chip)?.hbm_memory()
    }

    fn ecc(&self, chip: LogicId, component: EccComponent) -> Result<EccCounters> {
        self.view(chip)?.ecc(component)
    }

    fn processes(&self, chip: LogicId) -> Result<ProcessList> {
        self.view(chip)?.processes()
    }

    fn pcie_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<PcieBandwidth> {
        self.chip(chip)?.pcie_bandwidth(profiling)
    }

    fn hccs_bandwidth(&self, chip: LogicId, profiling: Duration) -> Result<HccsBandwidth> {
        self.chip(chip)?.hccs_bandwidth(profiling)
    }

    fn network_health(&self, chip: LogicId) -> Result<NetworkHealth> {
        self.view(chip)?.network_health()
    }

    fn vnpus(&self, chip: LogicId) -> Result<VnpuInventory> {
        self.chip(chip)?.vnpus()
    }

    fn create_vnpu(&self, chip: LogicId, template: &str) -> Result<VnpuId> {
        self.chip(chip)?.create_vnpu(template)
    }

    fn destroy_vnpu(&self, chip: LogicId, vnpu: VnpuId) -> Result<()> {
        self.chip(chip)?.destroy_vnpu(vnpu)
    }

    fn boot_status(&self, chip: LogicId) -> Result<BootStatus> {
        self.chip(chip)?.boot_status()
    }

    fn reset(&self, chip: LogicId, timeout: Duration) -> Result<()> {
        self.chip(chip)?.reset(timeout)
    }

    fn fault_events(&self, poll_interval: Duration) -> Result<FaultEventStream> {
        Dcmi::fault_events(self, poll_interval)
    }

    fn api_family(&self) -> ApiFamily {
        Dcmi::api_family(self)
    }

    fn hccs_statistics(&self, chip: LogicId) -> Result<HccsStatistics> {
        self.view(chip)?.hccs_statistics()
    }

    fn sio_crc_errors(&self, chip: LogicId) -> Result<SioCrcErrors> {
        self.view(chip)?.sio_crc_errors()
    }

    fn super_pod_info(&self, chip: LogicId) -> Result<SuperPodInfo> {
        self.view(chip)?.super_pod_info()
    }

    fn roce_ip(&self, chip: LogicId) -> Result<std::net::IpAddr> {
        self.view(chip)?.roce_ip()
    }

    fn ub_port_stats(&self, chip: LogicId, port: UbPort) -> Result<UbPortStats> {
        self.chip(chip)?.ub_port_stats(port)
    }

    fn ub_ports(&self, chip: LogicId) -> Result<Vec<UbPortCounters>> {
        self.chip(chip)?.ub_ports()
    }
}
