//! The connection to the API server, and the one way every request of this crate is made.
//!
//! kube-rs does the work the project's earlier hand-written client did: in a pod it reads
//! `KUBERNETES_SERVICE_HOST`/`PORT`, trusts the service account's CA, and sends the projected token, which it reads
//! again at most a minute after the kubelet rotates it; outside a pod it reads `KUBECONFIG` or `~/.kube/config`.
//!
//! kube-rs sets no read deadline by default, so an API server that accepts a connection and never answers would hold
//! the caller for ever. Every request of this crate therefore goes through [`request`], which bounds it by a
//! deadline (watches excepted: they are meant to stay open) and turns kube-rs's error into an [`Error`] that names
//! the verb and the object.
//!
//! A daemon connects with [`connect_as`] (or builds its client with [`client_for`]), which makes every request say
//! who sent it: the `User-Agent` is the component and its version (`ascend-device-plugin/0.1.0`), which the API
//! server's metrics (`apiserver_request_total` by client), its audit log and API Priority and Fairness flow schemas
//! see. Such a client also leaves retrying to the caller's [`crate::Backoff`], the one retry policy of every
//! daemon: kube-rs's own retry layer (up to 15 quick retries of 429, 503 and 504 inside one call) is turned off, and
//! the server's `Retry-After` header reaches the caller in [`Error::retry_after`] even when the body is not a
//! Status (API Priority and Fairness answers 429 in plain text).

use std::future::Future;
use std::time::Duration;

use http_body_util::BodyExt;
use kube::client::{ClientBuilder, DynBody};
use tower::BoxError;

use crate::error::{Error, Result};

/// How long one request may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

/// The field manager of the node labeller's writes (`kubectl get node -o yaml --show-managed-fields` shows it).
pub const NODE_LABELLER_FIELD_MANAGER: &str = "ascend-node-labeller";
/// The field manager of the device plugin's writes.
pub const DEVICE_PLUGIN_FIELD_MANAGER: &str = "ascend-device-plugin";
/// The field manager of the DRA driver's writes (its ResourceSlices).
pub const DRA_DRIVER_FIELD_MANAGER: &str = "ascend-dra-driver";

/// A client of the cluster this process runs in (or the one the kubeconfig names).
///
/// # Errors
/// [`Error::Config`] when neither an in-cluster environment nor a kubeconfig is found.
pub async fn connect() -> Result<kube::Client> {
    let config = configuration().await?;
    kube::Client::try_from(config).map_err(|source| Error::Config { source: Box::new(source) })
}

/// The configuration [`connect`] uses: the in-cluster environment, else the kubeconfig. A tool that makes clients
/// on more than one runtime reads it once and builds each client from it (`kube::Client::try_from`).
///
/// # Errors
/// [`Error::Config`] when neither an in-cluster environment nor a kubeconfig is found.
pub async fn configuration() -> Result<kube::Config> {
    kube::Config::infer().await.map_err(|source| Error::Config { source: Box::new(kube::Error::InferConfig(source)) })
}

/// The `User-Agent` of a component: `<name>/<version>`, for example `ascend-device-plugin/0.1.0`.
pub fn user_agent(name: &str, version: &str) -> String {
    format!("{name}/{version}")
}

/// A client of the cluster this process runs in (or the one the kubeconfig names) for the component `name` at
/// `version` (pass `env!("CARGO_PKG_VERSION")`): see [`client_for`].
///
/// # Errors
/// [`Error::Config`] when neither an in-cluster environment nor a kubeconfig is found, or `name`/`version` cannot
/// be a header value.
pub async fn connect_as(name: &str, version: &str) -> Result<kube::Client> {
    client_for(configuration().await?, name, version)
}

/// A client of `config` whose requests carry the `User-Agent` [`user_agent`]`(name, version)`, that does not retry
/// by itself, and whose API errors carry the server's `Retry-After` ([`Error::retry_after`]).
///
/// # Errors
/// [`Error::Config`] when `name`/`version` cannot be a header value or kube-rs cannot build the client.
pub fn client_for(mut config: kube::Config, name: &str, version: &str) -> Result<kube::Client> {
    let config_error = |source: kube::Error| Error::Config { source: Box::new(source) };
    let agent = http::HeaderValue::from_str(&user_agent(name, version)).map_err(|error| {
        config_error(kube::Error::BuildRequest(kube::core::request::Error::Validation(format!(
            "user agent {name}/{version}: {error}"
        ))))
    })?;
    config.headers.retain(|(header, _)| header != http::header::USER_AGENT);
    config.headers.push((http::header::USER_AGENT, agent));
    config.default_retry = false;
    let builder = ClientBuilder::try_from(config).map_err(config_error)?;
    let layer = tower::util::MapFutureLayer::new(|response| async move { carry_retry_after(response.await?).await });
    Ok(builder.with_layer(&layer).build())
}

/// Puts the `Retry-After` header of an error answer into its Status (`details.retryAfterSeconds`), where kube-rs's
/// error keeps it: kube-rs drops the headers of an error answer.
async fn carry_retry_after(
    response: http::Response<Box<DynBody>>,
) -> std::result::Result<http::Response<Box<DynBody>>, BoxError> {
    let failed = response.status().is_client_error() || response.status().is_server_error();
    let seconds = response
        .headers()
        .get(http::header::RETRY_AFTER)
        .and_then(|value| value.to_str().ok())
        .and_then(|text| text.trim().parse::<u32>().ok());
    let Some(seconds) = seconds.filter(|_| failed) else { return Ok(response) };
    let (mut parts, body) = response.into_parts();
    let bytes = body.collect().await?.to_bytes();
    let mut status = serde_json::from_slice::<kube::core::Status>(&bytes).unwrap_or_else(|_| {
        let text = String::from_utf8_lossy(&bytes);
        let reason = if parts.status == http::StatusCode::TOO_MANY_REQUESTS { "TooManyRequests" } else { "" };
        kube::core::Status::failure(text.trim(), reason).with_code(parts.status.as_u16())
    });
    match status.details.as_mut() {
        Some(details) if details.retry_after_seconds > 0 => {}
        Some(details) => details.retry_after_seconds = seconds,
        None => {
            status.details = serde_json::from_value(serde_json::json!({"retryAfterSeconds": seconds})).ok();
        }
    }
    let document = serde_json::to_vec(&status)?;
    parts.headers.remove(http::header::CONTENT_LENGTH);
    parts.headers.insert(http::header::CONTENT_TYPE, http::HeaderValue::from_static("application/json"));
    let body = kube::client::Body::from(document).map_err(BoxError::from);
    Ok(http::Response::from_parts(parts, Box::new(body) as Box<DynBody>))
}

/// Whether this process runs in a pod (the kubelet set `KUBERNETES_SERVICE_HOST`).
pub fn in_cluster() -> bool {
    std::env::var_os("KUBERNETES_SERVICE_HOST").is_some_and(|host| !host.is_empty())
}

/// Runs one request within `timeout`; errors name `verb` and `object` (`nodes/worker-1`).
///
/// # Errors
/// [`Error::Api`] for an error status, [`Error::Transport`] when the server cannot be reached or read,
/// [`Error::Timeout`].
pub async fn request<T>(
    verb: &'static str,
    object: impl Into<String>,
    timeout: Duration,
    call: impl Future<Output = kube::Result<T>>,
) -> Result<T> {
    let object = object.into();
    match tokio::time::timeout(timeout, call).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(error)) => Err(Error::from_kube(verb, object, error)),
        Err(_) => Err(Error::Timeout { verb, object, timeout }),
    }
}

/// Checks that a node name is a DNS subdomain, so that it names one object and needs no escaping in a path.
///
/// # Errors
/// [`Error::InvalidNodeName`].
pub fn check_node_name(node: &str) -> Result<()> {
    let valid_characters =
        node.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' || byte == b'.');
    let valid_ends =
        node.starts_with(|c: char| c.is_ascii_alphanumeric()) && node.ends_with(|c: char| c.is_ascii_alphanumeric());
    if node.is_empty() || node.len() > 253 || !valid_characters || !valid_ends {
        return Err(Error::InvalidNodeName(node.to_owned()));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_must_be_dns_subdomains() {
        assert!(check_node_name("worker-1.example").is_ok());
        for bad in ["", "Worker", "a/b", "a?b", "-a", "a-", "../x", &"a".repeat(254)] {
            assert!(matches!(check_node_name(bad), Err(Error::InvalidNodeName(_))), "{bad:?} accepted");
        }
    }
}
