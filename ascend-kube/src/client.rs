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

use std::future::Future;
use std::time::Duration;

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
