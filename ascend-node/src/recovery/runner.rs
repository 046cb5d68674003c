//! The loop that carries out the planner's decisions on a running node: at every health snapshot (and every few
//! seconds, for idle times) it asks [`RecoveryPlanner`] what to do, withdraws a reset group from new work, waits for
//! the consumers to see it withdrawn, checks once more that nothing took a chip of the group, resets the chip through
//! the driver and waits for the group's boot, then hands the chips back to the monitor's verdict.
//!
//! Never resetting a chip in use rests on that order: the group is listed unhealthy (the kubelet stops choosing it,
//! the DRA driver taints it) *before* the last check of its holders, and a chip taken in between aborts the reset.

use std::collections::BTreeSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{BootStatus, ChipIds, DeviceManager, LogicId, PhyId};
use tokio::sync::watch;

use super::config::{RecoveryConfig, RecoveryMode};
use super::planner::{ChipFacts, Decision, HeldOut, Need, RecoveryPlanner, RecoveryStatus};
use crate::inventory::{Health, Snapshot, UnhealthyCause};

/// Who holds chips now: the kubelet's assignments (PodResources), the daemon's own allocations, prepared DRA claims.
pub trait Holders: Send + Sync {
    /// The chips (physical ids) something holds, read anew (the last check before a reset asks here); an error when
    /// that cannot be known, and then no chip is reset.
    fn held(&self) -> Pin<Box<dyn Future<Output = Result<BTreeSet<PhyId>, String>> + Send + '_>>;
}

/// Where the runner withdraws chips from new work: the health monitor lists them unhealthy while they are in the set
/// ([`crate::HealthMonitor::withdrawals`]).
pub trait Withdrawals: Send + Sync {
    /// Replaces the set of withdrawn chips.
    fn set(&self, chips: BTreeSet<PhyId>);
}

/// What the runner did, for Events, metrics and logs. Every method does nothing by default.
pub trait RecoveryObserver: Send + Sync {
    /// A reset of `chip` starts, taking `group` down.
    fn reset_started(&self, _chip: ChipIds, _group: &[ChipIds]) {}
    /// The reset of `chip` ended: the time to the group's boot, or why it failed.
    fn reset_finished(&self, _chip: ChipIds, _outcome: &Result<Duration, String>) {}
    /// The reset of `chip` did not start: `taken` were taken between the decision and the reset.
    fn reset_aborted(&self, _chip: ChipIds, _taken: &[ChipIds]) {}
    /// `chip` stays out.
    fn held_out(&self, _chip: ChipIds, _why: &HeldOut) {}
    /// The chips held out now (after a round that changed them): those [`Self::held_out`] reported, less those that
    /// since read healthy by other means (an operator's reset) or left the driver's list.
    fn held_out_now(&self, _chips: &[ChipIds]) {}
}

/// An observer that records nothing.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoRecoveryObserver;

impl RecoveryObserver for NoRecoveryObserver {}

/// A chip's need from the monitor's verdict.
pub fn need_of(health: &Health) -> Need {
    match health {
        Health::Healthy => Need::Nothing,
        Health::Unhealthy(UnhealthyCause::Faulty { level, card_dropped, .. }) => {
            Need::of(false, Some(*level), *card_dropped)
        }
        Health::Unhealthy(_) => Need::Other,
    }
}

/// Runs recovery for one node.
pub struct RecoveryRunner {
    config: RecoveryConfig,
    planner: Option<RecoveryPlanner>,
    manager: Arc<dyn DeviceManager>,
    snapshots: watch::Receiver<Arc<Snapshot>>,
    withdrawals: Arc<dyn Withdrawals>,
    holders: Arc<dyn Holders>,
    observer: Arc<dyn RecoveryObserver>,
    withdrawn: BTreeSet<PhyId>,
    /// The chips last reported through [`RecoveryObserver::held_out_now`].
    held_out: Vec<ChipIds>,
    tick: Duration,
    grace: Duration,
}

impl std::fmt::Debug for RecoveryRunner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RecoveryRunner").field("config", &self.config).field("withdrawn", &self.withdrawn).finish()
    }
}

/// The longest wait between rounds without a new snapshot (a round is also due when a chip's idle time ends).
const TICK: Duration = Duration::from_secs(5);
/// How long a withdrawn group waits before its holders are checked the last time: the kubelet has the unhealthy
/// list by then (the device plugin sends it at once), and an allocation it made before is in PodResources.
const GRACE: Duration = Duration::from_secs(2);

impl RecoveryRunner {
    /// A runner reading `snapshots` of the monitor over `manager`'s chips.
    pub fn new(
        config: RecoveryConfig,
        manager: Arc<dyn DeviceManager>,
        snapshots: watch::Receiver<Arc<Snapshot>>,
        withdrawals: Arc<dyn Withdrawals>,
        holders: Arc<dyn Holders>,
        observer: Arc<dyn RecoveryObserver>,
    ) -> Self {
        RecoveryRunner {
            config,
            planner: None,
            manager,
            snapshots,
            withdrawals,
            holders,
            observer,
            withdrawn: BTreeSet::new(),
            held_out: Vec::new(),
            tick: TICK,
            grace: GRACE,
        }
    }

    /// Other round and withdrawal timing (tests).
    pub fn with_timing(mut self, tick: Duration, grace: Duration) -> Self {
        self.tick = tick;
        self.grace = grace;
        self
    }

    /// Runs rounds until `shutdown` completes or the monitor stops. Returns at once in [`RecoveryMode::Off`].
    pub async fn run(mut self, shutdown: impl Future<Output = ()>) {
        if self.config.mode == RecoveryMode::Off {
            return;
        }
        tokio::pin!(shutdown);
        loop {
            // The next round: at a new snapshot, when a chip's idle time ends, or after the tick at the latest.
            let tick = tokio::time::Instant::now() + self.tick;
            let due = self.planner.as_ref().and_then(RecoveryPlanner::next_due).map(tokio::time::Instant::from_std);
            let next = due.map_or(tick, |due| due.min(tick));
            tokio::select! {
                () = &mut shutdown => return,
                changed = self.snapshots.changed() => if changed.is_err() { return },
                () = tokio::time::sleep_until(next) => {}
            }
            self.round().await;
        }
    }

    async fn round(&mut self) {
        let snapshot = self.snapshots.borrow_and_update().clone();
        let chips: Vec<(ChipIds, Need)> =
            snapshot.chips().map(|(record, health)| (record.ids, need_of(health))).collect();
        let Some(&(first, _)) = chips.first() else { return };
        if self.planner.is_none() {
            let chip_type = snapshot.chips().next().map(|(record, _)| record.chip_type);
            let Some(chip_type) = chip_type else { return };
            let board_id = self
                .blocking(move |manager| manager.identity(first.logic))
                .await
                .ok()
                .and_then(|identity| identity.board.and_then(|board| board.board_id));
            self.planner = Some(RecoveryPlanner::new(self.config.clone(), chip_type, board_id));
        }
        // Who holds what unknown: every chip counts as held, so none is reset.
        let mut held = match self.holders.held().await {
            Ok(held) => held,
            Err(error) => {
                tracing::warn!(%error, "cannot tell which chips are held; no chip is reset until it can");
                chips.iter().map(|(ids, _)| ids.phy).collect()
            }
        };
        // A process on a chip holds it too (a container outside the kubelet's books, a job on the host): asked of
        // the driver only while some chip may still be reset, so that a busy group is not withdrawn only to be found
        // busy (a chip held out, or one being reset, is not decided again and asks for nothing).
        let decided = |ids: &ChipIds| {
            self.planner
                .as_ref()
                .and_then(|planner| planner.status().get(&ids.logic))
                .is_some_and(|status| matches!(status, RecoveryStatus::HeldOut(_) | RecoveryStatus::Resetting { .. }))
        };
        if chips.iter().any(|(ids, need)| *need == Need::Reset && !decided(ids)) {
            let all: Vec<ChipIds> = chips.iter().map(|(ids, _)| *ids).collect();
            held.extend(self.with_processes(all).await.into_iter().map(|ids| ids.phy));
        }
        let facts: Vec<ChipFacts> = chips
            .iter()
            .map(|(ids, need)| ChipFacts {
                logic: ids.logic,
                card: ids.locator.map(|locator| locator.card.0),
                need: *need,
                held: held.contains(&ids.phy),
            })
            .collect();
        let Some(planner) = self.planner.as_mut() else { return };
        let decisions = planner.plan(Instant::now(), &facts);
        let ids_of = |logic: LogicId| chips.iter().map(|(ids, _)| *ids).find(|ids| ids.logic == logic);
        for decision in decisions {
            match decision {
                Decision::HeldOut { chip, why } => {
                    if let Some(ids) = ids_of(chip) {
                        self.observer.held_out(ids, &why);
                    }
                }
                Decision::Reset { chip, group } => {
                    let group: Vec<ChipIds> = group.iter().filter_map(|logic| ids_of(*logic)).collect();
                    if let Some(ids) = ids_of(chip) {
                        self.reset(ids, group).await;
                    }
                }
            }
        }
        let held_out: Vec<ChipIds> = self.planner.as_ref().map_or_else(Vec::new, |planner| {
            chips
                .iter()
                .map(|(ids, _)| *ids)
                .filter(|ids| matches!(planner.status().get(&ids.logic), Some(RecoveryStatus::HeldOut(_))))
                .collect()
        });
        if held_out != self.held_out {
            self.observer.held_out_now(&held_out);
            self.held_out = held_out;
        }
    }

    /// Withdraws `group`, checks its holders once more, resets `chip`, waits for the group's boot, gives it back.
    async fn reset(&mut self, chip: ChipIds, group: Vec<ChipIds>) {
        let phys: BTreeSet<PhyId> = group.iter().map(|ids| ids.phy).collect();
        self.withdrawn.extend(phys.iter().copied());
        self.withdrawals.set(self.withdrawn.clone());
        tokio::time::sleep(self.grace).await;
        let taken = self.taken(&group).await;
        if !taken.is_empty() {
            tracing::warn!(%chip, taken = ?taken.iter().map(|ids| ids.phy).collect::<Vec<_>>(), "reset not started: a chip of its group was taken");
            if let Some(planner) = self.planner.as_mut() {
                planner.aborted(chip.logic);
            }
            self.observer.reset_aborted(chip, &taken);
            self.give_back(&phys);
            return;
        }
        tracing::info!(%chip, group = ?group.iter().map(|ids| ids.phy).collect::<Vec<_>>(), "resetting a faulty chip");
        self.observer.reset_started(chip, &group);
        let started = Instant::now();
        let timeout = self.config.boot_timeout;
        let logics: Vec<LogicId> = group.iter().map(|ids| ids.logic).collect();
        let outcome = self
            .blocking(move |manager| {
                manager.reset(chip.logic, timeout)?;
                wait_for_boot(manager, &logics, timeout.saturating_sub(started.elapsed()))
            })
            .await
            .map(|()| started.elapsed());
        match &outcome {
            Ok(took) => tracing::info!(%chip, ?took, "chip reset and booted"),
            Err(error) => tracing::warn!(%chip, %error, "chip reset failed: it stays out"),
        }
        if let Some(planner) = self.planner.as_mut() {
            if let Some(Decision::HeldOut { why, .. }) =
                planner.finished(chip.logic, outcome.clone().map(|_| ()), Instant::now())
            {
                self.observer.held_out(chip, &why);
            }
        }
        self.observer.reset_finished(chip, &outcome);
        self.give_back(&phys);
    }

    /// The chips of `group` something holds now: a container or claim, or a process on the chip; all of them when
    /// the holders cannot be read.
    async fn taken(&self, group: &[ChipIds]) -> Vec<ChipIds> {
        let held = match self.holders.held().await {
            Ok(held) => held,
            Err(_) => return group.to_vec(),
        };
        let mut taken: Vec<ChipIds> = group.iter().filter(|ids| held.contains(&ids.phy)).copied().collect();
        for ids in self.with_processes(group.to_vec()).await {
            if !taken.contains(&ids) {
                taken.push(ids);
            }
        }
        taken
    }

    /// The chips among `chips` with a process on them, as the driver lists them; a chip whose list cannot be read
    /// counts as busy.
    async fn with_processes(&self, chips: Vec<ChipIds>) -> Vec<ChipIds> {
        let all = chips.clone();
        let busy = self.blocking(move |manager| {
            Ok(chips
                .into_iter()
                .filter(|ids| manager.processes(ids.logic).map_or(true, |list| !list.is_empty()))
                .collect())
        });
        busy.await.unwrap_or(all)
    }

    fn give_back(&mut self, phys: &BTreeSet<PhyId>) {
        self.withdrawn.retain(|phy| !phys.contains(phy));
        self.withdrawals.set(self.withdrawn.clone());
    }

    /// Runs driver calls off the async threads; a failure as its message.
    async fn blocking<T: Send + 'static>(
        &self,
        call: impl FnOnce(&dyn DeviceManager) -> ascend_dcmi::Result<T> + Send + 'static,
    ) -> Result<T, String> {
        let manager = Arc::clone(&self.manager);
        match tokio::task::spawn_blocking(move || call(manager.as_ref())).await {
            Ok(result) => result.map_err(|error| error.to_string()),
            Err(join) => Err(format!("the recovery task failed: {join}")),
        }
    }
}

/// Waits until every chip of the group reports its boot finished.
fn wait_for_boot(manager: &dyn DeviceManager, chips: &[LogicId], timeout: Duration) -> ascend_dcmi::Result<()> {
    let started = Instant::now();
    for chip in chips {
        loop {
            if let Ok(BootStatus::Finished) = manager.boot_status(*chip) {
                break;
            }
            if started.elapsed() >= timeout {
                let context = ascend_dcmi::CallContext::chip("dcmi_get_device_boot_status", None, Some(*chip));
                return Err(ascend_dcmi::Error::Timeout { context, deadline: timeout });
            }
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    Ok(())
}
