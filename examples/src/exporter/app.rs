//! Wiring: driver, sampler, pod attribution watcher, renderer and HTTP server, from the command-line flags.

use std::sync::Arc;

use anyhow::Context;
use ascend_dcmi::{Dcmi, DeviceManager, Sampler, SamplerConfig};
use axum::http::{HeaderName, HeaderValue};
use tokio::net::TcpListener;

use super::basic_auth::BasicAuth;
use super::cli::ExporterArgs;
use super::http_server::{router, serve, ServerState};
use super::pod_attribution::SharedAttribution;
use super::pod_resources_watch::PodResourcesWatch;
use super::render::{Exposition, RenderPlan, SnapshotCollector};
use super::sampler_source::SamplerSource;
use super::scrape_cache::ScrapeCache;
use super::selection::Selection;
use super::snapshot::SnapshotSource;
use super::tls::server_config;
use super::web_config::WebConfig;

/// This exporter's version, for `ascend_npu_exporter_build_info`.
pub const EXPORTER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// Runs the exporter until SIGINT or SIGTERM.
///
/// # Errors
/// Configuration files that cannot be used, a driver library that cannot be loaded or enumerated, a listen address
/// that cannot be bound: each names the file, library or address.
pub async fn run(args: ExporterArgs) -> anyhow::Result<()> {
    let selection = match &args.selection_file {
        Some(path) => Selection::load(path)?,
        None => Selection::default(),
    };
    let web_config = match &args.web_config_file {
        Some(path) => WebConfig::load(path)?,
        None => WebConfig::plain(),
    };
    let tls = match &web_config.tls {
        Some(settings) => Some(tokio_rustls::TlsAcceptor::from(server_config(settings, web_config.http2)?)),
        None => None,
    };
    let auth = BasicAuth::new(web_config.basic_auth_users.clone()).context("preparing basic auth")?.map(Arc::new);
    let extra_headers = web_config
        .headers
        .iter()
        .map(|(name, value)| {
            let header =
                HeaderName::try_from(name.as_str()).with_context(|| format!("web config header name {name:?}"))?;
            let value =
                HeaderValue::try_from(value.as_str()).with_context(|| format!("web config header {name} value"))?;
            Ok((header, value))
        })
        .collect::<anyhow::Result<Vec<_>>>()?;

    let sampler_config = selection
        .sampler_config(SamplerConfig::default().with_deadline(args.deadline).with_concurrency(args.concurrency));
    let build = args.clone();
    // Loading the library and enumerating chips call the driver: keep them off the async executor.
    let source = tokio::task::spawn_blocking(move || start_sampler(&build, sampler_config)).await??;
    let source: Arc<dyn SnapshotSource> = Arc::new(source);

    let attribution = Arc::new(SharedAttribution::new());
    let (stop_watch, watch_stopped) = tokio::sync::oneshot::channel::<()>();
    if !args.pod_resources_disable {
        let watch = PodResourcesWatch {
            socket: args.pod_resources_socket.clone(),
            refresh: args.pod_resources_interval,
            ..PodResourcesWatch::default()
        };
        let shared = Arc::clone(&attribution);
        tokio::spawn(watch.run(shared, async move {
            let _ = watch_stopped.await;
        }));
    }

    let plan = RenderPlan::new(args.naming, &selection);
    let collector = SnapshotCollector::new(Arc::clone(&source), Arc::clone(&attribution), plan, EXPORTER_VERSION);
    let exposition = Exposition::new(collector);
    let state = ServerState {
        scrape_cache: Arc::new(ScrapeCache::new(exposition, Arc::clone(&source), attribution, args.cache_max_age)),
        source,
        max_snapshot_age: args.max_snapshot_age,
        auth,
        extra_headers: Arc::new(extra_headers),
    };
    let listener = TcpListener::bind(args.listen_address)
        .await
        .with_context(|| format!("cannot listen on {}", args.listen_address))?;
    let scheme = if tls.is_some() { "https" } else { "http" };
    tracing::info!(address = %listener.local_addr()?, scheme, "npu-exporter serving /metrics");
    serve(listener, router(state), tls, web_config.http2, crate::shutdown::termination()).await?;
    let _ = stop_watch.send(());
    tracing::info!("npu-exporter stopped");
    Ok(())
}

fn start_sampler(args: &ExporterArgs, config: SamplerConfig) -> anyhow::Result<SamplerSource> {
    let mut builder = Dcmi::builder().verify_library_ownership(!args.skip_ownership_check);
    if let Some(path) = &args.dcmi_library {
        builder = builder.library_path(path);
    }
    let dcmi = builder.init().context("loading the DCMI library")?;
    let driver_version = match dcmi.driver_version() {
        Ok(version) => Some(version),
        Err(error) => {
            tracing::warn!(%error, "driver version unknown");
            None
        }
    };
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let sampler = Sampler::spawn(manager, config).context("starting the DCMI sampler")?;
    tracing::info!(chips = sampler.chips().len(), "sampler started");
    Ok(SamplerSource::new(sampler, driver_version))
}
