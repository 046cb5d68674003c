//! The polling hot path: [`Sampler`] reads a chosen set of metrics for every chip, for exporters and health loops.
//!
//! # Model
//!
//! Metrics come in [`MetricGroup`]s, each with its own interval in background mode (Huawei's defaults):
//! utilisation (1 s), chip state = temperature, power, voltage, clocks, health, network health (5 s), memory = DDR,
//! HBM, ECC, processes (10 s), identity (60 s), links = HCCS and SIO counters (60 s) and bandwidth = HCCS and PCIe
//! bandwidth (60 s). Bandwidth calls block for a profiling window (200 ms by default) each, so that group is *slow*:
//! a second dispatcher with its own workers, deadline ([`SamplerConfig::bandwidth_deadline`]) and schedule thread
//! polls it into the same per-chip samples, and a chip waiting out a window still answers its fast groups on time. A [`MetricSet`] turns single metrics off (the exporter's
//! metric-selection file); a deselected metric is never called.
//!
//! Every chip has a slot allocated once, holding a [`ChipSample`]: per value a [`Sampled`] (last value, read time,
//! and [`SampleState`]: fresh, timed out, unsupported, failed with its DCMI code, disabled), per group a
//! [`GroupStatus`] (last attempt, last completion = sample age, timed out), and an `up` flag.
//!
//! # API
//!
//! * Build: [`Sampler::new`]`(manager, config)` polls only when asked ([`Sampler::poll`] one group,
//!   [`Sampler::poll_groups`] several in one chain per chip; both return a [`PollSummary`]);
//!   [`Sampler::spawn`]`(manager, config)` also polls every group on its interval in the background.
//!   [`Sampler::stop`] (or drop) ends both.
//! * Configure: [`SamplerConfig`] (`with_metrics`, `with_interval`, `with_deadline`, `with_concurrency`);
//!   [`Sampler::set_metrics`] changes the selection of a running sampler.
//! * Read, never waiting on the driver: [`Sampler::visit`] (every chip, for a scrape), [`Sampler::read`] (one chip,
//!   by logic id, through a closure), [`Sampler::snapshot`] (a copy), [`Sampler::hung_chips`],
//!   [`Sampler::last_poll`].
//!
//! # One round
//!
//! A round ([`Sampler::poll`], or the background schedule) queues one job per chip on the bounded queue of a worker
//! pool, the crate's one mechanism for driver calls with deadlines ([`crate::deadline`]). A job is the
//! chip's whole **chain** of calls for the round's groups, run on one worker thread, so the calls to one chip stay
//! serial. `concurrency` workers take jobs, so at most that many chips are called at once: the driver's
//! "anti-attack protection" fails bursts. DCMI calls therefore never run on the caller's (possibly async) thread.
//!
//! The deadline bounds a chip's whole chain for the round (which is what a round reports per chip): a chain of
//! eleven utilisation calls gets the same deadline as a single call. The dispatcher sleeps until the last chain of
//! the round completes (the worker finishing it sends one wake-up) or the earliest running chain reaches its
//! deadline. A chain running longer than the deadline is **abandoned**: its
//! chip is marked timed out for the round (values keep their last reading, `up` turns false), the round completes
//! without it, and a new worker replaces the one stuck in the call, so every other chip still answers on time. The
//! stuck chip is not queued again until its call returns (no pile-up of calls on a hung chip); later rounds report
//! it as timed out at once (`PollSummary::still_hung`). When the call returns, the worker discards the result and
//! ends. Each chip's phase (idle, queued, running, abandoned) and round number share one atomic, so a job from a round
//! that gave up can never start or commit.
//!
//! A chain works on a worker's scratch copy and commits it to the chip's slot under a short per-chip mutex that is
//! never held across a driver call; readers ([`Sampler::read`], [`Sampler::visit`], [`Sampler::snapshot`]) take the
//! same mutex, so they see each chip consistent (all values of one chain) without waiting on the driver. Chips are not
//! consistent with each other (they are polled at different instants anyway). A seqlock would spare readers the
//! lock but needs `unsafe` for a 2 KiB copy; with a lock held for one group copy (well under a microsecond; a
//! 256-chip visit costs 16 ns per chip, see below) it was not needed.
//!
//! A call answering -8255 (or missing from the library) is remembered per chip and metric and not asked again.
//!
//! # No heap allocation per poll
//!
//! Once warm, a round of any group allocates nothing in the sampler: jobs and wake-ups are `Copy` values in
//! preallocated array channels, slots and scratch copies are inline data, [`MetricSet`] and [`GroupSet`] are bit
//! sets, no `Box` or `Vec` per task. Warm means: the workers have started ([`Sampler::new`] waits for that), each
//! thread that polls has polled once (its first poll sets up the per-thread state of crossbeam and parking_lot), and
//! the channels have had their waiters once (the first rounds).
//!
//! The real [`crate::Dcmi`] keeps it so: its trait methods find the chip in a lock-free table and borrow the handle
//! (no `Arc` clone), fault codes are read into an inline [`crate::FaultCodes`] (DCMI reports at most 128), process
//! lists are inline, network health runs on the sampler's worker rather than a thread of its own, and the identity
//! group asks [`crate::DeviceManager::identity_unchanged`], which compares the driver's buffers in place, and keeps
//! the identity's `Arc` while nothing changed.
//!
//! Two tests prove it with a counting global allocator across polls of every group and the readers:
//! `tests/sampler_alloc.rs` over a fake manager whose answers are heap-free (utilisation, chip state, memory), and
//! `tests/sampler_alloc_sim.rs` over `Dcmi` loading dcmi-sim with `dlopen`, with the exporter's default configuration
//! (every metric of every group but the UB port table and the vNPU list), an active fault code and a slow chip, on a DCMI V1 and a DCMI V2 (Atlas 950)
//! host.
//!
//! Not covered: the first identity read of a chip and a real identity change (they build `String`s), error values
//! that carry text (an out-of-range reading, for example), the recovery after a timeout (a replacement worker thread
//! is spawned), and whatever the vendor's C library allocates with its own allocator.
//!
//! # Measured cost
//!
//! `cargo bench -p ascend-benches -- --warm-up-time 1 --measurement-time 3`, optimised build, on the team's 2-core
//! VM (shared with other builds, so expect ±10% noise). "fake" is the in-process fake manager of the tests (a call
//! costs about 60 ns), "sim" is dcmi-sim's Atlas 800T A2 loaded with `dlopen`. Mean times:
//!
//! * **Safe vs raw** and **full-node poll**: `benches/run.sh` measures both and writes them to the repository's
//!   `docs/performance.md` (§1 and §2): one temperature read through [`crate::Chip::temperature`] and through
//!   [`crate::DeviceManager::temperature`] on `Dcmi` against the raw `dcmi-sys` pointer (within a few percent;
//!   before the trait path used the lock-free id table and a borrowed chip view it built a `Chip` per call, 1.15x),
//!   and a poll of the exporter's default set on 8, 64 and 256 simulated chips at 2 ms per call, within 1 % of one
//!   chip's chain times the number of waves.
//! * **Fixed cost** (`fixed_cost`: one temperature call per chip, fake answering instantly; sampler minus the same
//!   calls in a serial loop): 8 chips 8.4 µs vs 0.46 µs, 64 chips 29 µs vs 3.6 µs, 256 chips 69 µs vs 19.5 µs with
//!   4 workers (111 µs with 1). So a poll costs about 7 µs of thread hand-offs (waking the workers and, once, the
//!   polling thread) plus **about 0.2 µs per chip** (queueing, two compare-and-swaps, three clock reads, copying
//!   the group into and out of the slot under its lock). Readers: [`Sampler::visit`] of 256 chips 4.2 µs
//!   (16 ns per chip), [`Sampler::snapshot`] of one chip 125 ns.
//!
//! # Example
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use ascend_dcmi::{DeviceManager, MetricGroup, Sampler, SamplerConfig, UtilizationKind};
//!
//! fn exporter(manager: Arc<dyn DeviceManager>) -> ascend_dcmi::Result<()> {
//!     let config = SamplerConfig::default().with_deadline(Duration::from_secs(1));
//!     let mut sampler = Sampler::spawn(manager, config)?;
//!     // On each scrape: never waits on the driver.
//!     sampler.visit(|chip| {
//!         let aicore = chip.utilization().get(UtilizationKind::AiCore).value();
//!         let age = chip.group(MetricGroup::Utilization).age(std::time::Instant::now());
//!         println!("{} up={} aicore={aicore:?} age={age:?}", chip.ids(), chip.is_up());
//!     });
//!     sampler.stop()
//! }
//! ```

mod chip_sample;
mod chip_slot;
mod config;
mod dispatcher;
mod metric;
mod sampled;
mod schedule;
mod shared;
mod worker;

use std::sync::Arc;
use std::thread::JoinHandle;

use crossbeam_channel::{bounded, Sender};

pub use chip_sample::{
    BandwidthSample, ChipSample, ChipStateSample, GroupStatus, LinkSample, MemorySample, UtilizationSample,
};
pub use config::{
    SamplerConfig, DEFAULT_CONCURRENCY, DEFAULT_DEADLINE, DEFAULT_PROFILING, MAX_HCCS_PROFILING, MAX_PCIE_PROFILING,
    MIN_DEADLINE, MIN_INTERVAL,
};
pub use dispatcher::PollSummary;
pub use metric::{GroupSet, Metric, MetricGroup, MetricSet, ParseMetricError, ECC_COMPONENTS, METRIC_COUNT};
pub use sampled::{SampleState, Sampled};

use crate::device_manager::DeviceManager;
use crate::error::{Error, Result};
use crate::ids::{ChipIds, LogicId};
use chip_slot::ChipSlot;
use dispatcher::Dispatcher;
use shared::Shared;

/// Polls chips on worker threads with deadlines into preallocated per-chip slots. See the [module docs](self).
///
/// Dropping the sampler stops it like [`Sampler::stop`], ignoring the outcome.
pub struct Sampler {
    /// Polls the fast groups.
    dispatcher: Arc<Dispatcher>,
    /// Polls the [slow](MetricGroup::is_slow) groups: its own workers, deadline and per-chip call state over the same
    /// per-chip samples, so that a chip waiting out a profiling window still answers its other groups.
    slow: Arc<Dispatcher>,
    config: SamplerConfig,
    /// The chips, sorted by logic id (the slot order).
    chips: Box<[ChipIds]>,
    background: Option<Background>,
    stopped: bool,
}

struct Background {
    /// Dropping it stops both schedules.
    stop: Sender<()>,
    threads: Vec<JoinHandle<()>>,
}

const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Sampler>();
};

impl Sampler {
    /// Enumerates the chips once and starts the worker threads; polls only when [`Sampler::poll`] is called.
    ///
    /// The chip list is fixed for the sampler's life: after a driver restart or hot-plug build a new one.
    ///
    /// # Errors
    /// The error of [`DeviceManager::chips`], or [`Error::Worker`] if no worker thread can be started.
    pub fn new(manager: Arc<dyn DeviceManager>, config: SamplerConfig) -> Result<Self> {
        let mut chips = manager.chips()?;
        chips.sort_by_key(|chip| chip.logic);
        chips.dedup_by_key(|chip| chip.logic);
        let slots: Box<[ChipSlot]> = chips.iter().map(|ids| ChipSlot::new(*ids)).collect();
        let slow_slots: Box<[ChipSlot]> = slots.iter().map(ChipSlot::sharing_sample).collect();
        let profiling = config.profiling();
        let shared = Arc::new(Shared::new(Arc::clone(&manager), slots, config.metrics(), profiling));
        let slow_shared = Arc::new(Shared::new(manager, slow_slots, config.metrics(), profiling));
        let dispatcher = Dispatcher::start(shared, config.deadline(), config.concurrency())?;
        let slow = Dispatcher::start(slow_shared, config.bandwidth_deadline(), config.concurrency())?;
        Ok(Self {
            dispatcher: Arc::new(dispatcher),
            slow: Arc::new(slow),
            config,
            chips: chips.into_boxed_slice(),
            background: None,
            stopped: false,
        })
    }

    /// Like [`Sampler::new`], then polls in the background: every group at once, then each on its interval. Groups
    /// that fall due together share one round. The [slow](MetricGroup::is_slow) groups run on a schedule thread of
    /// their own, so their rounds never delay the others.
    ///
    /// # Errors
    /// As [`Sampler::new`]; [`Error::Worker`] if a schedule thread cannot be started.
    pub fn spawn(manager: Arc<dyn DeviceManager>, config: SamplerConfig) -> Result<Self> {
        let mut sampler = Self::new(manager, config)?;
        let (stop, stop_signal) = bounded(1);
        let mut threads = Vec::with_capacity(2);
        for (name, dispatcher, groups) in [
            ("dcmi-sampler-schedule", &sampler.dispatcher, GroupSet::FAST),
            ("dcmi-sampler-slow", &sampler.slow, GroupSet::SLOW),
        ] {
            let dispatcher = Arc::clone(dispatcher);
            let stop_signal = stop_signal.clone();
            let thread = std::thread::Builder::new()
                .name(name.to_owned())
                .spawn(move || schedule::run_schedule(&dispatcher, &config, groups, &stop_signal))
                .map_err(|error| Error::Worker(format!("cannot start the DCMI sampler schedule thread: {error}")))?;
            threads.push(thread);
        }
        sampler.background = Some(Background { stop, threads });
        Ok(sampler)
    }

    /// Polls one group on every chip now and returns when every chain completed or missed its deadline.
    ///
    /// # Errors
    /// [`Error::Worker`] if the sampler was stopped or no worker thread can be started. Driver errors are not errors
    /// of the poll: they are recorded per value.
    pub fn poll(&self, group: MetricGroup) -> Result<PollSummary> {
        self.poll_groups(GroupSet::of(group))
    }

    /// Polls several groups in one round: one chain per chip covering all of them; the slow groups among them in a
    /// round of their own after it (the summary then adds both up).
    ///
    /// # Errors
    /// As [`Sampler::poll`].
    pub fn poll_groups(&self, groups: GroupSet) -> Result<PollSummary> {
        let fast = groups.intersection(GroupSet::FAST);
        let slow = groups.intersection(GroupSet::SLOW);
        match (fast.is_empty(), slow.is_empty()) {
            (_, true) => self.dispatcher.run_round(fast),
            (true, false) => self.slow.run_round(slow),
            (false, false) => Ok(self.dispatcher.run_round(fast)?.followed_by(&self.slow.run_round(slow)?)),
        }
    }

    /// The chips, sorted by logic id.
    pub fn chips(&self) -> &[ChipIds] {
        &self.chips
    }

    /// The configuration the sampler was built with (the selection may have changed since, see
    /// [`Sampler::metrics`]).
    pub fn config(&self) -> &SamplerConfig {
        &self.config
    }

    /// The metrics polled from the next round on.
    pub fn metrics(&self) -> MetricSet {
        self.dispatcher.shared.selection()
    }

    /// Changes the selection (for example after the exporter's selection file changed). Deselected values read as
    /// [`SampleState::Disabled`] after their group's next round.
    pub fn set_metrics(&self, metrics: MetricSet) {
        self.dispatcher.shared.set_selection(metrics);
        self.slow.shared.set_selection(metrics);
    }

    /// Runs `read` on one chip's sample, holding that chip's slot lock only (never waits on the driver). `None` if
    /// no chip has this logic id.
    pub fn read<R>(&self, chip: LogicId, read: impl FnOnce(&ChipSample) -> R) -> Option<R> {
        let index = self.chips.binary_search_by_key(&chip, |ids| ids.logic).ok()?;
        let slot = self.dispatcher.shared.chips.get(index)?;
        let sample = slot.sample.lock();
        Some(read(&sample))
    }

    /// A copy of one chip's sample (inline data and an `Arc`: no heap allocation).
    pub fn snapshot(&self, chip: LogicId) -> Option<ChipSample> {
        self.read(chip, ChipSample::clone)
    }

    /// Calls `visit` for every chip in logic-id order, locking one chip's slot at a time.
    pub fn visit(&self, mut visit: impl FnMut(&ChipSample)) {
        for slot in self.dispatcher.shared.chips.iter() {
            visit(&slot.sample.lock());
        }
    }

    /// How many chips have a call stuck in the driver right now.
    pub fn hung_chips(&self) -> usize {
        let slow = self.slow.shared.chips.iter();
        self.dispatcher
            .shared
            .chips
            .iter()
            .zip(slow)
            .filter(|(fast, slow)| fast.call.is_stuck() || slow.call.is_stuck())
            .count()
    }

    /// What the latest round to end did, from either mode, of the fast or the slow groups.
    pub fn last_poll(&self) -> Option<PollSummary> {
        match (self.dispatcher.last_poll(), self.slow.last_poll()) {
            (Some(fast), Some(slow)) => Some(if slow.ended() > fast.ended() { slow } else { fast }),
            (fast, slow) => fast.or(slow),
        }
    }

    /// Stops the background schedule (if any) and the workers; waits for a running round to finish, and at most one
    /// deadline for workers inside a call. Later polls fail. Calling it again does nothing.
    ///
    /// # Errors
    /// [`Error::Worker`] naming how many worker threads are still blocked in a driver call (they are detached and end
    /// when the call returns), or if the schedule thread panicked.
    pub fn stop(&mut self) -> Result<()> {
        if self.stopped {
            return Ok(());
        }
        self.stopped = true;
        let schedule_panicked = match self.background.take() {
            Some(Background { stop, threads }) => {
                drop(stop);
                threads.into_iter().map(JoinHandle::join).fold(false, |panicked, joined| panicked | joined.is_err())
            }
            None => false,
        };
        let detached =
            self.dispatcher.close(self.config.deadline()) + self.slow.close(self.config.bandwidth_deadline());
        if schedule_panicked {
            return Err(Error::Worker("the DCMI sampler schedule thread panicked".to_owned()));
        }
        if detached > 0 {
            return Err(Error::Worker(format!(
                "{detached} DCMI sampler worker thread(s) still blocked in a driver call after {:?}; detached",
                self.config.deadline()
            )));
        }
        Ok(())
    }
}

impl Drop for Sampler {
    fn drop(&mut self) {
        // Drop cannot report; `stop` already detached whatever could not be joined.
        let _ = self.stop();
    }
}

impl std::fmt::Debug for Sampler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sampler")
            .field("chips", &self.chips.len())
            .field("config", &self.config)
            .field("background", &self.background.is_some())
            .field("stopped", &self.stopped)
            .finish()
    }
}
