//! A daemon's own HTTP endpoint (feature `health-endpoint`): `/healthz` for liveness probes and `/metrics` in
//! OpenMetrics for Prometheus, on one address. The device plugin and the DRA driver serve it; the exporter, whose
//! whole job is `/metrics`, has its own server (content negotiation, TLS, basic auth) and shares only
//! [`OPENMETRICS_CONTENT_TYPE`].
//!
//! ```no_run
//! # async fn example() -> Result<(), ascend_cli::health_endpoint::EndpointError> {
//! use ascend_cli::health_endpoint::HealthEndpoint;
//! let endpoint = HealthEndpoint::bind("127.0.0.1:11251".parse().unwrap()).await?;
//! endpoint
//!     .serve(|| "ok\n".to_owned(), || "# EOF\n".to_owned(), std::future::pending())
//!     .await
//! # }
//! ```

use std::future::Future;
use std::net::SocketAddr;

use axum::http::header::CONTENT_TYPE;
use axum::routing::get;
use axum::Router;

use crate::OPENMETRICS_CONTENT_TYPE;

/// What went wrong with the endpoint.
#[derive(Debug, thiserror::Error)]
pub enum EndpointError {
    /// The address could not be bound (in use, or not this host's).
    #[error("binding the HTTP endpoint {address}: {source}")]
    Bind {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
    /// Serving stopped with an error.
    #[error("serving HTTP on {address}: {source}")]
    Serve {
        /// The address.
        address: SocketAddr,
        /// Why.
        source: std::io::Error,
    },
}

/// A bound endpoint, not serving yet: bind first, so that an address in use fails the daemon at start-up.
#[derive(Debug)]
pub struct HealthEndpoint {
    listener: tokio::net::TcpListener,
    address: SocketAddr,
}

impl HealthEndpoint {
    /// Binds `address`.
    ///
    /// # Errors
    /// [`EndpointError::Bind`].
    pub async fn bind(address: SocketAddr) -> Result<Self, EndpointError> {
        let listener =
            tokio::net::TcpListener::bind(address).await.map_err(|source| EndpointError::Bind { address, source })?;
        let address = listener.local_addr().unwrap_or(address);
        Ok(Self { listener, address })
    }

    /// The bound address (with the port the system chose for port 0).
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// Serves `/healthz` with the text of `healthz` (always 200: the process is alive) and `/metrics` with the
    /// OpenMetrics text of `metrics`, until `shutdown` completes.
    ///
    /// # Errors
    /// [`EndpointError::Serve`].
    pub async fn serve(
        self,
        healthz: impl Fn() -> String + Clone + Send + Sync + 'static,
        metrics: impl Fn() -> String + Clone + Send + Sync + 'static,
        shutdown: impl Future<Output = ()> + Send + 'static,
    ) -> Result<(), EndpointError> {
        let address = self.address;
        tracing::info!(%address, "serving /healthz and /metrics");
        let router = Router::new().route("/healthz", get(move || std::future::ready(healthz()))).route(
            "/metrics",
            get(move || std::future::ready(([(CONTENT_TYPE, OPENMETRICS_CONTENT_TYPE)], metrics()))),
        );
        axum::serve(self.listener, router)
            .with_graceful_shutdown(shutdown)
            .await
            .map_err(|source| EndpointError::Serve { address, source })
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    fn get(address: SocketAddr, path: &str) -> String {
        let mut stream = std::net::TcpStream::connect(address).expect("connect");
        write!(stream, "GET {path} HTTP/1.1\r\nHost: test\r\nConnection: close\r\n\r\n").expect("request");
        let mut response = String::new();
        stream.read_to_string(&mut response).expect("response");
        response
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn serves_both_paths_and_stops_on_shutdown() {
        let endpoint = HealthEndpoint::bind("127.0.0.1:0".parse().unwrap()).await.expect("bind");
        let address = endpoint.address();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let serving =
            tokio::spawn(endpoint.serve(|| "ok: waiting\n".to_owned(), || "up 1\n# EOF\n".to_owned(), async {
                let _ = stopped.await;
            }));
        let (health, metrics) =
            tokio::task::spawn_blocking(move || (get(address, "/healthz"), get(address, "/metrics")))
                .await
                .expect("requests");
        assert!(health.starts_with("HTTP/1.1 200") && health.ends_with("ok: waiting\n"), "{health}");
        assert!(metrics.contains(&format!("content-type: {OPENMETRICS_CONTENT_TYPE}")), "{metrics}");
        assert!(metrics.ends_with("up 1\n# EOF\n"), "{metrics}");
        stop.send(()).expect("stop");
        serving.await.expect("task").expect("served until shutdown");
    }

    #[tokio::test]
    async fn an_address_in_use_is_a_bind_error_naming_it() {
        let first = HealthEndpoint::bind("127.0.0.1:0".parse().unwrap()).await.expect("bind");
        let error = HealthEndpoint::bind(first.address()).await.expect_err("in use");
        assert!(error.to_string().starts_with(&format!("binding the HTTP endpoint {}", first.address())), "{error}");
    }
}
