//! What the sampler's pool workers run: a chip's job, the chip's chain of driver calls.

use std::ops::ControlFlow;
use std::sync::Arc;
use std::time::Instant;

use super::chip_sample::{BandwidthSample, ChipSample, ChipStateSample, LinkSample, MemorySample, UtilizationSample};
use super::chip_slot::ChipSlot;
use super::config::Profiling;
use super::metric::{GroupSet, Metric, MetricGroup, MetricSet, ECC_COMPONENTS};
use super::sampled::Sampled;
use super::shared::Shared;
use crate::deadline::worker_pool::{JobEnd, Runner};
use crate::device_manager::DeviceManager;
use crate::error::Result;
use crate::identity::ChipIdentity;
use crate::ids::LogicId;
use crate::telemetry::{FrequencyKind, UtilizationKind};

/// One chip's chain for one round: a few words, sent through a bounded array channel (no allocation per job).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Job {
    pub(crate) chip: u32,
    pub(crate) groups: GroupSet,
    pub(crate) round: u64,
}

/// The runner of one pool worker: a scratch copy of a chip sample, reused for every job (cloning the slot copies
/// inline data and bumps an `Arc`), made once on the worker's thread.
pub(crate) fn runner(shared: Arc<Shared>) -> Runner<Job> {
    let mut scratch = shared.chips.first().map(|first| first.sample.lock().clone());
    Box::new(move |job| match scratch.as_mut() {
        Some(scratch) => run_job(&shared, job, scratch),
        None => JobEnd::Done,
    })
}

/// Runs one chip's chain on the scratch copy and commits it to the slot, unless the dispatcher gave up on it.
fn run_job(shared: &Shared, job: Job, scratch: &mut ChipSample) -> JobEnd {
    let Some(slot) = shared.chips.get(job.chip as usize) else { return JobEnd::Done };
    let started = Instant::now();
    if !slot.call.start(job.round, shared.nanos_since_epoch(started)) {
        return JobEnd::Done;
    }
    scratch.copy_groups_from(&slot.sample.lock(), job.groups);
    let chain = Chain {
        manager: shared.manager.as_ref(),
        chip: slot.ids.logic,
        slot,
        round: job.round,
        selection: shared.selection(),
        profiling: shared.profiling,
    };
    if chain.run(scratch, job.groups).is_break() {
        slot.call.release_abandoned(job.round);
        return JobEnd::Abandoned;
    }
    let committed = {
        let mut sample = slot.sample.lock();
        let finished = slot.call.finish(job.round);
        if finished {
            sample.copy_groups_from(scratch, job.groups);
            sample.complete(job.groups, started, Instant::now());
        }
        finished
    };
    if !committed {
        slot.call.release_abandoned(job.round);
        return JobEnd::Abandoned;
    }
    shared.chain_done();
    JobEnd::Done
}

/// The dispatcher gave up on the chain: stop calling the chip.
struct Abandoned;

type Step = ControlFlow<Abandoned>;

/// The calls of one chip for one round, in a fixed order, each skipped when deselected or known unsupported.
struct Chain<'a> {
    manager: &'a dyn DeviceManager,
    chip: LogicId,
    slot: &'a ChipSlot,
    round: u64,
    selection: MetricSet,
    profiling: Profiling,
}

impl Chain<'_> {
    fn run(&self, sample: &mut ChipSample, groups: GroupSet) -> Step {
        for group in groups.iter() {
            match group {
                MetricGroup::Utilization => self.utilization(sample.utilization_mut())?,
                MetricGroup::ChipState => self.chip_state(sample.state_mut())?,
                MetricGroup::Memory => self.memory(sample.memory_mut())?,
                MetricGroup::Identity => self.identity(sample.identity_mut())?,
                MetricGroup::Links => self.links(sample.links_mut())?,
                MetricGroup::Bandwidth => self.bandwidth(sample.bandwidth_mut())?,
                MetricGroup::Vnpu => {
                    self.read(Metric::Vnpus, sample.vnpus_mut(), |m, chip| m.vnpus(chip).map(Arc::new))?
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn utilization(&self, sample: &mut UtilizationSample) -> Step {
        for kind in UtilizationKind::ALL {
            self.read(Metric::Utilization(kind), sample.get_mut(kind), |m, chip| m.utilization(chip, kind))?;
        }
        ControlFlow::Continue(())
    }

    fn chip_state(&self, sample: &mut ChipStateSample) -> Step {
        self.read(Metric::Temperature, &mut sample.temperature, |m, chip| m.temperature(chip))?;
        self.read(Metric::Power, &mut sample.power, |m, chip| m.power(chip))?;
        self.read(Metric::Voltage, &mut sample.voltage, |m, chip| m.voltage(chip))?;
        for kind in FrequencyKind::ALL {
            self.read(Metric::Frequency(kind), sample.frequency_mut(kind), |m, chip| m.frequency(chip, kind))?;
        }
        self.read(Metric::Health, &mut sample.health, |m, chip| m.health(chip))?;
        self.read(Metric::NetworkHealth, &mut sample.network_health, |m, chip| m.network_health(chip))
    }

    /// Keeps the identity it has (the same `Arc`) while the manager says the chip is unchanged: in steady state a
    /// refresh builds nothing.
    fn identity(&self, sample: &mut Sampled<Arc<ChipIdentity>>) -> Step {
        let known = sample.value().cloned();
        self.read(Metric::Identity, sample, |m, chip| match known {
            Some(known) if m.identity_unchanged(chip, &known)? => Ok(known),
            _ => m.identity(chip).map(Arc::new),
        })
    }

    fn links(&self, sample: &mut LinkSample) -> Step {
        self.read(Metric::HccsStatistics, &mut sample.hccs, |m, chip| m.hccs_statistics(chip))?;
        self.read(Metric::SioCrcErrors, &mut sample.sio, |m, chip| m.sio_crc_errors(chip))?;
        self.read(Metric::UbPorts, &mut sample.ub, |m, chip| m.ub_ports(chip).map(Arc::from))
    }

    fn bandwidth(&self, sample: &mut BandwidthSample) -> Step {
        let Profiling { hccs, pcie } = self.profiling;
        self.read(Metric::HccsBandwidth, &mut sample.hccs, |m, chip| m.hccs_bandwidth(chip, hccs))?;
        self.read(Metric::PcieBandwidth, &mut sample.pcie, |m, chip| m.pcie_bandwidth(chip, pcie))
    }

    fn memory(&self, sample: &mut MemorySample) -> Step {
        self.read(Metric::DdrMemory, &mut sample.ddr, |m, chip| m.ddr_memory(chip))?;
        self.read(Metric::HbmMemory, &mut sample.hbm, |m, chip| m.hbm_memory(chip))?;
        for component in ECC_COMPONENTS {
            self.read(Metric::Ecc(component), sample.ecc_mut(component), |m, chip| m.ecc(chip, component))?;
        }
        self.read(Metric::Processes, &mut sample.processes, |m, chip| m.processes(chip))
    }

    /// Makes one call unless the metric is deselected or known unsupported, and records its outcome.
    fn read<T>(
        &self,
        metric: Metric,
        target: &mut Sampled<T>,
        call: impl FnOnce(&dyn DeviceManager, LogicId) -> Result<T>,
    ) -> Step {
        if !self.selection.contains(metric) {
            target.disable();
            return ControlFlow::Continue(());
        }
        if self.slot.unsupported.contains(metric) {
            target.mark_unsupported();
            return ControlFlow::Continue(());
        }
        let result = call(self.manager, self.chip);
        if self.slot.call.is_abandoned(self.round) {
            return ControlFlow::Break(Abandoned);
        }
        if matches!(&result, Err(error) if error.is_unsupported()) {
            self.slot.unsupported.insert(metric);
        }
        target.record(result, Instant::now());
        ControlFlow::Continue(())
    }
}
