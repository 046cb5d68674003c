//! [`run`]: the whole driver on one node. It publishes the chips the node layer's health monitor sees, serves the
//! kubelet, and keeps the slices and the kubelet's health stream in step with the monitor's snapshot (chips that come
//! and go, their health) and with what others do to the slices, until asked to stop.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_kube::PoolPublisher;
use ascend_kube::{Backoff, BackoffPolicy};
use ascend_node::inventory::{Health, InventoryOptions, Snapshot, UnhealthyCause};
use ascend_node::recovery::{NoRecoveryObserver, RecoveryConfig, RecoveryMode, RecoveryRunner};
use ascend_node::{HealthMonitor, MonitorConfig, NoopObserver};
use dra_kubelet_plugin::{DeviceHealth, KubeletPlugin, PluginConfig};
use tokio::sync::{watch, Mutex};

use crate::cdi_claim::ClaimSpecs;
use crate::checkpoint::{boot_id, Checkpoint, BOOT_ID_PATH};
use crate::driver::AscendDriver;
use crate::error::{Error, Result};
use crate::health::stream_status;
use crate::inventory::{published_chips, NpuChip};
use crate::recovery::ClaimHolders;
use crate::slices::{chip_groups, pack};

/// The driver name Huawei's own DRA driver uses too, so DeviceClasses carry over.
pub const DEFAULT_DRIVER_NAME: &str = ascend_kube::ASCEND_DRA_DRIVER_NAME;

/// Everything the driver is configured with.
#[derive(Debug, Clone)]
pub struct DriverConfig {
    /// The kubelet side: driver name, kubelet directories, health refresh.
    pub plugin: PluginConfig,
    /// This node's name (the pool name and `spec.nodeName`).
    pub node_name: String,
    /// Where claim CDI specs go (`/var/run/cdi`).
    pub cdi_dir: PathBuf,
    /// The host's root as the driver sees it (`/`, or where the host is mounted in the driver's container).
    pub host_root: PathBuf,
    /// The checkpoint file (default `<plugins dir>/<driver>/checkpoint.json`).
    pub checkpoint: Option<PathBuf>,
    /// Where the boot id is read.
    pub boot_id_path: PathBuf,
    /// Publish vNPU partitions (needs the `DRAPartitionableDevices` feature gate).
    pub partitionable: bool,
    /// Health polling.
    pub monitor: MonitorConfig,
    /// Chips that heal: resets of chips whose fault asks for one, once no prepared claim holds them (off by default).
    pub recovery: RecoveryConfig,
}

impl DriverConfig {
    /// The defaults for `node_name`.
    pub fn new(node_name: impl Into<String>) -> Self {
        DriverConfig {
            plugin: PluginConfig::new(DEFAULT_DRIVER_NAME),
            node_name: node_name.into(),
            cdi_dir: PathBuf::from(ascend_oci::cdi::DYNAMIC_SPEC_DIR),
            host_root: PathBuf::from("/"),
            checkpoint: None,
            boot_id_path: PathBuf::from(BOOT_ID_PATH),
            partitionable: false,
            monitor: MonitorConfig {
                inventory: InventoryOptions { advertise_vnpus: false, ..InventoryOptions::default() },
                ..MonitorConfig::default()
            },
            recovery: RecoveryConfig::default(),
        }
    }

    /// The defaults for `node_name`, with what the driver shares with the kubelet under `work_dir` (the registration
    /// and plugin directories `plugins_registry/` and `plugins/`, hence the checkpoint, and the claims' CDI specs in
    /// `cdi/`) and the host's device nodes and driver files read under `host_root`: a driver that runs beside an
    /// in-process kubelet and a fake host (`dcmi_sim::fake_host`), as the crate's example and benchmark do, without
    /// touching this machine's `/var/lib/kubelet` or `/var/run/cdi`.
    pub fn in_work_dir(node_name: impl Into<String>, work_dir: &Path, host_root: &Path) -> Self {
        let mut config = DriverConfig::new(node_name);
        config.plugin.registry_dir = work_dir.join("plugins_registry");
        config.plugin.plugins_dir = work_dir.join("plugins");
        config.cdi_dir = work_dir.join("cdi");
        config.host_root = host_root.to_path_buf();
        config
    }

    fn checkpoint_path(&self) -> PathBuf {
        self.checkpoint.clone().unwrap_or_else(|| self.plugin.data_dir().join("checkpoint.json"))
    }
}

/// Runs the driver until `shutdown` completes.
///
/// The chips, their health and their taints all come from the node layer's health monitor
/// (`ascend_node::HealthMonitor`): the driver publishes the monitor's first complete view (or what it knows after
/// three health deadlines), then follows it, publishing a chip that appears and withdrawing one that leaves the
/// driver's chip list. It also watches its own ResourceSlices and publishes them again when someone else deletes or
/// rewrites one (a restarting kubelet deletes its node's slices, possibly after the driver registered again).
///
/// # Errors
/// [`Error::Kube`] when the Node cannot be read (it does not exist, or the API server cannot be reached), and the
/// errors of starting the health monitor, opening the checkpoint, reading the host's device nodes and starting the
/// kubelet plugin. Failures to publish after start are logged and retried.
pub async fn run(
    config: DriverConfig,
    manager: Arc<dyn DeviceManager>,
    client: kube::Client,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let mut publisher = PoolPublisher::for_node(client.clone(), &config.node_name, &config.plugin.driver_name).await?;
    let boot = boot_id(&config.boot_id_path)?;
    let (checkpoint, stale) = Checkpoint::open(&config.checkpoint_path(), &boot)?;
    for claim in stale {
        if let Some(path) = claim.cdi_spec {
            ClaimSpecs::remove(&path)?;
        }
    }
    let monitor = HealthMonitor::start(Arc::clone(&manager), config.monitor.clone(), Arc::new(NoopObserver))
        .map_err(|e| Error::Config(format!("health monitor: {e}")))?;
    let mut snapshots = monitor.subscribe();
    let first = first_view(&mut snapshots, config.monitor.health_deadline.saturating_mul(3)).await;
    let chips = published_chips(&first);
    tracing::info!(chips = chips.len(), node = %config.node_name, complete = first.is_settled(), "found chips");

    let chip_type = chips.first().map(|(chip, _)| chip.chip_type.as_str().to_owned());
    let specs = ClaimSpecs::new(&config.host_root, &config.cdi_dir, &config.plugin.driver_name, chip_type)?;
    for leftover in specs.remove_unlisted(|uid| checkpoint.get(uid).is_some())? {
        tracing::info!(path = %leftover.display(), "removed a claim spec the checkpoint does not list");
    }

    let pool = config.node_name.clone();
    let (chips_sender, chip_map) = watch::channel(by_phy(&chips));
    let (health_sender, health) = watch::channel(stream_entries(&pool, &chips));
    let (recovering_sender, recovering) = watch::channel(recovering_chips(&chips));
    let driver = Arc::new(AscendDriver {
        driver_name: config.plugin.driver_name.clone(),
        pool: pool.clone(),
        client,
        manager: Arc::clone(&manager),
        chips: chip_map,
        specs,
        checkpoint: Mutex::new(checkpoint),
        health,
        recovering,
    });
    let plugin = KubeletPlugin::start(config.plugin.clone(), Arc::clone(&driver))
        .await
        .map_err(|e| Error::Config(format!("serving the kubelet: {e}")))?;

    let (stop_recovery, recovery_stopped) = tokio::sync::oneshot::channel::<()>();
    let recovery = (config.recovery.mode != RecoveryMode::Off).then(|| {
        tracing::info!(mode = %config.recovery.mode, idle = ?config.recovery.idle, "recovery on: faulty chips are reset once free");
        let runner = RecoveryRunner::new(
            config.recovery.clone(),
            Arc::clone(&manager),
            monitor.subscribe(),
            Arc::new(monitor.withdrawals()),
            Arc::new(ClaimHolders::new(Arc::clone(&driver))),
            Arc::new(NoRecoveryObserver),
        );
        tokio::spawn(runner.run(async {
            let _ = recovery_stopped.await;
        }))
    });
    let slices = publisher.watch();
    let mut slice_changes = slices.changes();
    let mut watching_slices = true;
    let mut registration = plugin.registration();
    let mut wanted = pack(&chip_groups(&chips, &config.host_root, config.partitionable));
    let mut publish_due = true;
    // A failed publication is retried with the daemons' one backoff (exponential, jitter, Retry-After), so that a
    // fleet's drivers do not come back at the same moment after an API server outage.
    let mut backoff = Backoff::new(BackoffPolicy::default());
    let mut retry_in = Duration::ZERO;
    tokio::pin!(shutdown);
    loop {
        if publish_due {
            match publisher.publish(wanted.clone()).await {
                Ok(written) => {
                    publish_due = false;
                    backoff.reset();
                    tracing::info!(slices = written.len(), generation = ?publisher.generation(), "published");
                }
                Err(error) => {
                    retry_in = backoff.next_delay(&error);
                    tracing::error!(%error, ?retry_in, "cannot publish ResourceSlices");
                }
            }
        }
        // After a failure: the retry. Otherwise: when a slice just created, not yet shown by the watch, would count
        // as deleted (`PoolPublisher::next_check`).
        let recheck = if publish_due || !slices.is_ready() { None } else { publisher.next_check() };
        let wake = async {
            match (publish_due, recheck) {
                (true, _) => tokio::time::sleep(retry_in).await,
                (false, Some(at)) => tokio::time::sleep_until(at.into()).await,
                (false, None) => std::future::pending::<()>().await,
            }
        };
        let mut check_slices = false;
        tokio::select! {
            () = &mut shutdown => break,
            () = wake => check_slices = !publish_due,
            changed = registration.changed() => {
                if changed.is_err() { break }
                // A (re)starting kubelet deletes the node's slices: publish them again.
                publish_due = true;
            }
            changed = slice_changes.changed(), if watching_slices => {
                match changed {
                    Ok(()) => check_slices = !publish_due,
                    Err(_) => {
                        tracing::error!("the watch of the ResourceSlices stopped; relying on re-registrations");
                        watching_slices = false;
                    }
                }
            }
            changed = snapshots.changed() => {
                if changed.is_err() { break }
                let snapshot = snapshots.borrow_and_update().clone();
                let chips = published_chips(&snapshot);
                let next = pack(&chip_groups(&chips, &config.host_root, config.partitionable));
                if next != wanted {
                    wanted = next;
                    publish_due = true;
                }
                let map = by_phy(&chips);
                chips_sender.send_if_modified(|current| replace_if_changed(current, map));
                let entries = stream_entries(&pool, &chips);
                health_sender.send_if_modified(|current| replace_if_changed(current, entries));
                let withdrawn = recovering_chips(&chips);
                recovering_sender.send_if_modified(|current| replace_if_changed(current, withdrawn));
            }
        }
        if check_slices {
            slice_changes.borrow_and_update();
            if let Some(reason) = publisher.divergence(&slices) {
                tracing::warn!(%reason, "the published ResourceSlices changed; publishing them again");
                publish_due = true;
            }
        }
    }
    plugin.shutdown().await;
    let _ = stop_recovery.send(());
    if let Some(recovery) = recovery {
        let _ = recovery.await;
    }
    drop(monitor);
    Ok(())
}

/// The chips recovery has withdrawn for a reset.
fn recovering_chips(chips: &[(NpuChip, Health)]) -> BTreeSet<u32> {
    chips
        .iter()
        .filter(|(_, health)| matches!(health, Health::Unhealthy(UnhealthyCause::Recovering)))
        .map(|(chip, _)| chip.ids.phy.0)
        .collect()
}

/// The monitor's first complete view ([`ascend_node::Snapshot::is_settled`]), or what it knows after `wait` (a chip
/// list that hangs): the driver publishes the node as a whole, not chip by chip as they are identified.
async fn first_view(snapshots: &mut watch::Receiver<Arc<Snapshot>>, wait: Duration) -> Arc<Snapshot> {
    let settled =
        matches!(tokio::time::timeout(wait, snapshots.wait_for(|snapshot| snapshot.is_settled())).await, Ok(Ok(_)));
    if !settled {
        tracing::warn!(?wait, "the chips are not all listed, identified and checked; publishing what is known");
    }
    snapshots.borrow_and_update().clone()
}

/// The published chips by physical id, for prepare.
fn by_phy(chips: &[(NpuChip, Health)]) -> Arc<BTreeMap<u32, NpuChip>> {
    Arc::new(chips.iter().map(|(chip, _)| (chip.ids.phy.get(), chip.clone())).collect())
}

/// For `send_if_modified`: replaces `current` by `next` and says whether they differed.
fn replace_if_changed<T: PartialEq>(current: &mut T, next: T) -> bool {
    if *current == next {
        return false;
    }
    *current = next;
    true
}

/// The kubelet's health list: every published chip, `Unknown` until the monitor has checked it.
fn stream_entries(pool: &str, chips: &[(NpuChip, Health)]) -> Vec<DeviceHealth> {
    chips
        .iter()
        .map(|(chip, health)| {
            let (status, message) = stream_status(health);
            DeviceHealth { pool: pool.to_owned(), device: chip.device_name(), status, message, timeout: None }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_work_dir_config_keeps_everything_it_writes_under_the_work_dir() {
        let config = DriverConfig::in_work_dir("worker-1", Path::new("/tmp/work"), Path::new("/tmp/host"));
        assert_eq!(config.node_name, "worker-1");
        assert_eq!(config.host_root, Path::new("/tmp/host"));
        assert_eq!(config.cdi_dir, Path::new("/tmp/work/cdi"));
        assert_eq!(config.plugin.registry_dir, Path::new("/tmp/work/plugins_registry"));
        assert!(
            config.plugin.dra_socket().starts_with("/tmp/work/plugins"),
            "{}",
            config.plugin.dra_socket().display()
        );
        assert!(config.checkpoint_path().starts_with("/tmp/work/plugins"), "{}", config.checkpoint_path().display());
        assert_eq!(config.plugin.driver_name, DEFAULT_DRIVER_NAME);
    }
}
