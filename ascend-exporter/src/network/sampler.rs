//! The network sampler: one tokio task per enabled group, each reading every chip with a network port through
//! `hccn_tool` at the group's interval and storing each chip's readings as soon as that chip's calls end.
//!
//! Each chip's round is its own task under the runner's deadline and concurrency limit, so a hung or slow tool costs
//! that chip one round of that group; the other chips' readings are stored as they arrive, the other groups run on,
//! and scrapes read the [`NetworkStore`] without waiting. Huawei's exporter runs the same calls without a deadline
//! (Ascend/mind-cluster component/ascend-common/devmanager/hccn/hccn_tool.go), where one hung tool stalls the group.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_hccn::HccnTool;
use tokio::task::{JoinHandle, JoinSet};
use tokio::time::MissedTickBehavior;

use super::chip_read::{read_chip, ChipRead, ChipRound};
use super::group::NetworkGroup;
use super::readings::{ChipNetwork, GroupReadings, PortReadings};
use super::store::NetworkStore;
use super::target::{network_target, NetworkTarget};
use crate::snapshot::SnapshotSource;

/// How often a group task looks for the driver sampler's first snapshot before its first round.
const FIRST_SNAPSHOT_POLL: Duration = Duration::from_millis(100);

/// The running group tasks; dropping it stops them (a call under way is killed with its child).
#[derive(Debug)]
pub struct NetworkSampler {
    tasks: Vec<JoinHandle<()>>,
    store: Arc<NetworkStore>,
}

impl NetworkSampler {
    /// Starts one task per `(group, interval)` on the current tokio runtime. `chips` says which chips exist and what
    /// they are (the DCMI sampler's snapshot: a chip is read once its identity is known).
    pub fn spawn(tool: HccnTool, chips: Arc<dyn SnapshotSource>, groups: &[(NetworkGroup, Duration)]) -> Self {
        let store = Arc::new(NetworkStore::new());
        let tasks = groups
            .iter()
            .map(|&(group, interval)| {
                let task =
                    GroupTask { group, tool: tool.clone(), chips: Arc::clone(&chips), store: Arc::clone(&store) };
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
        let mut ticker = tokio::time::interval(interval);
        ticker.set_missed_tick_behavior(MissedTickBehavior::Delay);
        loop {
            ticker.tick().await;
            self.round().await;
        }
    }

    /// Reads every chip once; returns when the last chip's calls ended (each within the runner's deadline).
    async fn round(&self) {
        let Some(snapshot) = self.chips.latest() else { return };
        let targets = snapshot.chips.iter().filter_map(network_target).filter(|target| target.reads(self.group));
        let mut reads = JoinSet::new();
        for target in targets {
            let (tool, store, group) = (self.tool.clone(), Arc::clone(&self.store), self.group);
            let known_ports = self.store.chip(target.phy()).map(|chip| chip.known_ports()).unwrap_or_default();
            reads.spawn(async move {
                let round = read_chip(&tool, group, target, &known_ports).await;
                store.update(target.phy(), |chip| record(chip, target, round, Instant::now()));
            });
        }
        while reads.join_next().await.is_some() {}
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
