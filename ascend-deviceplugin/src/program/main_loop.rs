//! The daemon's main loop: load the driver (retrying, with a clear message, where there is none), run the plugin
//! until SIGTERM or SIGINT, serve /healthz and /metrics throughout.

use std::sync::Arc;
use std::time::Duration;

use crate::recovery::PodResourcesHolders;
use crate::{plugin, DeviceAssigner, HealthMonitor, HoldingsTracker};
use anyhow::Context;
use ascend_cli::health_endpoint::{EndpointError, HealthEndpoint};
use ascend_kube::device_info::NodePlacement;
use ascend_kube::BackoffPolicy;
use ascend_kube::NodeConditionWriter;
use ascend_kube::RecoveryEvents;
use ascend_node::load_driver_until;
use ascend_node::recovery::{RecoveryMode, RecoveryObservers, RecoveryRunner};
use tokio::sync::watch;

use super::cli::Args;
use super::metrics::PluginMetrics;

/// How long one API request of the node condition may take.
const API_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Runs the daemon until a termination signal.
///
/// # Errors
/// Invalid flags, or an HTTP endpoint that cannot be bound.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let mut config = args.plugin_config()?;
    let volcano = args.volcano_config()?;
    let events_node = args.node_events_node()?;
    let recovery = args.recovery_config()?;
    let metrics = Arc::new(PluginMetrics::default());
    let (stop_sender, stop) = watch::channel(false);
    tokio::spawn(forward_signals(stop_sender));

    // `/healthz` answers while the process serves or waits for the driver.
    let endpoint = HealthEndpoint::bind(args.listen).await?;
    let (health, text) = (Arc::clone(&metrics), Arc::clone(&metrics));
    let http = tokio::spawn(endpoint.serve(
        move || if health.is_running() { "ok\n" } else { "ok: waiting for the Ascend driver\n" }.to_owned(),
        move || text.encode(),
        stopped(stop.clone()),
    ));
    let Some(dcmi) = load_driver_until(&args.driver_options(), args.driver_retry, stopped(stop.clone())).await else {
        return finish_http(http).await;
    };
    let dcmi = Arc::new(dcmi);
    let reader = Arc::clone(&dcmi);
    config.allocate.hccl_topo_file =
        tokio::task::spawn_blocking(move || crate::allocate::hccl_topo_file(reader.as_ref()))
            .await
            .context("reading the HCCL topology file of the host")?;
    metrics.set_driver_loaded(true);
    let observer: Arc<dyn crate::PluginObserver> = metrics.clone();
    let monitor = HealthMonitor::start(dcmi.clone(), config.monitor.clone(), observer.clone())?;
    let client = match volcano.is_some() || events_node.is_some() {
        true => Some(
            ascend_kube::connect_as("ascend-device-plugin", env!("CARGO_PKG_VERSION"))
                .await
                .context("--volcano and --node-events need the Kubernetes API")?,
        ),
        false => None,
    };
    let mut events = None;
    if let (Some(node), Some(client)) = (events_node, &client) {
        let node_events = ascend_kube::NodeEvents::start(client.clone(), &node, Default::default())?;
        tracing::info!(%node, "recording NPU faults as Events on the node");
        tokio::spawn(crate::node_events::report(monitor.subscribe(), node_events.clone(), stopped(stop.clone())));
        events = Some(node_events);
        if args.node_condition {
            let writer = NodeConditionWriter::new(client.clone(), &node)?.with_timeout(API_REQUEST_TIMEOUT);
            tracing::info!(%node, "keeping the node condition AscendNPUUnhealthy current");
            let snapshots = monitor.subscribe();
            tokio::spawn(crate::node_condition::report(
                snapshots,
                writer,
                BackoffPolicy::default(),
                stopped(stop.clone()),
            ));
        }
    }
    // The one reader of the kubelet's PodResources: the plugin's registrations, recovery and Volcano's free chips.
    let holdings = Arc::new(HoldingsTracker::new(config.pod_resources_socket.clone(), config.call_timeout));
    if recovery.mode != RecoveryMode::Off {
        tracing::info!(mode = %recovery.mode, idle = ?recovery.idle, "recovery on: faulty chips are reset once free");
        let holders = Arc::new(PodResourcesHolders::new(Arc::clone(&holdings), monitor.subscribe()));
        let mut reporter = RecoveryObservers::new().with(metrics.recovery());
        if let Some(events) = events {
            reporter = reporter.with(Arc::new(RecoveryEvents::new(events, monitor.subscribe())));
        }
        let reporter = Arc::new(reporter);
        let withdrawals = Arc::new(monitor.withdrawals());
        let runner = RecoveryRunner::new(recovery, dcmi.clone(), monitor.subscribe(), withdrawals, holders, reporter);
        tokio::spawn(runner.run(stopped(stop.clone())));
    }
    let assigner = match (volcano, client) {
        (Some(mut volcano), Some(client)) => {
            tracing::info!(node = %volcano.node_name, "Volcano mode: writing device info, assigning chips from pod annotations");
            let reader = Arc::clone(&dcmi);
            let placement = tokio::task::spawn_blocking(move || NodePlacement::read(reader.as_ref()))
                .await
                .context("reading the node's super-pod placement")?;
            tracing::info!(placement = ?placement.placement, "super-pod placement");
            volcano.placement = Some(placement);
            crate::volcano::start_node_annotation(client.clone(), dcmi, &monitor, &volcano, stopped(stop.clone()))?;
            let assigner: Arc<dyn DeviceAssigner> =
                crate::volcano::start(client, &monitor, holdings.subscribe(), volcano, stopped(stop.clone()))?;
            Some(assigner)
        }
        _ => None,
    };
    plugin::serve(&monitor, config, observer, assigner, holdings, stopped(stop)).await;
    drop(monitor);
    metrics.set_driver_loaded(false);
    finish_http(http).await
}

async fn finish_http(http: tokio::task::JoinHandle<Result<(), EndpointError>>) -> anyhow::Result<()> {
    match http.await {
        Ok(result) => Ok(result?),
        Err(error) => Err(anyhow::anyhow!("HTTP task failed: {error}")),
    }
}

async fn stopped(mut stop: watch::Receiver<bool>) {
    let _ = stop.wait_for(|stop| *stop).await;
}

async fn forward_signals(stop: watch::Sender<bool>) {
    ascend_cli::signal::termination().await;
    let _ = stop.send(true);
}
