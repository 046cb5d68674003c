//! The Node object through kube-rs (crate `ascend-kube`, feature `kube`): the API server the kubeconfig or the pod's
//! service account names.

use std::time::Duration;

use super::context::NodeApi;

/// The cluster `ascend_kube::connect` finds: in a pod its service account, else `KUBECONFIG` or `~/.kube/config`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KubeNodeApi {
    /// How long the connection and the request may take together.
    pub timeout: Duration,
}

impl NodeApi for KubeNodeApi {
    fn kubelet_version(&self, node: &str) -> Result<Option<String>, String> {
        // The doctor is synchronous; one small runtime for one request keeps the checks free of async.
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|error| format!("starting the API client: {error}"))?;
        runtime.block_on(async {
            let connecting = tokio::time::timeout(self.timeout, ascend_kube::connect());
            let client = match connecting.await {
                Ok(client) => client.map_err(|error| error.to_string())?,
                Err(_) => return Err(format!("no API server configuration within {:?}", self.timeout)),
            };
            ascend_kube::node_info::kubelet_version(client, node, self.timeout).await.map_err(|error| error.to_string())
        })
    }
}
