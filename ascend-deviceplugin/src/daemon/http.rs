//! The daemon's own HTTP endpoint: `/healthz` (liveness; 200 while the process serves or waits for the driver)
//! and `/metrics` (OpenMetrics).

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;

use anyhow::Context;
use axum::extract::State;
use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use axum::routing::get;
use axum::Router;

use super::metrics::PluginMetrics;

/// The OpenMetrics content type Prometheus asks for.
pub const OPENMETRICS_CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// Binds `address` and serves until `shutdown` completes.
///
/// # Errors
/// When the address cannot be bound or serving fails.
pub async fn serve(
    address: SocketAddr,
    metrics: Arc<PluginMetrics>,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> anyhow::Result<()> {
    let listener =
        tokio::net::TcpListener::bind(address).await.with_context(|| format!("binding the HTTP endpoint {address}"))?;
    tracing::info!(address = %listener.local_addr().unwrap_or(address), "serving /healthz and /metrics");
    let router = Router::new().route("/healthz", get(healthz)).route("/metrics", get(metrics_text)).with_state(metrics);
    axum::serve(listener, router).with_graceful_shutdown(shutdown).await.context("serving HTTP")
}

async fn healthz(State(metrics): State<Arc<PluginMetrics>>) -> impl IntoResponse {
    if metrics.is_running() {
        "ok\n"
    } else {
        "ok: waiting for the Ascend driver\n"
    }
}

async fn metrics_text(State(metrics): State<Arc<PluginMetrics>>) -> impl IntoResponse {
    ([(CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], metrics.encode())
}
