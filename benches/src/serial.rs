//! The baseline: the same calls the sampler's chain makes, in a plain loop on the calling thread, one chip after the
//! other, with the same memory of unsupported calls.

use std::hint::black_box;
use std::sync::Arc;

use ascend_dcmi::sampler::METRIC_COUNT;
use ascend_dcmi::{DeviceManager, GroupSet, LogicId, Metric, MetricSet, Result};

/// Polls chips serially, remembering unsupported calls per chip and metric as the sampler does.
pub struct SerialPoller {
    manager: Arc<dyn DeviceManager>,
    chips: Vec<LogicId>,
    unsupported: Vec<[bool; METRIC_COUNT]>,
}

impl SerialPoller {
    /// Enumerates the chips once.
    ///
    /// # Errors
    /// The error of [`DeviceManager::chips`].
    pub fn new(manager: Arc<dyn DeviceManager>) -> Result<Self> {
        let chips: Vec<LogicId> = manager.chips()?.iter().map(|ids| ids.logic).collect();
        let unsupported = vec![[false; METRIC_COUNT]; chips.len()];
        Ok(Self { manager, chips, unsupported })
    }

    /// The chips.
    pub fn chips(&self) -> &[LogicId] {
        &self.chips
    }

    /// Makes every selected call of `groups` on every chip, one chip after the other; returns how many succeeded.
    pub fn poll(&mut self, groups: GroupSet, selection: MetricSet) -> usize {
        let mut succeeded = 0;
        for index in 0..self.chips.len() {
            succeeded += self.poll_one(index, groups, selection);
        }
        succeeded
    }

    /// One chip's chain only (the chain the ideal poll time is built from); 0 for an index past the chips.
    pub fn poll_one(&mut self, index: usize, groups: GroupSet, selection: MetricSet) -> usize {
        match self.chips.get(index) {
            Some(chip) => self.poll_chip(index, *chip, groups, selection),
            None => 0,
        }
    }

    /// How many calls one chip's chain makes now: the selected metrics of `groups` that chip `index` has not
    /// answered as unsupported (0 for an index past the chips).
    pub fn chain_calls(&self, index: usize, groups: GroupSet, selection: MetricSet) -> usize {
        match self.unsupported.get(index) {
            Some(unsupported) => chain(groups, selection).filter(|metric| !unsupported[metric.index()]).count(),
            None => 0,
        }
    }

    fn poll_chip(&mut self, index: usize, chip: LogicId, groups: GroupSet, selection: MetricSet) -> usize {
        let mut succeeded = 0;
        for metric in chain(groups, selection) {
            let known_unsupported = &mut self.unsupported[index][metric.index()];
            if *known_unsupported {
                continue;
            }
            match call(self.manager.as_ref(), chip, metric) {
                Ok(()) => succeeded += 1,
                Err(error) if error.is_unsupported() => *known_unsupported = true,
                Err(_) => {}
            }
        }
        succeeded
    }
}

/// The metrics of one chip's chain: the selected metrics of `groups`, group by group as the sampler's chain runs.
fn chain(groups: GroupSet, selection: MetricSet) -> impl Iterator<Item = Metric> {
    groups.iter().flat_map(move |group| {
        Metric::ALL.into_iter().filter(move |metric| metric.group() == group && selection.contains(*metric))
    })
}

/// Makes the call behind `metric` and drops the value (through `black_box`, so it is not optimised away).
fn call(manager: &dyn DeviceManager, chip: LogicId, metric: Metric) -> Result<()> {
    match metric {
        Metric::Utilization(kind) => keep(manager.utilization(chip, kind)),
        Metric::Temperature => keep(manager.temperature(chip)),
        Metric::Power => keep(manager.power(chip)),
        Metric::Voltage => keep(manager.voltage(chip)),
        Metric::Frequency(kind) => keep(manager.frequency(chip, kind)),
        Metric::Health => keep(manager.health(chip)),
        Metric::NetworkHealth => keep(manager.network_health(chip)),
        Metric::DdrMemory => keep(manager.ddr_memory(chip)),
        Metric::HbmMemory => keep(manager.hbm_memory(chip)),
        Metric::Ecc(component) => keep(manager.ecc(chip, component)),
        Metric::Processes => keep(manager.processes(chip)),
        Metric::Identity => keep(manager.identity(chip)),
        Metric::HccsStatistics => keep(manager.hccs_statistics(chip)),
        Metric::SioCrcErrors => keep(manager.sio_crc_errors(chip)),
        Metric::HccsBandwidth => keep(manager.hccs_bandwidth(chip, ascend_dcmi::sampler::DEFAULT_PROFILING)),
        Metric::PcieBandwidth => keep(manager.pcie_bandwidth(chip, ascend_dcmi::sampler::DEFAULT_PROFILING)),
        Metric::UbPorts => keep(manager.ub_ports(chip)),
        Metric::Vnpus => keep(manager.vnpus(chip)),
    }
}

fn keep<T>(result: Result<T>) -> Result<()> {
    black_box(result).map(|_| ())
}
