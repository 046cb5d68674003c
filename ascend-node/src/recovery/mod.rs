//! Chips that heal: a chip whose fault asks for a restart is hot-reset once nothing has held it for a while, at most
//! so often, and offered again only once it has booted and reads healthy.
//!
//! Huawei's device plugin does the same with its hot-reset manager (mind-cluster
//! `component/ascend-device-plugin/pkg/server/hot_reset_manager.go`, flag `-hotReset`: -1 off, 0 inference, 2 offline
//! training): it resets a chip whose ring has been free for 60 s, three times per chip per 6 hours, and polls the boot
//! status for up to 180 s. This module keeps its decisions apart from the doing: [`RecoveryPlanner`] decides from the
//! chips' state each round (a pure state machine, tested without a driver); the daemon that owns the chips withdraws
//! the group, checks nothing took it meanwhile, resets through `DeviceManager::reset` and reports back. Where ours
//! differs from Huawei's: the idle time starts again whenever a chip of the group is taken (Huawei's keeps the first
//! moment it saw the ring free, `IdleTimeMgr.RecordIdleTime`), the node has a budget too, a chip that faults again
//! soon after its reset stays out instead of being reset in a loop, and offline-training mode waits for the whole
//! node to be free.

mod config;
mod limiter;
#[cfg(feature = "metrics")]
mod metrics;
mod observers;
mod planner;
mod reset_group;
mod runner;

pub use config::{RecoveryConfig, RecoveryMode, UnknownRecoveryMode};
pub use limiter::Budget;
#[cfg(feature = "metrics")]
#[cfg_attr(docsrs, doc(cfg(feature = "metrics")))]
pub use metrics::{HeldOutLabels, RecoveryMetrics, ResetLabels};
pub use observers::RecoveryObservers;
pub use planner::{ChipFacts, Decision, HeldOut, Need, RecoveryPlanner, RecoveryStatus};
pub use reset_group::{reset_group, GroupedChip};
pub use runner::{need_of, Holders, NoRecoveryObserver, RecoveryObserver, RecoveryRunner, Withdrawals};
