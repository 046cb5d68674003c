//! What the tool does with its flags: load the driver, then preview, reconcile once, or keep reconciling.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use ascend_dcmi::{Dcmi, DeviceManager};
use ascend_deviceplugin::kube_client::{KubeClient, HOST_ENV};
use ascend_deviceplugin::node_labeller::{NodeLabeller, ReconcileTrigger, Reconciled};
use ascend_deviceplugin::NodeLabels;

use super::cli::{Args, LogFormat};

/// Sets up logging to stderr in the chosen format; `RUST_LOG` filters (default `info`).
pub fn init_logging(format: LogFormat) {
    let filter = tracing_subscriber::EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match format {
        LogFormat::Text => builder.init(),
        LogFormat::Json => builder.json().init(),
    }
}

/// Runs the tool. `--dry-run` prints the merge patch on stdout; `--once` reconciles and returns; otherwise it
/// reconciles every `--interval` and on SIGHUP until SIGTERM or SIGINT.
///
/// # Errors
/// No driver (in `--once` and `--dry-run`), no in-cluster API access, or a failed reconcile in `--once`.
pub async fn run(args: Args) -> anyhow::Result<()> {
    if args.dry_run {
        let manager = load_driver(&args).await?;
        return dry_run(&args, manager).await;
    }
    let client = KubeClient::in_cluster().context("connecting to the Kubernetes API")?;
    if args.once {
        let manager = load_driver(&args).await?;
        let labeller = NodeLabeller::new(manager, client, args.labeller_config());
        return match labeller.reconcile().await? {
            Reconciled::Unchanged => {
                tracing::info!(node = %args.node_name, "node labels are current");
                Ok(())
            }
            Reconciled::Patched(patch) => {
                tracing::info!(node = %args.node_name, changes = %patch, "node labels updated");
                Ok(())
            }
        };
    }
    let Some(manager) = load_driver_until_stopped(&args).await else {
        return Ok(());
    };
    let labeller = NodeLabeller::new(manager, client, args.labeller_config());
    let hangups = tokio::spawn(reconcile_on_hangup(labeller.trigger()));
    labeller.run(crate::shutdown::termination()).await;
    hangups.abort();
    tracing::info!("stopped");
    Ok(())
}

/// Prints the patch a reconcile would send: against the live node when in a cluster, else against no labels.
async fn dry_run(args: &Args, manager: Arc<dyn DeviceManager>) -> anyhow::Result<()> {
    let patch = if std::env::var_os(HOST_ENV).is_some() {
        let client = KubeClient::in_cluster().context("connecting to the Kubernetes API")?;
        NodeLabeller::new(manager, client, args.labeller_config()).plan().await?
    } else {
        eprintln!("{HOST_ENV} is not set: showing the patch for a node without any of the labels");
        let desired = tokio::task::spawn_blocking(move || NodeLabels::read(manager.as_ref()))
            .await
            .context("the thread reading the chips failed")??;
        desired.patch_against(&BTreeMap::new())
    };
    println!("{}", serde_json::to_string_pretty(&patch.to_merge_patch())?);
    eprintln!("dry run, nothing sent: {patch}");
    Ok(())
}

fn builder(args: &Args) -> ascend_dcmi::DcmiBuilder {
    let mut builder =
        Dcmi::builder().host_root(args.host_root.clone()).verify_library_ownership(!args.skip_library_ownership_check);
    if let Some(library) = &args.library {
        builder = builder.library_path(library.clone());
    }
    builder
}

/// Loads libdcmi.so once.
async fn load_driver(args: &Args) -> anyhow::Result<Arc<dyn DeviceManager>> {
    let builder = builder(args);
    let dcmi = tokio::task::spawn_blocking(move || builder.init())
        .await
        .context("the driver loading thread failed")?
        .context(
        "loading the Ascend driver (libdcmi.so): is the NPU driver installed and /usr/local/Ascend mounted?",
    )?;
    tracing::info!(library = %dcmi.library_path().display(), "driver loaded");
    Ok(Arc::new(dcmi))
}

/// Loads libdcmi.so, retrying every `--interval` (a sidecar starts with its node, maybe before the driver is ready);
/// `None` when a termination signal came first.
async fn load_driver_until_stopped(args: &Args) -> Option<Arc<dyn DeviceManager>> {
    let retry: Duration = args.interval;
    let stop = crate::shutdown::termination();
    tokio::pin!(stop);
    loop {
        match load_driver(args).await {
            Ok(manager) => return Some(manager),
            Err(error) => {
                tracing::error!(error = format!("{error:#}"), retry_in = ?retry, "no usable driver; retrying")
            }
        }
        tokio::select! {
            () = tokio::time::sleep(retry) => {}
            () = &mut stop => return None,
        }
    }
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
