//! The baseline: the same calls the sampler's chain makes, in a plain loop on the calling thread, one chip after the
//! other, with the same memory of unsupported calls.

use std::hint::black_box;
use std::sync::Arc;

use ascend_dcmi::sampler::METRIC_COUNT;
use ascend_dcmi::{DeviceManager, LogicId, Metric, MetricGroup, MetricSet, Result};

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

    /// Makes every selected call of `group` on every chip; returns how many succeeded.
    pub fn poll(&mut self, group: MetricGroup, selection: MetricSet) -> usize {
        let mut succeeded = 0;
        for index in 0..self.chips.len() {
            succeeded += self.poll_one(index, group, selection);
        }
        succeeded
    }

    /// One chip's chain only (to measure the chain the ideal poll time is built from).
    pub fn poll_one(&mut self, index: usize, group: MetricGroup, selection: MetricSet) -> usize {
        match self.chips.get(index) {
            Some(chip) => self.poll_chip(index, *chip, group, selection),
            None => 0,
        }
    }

    fn poll_chip(&mut self, index: usize, chip: LogicId, group: MetricGroup, selection: MetricSet) -> usize {
        let mut succeeded = 0;
        for metric in Metric::ALL.into_iter().filter(|metric| metric.group() == group && selection.contains(*metric)) {
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
    }
}

fn keep<T>(result: Result<T>) -> Result<()> {
    black_box(result).map(|_| ())
}

/// How many calls one chip's chain of `group` makes when every metric is selected and supported.
pub fn chain_length(group: MetricGroup) -> usize {
    MetricSet::group(group).len()
}
