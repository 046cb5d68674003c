//! The network sampler: one tokio task per enabled group, each reading every chip with a network port through
//! `hccn_tool` at the group's interval and storing each chip's readings as soon as that chip's calls end.
//!
//! Each chip's read is its own task under the runner's deadline and concurrency limit, and a round starts only the
//! chips whose previous read has ended, so a hung or slow tool costs that chip the rounds it spans; the other chips
//! are read on time and stored as they arrive, the other groups run on, and scrapes read the [`NetworkStore`]
//! without waiting. Huawei's exporter runs the same calls without a deadline
//! (Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go), where one hung tool stalls the group.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::PhyId;
use ascend_hccn::HccnTool;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::MissedTickBehavior;

use super::chip_read::{read_chip, ChipRead, ChipRound};
use super::group::NetworkGroup;
use super::readings::{ChipNetwork, GroupReadings, PortReadings};
use super::store::NetworkStore;
use super::target::{network_target, NetworkTarget};
use crate::render::NamingMode;
use crate::snapshot::SnapshotSource;

/// How often a group task looks for the driver sampler's first snapshot before its first round.
const FIRST_SNAPSHOT_POLL: Duration = Duration::from_millis(100);

/// How often a group task looks for chips it has not read yet: a chip whose identity the driver's sampler had not read
/// at the group's round is read as soon as it is known, not a whole interval (60 s by default) later.
const NEW_CHIP_POLL: Duration = Duration::from_secs(1);

/// The running group tasks; dropping it stops them (a call under way is killed with its child).
#[derive(Debug)]
pub struct NetworkSampler {
    tasks: Vec<JoinHandle<()>>,
    store: Arc<NetworkStore>,
}

impl NetworkSampler {
    /// Starts one task per `(group, interval)` on the current tokio runtime. `chips` says which chips exist and what
    /// they are (the DCMI sampler's snapshot: a chip is read once its identity is known); `naming` is what the
    /// exporter serves, so that readings no served name shows are not read (the optical modules of the Ascend950
    /// boards Huawei's exporter leaves out, in Huawei naming alone).
    pub fn spawn(
        tool: HccnTool,
        chips: Arc<dyn SnapshotSource>,
        groups: &[(NetworkGroup, Duration)],
        naming: NamingMode,
    ) -> Self {
        let store = Arc::new(NetworkStore::new());
        let tasks = groups
            .iter()
            .map(|&(group, interval)| {
                let task = GroupTask {
                    group,
                    naming,
                    tool: tool.clone(),
                    chips: Arc::clone(&chips),
                    store: Arc::clone(&store),
                };
                tokio::spawn(task.run(interval))
            })
            .collect();
        Self { tasks, store }
    }

    /// The readings, shared with the tasks.
    pub fn store(&self) -> Arc<NetworkStore> {
        Arc::clone(&self.store)
    }
}

impl Drop for NetworkSampler {
    fn drop(&mut self) {
        for task in &self.tasks {
            task.abort();
        }
    }
}

/// One group's task.
struct GroupTask {
    group: NetworkGroup,
    naming: NamingMode,
    tool: HccnTool,
    chips: Arc<dyn SnapshotSource>,
    store: Arc<NetworkStore>,
}

impl GroupTask {
    async fn run(self, interval: Duration) {
        // Which chips have a port is known once the driver's sampler has read their identity.
        while self.chips.latest().is_none() {
            tokio::time::sleep(FIRST_SNAPSHOT_POLL).await;
        }
        let mut rounds = tokio::time::interval(interval);
        rounds.set_missed_tick_behavior(MissedTickBehavior::Delay);
        let mut new_chips = tokio::time::interval(NEW_CHIP_POLL);
        new_chips.set_missed_tick_behavior(MissedTickBehavior::Delay);
        // The chips' reads under way, owned here so that stopping the task kills them with their children.
        let mut reads = Reads::default();
        loop {
            let every_chip = tokio::select! {
                _ = rounds.tick() => true,
                _ = new_chips.tick() => false,
            };
            reads.forget_finished();
            self.start_round(&mut reads, every_chip);
        }
    }

    /// Starts a read of every chip whose read of the previous round has ended (with `every_chip` false, of the chips
    /// never read before). A chip still waiting for its tool (each call ends at the runner's deadline) sits the
    /// round out; no other chip waits for it, so the others' readings keep their age. Before, a round waited for
    /// every chip, and a hung chip's four queries held the four places of the tool's concurrency limit: on a 16-chip
    /// A3 node with the groups read every 2 s, one hung tool took the other chips' oldest network reading from 2.0 to
    /// 8.1 s; now it stays at 2.0 s (benches/scripts/exporter_every_group.py).
    fn start_round(&self, reads: &mut Reads, every_chip: bool) {
        let Some(snapshot) = self.chips.latest() else { return };
        let targets = snapshot
            .chips
            .iter()
            .filter_map(network_target)
            .filter(|target| target.reads(self.group, self.naming == NamingMode::Huawei));
        for target in targets {
            let stored = self.store.chip(target.phy());
            let read_before = stored.as_ref().is_some_and(|chip| chip.was_read(self.group));
            if reads.is_reading(target.phy()) || (read_before && !every_chip) {
                continue;
            }
            let (tool, store, group) = (self.tool.clone(), Arc::clone(&self.store), self.group);
            let known_ports = stored.map(|chip| chip.known_ports()).unwrap_or_default();
            reads.start(target.phy(), async move {
                let round = read_chip(&tool, group, target, &known_ports).await;
                store.update(target.phy(), |chip| record(chip, target, round, Instant::now()));
            });
        }
    }
}

/// The reads under way, one task per chip at most.
#[derive(Default)]
struct Reads {
    tasks: JoinSet<()>,
    chips: HashMap<tokio::task::Id, PhyId>,
}

impl Reads {
    fn is_reading(&self, phy: PhyId) -> bool {
        self.chips.values().any(|&reading| reading == phy)
    }

    fn start(&mut self, phy: PhyId, read: impl Future<Output = ()> + Send + 'static) {
        let task = self.tasks.spawn(read);
        self.chips.insert(task.id(), phy);
    }

    /// Drops the reads that have ended (a panicked one too: its chip is read again next round).
    fn forget_finished(&mut self) {
        while let Some(ended) = self.tasks.try_join_next_with_id() {
            let id = match ended {
                Ok((id, ())) => id,
                Err(error) => error.id(),
            };
            self.chips.remove(&id);
        }
    }
}

/// Replaces the group's readings of one chip with a round's, logging a failure when the group last worked.
fn record(chip: &mut ChipNetwork, target: NetworkTarget, round: ChipRound, now: Instant) {
    let ChipRound { read, failure } = round;
    let ok = failure.is_none();
    let previously_ok = match read {
        ChipRead::Network(ports) => replace(&mut chip.network, ports, ok, now),
        ChipRead::Roce(ports) => replace(&mut chip.roce, ports, ok, now),
        ChipRead::Optical(ports) => replace(&mut chip.optical, ports, ok, now),
    };
    if let Some(error) = failure {
        let phy = target.phy().0;
        if previously_ok {
            tracing::warn!(phy_id = phy, %error, "hccn_tool failed; the chip's readings of this group are left out");
        } else {
            tracing::debug!(phy_id = phy, %error, "hccn_tool failed again");
        }
    }
}

/// Stores `ports` as the group's last round; returns whether the round before worked (or there was none).
fn replace<T>(slot: &mut Option<GroupReadings<T>>, ports: Vec<PortReadings<T>>, ok: bool, now: Instant) -> bool {
    let previous = slot.as_ref();
    let previously_ok = previous.is_none_or(|readings| readings.last_success == Some(readings.read_at));
    let last_success = if ok { Some(now) } else { previous.and_then(|readings| readings.last_success) };
    *slot = Some(GroupReadings { ports, read_at: now, last_success });
    previously_ok
}
