//! Wiring: driver, sampler, pod attribution watcher, renderer and HTTP server, from the command-line flags.

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{DeviceManager, Sampler, SamplerConfig};
use hyper::header::{HeaderName, HeaderValue};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

use super::cli::Args;
use crate::basic_auth::BasicAuth;
use crate::body_files::BodyFiles;
use crate::error::{Error, Result};
use crate::http_server::{serve, serving_threads, ServerState};
use crate::network::{NetworkSampler, NetworkSource};
use crate::pod_attribution::SharedAttribution;
use crate::pod_resources_watch::PodResourcesWatch;
use crate::render::{Exposition, RenderPlan, SnapshotCollector};
use crate::sampler_source::SamplerSource;
use crate::scrape_cache::ScrapeCache;
use crate::selection::Selection;
use crate::snapshot::SnapshotSource;
use crate::tls::server_config;
use crate::web_config::WebConfig;

/// This exporter's version, for `ascend_npu_exporter_build_info`.
const EXPORTER_VERSION: &str = env!("CARGO_PKG_VERSION");

/// An exporter that has loaded its configuration, started its sampler and bound its listen address, ready to serve.
///
/// Splitting start-up from serving lets a caller learn the bound address (`--web.listen-address=127.0.0.1:0`) and
/// fail fast on configuration before anything is served.
pub struct Exporter {
    listener: TcpListener,
    state: Arc<ServerState>,
    tls: Option<TlsAcceptor>,
    http2: bool,
    header_read_timeout: Duration,
    pod_resources: Option<PodResourcesWatch>,
    attribution: Arc<SharedAttribution>,
    _network: Option<NetworkSampler>,
}

impl std::fmt::Debug for Exporter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Exporter")
            .field("address", &self.listener.local_addr().ok())
            .field("tls", &self.tls.is_some())
            .field("http2", &self.http2)
            .field("header_read_timeout", &self.header_read_timeout)
            .finish_non_exhaustive()
    }
}

impl Exporter {
    /// Reads the selection and web config files, loads the driver library, starts the sampler and binds the listen
    /// address.
    ///
    /// # Errors
    /// Configuration files or naming flags that cannot be used, a driver library that cannot be loaded or enumerated,
    /// a listen address that cannot be bound: each [`Error`] names the file, flag, driver step or address.
    pub async fn start(args: &Args) -> Result<Self> {
        let selection = match &args.selection_file {
            Some(path) => Selection::load(path)?,
            None => Selection::default(),
        };
        let web_config = match &args.web_config_file {
            Some(path) => WebConfig::load(path)?,
            None => WebConfig::plain(),
        };
        let naming = args.resource_naming()?;
        let tls = match &web_config.tls {
            Some(settings) => Some(TlsAcceptor::from(server_config(settings, web_config.http2)?)),
            None => None,
        };
        let auth = BasicAuth::new(web_config.basic_auth_users.clone())?.map(Arc::new);
        let extra_headers =
            web_config.headers.iter().map(|(name, value)| extra_header(name, value)).collect::<Result<Vec<_>>>()?;

        let mut defaults = SamplerConfig::default()
            .with_deadline(args.deadline)
            .with_concurrency(args.concurrency)
            .with_profiling(args.hccs_profiling, args.pcie_profiling);
        if let Some(deadline) = args.bandwidth_deadline {
            defaults = defaults.with_bandwidth_deadline(deadline);
        }
        let sampler_config = selection.sampler_config(defaults);
        let build = args.clone();
        // Loading the library and enumerating chips call the driver: keep them off the async executor.
        let source = tokio::task::spawn_blocking(move || start_sampler(&build, sampler_config))
            .await
            .map_err(|error| Error::StartupTask(error.to_string()))??;
        let source: Arc<dyn SnapshotSource> = Arc::new(source);
        let network = start_network_sampler(args, &selection, &source);
        let source = match &network {
            Some(sampler) => Arc::new(NetworkSource::new(source, sampler.store())),
            None => source,
        };

        let attribution = Arc::new(SharedAttribution::new());
        let pod_resources = (!args.pod_resources_disable).then(|| PodResourcesWatch {
            socket: args.pod_resources_socket.clone(),
            refresh: args.pod_resources_interval,
            naming,
            ..PodResourcesWatch::default()
        });

        let plan = RenderPlan::new(args.naming, &selection);
        let collector = SnapshotCollector::new(Arc::clone(&source), Arc::clone(&attribution), plan, EXPORTER_VERSION);
        let exposition = Exposition::new(collector);
        let scrape_cache =
            ScrapeCache::new(exposition, Arc::clone(&source), Arc::clone(&attribution), args.cache_max_age);
        let state = Arc::new(ServerState {
            scrape_cache: Arc::new(scrape_cache),
            source,
            max_snapshot_age: args.max_snapshot_age,
            auth,
            extra_headers,
            // TLS sends encrypted copies: no body is sent from a file.
            body_files: tls.is_none().then(|| Arc::new(BodyFiles::new())),
        });
        let address = args.listen_address;
        let listener = TcpListener::bind(address).await.map_err(|source| Error::Listen { address, source })?;
        Ok(Self {
            listener,
            state,
            tls,
            http2: web_config.http2,
            header_read_timeout: args.header_read_timeout,
            pod_resources,
            attribution,
            _network: network,
        })
    }

    /// The bound address (the real port when the flag asked for port 0).
    ///
    /// # Errors
    /// [`Error::Listen`] if the socket cannot report its address.
    pub fn local_addr(&self) -> Result<SocketAddr> {
        self.listener.local_addr().map_err(|source| Error::Listen { address: ([0, 0, 0, 0], 0).into(), source })
    }

    /// Whether scrapes are served over TLS.
    pub fn is_tls(&self) -> bool {
        self.tls.is_some()
    }

    /// Serves `/metrics`, `/healthz` and `/` and keeps the pod attribution current until `shutdown` completes.
    ///
    /// # Errors
    /// [`Error::Serve`] if the server stops for another reason than `shutdown`.
    pub async fn serve(self, shutdown: impl Future<Output = ()>) -> Result<()> {
        let (stop_watch, watch_stopped) = tokio::sync::oneshot::channel::<()>();
        if let Some(watch) = self.pod_resources {
            tokio::spawn(watch.run(self.attribution, async move {
                let _ = watch_stopped.await;
            }));
        }
        let threads = serving_threads();
        let served =
            serve(self.listener, self.state, self.tls, self.http2, self.header_read_timeout, threads, shutdown)
                .await
                .map_err(Error::Serve);
        let _ = stop_watch.send(());
        served
    }
}

/// Starts the exporter and serves until `shutdown` completes (the binary passes SIGTERM or SIGINT), logging the
/// address it serves on and when it stops.
///
/// # Errors
/// As [`Exporter::start`] and [`Exporter::serve`].
pub async fn run(args: Args, shutdown: impl Future<Output = ()>) -> Result<()> {
    let exporter = Exporter::start(&args).await?;
    let scheme = if exporter.is_tls() { "https" } else { "http" };
    tracing::info!(address = %exporter.local_addr()?, scheme, "npu-exporter serving /metrics");
    exporter.serve(shutdown).await?;
    tracing::info!("npu-exporter stopped");
    Ok(())
}

fn extra_header(name: &str, value: &str) -> Result<(HeaderName, HeaderValue)> {
    let invalid = |message: String| Error::Header { name: name.to_owned(), message };
    let header = HeaderName::try_from(name).map_err(|error| invalid(error.to_string()))?;
    let value = HeaderValue::try_from(value).map_err(|error| invalid(format!("value: {error}")))?;
    Ok((header, value))
}

/// Starts the network sampler when a network group is enabled and `hccn_tool` exists; says once why not otherwise.
fn start_network_sampler(
    args: &Args,
    selection: &Selection,
    chips: &Arc<dyn SnapshotSource>,
) -> Option<NetworkSampler> {
    let groups = selection.network_intervals();
    let path = &args.hccn_tool_path;
    if groups.is_empty() {
        tracing::info!("network metrics off: the selection file disables the network, roce and optical groups");
        return None;
    }
    if !path.is_file() {
        tracing::info!(path = %path.display(), "network metrics off: no hccn_tool at this path (--hccn-tool.path)");
        return None;
    }
    let tool = ascend_hccn::HccnTool::builder().path(path).deadline(args.hccn_tool_timeout).build();
    let names: Vec<&str> = groups.iter().map(|(group, _)| group.name()).collect();
    tracing::info!(path = %path.display(), groups = ?names, "network sampler started");
    Some(NetworkSampler::spawn(tool, Arc::clone(chips), &groups, args.naming))
}

fn start_sampler(args: &Args, config: SamplerConfig) -> Result<SamplerSource> {
    let dcmi = args
        .driver
        .options("/")
        .builder()
        .init()
        .map_err(|source| Error::Driver { step: "loading the DCMI library", source })?;
    let driver_version = match dcmi.driver_version() {
        Ok(version) => Some(version),
        Err(error) => {
            tracing::warn!(%error, "driver version unknown");
            None
        }
    };
    // Only V1 drivers list cards; on V2 the call is unavailable and the count absent, as in Huawei's exporter.
    let cards = dcmi.cards().map(|cards| cards.len()).ok();
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let sampler = Sampler::spawn(manager, config)
        .map_err(|source| Error::Driver { step: "starting the DCMI sampler", source })?;
    tracing::info!(chips = sampler.chips().len(), "sampler started");
    Ok(SamplerSource::new(sampler, driver_version).with_cards(cards))
}
