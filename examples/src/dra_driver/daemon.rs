//! Loads the Ascend driver library and the API-server configuration (each failing with a message that says which
//! is missing), serves `/healthz` and `/metrics`, and runs the driver until SIGTERM or SIGINT.

use std::sync::atomic::AtomicI64;
use std::sync::Arc;

use anyhow::Context;
use ascend_dcmi::{Dcmi, DeviceManager};
use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use axum::Router;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::registry::Registry;

use super::cli::Args;
use crate::device_plugin::http::OPENMETRICS_CONTENT_TYPE;

/// Runs the driver until a termination signal.
///
/// # Errors
/// No usable Ascend driver library, no API-server configuration, an HTTP address that cannot be bound, and the
/// errors of [`ascend_dra::run`].
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

    let manager = load_driver(&args).await?;
    let client = kube::Client::try_default().await.context(
        "no Kubernetes API server configuration (neither an in-cluster service account nor a kubeconfig): the \
         driver publishes ResourceSlices and reads ResourceClaims through it",
    )?;
    running.set(1);
    let result = ascend_dra::run(args.driver_config(), manager, client, ascend_cli::signal::termination()).await;
    running.set(0);
    http.abort();
    result.context("the DRA driver stopped")
}

async fn load_driver(args: &Args) -> anyhow::Result<Arc<dyn DeviceManager>> {
    let mut builder = Dcmi::builder()
        .host_root(args.host_root.clone())
        .call_deadline(args.health_deadline)
        .verify_library_ownership(!args.skip_library_ownership_check);
    if let Some(library) = &args.dcmi_library {
        builder = builder.library_path(library.clone());
    }
    let dcmi = tokio::task::spawn_blocking(move || builder.init())
        .await
        .context("loading the Ascend driver")?
        .context("no usable Ascend driver on this node (is the NPU driver installed and /usr/local/Ascend mounted?)")?;
    tracing::info!(library = %dcmi.library_path().display(), "driver loaded");
    Ok(Arc::new(dcmi))
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
