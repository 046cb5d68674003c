//! [`run`]: the whole driver on one node. It reads the chips, publishes them, serves the kubelet, and keeps the
//! slices and the kubelet's health stream in step with the chips' health until asked to stop.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{DeviceManager, LogicId};
use ascend_kube::PoolPublisher;
use ascend_kube::{Backoff, BackoffPolicy};
use ascend_node::inventory::{Health, InventoryOptions};
use ascend_node::{HealthMonitor, MonitorConfig, NoopObserver};
use dra_kubelet_plugin::{DeviceHealth, HealthStatus, KubeletPlugin, PluginConfig};
use tokio::sync::{watch, Mutex};

use crate::cdi_claim::ClaimSpecs;
use crate::checkpoint::{boot_id, Checkpoint, BOOT_ID_PATH};
use crate::driver::AscendDriver;
use crate::error::{Error, Result};
use crate::health::{grade, health_from_snapshot, ChipHealth};
use crate::inventory::{discover, NpuChip};
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
/// # Errors
/// [`Error::Kube`] when the Node cannot be read (it does not exist, or the API server cannot be reached),
/// [`Error::Dcmi`] when the chips cannot be read, and the errors of opening the checkpoint, reading the host's
/// device nodes and starting the kubelet plugin. Failures to publish after start are logged and retried.
pub async fn run(
    config: DriverConfig,
    manager: Arc<dyn DeviceManager>,
    client: kube::Client,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let mut publisher = PoolPublisher::for_node(client.clone(), &config.node_name, &config.plugin.driver_name).await?;
    let discovering = Arc::clone(&manager);
    let chips = tokio::task::spawn_blocking(move || discover(discovering.as_ref()))
        .await
        .map_err(|e| Error::Config(format!("chip discovery stopped: {e}")))??;
    tracing::info!(chips = chips.len(), node = %config.node_name, "found chips");

    let boot = boot_id(&config.boot_id_path)?;
    let (checkpoint, stale) = Checkpoint::open(&config.checkpoint_path(), &boot)?;
    for claim in stale {
        if let Some(path) = claim.cdi_spec {
            ClaimSpecs::remove(&path)?;
        }
    }
    let chip_type = chips.first().map(|chip| chip.chip_type.as_str().to_owned());
    let specs = ClaimSpecs::new(&config.host_root, &config.cdi_dir, &config.plugin.driver_name, chip_type)?;
    for leftover in specs.remove_unlisted(|uid| checkpoint.get(uid).is_some())? {
        tracing::info!(path = %leftover.display(), "removed a claim spec the checkpoint does not list");
    }
    let monitor = HealthMonitor::start(Arc::clone(&manager), config.monitor.clone(), Arc::new(NoopObserver))
        .map_err(|e| Error::Config(format!("health monitor: {e}")))?;

    let pool = config.node_name.clone();
    let (health_sender, health) = watch::channel(stream_entries(&pool, &chips, &BTreeMap::new()));
    let driver = Arc::new(AscendDriver {
        driver_name: config.plugin.driver_name.clone(),
        pool: pool.clone(),
        client,
        manager: Arc::clone(&manager),
        chips: chips.iter().map(|chip| (chip.ids.phy.get(), chip.clone())).collect(),
        specs,
        checkpoint: Mutex::new(checkpoint),
        health,
    });
    let plugin = KubeletPlugin::start(config.plugin.clone(), Arc::clone(&driver))
        .await
        .map_err(|e| Error::Config(format!("serving the kubelet: {e}")))?;

    let mut graded: BTreeMap<u32, ChipHealth> = BTreeMap::new();
    let mut seen: BTreeMap<u32, (LogicId, Health)> = BTreeMap::new();
    let mut snapshots = monitor.subscribe();
    let mut registration = plugin.registration();
    let mut publish_due = true;
    // A failed publication is retried with the daemons' one backoff (exponential, jitter, Retry-After), so that a
    // fleet's drivers do not come back at the same moment after an API server outage.
    let mut backoff = Backoff::new(BackoffPolicy::default());
    let mut retry_in = Duration::ZERO;
    tokio::pin!(shutdown);
    loop {
        if publish_due {
            let groups = chip_groups(&chips, &graded, &config.host_root, config.partitionable);
            match publisher.publish(pack(&groups)).await {
                Ok(slices) => {
                    publish_due = false;
                    backoff.reset();
                    tracing::info!(slices = slices.len(), generation = ?publisher.generation(), "published");
                }
                Err(error) => {
                    retry_in = backoff.next_delay(&error);
                    tracing::error!(%error, ?retry_in, "cannot publish ResourceSlices");
                }
            }
        }
        let retry = async {
            if publish_due {
                tokio::time::sleep(retry_in).await;
            } else {
                std::future::pending::<()>().await;
            }
        };
        tokio::select! {
            () = &mut shutdown => break,
            () = retry => {}
            changed = registration.changed() => {
                if changed.is_err() { break }
                // A (re)starting kubelet deletes the node's slices: publish them again.
                publish_due = true;
            }
            changed = snapshots.changed() => {
                if changed.is_err() { break }
                let current = health_from_snapshot(&snapshots.borrow_and_update());
                for (phy, (logic, health)) in &current {
                    if seen.get(phy).map(|(_, known)| known) != Some(health) {
                        let chip_health = grade(&manager, *logic, health).await;
                        tracing::info!(phy, healthy = chip_health.healthy, reason = %chip_health.reason, "chip health changed");
                        graded.insert(*phy, chip_health);
                        publish_due = true;
                    }
                }
                seen = current;
                health_sender.send_replace(stream_entries(&pool, &chips, &graded));
            }
        }
    }
    plugin.shutdown().await;
    drop(monitor);
    Ok(())
}

/// The kubelet's health list: every chip, `Unknown` until the monitor has checked it.
fn stream_entries(pool: &str, chips: &[NpuChip], graded: &BTreeMap<u32, ChipHealth>) -> Vec<DeviceHealth> {
    chips
        .iter()
        .map(|chip| {
            let (status, message) = match graded.get(&chip.ids.phy.get()) {
                None => (HealthStatus::Unknown, "not checked yet".to_owned()),
                Some(health) if health.healthy => (HealthStatus::Healthy, String::new()),
                Some(health) => (HealthStatus::Unhealthy, health.reason.clone()),
            };
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
