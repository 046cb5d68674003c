//! [`run`]: the whole driver on one node. It publishes the chips the node layer's health monitor sees, serves the
//! kubelet, and keeps the slices and the kubelet's health stream in step with the monitor's snapshot (chips that come
//! and go, their health) and with what others do to the slices, until asked to stop.

use std::collections::{BTreeMap, BTreeSet};
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::DeviceManager;
use ascend_kube::{
    NodeEvents, NodeEventsConfig, PoolPublisher, RecoveryEvents, SliceContent, Watched, DRA_DRIVER_FIELD_MANAGER,
};
use ascend_node::recovery::{
    NoRecoveryObserver, RecoveryConfig, RecoveryMode, RecoveryObserver, RecoveryObservers, RecoveryRunner,
};
use ascend_node::{BackoffPolicy, HealthMonitor, MonitorConfig, NoopObserver, Reconcile, ReconcileLoop};
use ascend_node::{Health, InventoryOptions, Snapshot, UnhealthyCause};
use dra_kubelet_plugin::{DeviceHealth, KubeletPlugin, PluginConfig, RegistrationState};
use k8s_openapi::api::resource::v1::ResourceSlice;
use tokio::sync::{watch, Mutex};

use crate::cdi_claim::ClaimSpecs;
use crate::checkpoint::{boot_id, Checkpoint, BOOT_ID_PATH};
use crate::devices::{device_name, published_chips, NpuChip};
use crate::driver::AscendDriver;
use crate::error::{Error, Result};
use crate::health::stream_status;
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
    run_observed(config, manager, client, Arc::new(NoRecoveryObserver), shutdown).await
}

/// [`run`], telling `observer` too what recovery did (the daemon's metrics,
/// `ascend_node::recovery::RecoveryMetrics`). With recovery on, the driver records it as Events on its Node as well
/// (`ascend_kube::RecoveryEvents`, the device plugin's reasons; its service account needs `create` and `patch` on
/// `events.k8s.io` Events, which the chart grants when `draDriver.recovery.mode` is not `off`).
///
/// # Errors
/// Those of [`run`].
pub async fn run_observed(
    config: DriverConfig,
    manager: Arc<dyn DeviceManager>,
    client: kube::Client,
    observer: Arc<dyn RecoveryObserver>,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let publisher = PoolPublisher::for_node(client.clone(), &config.node_name, &config.plugin.driver_name).await?;
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
    let recovery = match config.recovery.mode {
        RecoveryMode::Off => None,
        mode => {
            tracing::info!(%mode, idle = ?config.recovery.idle, "recovery on: faulty chips are reset once free");
            let reporting = NodeEventsConfig { reporting_controller: DRA_DRIVER_FIELD_MANAGER, ..Default::default() };
            let events = NodeEvents::start(driver.client.clone(), &config.node_name, reporting)?;
            let reporter = RecoveryObservers::new()
                .with(observer)
                .with(Arc::new(RecoveryEvents::new(events, monitor.subscribe()).with_names(device_name)));
            let runner = RecoveryRunner::new(
                config.recovery.clone(),
                Arc::clone(&manager),
                monitor.subscribe(),
                Arc::new(monitor.withdrawals()),
                Arc::new(ClaimHolders::new(Arc::clone(&driver))),
                Arc::new(reporter),
            );
            Some(tokio::spawn(runner.run(async {
                let _ = recovery_stopped.await;
            })))
        }
    };
    // The snapshot is followed here, at once, whatever the API server does: the kubelet's health stream, the chips
    // prepare sees and those recovery withdrew never wait for a publication. What the slices should hold goes to the
    // publishing loop.
    let (wanted_sender, wanted) = watch::channel(pack(&chip_groups(&chips, &config.host_root, config.partitionable)));
    let follow = async {
        while snapshots.changed().await.is_ok() {
            let snapshot = snapshots.borrow_and_update().clone();
            let chips = published_chips(&snapshot);
            let next = pack(&chip_groups(&chips, &config.host_root, config.partitionable));
            wanted_sender.send_if_modified(|current| replace_if_changed(current, next));
            let map = by_phy(&chips);
            chips_sender.send_if_modified(|current| replace_if_changed(current, map));
            let entries = stream_entries(&pool, &chips);
            health_sender.send_if_modified(|current| replace_if_changed(current, entries));
            let withdrawn = recovering_chips(&chips);
            recovering_sender.send_if_modified(|current| replace_if_changed(current, withdrawn));
        }
    };
    // The slices, on the daemons' one reconcile loop (`ascend_node::ReconcileLoop`): published at once, and again when
    // the wanted content changes, when the kubelet registers the driver again (a (re)starting kubelet deletes the
    // node's slices) and when the watch of the slices shows that someone else deleted or rewrote one. A failed
    // publication waits for the one backoff (exponential, jitter, Retry-After), so that a fleet's drivers do not come
    // back at the same moment after an API server outage.
    let slices = publisher.watch();
    let publishing = ReconcileLoop::new(format!("ResourceSlices of {pool}"), BackoffPolicy::default())
        .wake_on_change(wanted.clone())
        .wake_on_change(plugin.registration())
        .wake_on_change_while_open(slices.changes())
        .run(SliceRounds { slices, publisher, wanted, registration: plugin.registration(), published: None }, shutdown);
    // Either ends the driver: shutdown, the monitor stopping, or the kubelet plugin's registration closing.
    tokio::select! {
        () = follow => {}
        _ = publishing => {}
    }
    plugin.shutdown().await;
    let _ = stop_recovery.send(());
    if let Some(recovery) = recovery {
        let _ = recovery.await;
    }
    drop(monitor);
    Ok(())
}

/// The rounds of the publishing loop of [`run`].
struct SliceRounds {
    publisher: PoolPublisher,
    /// The node's slices of this driver, as the watch has them.
    slices: Watched<ResourceSlice>,
    /// What the slices should hold.
    wanted: watch::Receiver<Vec<SliceContent>>,
    /// The kubelet plugin's registration: a change is a kubelet that may have deleted the slices.
    registration: watch::Receiver<RegistrationState>,
    /// What the last successful publication wrote; `None` before it, after a failure and after a registration.
    published: Option<Vec<SliceContent>>,
}

impl Reconcile for SliceRounds {
    type Error = ascend_kube::Error;

    async fn reconcile(&mut self) -> ascend_kube::Result<Option<Duration>> {
        if self.registration.has_changed().unwrap_or(false) {
            self.registration.borrow_and_update();
            self.published = None;
        }
        let wanted = self.wanted.borrow_and_update().clone();
        if self.published.as_ref() == Some(&wanted) {
            if let Some(reason) = self.publisher.divergence(&self.slices) {
                tracing::warn!(%reason, "the published ResourceSlices changed; publishing them again");
                self.published = None;
            }
        }
        if self.published.as_ref() != Some(&wanted) {
            self.published = None;
            let written = self.publisher.publish(wanted.clone()).await?;
            tracing::info!(slices = written.len(), generation = ?self.publisher.generation(), "published");
            self.published = Some(wanted);
        }
        // A slice just created and not yet shown by the watch would count as deleted later: ask again then.
        let recheck = if self.slices.is_ready() { self.publisher.next_check() } else { None };
        Ok(recheck.map(|at| at.saturating_duration_since(std::time::Instant::now())))
    }
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
