//! The decisions of chip recovery: which faulty chip to reset and when, from the chips' state each round. It only
//! decides; the daemon that owns the chips withdraws them, resets them and reports back ([`RecoveryPlanner::finished`]).

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use ascend_dcmi::{ChipType, FaultLevel, LogicId};

use super::config::{RecoveryConfig, RecoveryMode};
use super::limiter::{Limiter, Refusal};
use super::reset_group::{reset_group, GroupedChip};

/// What a chip's state asks of recovery.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Need {
    /// Healthy.
    Nothing,
    /// Faulty with a fault the fault policy grades as a restart (`RestartRequest`, `RestartBusiness`,
    /// `FreeRestartNPU`, `RestartNPU`): a reset clears it.
    Reset,
    /// Faulty, but not something to reset for: an isolation level (`SeparateNPU`, `ManuallySeparateNPU` and
    /// `PreSeparateNPU`, which an operator or the scheduler handles), sub-health, a card off the bus, an unknown cause.
    Other,
}

impl Need {
    /// The need of a chip from its health verdict: healthy or not, the fault level when there is one, and whether
    /// the card dropped off the bus. The levels follow Huawei's device plugin (mind-cluster
    /// `component/ascend-device-plugin/pkg/server/hot_reset_manager.go`, `filterFaultDevices`).
    pub fn of(healthy: bool, level: Option<FaultLevel>, dropped: bool) -> Need {
        if healthy {
            return Need::Nothing;
        }
        match (dropped, level) {
            (false, Some(FaultLevel::RestartRequest | FaultLevel::RestartBusiness))
            | (false, Some(FaultLevel::FreeRestartNpu | FaultLevel::RestartNpu)) => Need::Reset,
            _ => Need::Other,
        }
    }
}

/// One chip as the planner sees it each round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ChipFacts {
    /// The driver's index.
    pub logic: LogicId,
    /// Its card; `None` on Ascend950.
    pub card: Option<i32>,
    /// What its state asks for.
    pub need: Need,
    /// Whether anything holds it: a container (the kubelet's assignments, the daemon's own allocations, prepared
    /// DRA claims) or a process on the chip.
    pub held: bool,
}

/// Why a chip stays out until an operator acts (or it reads healthy by itself).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HeldOut {
    /// It has used its resets ([`RecoveryConfig::per_chip`]).
    BudgetUsed,
    /// The reset, or the boot after it, failed.
    ResetFailed(String),
    /// It faulted again this soon after a reset cleared it.
    FaultedAgain {
        /// How long after the reset.
        after: Duration,
    },
}

/// What the owner of the chips is to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Withdraw the group from new work, check that nothing took it meanwhile, reset `chip` and wait for the group's
    /// boot; then report with [`RecoveryPlanner::finished`] (or [`RecoveryPlanner::aborted`]).
    Reset {
        /// The faulty chip.
        chip: LogicId,
        /// The chips the reset takes down, `chip` included.
        group: BTreeSet<LogicId>,
    },
    /// Report that `chip` stays out.
    HeldOut {
        /// The chip.
        chip: LogicId,
        /// Why.
        why: HeldOut,
    },
}

/// Where a chip is in its recovery, for people (`kubectl ascend faults`, metrics).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RecoveryStatus {
    /// Needs a reset; something holds a chip of its group (or, in offline-training mode, of the node).
    WaitingForRelease,
    /// Needs a reset; free since `since`, reset once it has been idle long enough.
    WaitingIdle {
        /// Free since.
        since: Instant,
    },
    /// Due, but the node has used its resets for now.
    WaitingForNodeBudget {
        /// Free since.
        since: Instant,
    },
    /// Being reset, with these chips.
    Resetting {
        /// The chips the reset takes down.
        group: BTreeSet<LogicId>,
        /// Since.
        since: Instant,
    },
    /// Reset and booted; waiting for the monitor to read it healthy.
    Verifying {
        /// Since the reset ended.
        since: Instant,
    },
    /// Stays out.
    HeldOut(HeldOut),
}

/// How long a reset chip may take to read healthy before its reset counts as failed: a few of the monitor's polls.
const VERIFY_WINDOW: Duration = Duration::from_secs(60);

/// The recovery decisions of one node: call [`RecoveryPlanner::plan`] at every health round.
#[derive(Debug)]
pub struct RecoveryPlanner {
    config: RecoveryConfig,
    chip_type: ChipType,
    board_id: Option<u32>,
    limiter: Limiter,
    status: BTreeMap<LogicId, RecoveryStatus>,
    /// When a reset last cleared each chip, within the refault window.
    cleared: BTreeMap<LogicId, Instant>,
}

impl RecoveryPlanner {
    /// A planner for a node of `chip_type` chips on a board of `board_id`.
    pub fn new(config: RecoveryConfig, chip_type: ChipType, board_id: Option<u32>) -> Self {
        let limiter = Limiter::new(config.per_chip, config.per_node);
        RecoveryPlanner { config, chip_type, board_id, limiter, status: BTreeMap::new(), cleared: BTreeMap::new() }
    }

    /// The configuration.
    pub fn config(&self) -> &RecoveryConfig {
        &self.config
    }

    /// One round: the decisions the chips' state calls for now. Nothing in [`RecoveryMode::Off`].
    pub fn plan(&mut self, now: Instant, chips: &[ChipFacts]) -> Vec<Decision> {
        let mut decisions = Vec::new();
        if self.config.mode == RecoveryMode::Off {
            return decisions;
        }
        let listed: BTreeSet<LogicId> = chips.iter().map(|chip| chip.logic).collect();
        self.status.retain(|chip, status| listed.contains(chip) || matches!(status, RecoveryStatus::Resetting { .. }));
        let window = self.config.refault_window;
        self.cleared.retain(|_, at| now.saturating_duration_since(*at) < window);
        let grouped: Vec<GroupedChip> = chips.iter().map(|c| GroupedChip { logic: c.logic, card: c.card }).collect();
        let held: BTreeSet<LogicId> = chips.iter().filter(|c| c.held).map(|c| c.logic).collect();
        let mut busy = self.withdrawn();
        for chip in chips {
            let current = self.status.get(&chip.logic).cloned();
            if matches!(current, Some(RecoveryStatus::Resetting { .. })) {
                continue;
            }
            if let Some(RecoveryStatus::Verifying { since }) = current {
                if chip.need == Need::Nothing {
                    // The reset cleared it: a fault from now on within the window is a fault that returned.
                    self.status.remove(&chip.logic);
                    self.cleared.insert(chip.logic, now);
                } else if now.saturating_duration_since(since) >= VERIFY_WINDOW {
                    let why = HeldOut::ResetFailed(format!("still unhealthy {VERIFY_WINDOW:?} after its reset"));
                    self.status.insert(chip.logic, RecoveryStatus::HeldOut(why.clone()));
                    decisions.push(Decision::HeldOut { chip: chip.logic, why });
                }
                continue;
            }
            match chip.need {
                Need::Nothing => {
                    self.status.remove(&chip.logic);
                    continue;
                }
                Need::Other => {
                    if !matches!(current, Some(RecoveryStatus::HeldOut(_))) {
                        self.status.remove(&chip.logic);
                    }
                    continue;
                }
                Need::Reset => {}
            }
            if matches!(current, Some(RecoveryStatus::HeldOut(_))) {
                continue;
            }
            if let Some(&at) = self.cleared.get(&chip.logic) {
                let why = HeldOut::FaultedAgain { after: now.saturating_duration_since(at) };
                self.status.insert(chip.logic, RecoveryStatus::HeldOut(why.clone()));
                decisions.push(Decision::HeldOut { chip: chip.logic, why });
                continue;
            }
            let faulty = GroupedChip { logic: chip.logic, card: chip.card };
            let group = reset_group(self.chip_type, self.board_id, faulty, &grouped);
            let node_in_use = self.config.mode == RecoveryMode::OfflineTraining && !held.is_empty();
            if node_in_use || !group.is_disjoint(&held) || !group.is_disjoint(&busy) {
                self.status.insert(chip.logic, RecoveryStatus::WaitingForRelease);
                continue;
            }
            let since = match current {
                Some(RecoveryStatus::WaitingIdle { since } | RecoveryStatus::WaitingForNodeBudget { since }) => since,
                _ => now,
            };
            if now.saturating_duration_since(since) < self.config.idle {
                self.status.insert(chip.logic, RecoveryStatus::WaitingIdle { since });
                continue;
            }
            match self.limiter.take(chip.logic, now) {
                Ok(()) => {
                    busy.extend(group.iter().copied());
                    self.status.insert(chip.logic, RecoveryStatus::Resetting { group: group.clone(), since: now });
                    decisions.push(Decision::Reset { chip: chip.logic, group });
                }
                Err(Refusal::ChipExhausted) => {
                    self.status.insert(chip.logic, RecoveryStatus::HeldOut(HeldOut::BudgetUsed));
                    decisions.push(Decision::HeldOut { chip: chip.logic, why: HeldOut::BudgetUsed });
                }
                Err(Refusal::NodeBusy) => {
                    // Still idle since `since`: it goes as soon as the node's budget allows.
                    self.status.insert(chip.logic, RecoveryStatus::WaitingForNodeBudget { since });
                }
            }
        }
        decisions
    }

    /// The reset of `chip` ended: on success the chip waits for the monitor to read it healthy (its health decides
    /// whether it is offered again), then is watched for the refault window; on failure it stays out, and the
    /// decision to report that is returned.
    pub fn finished(&mut self, chip: LogicId, outcome: Result<(), String>, now: Instant) -> Option<Decision> {
        if !matches!(self.status.get(&chip), Some(RecoveryStatus::Resetting { .. })) {
            return None;
        }
        match outcome {
            Ok(()) => {
                self.status.insert(chip, RecoveryStatus::Verifying { since: now });
                None
            }
            Err(error) => {
                let why = HeldOut::ResetFailed(error);
                self.status.insert(chip, RecoveryStatus::HeldOut(why.clone()));
                Some(Decision::HeldOut { chip, why })
            }
        }
    }

    /// The reset of `chip` did not start: something took a chip of its group between the decision and the reset.
    /// It waits for the release again.
    pub fn aborted(&mut self, chip: LogicId) {
        if matches!(self.status.get(&chip), Some(RecoveryStatus::Resetting { .. })) {
            self.status.insert(chip, RecoveryStatus::WaitingForRelease);
        }
    }

    /// The chips withdrawn from new work: every chip of a reset in progress.
    pub fn withdrawn(&self) -> BTreeSet<LogicId> {
        self.status
            .values()
            .filter_map(|status| match status {
                RecoveryStatus::Resetting { group, .. } => Some(group.iter().copied()),
                _ => None,
            })
            .flatten()
            .collect()
    }

    /// Every chip the planner is tracking, and where it is.
    pub fn status(&self) -> &BTreeMap<LogicId, RecoveryStatus> {
        &self.status
    }

    /// When the next chip's idle time ends, if a chip waits for it: the round that can reset it is due then (a round
    /// earlier decides nothing new, a later one leaves the chip out for longer than the idle time asks).
    pub fn next_due(&self) -> Option<Instant> {
        self.status
            .values()
            .filter_map(|status| match status {
                RecoveryStatus::WaitingIdle { since } => Some(*since + self.config.idle),
                _ => None,
            })
            .min()
    }

    /// Resets `chip` may still take now.
    pub fn resets_left(&self, chip: LogicId, now: Instant) -> u32 {
        self.limiter.left(chip, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recovery::limiter::Budget;

    const IDLE: Duration = Duration::from_secs(60);

    fn config(mode: RecoveryMode) -> RecoveryConfig {
        RecoveryConfig { mode, idle: IDLE, ..RecoveryConfig::default() }
    }

    /// Eight 910B chips on a training server (one ring of 8) or an inference board (each chip alone).
    fn planner(mode: RecoveryMode, board_id: u32) -> RecoveryPlanner {
        RecoveryPlanner::new(config(mode), ChipType::Ascend910B, Some(board_id))
    }

    const TRAINING_BOARD: u32 = 0x00;
    const INFERENCE_BOARD: u32 = 0x3c;

    fn node(faulty: &[u32], held: &[u32]) -> Vec<ChipFacts> {
        (0..8)
            .map(|i| ChipFacts {
                logic: LogicId(i),
                card: Some(i as i32),
                need: if faulty.contains(&i) { Need::Reset } else { Need::Nothing },
                held: held.contains(&i),
            })
            .collect()
    }

    fn reset_of(decisions: &[Decision]) -> Option<(u32, Vec<u32>)> {
        decisions.iter().find_map(|decision| match decision {
            Decision::Reset { chip, group } => Some((chip.0, group.iter().map(|l| l.0).collect())),
            Decision::HeldOut { .. } => None,
        })
    }

    #[test]
    fn the_fault_levels_that_ask_for_a_reset() {
        assert_eq!(Need::of(true, Some(FaultLevel::RestartNpu), false), Need::Nothing);
        for level in [
            FaultLevel::RestartRequest,
            FaultLevel::RestartBusiness,
            FaultLevel::FreeRestartNpu,
            FaultLevel::RestartNpu,
        ] {
            assert_eq!(Need::of(false, Some(level), false), Need::Reset, "{level:?}");
            assert_eq!(Need::of(false, Some(level), true), Need::Other, "a dropped card is not reset");
        }
        for level in [
            FaultLevel::SeparateNpu,
            FaultLevel::ManuallySeparateNpu,
            FaultLevel::PreSeparateNpu,
            FaultLevel::SubHealthFault,
            FaultLevel::NotHandleFault,
        ] {
            assert_eq!(Need::of(false, Some(level), false), Need::Other, "{level:?}");
        }
        assert_eq!(Need::of(false, None, false), Need::Other);
    }

    #[test]
    fn a_free_faulty_chip_is_reset_once_idle_long_enough_and_its_group_is_withdrawn_meanwhile() {
        let start = Instant::now();
        let mut planner = planner(RecoveryMode::Inference, INFERENCE_BOARD);
        assert!(planner.plan(start, &node(&[3], &[])).is_empty(), "not idle long enough yet");
        assert_eq!(planner.status()[&LogicId(3)], RecoveryStatus::WaitingIdle { since: start });
        assert_eq!(planner.next_due(), Some(start + IDLE), "the round that can reset it is due when its idle ends");
        assert!(planner.plan(start + IDLE / 2, &node(&[3], &[])).is_empty());
        let decisions = planner.plan(start + IDLE, &node(&[3], &[]));
        assert_eq!(reset_of(&decisions), Some((3, vec![3])));
        assert_eq!(planner.withdrawn(), BTreeSet::from([LogicId(3)]));
        assert!(planner.plan(start + IDLE * 2, &node(&[3], &[])).is_empty(), "no second reset while one runs");
        assert_eq!(planner.finished(LogicId(3), Ok(()), start + IDLE * 2), None);
        assert!(planner.withdrawn().is_empty());
        assert!(planner.plan(start + IDLE * 3, &node(&[], &[])).is_empty());
        assert!(planner.status().is_empty(), "a healthy chip is not tracked");
    }

    #[test]
    fn a_chip_whose_ring_is_held_waits_and_its_idle_time_starts_at_the_release() {
        let start = Instant::now();
        let mut planner = planner(RecoveryMode::Inference, TRAINING_BOARD);
        assert!(planner.plan(start, &node(&[3], &[6])).is_empty(), "chip 6 holds the ring of 8");
        assert_eq!(planner.status()[&LogicId(3)], RecoveryStatus::WaitingForRelease);
        assert!(planner.plan(start + IDLE * 5, &node(&[3], &[6])).is_empty());
        let released = start + IDLE * 6;
        assert!(planner.plan(released, &node(&[3], &[])).is_empty(), "idle only from the release");
        let decisions = planner.plan(released + IDLE, &node(&[3], &[]));
        assert_eq!(reset_of(&decisions), Some((3, (0..8).collect())));
        assert_eq!(planner.withdrawn().len(), 8, "the whole ring is withdrawn");
    }

    #[test]
    fn offline_training_waits_until_no_chip_of_the_node_is_held() {
        let start = Instant::now();
        let mut planner = planner(RecoveryMode::OfflineTraining, INFERENCE_BOARD);
        assert!(planner.plan(start, &node(&[3], &[7])).is_empty());
        assert!(planner.plan(start + IDLE * 2, &node(&[3], &[7])).is_empty(), "chip 7 is another chip, still held");
        assert!(planner.plan(start + IDLE * 3, &node(&[3], &[])).is_empty());
        assert_eq!(reset_of(&planner.plan(start + IDLE * 4, &node(&[3], &[]))), Some((3, vec![3])));
        let mut inference = self::planner(RecoveryMode::Inference, INFERENCE_BOARD);
        inference.plan(start, &node(&[3], &[7]));
        assert!(reset_of(&inference.plan(start + IDLE, &node(&[3], &[7]))).is_some(), "inference mode does not wait");
    }

    #[test]
    fn nothing_happens_when_recovery_is_off() {
        let start = Instant::now();
        let mut planner = planner(RecoveryMode::Off, INFERENCE_BOARD);
        for minutes in 0..10 {
            assert!(planner.plan(start + IDLE * minutes, &node(&[3], &[])).is_empty());
        }
        assert!(planner.status().is_empty());
    }

    #[test]
    fn a_chip_that_used_its_resets_or_faults_again_soon_stays_out_until_it_reads_healthy() {
        let start = Instant::now();
        let config = RecoveryConfig {
            per_chip: Budget { capacity: 2, refill: Duration::from_secs(6 * 3600) },
            refault_window: Duration::from_secs(300),
            ..config(RecoveryMode::Inference)
        };
        let mut planner = RecoveryPlanner::new(config, ChipType::Ascend950, None);
        let mut now = start;
        for round in 0..2 {
            planner.plan(now, &node(&[3], &[]));
            now += IDLE;
            assert_eq!(reset_of(&planner.plan(now, &node(&[3], &[]))), Some((3, vec![3])), "reset {round}");
            planner.finished(LogicId(3), Ok(()), now);
            // Read healthy after the reset, for longer than the refault window; then the fault returns.
            planner.plan(now, &node(&[], &[]));
            now += Duration::from_secs(301);
            planner.plan(now, &node(&[], &[]));
        }
        planner.plan(now, &node(&[3], &[]));
        let decisions = planner.plan(now + IDLE, &node(&[3], &[]));
        assert_eq!(decisions, vec![Decision::HeldOut { chip: LogicId(3), why: HeldOut::BudgetUsed }]);
        assert!(planner.plan(now + IDLE * 2, &node(&[3], &[])).is_empty(), "reported once");
        planner.plan(now + IDLE * 3, &node(&[], &[]));
        assert!(planner.status().is_empty(), "healthy again by other means: no longer held out");

        let mut planner = RecoveryPlanner::new(self::config(RecoveryMode::Inference), ChipType::Ascend950, None);
        planner.plan(start, &node(&[5], &[]));
        assert!(reset_of(&planner.plan(start + IDLE, &node(&[5], &[]))).is_some());
        planner.finished(LogicId(5), Ok(()), start + IDLE);
        planner.plan(start + IDLE * 2, &node(&[], &[]));
        let decisions = planner.plan(start + IDLE * 3, &node(&[5], &[]));
        let why = HeldOut::FaultedAgain { after: IDLE };
        assert_eq!(decisions, vec![Decision::HeldOut { chip: LogicId(5), why }]);
    }

    #[test]
    fn a_failed_reset_holds_the_chip_out_and_an_aborted_one_waits_for_the_release_again() {
        let start = Instant::now();
        let mut planner = planner(RecoveryMode::Inference, INFERENCE_BOARD);
        planner.plan(start, &node(&[1, 2], &[]));
        let decisions = planner.plan(start + IDLE, &node(&[1, 2], &[]));
        assert_eq!(decisions.len(), 2);
        let failed = planner.finished(LogicId(1), Err("boot timed out".into()), start + IDLE);
        assert_eq!(
            failed,
            Some(Decision::HeldOut { chip: LogicId(1), why: HeldOut::ResetFailed("boot timed out".into()) })
        );
        assert!(planner.plan(start + IDLE * 5, &node(&[1], &[])).is_empty(), "held out: no retry");
        planner.aborted(LogicId(2));
        assert_eq!(planner.status()[&LogicId(2)], RecoveryStatus::WaitingForRelease);
        assert_eq!(planner.withdrawn(), BTreeSet::new());
    }

    #[test]
    fn a_reset_chip_still_read_faulty_is_not_a_new_fault_and_fails_the_reset_only_after_the_verify_window() {
        let start = Instant::now();
        let mut planner = RecoveryPlanner::new(config(RecoveryMode::Inference), ChipType::Ascend950, None);
        planner.plan(start, &node(&[4], &[]));
        assert!(reset_of(&planner.plan(start + IDLE, &node(&[4], &[]))).is_some());
        let booted = start + IDLE;
        planner.finished(LogicId(4), Ok(()), booted);
        // The monitor has not polled the chip since its reset: the last reading still shows the old fault.
        assert!(planner.plan(booted + Duration::from_secs(1), &node(&[4], &[])).is_empty());
        assert_eq!(planner.status()[&LogicId(4)], RecoveryStatus::Verifying { since: booted });
        let decisions = planner.plan(booted + VERIFY_WINDOW, &node(&[4], &[]));
        assert!(
            matches!(&decisions[..], [Decision::HeldOut { why: HeldOut::ResetFailed(_), .. }]),
            "still faulty a minute after its reset: {decisions:?}"
        );
    }

    #[test]
    fn the_node_budget_delays_a_due_reset_without_a_new_idle_wait() {
        let start = Instant::now();
        let config = RecoveryConfig {
            per_node: Budget { capacity: 1, refill: Duration::from_secs(3600) },
            ..config(RecoveryMode::Inference)
        };
        let mut planner = RecoveryPlanner::new(config, ChipType::Ascend950, None);
        planner.plan(start, &node(&[1, 2], &[]));
        let decisions = planner.plan(start + IDLE, &node(&[1, 2], &[]));
        assert_eq!(reset_of(&decisions), Some((1, vec![1])));
        assert_eq!(planner.status()[&LogicId(2)], RecoveryStatus::WaitingForNodeBudget { since: start });
        planner.finished(LogicId(1), Ok(()), start + IDLE);
        let hour = start + IDLE + Duration::from_secs(3600);
        assert_eq!(reset_of(&planner.plan(hour, &node(&[2], &[]))), Some((2, vec![2])));
    }
}
