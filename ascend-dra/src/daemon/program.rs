//! The program around [`crate::run`]: `/healthz` and `/metrics` first (so that a liveness probe sees the process
//! while it starts), then the driver library and the API server, then the driver until SIGTERM or SIGINT.

use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use anyhow::Context;
use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::cli::Args;

/// The OpenMetrics content type Prometheus asks for.
const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Runs the driver until a termination signal.
///
/// # Errors
/// No usable Ascend driver library, no API-server configuration or no such Node, an HTTP address that cannot be
/// bound, and the errors of [`crate::run`].
pub async fn run(args: Args) -> anyhow::Result<()> {
    let running = Gauge::<i64, AtomicI64>::default();
    let metrics = Arc::new(registry(&running));
    let listener = tokio::net::TcpListener::bind(args.listen)
        .await
        .with_context(|| format!("binding the HTTP endpoint {}", args.listen))?;
    let router = Router::new()
        .route("/healthz", get(|| async { "ok\n" }))
        .route("/metrics", get(move || render(Arc::clone(&metrics))));
    let http = tokio::spawn(async move { axum::serve(listener, router).await });

    let result = serve(&args, &running).await;
    running.set(0);
    http.abort();
    result
}

async fn serve(args: &Args, running: &Gauge<i64, AtomicI64>) -> anyhow::Result<()> {
    let manager = ascend_kube::labeller_tool::load_driver(&args.driver_options()).await?;
    let client = ascend_kube::connect_as("ascend-dra-driver", env!("CARGO_PKG_VERSION"))
        .await
        .context("the driver publishes ResourceSlices and reads ResourceClaims through the Kubernetes API")?;
    running.set(1);
    crate::run(args.driver_config(), manager, client, ascend_cli::signal::termination())
        .await
        .context("the DRA driver stopped")
}

fn registry(running: &Gauge<i64, AtomicI64>) -> Registry {
    let mut registry = Registry::default();
    registry.register("ascend_dra_driver_running", "1 while the driver serves the kubelet", running.clone());
    registry
}

async fn render(registry: Arc<Registry>) -> impl axum::response::IntoResponse {
    let mut text = String::new();
    if let Err(error) = encode(&mut text, &registry) {
        text = format!("# encoding failed: {error}\n");
    }
    ([(CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], text)
}
