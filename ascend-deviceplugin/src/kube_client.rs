//! A minimal in-cluster client of the Kubernetes API: read a node, merge-patch its labels.
//!
//! Two calls do not justify a full Kubernetes client: this one speaks HTTP/1.1 over rustls to the API server named by
//! `KUBERNETES_SERVICE_HOST`/`KUBERNETES_SERVICE_PORT`, trusts only the cluster CA of the pod's service account and
//! authenticates with its bearer token. Token and CA are read again for every request, because projected
//! service-account tokens rotate (the kubelet rewrites the file, by default hourly) and the CA bundle can be
//! replaced. Each request opens its own connection: at one request a minute, pooling would only add state.
//!
//! ```no_run
//! use ascend_deviceplugin::kube_client::KubeClient;
//!
//! # async fn example() -> Result<(), ascend_deviceplugin::kube_client::KubeError> {
//! let client = KubeClient::in_cluster()?;
//! let labels = client.node_labels("worker-1").await?;
//! println!("{labels:?}");
//! # Ok(())
//! # }
//! ```

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use http_body_util::{BodyExt, Full, Limited};
use hyper::body::Bytes;
use hyper::{header, Method, Request, StatusCode};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};

use crate::node_labels::LabelPatch;

/// Where a pod's service-account token, CA and namespace are mounted.
pub const SERVICE_ACCOUNT_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";
/// The environment variable with the API server's address (set by the kubelet in every pod).
pub const HOST_ENV: &str = "KUBERNETES_SERVICE_HOST";
/// The environment variable with the API server's port.
pub const PORT_ENV: &str = "KUBERNETES_SERVICE_PORT";
/// How long one request (connect, TLS, response) may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);
/// The largest response body read (a node object with many images can be hundreds of KiB).
pub const MAX_RESPONSE_BYTES: usize = 16 * 1024 * 1024;
/// The content type of a JSON merge patch (RFC 7386).
pub const MERGE_PATCH_CONTENT_TYPE: &str = "application/merge-patch+json";

/// Everything that can go wrong talking to the API server. Each variant names the file, address or request.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KubeError {
    /// Not running in a pod: an environment variable the kubelet sets is missing or malformed.
    #[error("{variable} {problem}; the Kubernetes API is reached from inside a pod, where the kubelet sets it")]
    Environment {
        /// The variable.
        variable: &'static str,
        /// What is wrong with it.
        problem: String,
    },
    /// The token or CA file cannot be read or is unusable.
    #[error("{what} {}: {problem}", .path.display())]
    Credentials {
        /// `"service-account token"` or `"cluster CA"`.
        what: &'static str,
        /// The file.
        path: PathBuf,
        /// What is wrong.
        problem: String,
    },
    /// The node name cannot be part of an API path.
    #[error("invalid node name {0:?}: a node name is a DNS subdomain (lower-case letters, digits, '-' and '.', at most 253 characters)")]
    InvalidNodeName(String),
    /// Connecting, the TLS handshake or the HTTP exchange failed.
    #[error("{method} https://{authority}{path}: {problem}")]
    Transport {
        /// The request method.
        method: Method,
        /// `host:port` of the API server.
        authority: String,
        /// The request path.
        path: String,
        /// What failed.
        problem: String,
    },
    /// No complete response within the timeout.
    #[error("{method} https://{authority}{path}: no response within {timeout:?}")]
    Timeout {
        /// The request method.
        method: Method,
        /// `host:port` of the API server.
        authority: String,
        /// The request path.
        path: String,
        /// The timeout.
        timeout: Duration,
    },
    /// The API server answered with an error status; `message` is the API's own explanation.
    #[error("{method} {path}: HTTP {status}: {message}{}", status_hint(*.status))]
    Status {
        /// The request method.
        method: Method,
        /// The request path.
        path: String,
        /// The HTTP status.
        status: StatusCode,
        /// The `reason` of the API's Status object (`Forbidden`, `NotFound` ...), if it sent one.
        reason: Option<String>,
        /// The `message` of the API's Status object, else the start of the body.
        message: String,
    },
    /// A success response whose body is not what the API returns.
    #[error("{method} {path}: unexpected response: {problem}")]
    InvalidResponse {
        /// The request method.
        method: Method,
        /// The request path.
        path: String,
        /// What is wrong.
        problem: String,
    },
}

fn status_hint(status: StatusCode) -> &'static str {
    match status {
        StatusCode::UNAUTHORIZED => " (the service-account token was rejected: is it mounted, and not expired?)",
        StatusCode::FORBIDDEN => {
            " (the pod's ServiceAccount needs get and patch on nodes: see deploy/kubernetes/base/node-labeller-rbac.yaml)"
        }
        StatusCode::NOT_FOUND => " (is NODE_NAME the node's name, from the downward API spec.nodeName?)",
        _ => "",
    }
}

/// Where the API server is and how to authenticate to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KubeClientConfig {
    /// Host name or IP address of the API server (an IPv6 address without brackets).
    pub host: String,
    /// Its HTTPS port.
    pub port: u16,
    /// The bearer-token file, read for every request.
    pub token_path: PathBuf,
    /// The PEM bundle of CAs trusted for the API server, read for every request.
    pub ca_path: PathBuf,
    /// How long one request may take.
    pub timeout: Duration,
}

impl KubeClientConfig {
    /// The configuration of a pod: `KUBERNETES_SERVICE_HOST`/`PORT` and the files in [`SERVICE_ACCOUNT_DIR`].
    ///
    /// # Errors
    /// [`KubeError::Environment`] when a variable is missing or the port is not a number.
    pub fn in_cluster() -> Result<Self, KubeError> {
        let variable = |name: &'static str| {
            std::env::var(name)
                .ok()
                .map(|value| value.trim().to_owned())
                .filter(|value| !value.is_empty())
                .ok_or(KubeError::Environment { variable: name, problem: "is not set".into() })
        };
        let host = variable(HOST_ENV)?;
        let port_text = variable(PORT_ENV)?;
        let port = port_text.parse().map_err(|_| KubeError::Environment {
            variable: PORT_ENV,
            problem: format!("is {port_text:?}, not a port number"),
        })?;
        let dir = Path::new(SERVICE_ACCOUNT_DIR);
        Ok(KubeClientConfig {
            host,
            port,
            token_path: dir.join("token"),
            ca_path: dir.join("ca.crt"),
            timeout: DEFAULT_REQUEST_TIMEOUT,
        })
    }

    /// `host:port`, with an IPv6 address in brackets.
    pub fn authority(&self) -> String {
        match self.host.parse::<IpAddr>() {
            Ok(IpAddr::V6(address)) => format!("[{address}]:{}", self.port),
            _ => format!("{}:{}", self.host, self.port),
        }
    }
}

/// The client. Cheap to clone; holds no connection between requests.
#[derive(Debug, Clone)]
pub struct KubeClient {
    config: Arc<KubeClientConfig>,
    server_name: ServerName<'static>,
}

/// A request's identity, for error messages.
struct Call<'a> {
    method: Method,
    path: &'a str,
    authority: String,
}

impl Call<'_> {
    fn transport(&self, problem: impl std::fmt::Display) -> KubeError {
        KubeError::Transport {
            method: self.method.clone(),
            authority: self.authority.clone(),
            path: self.path.to_owned(),
            problem: problem.to_string(),
        }
    }
}

impl KubeClient {
    /// A client for this configuration. Reads the token and the CA once, so that a pod without them fails at start
    /// with a clear message rather than at the first request.
    ///
    /// # Errors
    /// [`KubeError::Credentials`] when the token or CA file is unreadable, empty or not PEM certificates, or the host
    /// is not a valid TLS server name.
    pub fn new(config: KubeClientConfig) -> Result<Self, KubeError> {
        let server_name = ServerName::try_from(config.host.clone()).map_err(|error| KubeError::Environment {
            variable: HOST_ENV,
            problem: format!("is {:?}, not a host name or IP address: {error}", config.host),
        })?;
        read_token(&config.token_path)?;
        read_roots(&config.ca_path)?;
        Ok(KubeClient { config: Arc::new(config), server_name })
    }

    /// A client for the API server of the pod it runs in ([`KubeClientConfig::in_cluster`]).
    ///
    /// # Errors
    /// As [`KubeClientConfig::in_cluster`] and [`KubeClient::new`].
    pub fn in_cluster() -> Result<Self, KubeError> {
        Self::new(KubeClientConfig::in_cluster()?)
    }

    /// The configuration.
    pub fn config(&self) -> &KubeClientConfig {
        &self.config
    }

    /// The labels of a node (`GET /api/v1/nodes/<name>`).
    ///
    /// # Errors
    /// [`KubeError::InvalidNodeName`], a transport, timeout or status error (403 when the ServiceAccount may not get
    /// nodes, 404 for an unknown node), or [`KubeError::InvalidResponse`] for a body that is not a node.
    pub async fn node_labels(&self, node: &str) -> Result<BTreeMap<String, String>, KubeError> {
        let path = node_path(node)?;
        let body = self.request(Method::GET, &path, None).await?;
        labels_of(&body).map_err(|problem| KubeError::InvalidResponse { method: Method::GET, path, problem })
    }

    /// Applies label changes to a node with a JSON merge patch of `metadata.labels` (`PATCH /api/v1/nodes/<name>`,
    /// `application/merge-patch+json`) and returns the node's labels afterwards. Labels not named in the patch are
    /// untouched by construction: a merge patch only changes the keys it lists.
    ///
    /// # Errors
    /// As [`KubeClient::node_labels`]; 403 when the ServiceAccount may not patch nodes.
    pub async fn patch_node_labels(
        &self,
        node: &str,
        patch: &LabelPatch,
    ) -> Result<BTreeMap<String, String>, KubeError> {
        let path = node_path(node)?;
        let body = Bytes::from(patch.to_merge_patch().to_string());
        let response = self.request(Method::PATCH, &path, Some((MERGE_PATCH_CONTENT_TYPE, body))).await?;
        labels_of(&response).map_err(|problem| KubeError::InvalidResponse { method: Method::PATCH, path, problem })
    }

    /// One request with the current token, bounded by the configured timeout. Returns the body of a 2xx response.
    async fn request(&self, method: Method, path: &str, body: Option<(&str, Bytes)>) -> Result<Bytes, KubeError> {
        let call = Call { method, path, authority: self.config.authority() };
        let timeout = self.config.timeout;
        match tokio::time::timeout(timeout, self.exchange(&call, body)).await {
            Ok(result) => result,
            Err(_) => Err(KubeError::Timeout {
                method: call.method.clone(),
                authority: call.authority.clone(),
                path: path.to_owned(),
                timeout,
            }),
        }
    }

    async fn exchange(&self, call: &Call<'_>, body: Option<(&str, Bytes)>) -> Result<Bytes, KubeError> {
        let token = read_token(&self.config.token_path)?;
        let tls = self.tls_connector()?;
        let tcp = tokio::net::TcpStream::connect((self.config.host.as_str(), self.config.port))
            .await
            .map_err(|error| call.transport(format!("connecting: {error}")))?;
        let stream = tls
            .connect(self.server_name.clone(), tcp)
            .await
            .map_err(|error| call.transport(format!("TLS handshake: {error}")))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|error| call.transport(format!("HTTP handshake: {error}")))?;
        // The connection task ends when the response is read and `sender` is dropped.
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "Kubernetes API connection closed with an error");
            }
        });

        let mut request = Request::builder()
            .method(call.method.clone())
            .uri(call.path)
            .header(header::HOST, &call.authority)
            .header(header::AUTHORIZATION, format!("Bearer {token}"))
            .header(header::ACCEPT, "application/json")
            .header(header::USER_AGENT, concat!("ascend-node-labeller/", env!("CARGO_PKG_VERSION")));
        let payload = match body {
            Some((content_type, payload)) => {
                request = request.header(header::CONTENT_TYPE, content_type);
                payload
            }
            None => Bytes::new(),
        };
        let request = request.body(Full::new(payload)).map_err(|error| call.transport(format!("building: {error}")))?;
        let response = sender.send_request(request).await.map_err(|error| call.transport(error))?;
        let status = response.status();
        let body = Limited::new(response.into_body(), MAX_RESPONSE_BYTES)
            .collect()
            .await
            .map_err(|error| call.transport(format!("reading the response body: {error}")))?
            .to_bytes();
        if status.is_success() {
            Ok(body)
        } else {
            Err(status_error(call, status, &body))
        }
    }

    fn tls_connector(&self) -> Result<tokio_rustls::TlsConnector, KubeError> {
        let roots = read_roots(&self.config.ca_path)?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|error| KubeError::Credentials {
                what: "cluster CA",
                path: self.config.ca_path.clone(),
                problem: format!("TLS configuration: {error}"),
            })?
            .with_root_certificates(roots)
            .with_no_client_auth();
        Ok(tokio_rustls::TlsConnector::from(Arc::new(config)))
    }
}

/// `/api/v1/nodes/<name>`, after checking that the name is a DNS subdomain (so it needs no escaping).
fn node_path(node: &str) -> Result<String, KubeError> {
    let valid_characters =
        node.bytes().all(|byte| byte.is_ascii_lowercase() || byte.is_ascii_digit() || byte == b'-' || byte == b'.');
    let valid_ends =
        node.starts_with(|c: char| c.is_ascii_alphanumeric()) && node.ends_with(|c: char| c.is_ascii_alphanumeric());
    if node.is_empty() || node.len() > 253 || !valid_characters || !valid_ends {
        return Err(KubeError::InvalidNodeName(node.to_owned()));
    }
    Ok(format!("/api/v1/nodes/{node}"))
}

fn read_token(path: &Path) -> Result<String, KubeError> {
    let problem =
        |problem: String| KubeError::Credentials { what: "service-account token", path: path.to_owned(), problem };
    let text = std::fs::read_to_string(path).map_err(|error| problem(error.to_string()))?;
    let token = text.trim();
    if token.is_empty() {
        return Err(problem("the file is empty".into()));
    }
    if token.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(problem("the token contains white space or control characters".into()));
    }
    Ok(token.to_owned())
}

fn read_roots(path: &Path) -> Result<rustls::RootCertStore, KubeError> {
    let problem = |problem: String| KubeError::Credentials { what: "cluster CA", path: path.to_owned(), problem };
    let pem = std::fs::read(path).map_err(|error| problem(error.to_string()))?;
    let mut roots = rustls::RootCertStore::empty();
    for certificate in CertificateDer::pem_slice_iter(&pem) {
        let certificate = certificate.map_err(|error| problem(format!("not a PEM certificate bundle: {error}")))?;
        roots.add(certificate).map_err(|error| problem(format!("unusable certificate: {error}")))?;
    }
    if roots.is_empty() {
        return Err(problem("no certificate in the file".into()));
    }
    Ok(roots)
}

/// `metadata.labels` of an object (an absent map is empty).
fn labels_of(body: &[u8]) -> Result<BTreeMap<String, String>, String> {
    let object: serde_json::Value = serde_json::from_slice(body).map_err(|error| format!("not JSON: {error}"))?;
    let Some(metadata) = object.get("metadata") else {
        return Err("no metadata in the object".into());
    };
    let Some(labels) = metadata.get("labels") else {
        return Ok(BTreeMap::new());
    };
    let labels = labels.as_object().ok_or("metadata.labels is not an object")?;
    labels
        .iter()
        .map(|(key, value)| match value.as_str() {
            Some(text) => Ok((key.clone(), text.to_owned())),
            None => Err(format!("label {key} is not a string: {value}")),
        })
        .collect()
}

/// The error of a non-2xx response, with the `message` and `reason` of the API's Status object when it sent one.
fn status_error(call: &Call<'_>, status: StatusCode, body: &[u8]) -> KubeError {
    let parsed: Option<serde_json::Value> = serde_json::from_slice(body).ok();
    let field = |name: &str| {
        parsed.as_ref().and_then(|status| status.get(name)).and_then(|value| value.as_str()).map(str::to_owned)
    };
    let message = field("message").unwrap_or_else(|| {
        let text = String::from_utf8_lossy(body);
        let text: String = text.trim().chars().take(200).collect();
        if text.is_empty() {
            status.canonical_reason().unwrap_or("no message").to_owned()
        } else {
            text
        }
    });
    KubeError::Status {
        method: call.method.clone(),
        path: call.path.to_owned(),
        status,
        reason: field("reason"),
        message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn node_names_must_be_dns_subdomains() {
        assert_eq!(node_path("worker-1.example").ok().as_deref(), Some("/api/v1/nodes/worker-1.example"));
        for bad in ["", "Worker", "a/b", "a?b", "-a", "a-", "../x", &"a".repeat(254)] {
            assert!(matches!(node_path(bad), Err(KubeError::InvalidNodeName(_))), "{bad:?} accepted");
        }
    }

    #[test]
    fn ipv6_hosts_are_bracketed() {
        let config = KubeClientConfig {
            host: "fd00::1".into(),
            port: 443,
            token_path: PathBuf::new(),
            ca_path: PathBuf::new(),
            timeout: DEFAULT_REQUEST_TIMEOUT,
        };
        assert_eq!(config.authority(), "[fd00::1]:443");
        assert_eq!(KubeClientConfig { host: "10.96.0.1".into(), ..config }.authority(), "10.96.0.1:443");
    }

    #[test]
    fn labels_are_read_from_metadata() {
        let labels = labels_of(br#"{"metadata":{"name":"n","labels":{"a":"1","b":"2"}}}"#).expect("labels");
        assert_eq!(labels.get("b").map(String::as_str), Some("2"));
        assert!(labels_of(br#"{"metadata":{"name":"n"}}"#).expect("no labels").is_empty());
        assert!(labels_of(b"<html>").is_err());
        assert!(labels_of(br#"{"metadata":{"labels":{"a":1}}}"#).is_err());
    }
}
