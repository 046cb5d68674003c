//! What the `ascend-node-labeller` tool does in each of its modes, so that its binary is only flags and a `main`:
//! a preview of the patch (`--dry-run`), one reconcile (`--once`, for a Job or an init container), or a daemon that
//! waits for the driver, then reconciles every interval and on SIGHUP until told to stop.

use std::collections::BTreeMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{Dcmi, DeviceManager};

use crate::client::{connect_as, in_cluster, NODE_LABELLER_FIELD_MANAGER};
use crate::error::{Error, Result};
use crate::node_labeller::{LabellerConfig, NodeLabeller, ReconcileTrigger, Reconciled};
use crate::node_labels::{LabelPatch, NodeLabels};

/// Where the driver library is and how far to trust it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DriverOptions {
    /// Load exactly this `libdcmi.so` instead of searching the standard places.
    pub library: Option<PathBuf>,
    /// Where the host's `/` is mounted.
    pub host_root: PathBuf,
    /// Refuse a library that is not root-owned and read-only (off only for test builds).
    pub verify_library_ownership: bool,
}

impl Default for DriverOptions {
    fn default() -> Self {
        DriverOptions { library: None, host_root: PathBuf::from("/"), verify_library_ownership: true }
    }
}

/// Loads `libdcmi.so` once, on a blocking thread.
///
/// # Errors
/// [`Error::Dcmi`] naming the library problem, [`Error::DriverThread`] if the loading thread failed.
pub async fn load_driver(options: &DriverOptions) -> Result<Arc<dyn DeviceManager>> {
    let mut builder =
        Dcmi::builder().host_root(options.host_root.clone()).verify_library_ownership(options.verify_library_ownership);
    if let Some(library) = &options.library {
        builder = builder.library_path(library.clone());
    }
    let dcmi = tokio::task::spawn_blocking(move || builder.init())
        .await
        .map_err(|error| Error::DriverThread(error.to_string()))?
        .map_err(|source| Error::Dcmi {
            what: "the Ascend driver (libdcmi.so): is the NPU driver installed and /usr/local/Ascend mounted?".into(),
            source,
        })?;
    tracing::info!(library = %dcmi.library_path().display(), "driver loaded");
    Ok(Arc::new(dcmi))
}

/// Loads the driver, retrying every `retry` (a sidecar starts with its node, maybe before the driver is ready);
/// `None` when `shutdown` completes first.
pub async fn load_driver_until(
    options: &DriverOptions,
    retry: Duration,
    shutdown: impl Future<Output = ()>,
) -> Option<Arc<dyn DeviceManager>> {
    tokio::pin!(shutdown);
    loop {
        match load_driver(options).await {
            Ok(manager) => return Some(manager),
            Err(error) => tracing::error!(%error, retry_in = ?retry, "no usable driver; retrying"),
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            () = &mut shutdown => return None,
        }
    }
}

/// A previewed patch, and what it was computed against.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Preview {
    /// The patch a reconcile would send.
    pub patch: LabelPatch,
    /// Whether it was computed against the live node (in a cluster) or against a node without any of the labels.
    pub against_live_node: bool,
}

/// The labeller's client: its requests say `ascend-node-labeller/<version>`.
async fn labeller_client() -> Result<kube::Client> {
    connect_as(NODE_LABELLER_FIELD_MANAGER, env!("CARGO_PKG_VERSION")).await
}

/// The patch a reconcile would send, sending nothing: against the live node when running in a pod, else against a
/// node without any of the labels.
///
/// # Errors
/// As [`NodeLabeller::plan`], or [`Error::Config`] in a pod without API access.
pub async fn preview(manager: Arc<dyn DeviceManager>, config: LabellerConfig) -> Result<Preview> {
    if in_cluster() {
        let labeller = NodeLabeller::new(manager, labeller_client().await?, config)?;
        return Ok(Preview { patch: labeller.plan().await?, against_live_node: true });
    }
    let desired = tokio::task::spawn_blocking(move || NodeLabels::read(manager.as_ref()))
        .await
        .map_err(|error| Error::DriverThread(error.to_string()))??;
    Ok(Preview { patch: desired.patch_against(&BTreeMap::new()), against_live_node: false })
}

/// One reconcile: connect, load the driver, patch what differs.
///
/// # Errors
/// [`Error::Config`] without API access, the driver's error, or the reconcile's.
pub async fn reconcile_once(driver: &DriverOptions, config: LabellerConfig) -> Result<Reconciled> {
    let client = labeller_client().await?;
    let manager = load_driver(driver).await?;
    let node = config.node_name.clone();
    let outcome = NodeLabeller::new(manager, client, config)?.reconcile().await?;
    match &outcome {
        Reconciled::Unchanged => tracing::info!(%node, "node labels are current"),
        Reconciled::Patched(patch) => tracing::info!(%node, changes = %patch, "node labels updated"),
    }
    Ok(outcome)
}

/// The daemon: connect, wait for the driver (retrying every interval), then reconcile every interval and on SIGHUP
/// until `shutdown` completes. Failed reconciles are logged and retried; they never remove labels.
///
/// # Errors
/// [`Error::Config`] without API access, [`Error::InvalidNodeName`].
pub async fn run_daemon(
    driver: &DriverOptions,
    config: LabellerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<()> {
    let client = labeller_client().await?;
    // Two phases wait for the same shutdown: it is spawned once and observed through a watch channel.
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let signal = tokio::spawn(async move {
        shutdown.await;
        let _ = stop.send(true);
    });
    let until_stopped = || {
        let mut stopped = stopped.clone();
        async move {
            let _ = stopped.wait_for(|stopped| *stopped).await;
        }
    };
    let Some(manager) = load_driver_until(driver, config.interval, until_stopped()).await else {
        return Ok(());
    };
    let labeller = NodeLabeller::new(manager, client, config)?;
    let hangups = tokio::spawn(reconcile_on_hangup(labeller.trigger()));
    labeller.run(until_stopped()).await;
    hangups.abort();
    signal.abort();
    tracing::info!("stopped");
    Ok(())
}

/// SIGHUP asks for a reconcile now, without waiting for the interval.
async fn reconcile_on_hangup(trigger: ReconcileTrigger) {
    let mut hangup = match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::hangup()) {
        Ok(hangup) => hangup,
        Err(error) => {
            tracing::warn!(%error, "cannot listen for SIGHUP; reconciling on the interval only");
            return;
        }
    };
    while hangup.recv().await.is_some() {
        tracing::info!("SIGHUP received: reconciling now");
        trigger.request();
    }
}
