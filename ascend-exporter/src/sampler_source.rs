//! The snapshot source over [`ascend_dcmi::Sampler`]: each scrape copies the sampler's per-chip slots.
//!
//! [`Sampler::visit`] locks one chip's slot at a time for a copy and never waits on the driver, so a scrape stays
//! flat however slow or hung a chip is; a chip whose calls time out keeps its last values, marked stale.

use std::sync::Arc;

use ascend_dcmi::sampler::ECC_COMPONENTS;
use ascend_dcmi::{ChipSample, FrequencyKind, MetricGroup, Sampler, UtilizationKind};

use crate::snapshot::{ChipSnapshot, GroupFreshness, Reading, Snapshot, SnapshotRevision, SnapshotSource};

/// Serves snapshots from a running background sampler.
#[derive(Debug)]
pub struct SamplerSource {
    sampler: Sampler,
    driver_version: Option<String>,
    cards: Option<usize>,
}

impl SamplerSource {
    /// Wraps a sampler started with [`Sampler::spawn`]; `driver_version` is read once at start-up.
    pub fn new(sampler: Sampler, driver_version: Option<String>) -> Self {
        Self { sampler, driver_version, cards: None }
    }

    /// Adds the card count (`dcmi_get_card_list`), also read once at start-up: cards do not change while the
    /// driver runs, and the sampler's chip list is fixed for its life as well.
    #[must_use]
    pub fn with_cards(mut self, cards: Option<usize>) -> Self {
        self.cards = cards;
        self
    }

    /// The sampler, for example to poll it on demand when it was started with [`Sampler::new`].
    pub fn sampler(&self) -> &Sampler {
        &self.sampler
    }
}

impl SnapshotSource for SamplerSource {
    fn latest(&self) -> Option<Arc<Snapshot>> {
        let last_poll = self.sampler.last_poll()?;
        let mut chips = Vec::with_capacity(self.sampler.chips().len());
        self.sampler.visit(|sample| chips.push(chip_snapshot(sample)));
        Some(Arc::new(Snapshot {
            published_at: last_poll.started + last_poll.elapsed,
            driver_version: self.driver_version.clone(),
            cards: self.cards,
            chips,
        }))
    }

    /// The end of the sampler's latest round: the chips' slots change during rounds. A call that hung past its
    /// round's deadline and returns later also writes its chip's slot; that value shows from the next round on.
    fn revision(&self) -> Option<SnapshotRevision> {
        self.sampler.last_poll().map(|poll| SnapshotRevision::RoundEnd(poll.started + poll.elapsed))
    }
}

/// One chip's sample in the exporter's model: the last value of everything (however old), and each group's age.
fn chip_snapshot(sample: &ChipSample) -> ChipSnapshot {
    let mut chip = ChipSnapshot::new(*sample.ids());
    for group in MetricGroup::ALL {
        let status = sample.group(group);
        chip.freshness[group.index()] =
            GroupFreshness { last_success: status.last_completed(), stale: status.timed_out() };
    }
    let state = sample.state();
    let memory = sample.memory();
    chip.identity = sample.identity().value().cloned();
    chip.health = state.health.value().copied();
    chip.temperature = state.temperature.value().copied();
    chip.power = state.power.value().copied();
    chip.voltage = state.voltage.value().copied();
    chip.network = state.network_health.value().copied();
    chip.clocks = FrequencyKind::ALL
        .into_iter()
        .filter_map(|kind| state.frequency(kind).value().map(|mhz| (kind, *mhz)))
        .collect();
    chip.utilization = UtilizationKind::ALL
        .into_iter()
        .filter_map(|kind| sample.utilization().get(kind).value().map(|percent| (kind, *percent)))
        .collect();
    chip.ddr = memory.ddr.value().copied();
    chip.hbm = memory.hbm.value().copied();
    chip.ecc = ECC_COMPONENTS
        .into_iter()
        .filter_map(|component| memory.ecc(component).value().map(|counters| (component, *counters)))
        .collect();
    chip.processes = memory.processes.value().copied();
    chip.hccs_statistics = Reading::of(&sample.links().hccs);
    chip.sio_crc_errors = Reading::of(&sample.links().sio);
    chip.hccs_bandwidth = Reading::of(&sample.bandwidth().hccs);
    chip.pcie_bandwidth = Reading::of(&sample.bandwidth().pcie);
    chip.ub_ports = sample.links().ub.value().cloned();
    chip.vnpus = sample.vnpus().value().cloned();
    chip
}
