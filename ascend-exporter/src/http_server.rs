//! The HTTP side: `/metrics`, `/healthz`, `/`, basic auth, TLS, and the accept loop.

use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::{Request, State};
use axum::http::{header, HeaderName, HeaderValue, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{Html, IntoResponse, Response};
use axum::routing::get;
use axum::Router;
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;

use crate::basic_auth::BasicAuth;
use crate::content_coding::ContentCoding;
use crate::exposition_format::ExpositionFormat;
use crate::scrape_cache::ScrapeCache;
use crate::snapshot::SnapshotSource;

/// What the handlers share.
#[derive(Clone)]
pub struct ServerState {
    /// Renders the latest snapshot, once per change of the data.
    pub scrape_cache: Arc<ScrapeCache>,
    /// For `/healthz`: how old the latest snapshot is.
    pub source: Arc<dyn SnapshotSource>,
    /// `/healthz` fails when the latest snapshot is older than this (the sampler thread stopped publishing).
    pub max_snapshot_age: Duration,
    /// Basic auth, if configured (not applied to `/healthz`).
    pub auth: Option<Arc<BasicAuth>>,
    /// Headers added to every response.
    pub extra_headers: Arc<Vec<(HeaderName, HeaderValue)>>,
}

/// The routes: `/metrics` and `/` behind basic auth (if configured), `/healthz` open for probes.
///
/// The auth and extra-header layers are added only when configured: each is a boxed future per request, which a
/// scrape that neither authenticates nor gets extra headers should not pay for (`benches/scripts/exporter_gzip.py`
/// serves small gzip bodies at tens of thousands of requests per second, where per-request overhead is the cost).
pub fn router(state: ServerState) -> Router {
    let mut protected = Router::new().route("/metrics", get(metrics)).route("/", get(index));
    if state.auth.is_some() {
        protected = protected.route_layer(middleware::from_fn_with_state(state.clone(), require_auth));
    }
    let mut router = Router::new().merge(protected).route("/healthz", get(healthz));
    if !state.extra_headers.is_empty() {
        router = router.layer(middleware::from_fn_with_state(state.clone(), add_headers));
    }
    router.with_state(state)
}

async fn metrics(State(state): State<ServerState>, request: Request) -> Response {
    let accept = request.headers().get(header::ACCEPT).and_then(|value| value.to_str().ok());
    let format = ExpositionFormat::negotiate(accept);
    let accept_encoding = request.headers().get(header::ACCEPT_ENCODING).and_then(|value| value.to_str().ok());
    let coding = ContentCoding::negotiate(accept_encoding);
    match state.scrape_cache.body(format, coding) {
        Ok(body) => {
            // Both request headers choose the bytes, so a cache between scraper and exporter must key on both.
            let headers = [(header::CONTENT_TYPE, format.content_type()), (header::VARY, "Accept, Accept-Encoding")];
            let mut response = (headers, body).into_response();
            if let Some(encoding) = coding.header_value() {
                response.headers_mut().insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
            }
            response
        }
        Err(error) => {
            tracing::error!(%error, "rendering metrics failed");
            (StatusCode::INTERNAL_SERVER_ERROR, "rendering metrics failed\n").into_response()
        }
    }
}

async fn healthz(State(state): State<ServerState>) -> Response {
    match state.source.latest() {
        None => (StatusCode::SERVICE_UNAVAILABLE, "no snapshot yet: the sampler has not published\n").into_response(),
        Some(snapshot) => {
            let age = snapshot.published_at.elapsed();
            if age > state.max_snapshot_age {
                let message =
                    format!("latest snapshot is {:.1} s old: the sampler stopped publishing\n", age.as_secs_f64());
                (StatusCode::SERVICE_UNAVAILABLE, message).into_response()
            } else {
                (StatusCode::OK, "ok\n").into_response()
            }
        }
    }
}

async fn index() -> Html<&'static str> {
    Html(concat!(
        "<!doctype html><html><head><title>npu-exporter</title></head><body><h1>npu-exporter</h1>",
        "<p>Prometheus exporter for Ascend NPUs.</p><ul><li><a href=\"metrics\">metrics</a></li>",
        "<li><a href=\"healthz\">healthz</a></li></ul></body></html>\n"
    ))
}

async fn require_auth(State(state): State<ServerState>, request: Request, next: Next) -> Response {
    let Some(auth) = state.auth.clone() else { return next.run(request).await };
    let header_value = request.headers().get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    // bcrypt costs tens of milliseconds: keep it off the executor threads.
    let allowed = tokio::task::spawn_blocking(move || auth.check(header_value.as_deref())).await.unwrap_or(false);
    if allowed {
        next.run(request).await
    } else {
        let challenge = [(header::WWW_AUTHENTICATE, "Basic realm=\"npu-exporter\"")];
        (StatusCode::UNAUTHORIZED, challenge, "unauthorized\n").into_response()
    }
}

async fn add_headers(State(state): State<ServerState>, request: Request, next: Next) -> Response {
    let mut response = next.run(request).await;
    for (name, value) in state.extra_headers.iter() {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    response
}

/// How many threads serve HTTP: one per CPU, as nginx's `worker_processes auto`, but at most
/// [`MAX_SERVING_THREADS`].
pub fn serving_threads() -> NonZeroUsize {
    let cpus = std::thread::available_parallelism().unwrap_or(NonZeroUsize::MIN);
    cpus.min(NonZeroUsize::new(MAX_SERVING_THREADS).unwrap_or(NonZeroUsize::MIN))
}

/// Scrapes are few (a handful of scrapers every few seconds): more threads than this would only hold memory on a
/// large node.
pub const MAX_SERVING_THREADS: usize = 4;

/// Serves `router` on `listener` until `shutdown` completes: plain or TLS, HTTP/1.1 and (if `http2`) HTTP/2.
///
/// The connections are served by `threads` threads, each running its own single-threaded tokio runtime that accepts
/// from the shared listening socket and serves every connection it accepted to the end, the way nginx's worker
/// processes do. A request and its response are then handled by one thread from the socket's readiness to the
/// write, with no hand-over between threads. Measured on a 2-CPU machine (`benches/scripts/exporter_gzip.py`: wrk
/// with 8 connections, gzip scrapes of 64 chips, runs alternating with nginx `gzip_static`, two runs of five rounds
/// each): tokio's multi-threaded runtime serving the same router answered with a p99 of 3.2 to 3.8 ms, these threads
/// with 0.2 to 0.5 ms, at the same requests per second (0.88 to 0.99 of nginx's for both; the rates of that machine
/// drift by a third between minutes). The multi-threaded runtime's time went to its workers waking each other.
///
/// A client gets `header_read_timeout` for its TLS handshake and again for each request's headers (HTTP/1.1), then
/// its connection is closed: a client that trickles bytes holds one task and one socket for that long, never a thread,
/// so it cannot delay other scrapes (`ascend-exporter/tests/load.rs` measures it).
///
/// # Errors
/// A serving thread or its runtime that cannot be started. Accept errors (for example too many open files) are
/// logged and retried, not returned.
pub async fn serve(
    listener: TcpListener,
    router: Router,
    tls: Option<TlsAcceptor>,
    http2: bool,
    header_read_timeout: Duration,
    threads: NonZeroUsize,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
    let builder = if http2 { builder } else { builder.http1_only() };
    let connections = Connections { router, tls, builder, header_read_timeout };
    let listener = listener.into_std()?;
    // Dropped (or set) when serving ends, which stops every thread's accept loop.
    let (stop, stopped) = watch::channel(false);
    // Each thread sends how it ended and drops its sender; the channel closes when every thread has ended.
    let (ended, mut endings) = mpsc::unbounded_channel::<std::io::Result<()>>();
    for index in 0..threads.get() {
        let listener = listener.try_clone()?;
        let connections = connections.clone();
        let mut stopped = stopped.clone();
        let ended = ended.clone();
        std::thread::Builder::new().name(format!("http-{index}")).spawn(move || {
            let served = tokio::runtime::Builder::new_current_thread().enable_all().build().and_then(|runtime| {
                runtime.block_on(async move {
                    let listener = TcpListener::from_std(listener)?;
                    let stop = async move {
                        let _ = stopped.wait_for(|stop| *stop).await;
                    };
                    accept_loop(listener, connections, stop).await;
                    Ok(())
                })
            });
            let _ = ended.send(served);
        })?;
    }
    drop((listener, ended));
    // A thread ends before the shutdown only when its runtime could not start (or its listener not be registered).
    let result = tokio::select! {
        () = shutdown => Ok(()),
        Some(Err(error)) = endings.recv() => Err(error),
    };
    let _ = stop.send(true);
    while endings.recv().await.is_some() {}
    result
}

/// What a serving thread needs to serve a connection.
#[derive(Clone)]
struct Connections {
    router: Router,
    tls: Option<TlsAcceptor>,
    builder: auto::Builder<TokioExecutor>,
    header_read_timeout: Duration,
}

/// Accepts connections on `listener` and serves each in a task of the current runtime until `stop` completes.
async fn accept_loop(listener: TcpListener, connections: Connections, stop: impl Future<Output = ()>) {
    tokio::pin!(stop);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut stop => return,
        };
        let (stream, peer) = match accepted {
            Ok(connection) => connection,
            Err(error) => {
                tracing::warn!(%error, "accept failed");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // A response goes out in as few writes as hyper can make, so Nagle's algorithm only delays the tail of one
        // (a TLS record, the end of a large body) until the scraper's delayed ACK; nginx's `tcp_nodelay on` default.
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%peer, %error, "cannot set TCP_NODELAY");
        }
        let Connections { router, tls, builder, header_read_timeout } = connections.clone();
        let service = TowerToHyperService::new(router);
        tokio::spawn(async move {
            let result = match tls {
                None => builder.serve_connection(TokioIo::new(stream), service).await,
                Some(acceptor) => match tokio::time::timeout(header_read_timeout, acceptor.accept(stream)).await {
                    Ok(Ok(tls_stream)) => builder.serve_connection(TokioIo::new(tls_stream), service).await,
                    Ok(Err(error)) => {
                        tracing::debug!(%peer, %error, "TLS handshake failed");
                        return;
                    }
                    Err(_) => {
                        tracing::debug!(%peer, "TLS handshake timed out");
                        return;
                    }
                },
            };
            if let Err(error) = result {
                tracing::debug!(%peer, %error, "connection ended with an error");
            }
        });
    }
}
