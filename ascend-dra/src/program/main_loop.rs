//! The program around [`crate::run`]: `/healthz` and `/metrics` first (so that a liveness probe sees the process
//! while it starts), then the driver library and the API server, then the driver until SIGTERM or SIGINT.

use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use anyhow::Context;
use ascend_cli::health_endpoint::HealthEndpoint;
use ascend_node::recovery::RecoveryMetrics;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::cli::Args;

/// Runs the driver until a termination signal.
///
/// # Errors
/// No usable Ascend driver library, no API-server configuration or no such Node, an HTTP address that cannot be
/// bound, and the errors of [`crate::run`].
pub async fn run(args: Args) -> anyhow::Result<()> {
    let running = Gauge::<i64, AtomicI64>::default();
    let recovery = Arc::new(RecoveryMetrics::default());
    let metrics = Arc::new(registry(&running, &recovery));
    let endpoint = HealthEndpoint::bind(args.listen).await?;
    let http = tokio::spawn(endpoint.serve(|| "ok\n".to_owned(), move || render(&metrics), std::future::pending()));

    let result = serve(&args, &running, recovery).await;
    running.set(0);
    http.abort();
    result
}

async fn serve(args: &Args, running: &Gauge<i64, AtomicI64>, recovery: Arc<RecoveryMetrics>) -> anyhow::Result<()> {
    let manager = Arc::new(ascend_node::load_driver(&args.driver_options()).await?);
    let client = ascend_kube::connect_as("ascend-dra-driver", env!("CARGO_PKG_VERSION"))
        .await
        .context("the driver publishes ResourceSlices and reads ResourceClaims through the Kubernetes API")?;
    running.set(1);
    crate::run_observed(args.driver_config(), manager, client, recovery, ascend_cli::signal::termination())
        .await
        .context("the DRA driver stopped")
}

fn registry(running: &Gauge<i64, AtomicI64>, recovery: &RecoveryMetrics) -> Registry {
    let mut registry = Registry::with_prefix("ascend_dra_driver");
    registry.register("running", "1 while the driver serves the kubelet", running.clone());
    recovery.register(&mut registry);
    registry
}

fn render(registry: &Registry) -> String {
    let mut text = String::new();
    if let Err(error) = encode(&mut text, registry) {
        text = format!("# encoding failed: {error}\n");
    }
    text
}
