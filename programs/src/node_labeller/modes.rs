//! What `ascend-node-labeller` does in each of its modes: a preview of the patch (`--dry-run`), one reconcile
//! (`--once`, for a Job or an init container), or a daemon that waits for the driver, then reconciles every interval
//! and on SIGHUP until told to stop. The labels, their patch and the reconcile loop are `ascend_kube`'s
//! ([`NodeLabeller`]); this is the program around them.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;

use ascend_dcmi::DeviceManager;
use ascend_kube::{
    connect_as, in_cluster, Error, LabelPatch, LabellerConfig, NodeLabeller, NodeLabels, ReconcileTrigger, Reconciled,
    Result, NODE_LABELLER_FIELD_MANAGER,
};
use ascend_node::{load_driver_until, DriverOptions};

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
    let manager: Arc<dyn DeviceManager> = Arc::new(ascend_node::load_driver(driver).await?);
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
    let manager: Arc<dyn DeviceManager> = Arc::new(manager);
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
