//! The HTTP side: `/metrics`, `/healthz`, `/`, basic auth, TLS, and the accept loop.
//!
//! The three fixed routes are answered by one function, [`respond`], served by hyper directly rather than through a
//! web framework's router: matching three paths needs no more than a `match`, and the router cost more than the
//! scrape. Measured on a 2-CPU machine (wrk with 8 connections on loopback, cached gzip scrapes of 64 chips, the
//! exporter's CPU from /proc over each 3 s run, medians of 3 to 6 runs): with axum's `Router` (routing table, boxed
//! middleware, per-request extensions) in front of the same handler a scrape took 13.8 µs of the exporter's CPU,
//! without it 12.1 µs; with the negotiation also remembered (`scrape_negotiation.rs`) 10.5 µs, where nginx serving the
//! same bytes with `gzip_static` took 11.6 µs.

use std::convert::Infallible;
use std::future::Future;
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Duration;

use http_body_util::Full;
use hyper::body::Bytes;
use hyper::header::{self, HeaderName, HeaderValue};
use hyper::{HeaderMap, Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use hyper_util::server::conn::auto;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, watch};
use tokio_rustls::TlsAcceptor;

use crate::basic_auth::BasicAuth;
use crate::body_files::BodyFiles;
use crate::scrape_cache::ScrapeCache;
use crate::scrape_negotiation::Negotiated;
use crate::sendfile_stream::SendfileStream;
use crate::snapshot::SnapshotSource;

/// What the handlers share.
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
    pub extra_headers: Vec<(HeaderName, HeaderValue)>,
    /// Cached bodies that plain TCP connections send with `sendfile(2)` (`sendfile_stream.rs`); `None` with TLS.
    pub body_files: Option<Arc<BodyFiles>>,
}

/// Every response: a body held whole in memory (a cached scrape body is shared, not copied).
pub type HttpResponse = Response<Full<Bytes>>;

/// The methods every route answers.
const ALLOWED_METHODS: &str = "GET, HEAD";

/// The routes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Route {
    /// `/metrics`, behind basic auth if configured.
    Metrics,
    /// `/`, a page linking the others, behind basic auth if configured.
    Index,
    /// `/healthz`, open for probes.
    Healthz,
}

impl Route {
    fn of(path: &str) -> Option<Self> {
        match path {
            "/metrics" => Some(Route::Metrics),
            "/" => Some(Route::Index),
            "/healthz" => Some(Route::Healthz),
            _ => None,
        }
    }
}

/// The response to `request`: 404 for unknown paths, 405 for methods other than GET and HEAD, 401 without valid
/// credentials when basic auth is configured (except on `/healthz`), and the configured extra headers on all of
/// them. A HEAD request gets the GET response's headers, `Content-Length` included, without its body.
pub async fn respond<B>(state: Arc<ServerState>, request: Request<B>) -> HttpResponse {
    let head = request.method() == Method::HEAD;
    let mut response = match Route::of(request.uri().path()) {
        None => text(StatusCode::NOT_FOUND, "not found\n"),
        Some(_) if !head && request.method() != Method::GET => {
            let mut response = text(StatusCode::METHOD_NOT_ALLOWED, "method not allowed\n");
            response.headers_mut().insert(header::ALLOW, HeaderValue::from_static(ALLOWED_METHODS));
            response
        }
        Some(Route::Healthz) => healthz(&state),
        Some(protected) => {
            if !authorized(&state, request.headers()).await {
                unauthorized()
            } else if protected == Route::Metrics {
                metrics(&state, request.headers())
            } else {
                index()
            }
        }
    };
    for (name, value) in &state.extra_headers {
        response.headers_mut().insert(name.clone(), value.clone());
    }
    if head {
        without_body(&mut response);
    }
    response
}

fn metrics(state: &ServerState, headers: &HeaderMap) -> HttpResponse {
    let Negotiated { format, coding } =
        Negotiated::from_headers(headers.get(header::ACCEPT), headers.get(header::ACCEPT_ENCODING));
    let body = state.scrape_cache.body(format, coding);
    if let Some(files) = &state.body_files {
        files.offer(&body);
    }
    let mut response = Response::new(Full::new(body));
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(format.content_type()));
    // Both request headers choose the bytes, so a cache between scraper and exporter must key on both.
    headers.insert(header::VARY, HeaderValue::from_static("Accept, Accept-Encoding"));
    if let Some(encoding) = coding.header_value() {
        headers.insert(header::CONTENT_ENCODING, HeaderValue::from_static(encoding));
    }
    response
}

fn healthz(state: &ServerState) -> HttpResponse {
    match state.source.latest() {
        None => text(StatusCode::SERVICE_UNAVAILABLE, "no snapshot yet: the sampler has not published\n"),
        Some(snapshot) => {
            let age = snapshot.published_at.elapsed();
            if age > state.max_snapshot_age {
                let message =
                    format!("latest snapshot is {:.1} s old: the sampler stopped publishing\n", age.as_secs_f64());
                text(StatusCode::SERVICE_UNAVAILABLE, message)
            } else {
                text(StatusCode::OK, "ok\n")
            }
        }
    }
}

fn index() -> HttpResponse {
    let page = concat!(
        "<!doctype html><html><head><title>npu-exporter</title></head><body><h1>npu-exporter</h1>",
        "<p>Prometheus exporter for Ascend NPUs.</p><ul><li><a href=\"metrics\">metrics</a></li>",
        "<li><a href=\"healthz\">healthz</a></li></ul></body></html>\n"
    );
    with_content_type(StatusCode::OK, "text/html; charset=utf-8", page)
}

/// Whether the request may see a protected route: always without basic auth, else when its credentials check out.
async fn authorized(state: &ServerState, headers: &HeaderMap) -> bool {
    let Some(auth) = state.auth.clone() else { return true };
    let header_value = headers.get(header::AUTHORIZATION).and_then(|v| v.to_str().ok()).map(str::to_owned);
    // bcrypt costs tens of milliseconds: keep it off the serving threads.
    tokio::task::spawn_blocking(move || auth.check(header_value.as_deref())).await.unwrap_or(false)
}

fn unauthorized() -> HttpResponse {
    let mut response = text(StatusCode::UNAUTHORIZED, "unauthorized\n");
    response.headers_mut().insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Basic realm=\"npu-exporter\""));
    response
}

fn text(status: StatusCode, body: impl Into<Bytes>) -> HttpResponse {
    with_content_type(status, "text/plain; charset=utf-8", body)
}

fn with_content_type(status: StatusCode, content_type: &'static str, body: impl Into<Bytes>) -> HttpResponse {
    let mut response = Response::new(Full::new(body.into()));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    response
}

/// Drops the body of a HEAD response, keeping the length its GET would have had.
fn without_body(response: &mut HttpResponse) {
    let length = hyper::body::Body::size_hint(response.body()).exact().unwrap_or(0);
    response.headers_mut().insert(header::CONTENT_LENGTH, HeaderValue::from(length));
    *response.body_mut() = Full::default();
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

/// Serves [`respond`] over `state` on `listener` until `shutdown` completes: plain or TLS, HTTP/1.1 and (if `http2`) HTTP/2.
///
/// The connections are served by `threads` threads, each running its own single-threaded tokio runtime that accepts
/// from the shared listening socket and serves every connection it accepted to the end, the way nginx's worker
/// processes do. A request and its response are then handled by one thread from the socket's readiness to the
/// write, with no hand-over between threads. Measured on a 2-CPU machine (`benches/scripts/exporter_gzip.py`: wrk
/// with 8 connections, gzip scrapes of 64 chips, runs alternating with nginx `gzip_static`, two runs of five rounds
/// each): tokio's multi-threaded runtime serving the same service answered with a p99 of 3.2 to 3.8 ms, these threads
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
    state: Arc<ServerState>,
    tls: Option<TlsAcceptor>,
    http2: bool,
    header_read_timeout: Duration,
    threads: NonZeroUsize,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder.http1().timer(TokioTimer::new()).header_read_timeout(header_read_timeout);
    let builder = if http2 { builder } else { builder.http1_only() };
    let connections = Connections { state, tls, builder, header_read_timeout };
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
    state: Arc<ServerState>,
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
        let Connections { state, tls, builder, header_read_timeout } = connections.clone();
        let body_files = state.body_files.clone();
        let service = hyper::service::service_fn(move |request| {
            let state = Arc::clone(&state);
            async move { Ok::<_, Infallible>(respond(state, request).await) }
        });
        tokio::spawn(async move {
            let result = match tls {
                None => match body_files {
                    Some(files) => {
                        builder.serve_connection(TokioIo::new(SendfileStream::new(stream, files)), service).await
                    }
                    None => builder.serve_connection(TokioIo::new(stream), service).await,
                },
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

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;
    use std::time::Instant;

    use http_body_util::BodyExt;

    use super::*;
    use crate::pod_attribution::SharedAttribution;
    use crate::render::{Exposition, NamingMode, RenderPlan, SnapshotCollector};
    use crate::selection::Selection;
    use crate::snapshot::{SharedSnapshot, Snapshot};

    const PASSWORD: &str = "scrape-secret";

    fn state(auth: bool) -> Arc<ServerState> {
        state_with_cache_age(auth, Duration::ZERO)
    }

    fn state_with_cache_age(auth: bool, cache_max_age: Duration) -> Arc<ServerState> {
        let shared = Arc::new(SharedSnapshot::new());
        shared.publish(Snapshot { published_at: Instant::now(), driver_version: None, cards: None, chips: Vec::new() });
        let source: Arc<dyn SnapshotSource> = shared;
        let attribution = Arc::new(SharedAttribution::new());
        let plan = RenderPlan::new(NamingMode::Both, &Selection::default());
        let collector = SnapshotCollector::new(Arc::clone(&source), Arc::clone(&attribution), plan, "0.1.0");
        let cache = ScrapeCache::new(Exposition::new(collector), Arc::clone(&source), attribution, cache_max_age);
        let auth = auth.then(|| {
            let hash = bcrypt::hash(PASSWORD, 4).expect("bcrypt");
            let users = BTreeMap::from([("prometheus".to_owned(), hash)]);
            Arc::new(BasicAuth::new(users).expect("auth").expect("one user"))
        });
        let extra_headers = vec![(HeaderName::from_static("x-frame-options"), HeaderValue::from_static("deny"))];
        Arc::new(ServerState {
            scrape_cache: Arc::new(cache),
            source,
            max_snapshot_age: Duration::from_secs(60),
            auth,
            extra_headers,
            body_files: Some(Arc::new(BodyFiles::new())),
        })
    }

    async fn call(state: &Arc<ServerState>, method: Method, path: &str, headers: &[(&str, &str)]) -> HttpResponse {
        let mut request = Request::builder().method(method).uri(path);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        respond(Arc::clone(state), request.body(()).expect("request")).await
    }

    async fn body(response: HttpResponse) -> Bytes {
        response.into_body().collect().await.expect("in-memory body").to_bytes()
    }

    fn header<'a>(response: &'a HttpResponse, name: &str) -> Option<&'a str> {
        response.headers().get(name).and_then(|value| value.to_str().ok())
    }

    #[tokio::test]
    async fn routes_and_their_statuses() {
        let state = state(false);
        let metrics = call(&state, Method::GET, "/metrics", &[("accept-encoding", "gzip")]).await;
        assert_eq!(metrics.status(), StatusCode::OK);
        assert_eq!(header(&metrics, "content-encoding"), Some("gzip"));
        assert_eq!(header(&metrics, "vary"), Some("Accept, Accept-Encoding"));
        let healthz = call(&state, Method::GET, "/healthz", &[]).await;
        assert_eq!((healthz.status(), body(healthz).await), (StatusCode::OK, Bytes::from_static(b"ok\n")));
        let index = call(&state, Method::GET, "/", &[]).await;
        assert_eq!(header(&index, "content-type"), Some("text/html; charset=utf-8"));
        assert_eq!(call(&state, Method::GET, "/metrics/", &[]).await.status(), StatusCode::NOT_FOUND);
        assert_eq!(call(&state, Method::GET, "/nope", &[]).await.status(), StatusCode::NOT_FOUND);
        // The path alone routes: a query string is ignored, as Prometheus' `params` are for other exporters.
        assert_eq!(call(&state, Method::GET, "/metrics?x=1", &[]).await.status(), StatusCode::OK);
    }

    #[tokio::test]
    async fn other_methods_are_refused_naming_the_allowed_ones() {
        let state = state(false);
        for method in [Method::POST, Method::PUT, Method::DELETE, Method::OPTIONS] {
            for path in ["/metrics", "/", "/healthz"] {
                let response = call(&state, method.clone(), path, &[]).await;
                assert_eq!(response.status(), StatusCode::METHOD_NOT_ALLOWED, "{method} {path}");
                assert_eq!(header(&response, "allow"), Some(ALLOWED_METHODS));
            }
        }
    }

    #[tokio::test]
    async fn head_gets_the_headers_of_get_without_the_body() {
        let state = state(false);
        let get = call(&state, Method::GET, "/metrics", &[]).await;
        let get_type = header(&get, "content-type").map(str::to_owned);
        let get_length = body(get).await.len();
        let head = call(&state, Method::HEAD, "/metrics", &[]).await;
        assert_eq!(head.status(), StatusCode::OK);
        assert_eq!(header(&head, "content-type").map(str::to_owned), get_type);
        assert_eq!(header(&head, "content-length"), Some(get_length.to_string().as_str()));
        assert!(body(head).await.is_empty());
    }

    #[tokio::test]
    async fn basic_auth_guards_metrics_and_index_but_not_healthz() {
        let state = state(true);
        for path in ["/metrics", "/"] {
            let anonymous = call(&state, Method::GET, path, &[]).await;
            assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED, "{path}");
            assert_eq!(header(&anonymous, "www-authenticate"), Some("Basic realm=\"npu-exporter\""));
        }
        let wrong = "Basic cHJvbWV0aGV1czp3cm9uZw=="; // prometheus:wrong
        assert_eq!(call(&state, Method::GET, "/metrics", &[("authorization", wrong)]).await.status(), 401);
        let right = "Basic cHJvbWV0aGV1czpzY3JhcGUtc2VjcmV0"; // prometheus:scrape-secret
        assert_eq!(call(&state, Method::GET, "/metrics", &[("authorization", right)]).await.status(), 200);
        assert_eq!(call(&state, Method::GET, "/healthz", &[]).await.status(), StatusCode::OK);
    }

    /// One response read off a keep-alive connection: (headers, body) by its Content-Length.
    async fn read_response(stream: &mut tokio::net::TcpStream, buffered: &mut Vec<u8>) -> (String, Vec<u8>) {
        use tokio::io::AsyncReadExt;
        loop {
            if let Some(end) = buffered.windows(4).position(|window| window == b"\r\n\r\n") {
                let head = String::from_utf8(buffered[..end].to_vec()).expect("ASCII headers");
                let length: usize = head
                    .lines()
                    .find_map(|line| line.to_ascii_lowercase().strip_prefix("content-length: ").map(str::to_owned))
                    .and_then(|value| value.trim().parse().ok())
                    .expect("a Content-Length");
                if buffered.len() >= end + 4 + length {
                    let body = buffered[end + 4..end + 4 + length].to_vec();
                    buffered.drain(..end + 4 + length);
                    return (head, body);
                }
            }
            let mut chunk = [0u8; 65536];
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "the server closed the connection mid-response");
            buffered.extend_from_slice(&chunk[..n]);
        }
    }

    #[tokio::test]
    async fn a_body_served_again_goes_out_of_its_file_with_the_same_bytes() {
        // Rendered once and reused for an hour: the file is for bodies served more than once.
        let (from_files, body) = served_three_times(state_with_cache_age(false, Duration::from_secs(3600))).await;
        // The second offer registers the body; the pipelined first answer may still be waiting to be written then.
        let answers_from_file = from_files / body.len() as u64;
        assert!((1..=3).contains(&answers_from_file), "{from_files} bytes from files, body {} bytes", body.len());
        assert_eq!(from_files % body.len() as u64, 0, "whole bodies");
        // Rendered anew for every scrape: no body is served twice, so none gets a file.
        assert_eq!(served_three_times(state(false)).await.0, 0);
    }

    /// Three gzip scrapes of `/metrics` on one connection, two of them pipelined: the bytes sent from files, and
    /// the body, the same in all three.
    async fn served_three_times(state: Arc<ServerState>) -> (u64, Vec<u8>) {
        use tokio::io::AsyncWriteExt;
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let address = listener.local_addr().expect("address");
        let threads = NonZeroUsize::MIN;
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let server =
            tokio::spawn(serve(listener, Arc::clone(&state), None, false, Duration::from_secs(5), threads, async {
                let _ = stopped.await;
            }));
        let mut stream = tokio::net::TcpStream::connect(address).await.expect("connect");
        let request = b"GET /metrics HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n";
        // Two requests pipelined in one write, then a third: every answer whole and in order.
        stream.write_all(&[&request[..], &request[..]].concat()).await.expect("write");
        let mut buffered = Vec::new();
        let mut bodies = Vec::new();
        for _ in 0..2 {
            bodies.push(read_response(&mut stream, &mut buffered).await);
        }
        stream.write_all(request).await.expect("write");
        bodies.push(read_response(&mut stream, &mut buffered).await);
        let files = state.body_files.as_ref().expect("plain TCP has body files");
        for (head, body) in &bodies {
            assert!(head.starts_with("HTTP/1.1 200"), "{head}");
            assert!(head.to_ascii_lowercase().contains("content-encoding: gzip"), "{head}");
            assert_eq!(body, &bodies[0].1);
        }
        let _ = stop.send(());
        server.await.expect("server task").expect("served");
        (files.sent_bytes(), bodies.swap_remove(0).1)
    }

    #[tokio::test]
    async fn configured_headers_are_on_every_response() {
        let state = state(true);
        for (method, path) in [(Method::GET, "/healthz"), (Method::GET, "/metrics"), (Method::GET, "/nope")] {
            let response = call(&state, method.clone(), path, &[]).await;
            assert_eq!(header(&response, "x-frame-options"), Some("deny"), "{method} {path}: {}", response.status());
        }
        let refused = call(&state, Method::POST, "/metrics", &[]).await;
        assert_eq!(header(&refused, "x-frame-options"), Some("deny"));
    }
}
