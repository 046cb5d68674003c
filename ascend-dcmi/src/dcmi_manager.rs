//! `impl DeviceManager for Dcmi`: the trait's methods are the [`crate::Chip`] methods of the chip with that logic id.
//!
//! The polled methods go through a borrowed [`crate::chip_view::ChipView`] (a lock-free id lookup, no `Arc` clone),
//! so the trait costs what the owned handle costs. One deliberate difference: `network_health` runs on the calling
//! thread, where [`crate::Chip::network_health`] starts a worker thread with the handle's deadline. The trait's
//! contract already says every method may block and must be called from a thread; its main caller, the
//! [`crate::Sampler`], bounds each chip's whole chain with its own deadline and replaces a hung worker, so a second
//! thread per call would only add a thread start and its allocations to every round.

use std::time::Duration;

use crate::api_family::ApiFamily;
use crate::dcmi::Dcmi;
use crate::error::Result;
use crate::event::FaultEventStream;
use crate::health::HealthReport;
use crate::identity::ChipIdentity;
use crate::ids::{ChipIds, LogicId};
use crate::manager::DeviceManager;
use crate::reset::BootStatus;
use crate::telemetry::{
    DdrMemory, EccComponent, EccCounters, FrequencyKind, HbmMemory, HccsBandwidth, NetworkHealth, PcieBandwidth, Power,
    ProcessList, UtilizationKind,
};
use crate::ub_port::{UbPort, UbPortStats};
use crate::units::{Celsius, MegaHertz, Percent, Volts};
use crate::vnpu::{VnpuId, VnpuInventory};

impl DeviceManager for Dcmi {
    fn chips(&self) -> Result<Vec<ChipIds>> {
        Dcmi::chips(self)
    }

    fn driver_version(&self) -> Result<String> {
        Dcmi::driver_version(self)
    }

    fn identity(&self, chip: LogicId) -> Result<ChipIdentity> {
        self.chip(chip)?.identity()
    }

    fn identity_unchanged(&self, chip: LogicId, known: &ChipIdentity) -> Result<bool> {
        self.view(chip)?.identity_is(known)
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

    fn ub_port_stats(&self, chip: LogicId, port: UbPort) -> Result<UbPortStats> {
        self.chip(chip)?.ub_port_stats(port)
    }
}
