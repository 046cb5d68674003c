//! The cluster through kube-rs (crate `ascend-kube`, feature `kube`): the API server the kubeconfig or the pod's
//! service account names, or one given as a kube-rs configuration (tests pass the fake API server's).

use std::future::Future;
use std::time::Duration;

use super::context::ClusterApi;

/// The cluster `ascend_kube::connect` finds (in a pod its service account, else `KUBECONFIG` or
/// `~/.kube/config`), or the one a configuration names.
#[derive(Clone)]
pub struct KubeClusterApi {
    /// How long the connection and the request may take together.
    pub timeout: Duration,
    /// The API server; `None`: the one `ascend_kube::connect` finds.
    pub config: Option<kube::Config>,
}

impl std::fmt::Debug for KubeClusterApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let server = self.config.as_ref().map(|config| config.cluster_url.to_string());
        f.debug_struct("KubeClusterApi").field("timeout", &self.timeout).field("server", &server).finish()
    }
}

impl KubeClusterApi {
    /// Runs one request with a client of the cluster, within the timeout.
    fn call<T, F>(&self, request: impl FnOnce(kube::Client) -> F) -> Result<T, String>
    where
        F: Future<Output = ascend_kube::Result<T>>,
    {
        // The doctor is synchronous; one small runtime per request keeps the checks free of async, and kube-rs's
        // client lives on the runtime that made it, so each request connects anew (a handful per run).
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("starting the API client: {error}"))?;
        runtime.block_on(async {
            let client = match &self.config {
                Some(config) => kube::Client::try_from(config.clone()).map_err(|error| error.to_string())?,
                None => match tokio::time::timeout(self.timeout, ascend_kube::connect()).await {
                    Ok(client) => client.map_err(|error| error.to_string())?,
                    Err(_) => return Err(format!("no API server configuration within {:?}", self.timeout)),
                },
            };
            request(client).await.map_err(|error| error.to_string())
        })
    }
}

impl ClusterApi for KubeClusterApi {
    fn kubelet_version(&self, node: &str) -> Result<Option<String>, String> {
        self.call(|client| ascend_kube::node_info::kubelet_version(client, node, self.timeout))
    }

    fn served_versions(&self, group: &str) -> Result<Option<Vec<String>>, String> {
        self.call(|client| ascend_kube::api_discovery::served_versions(client, group, self.timeout))
    }
}
