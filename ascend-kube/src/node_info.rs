//! What a Node object says about its node: the kubelet's own report of its version, which tools compare with the
//! floors of the components they run (the device plugin needs a kubelet of 1.26 or newer), and the resources the
//! kubelet advertises (a device plugin's resource appears there once the kubelet took its devices).

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::core::v1::Node;
use kube::Api;

use crate::client::{check_node_name, request};
use crate::error::Result;

/// The `status.nodeInfo.kubeletVersion` of node `node` (`v1.29.3`, `v1.30.1+k3s1`); `None` when the kubelet has
/// not reported one yet.
///
/// # Errors
/// [`crate::Error::InvalidNodeName`], or the request's error: [`crate::Error::Api`] (404 for an unknown node,
/// 403 without `get` on nodes), [`crate::Error::Transport`], [`crate::Error::Timeout`].
pub async fn kubelet_version(client: kube::Client, node: &str, timeout: Duration) -> Result<Option<String>> {
    check_node_name(node)?;
    let nodes: Api<Node> = Api::all(client);
    let found = request("get", format!("nodes/{node}"), timeout, nodes.get(node)).await?;
    Ok(found
        .status
        .and_then(|status| status.node_info)
        .map(|info| info.kubelet_version)
        .filter(|version| !version.is_empty()))
}

/// A node's `status.capacity` and `status.allocatable`: resource name to quantity as the API server writes it
/// (`"8"`, `"96"`, `"512Gi"`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NodeResources {
    /// What the node has.
    pub capacity: BTreeMap<String, String>,
    /// What pods may use: the capacity less what is reserved or unhealthy.
    pub allocatable: BTreeMap<String, String>,
}

/// The resources node `node` advertises (empty maps before the kubelet reported any).
///
/// # Errors
/// As [`kubelet_version`].
pub async fn resources(client: kube::Client, node: &str, timeout: Duration) -> Result<NodeResources> {
    check_node_name(node)?;
    let nodes: Api<Node> = Api::all(client);
    let found = request("get", format!("nodes/{node}"), timeout, nodes.get(node)).await?;
    let status = found.status.unwrap_or_default();
    let quantities = |map: Option<BTreeMap<String, k8s_openapi::apimachinery::pkg::api::resource::Quantity>>| {
        map.unwrap_or_default().into_iter().map(|(name, quantity)| (name, quantity.0)).collect()
    };
    Ok(NodeResources { capacity: quantities(status.capacity), allocatable: quantities(status.allocatable) })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_kubelet_version_of_a_node_and_of_one_that_is_missing() {
        let server = fake_apiserver::FakeApiServer::start().await.expect("fake API server");
        server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"},
            "status": {"nodeInfo": {"kubeletVersion": "v1.25.16", "architecture": "arm64", "bootID": "",
                "containerRuntimeVersion": "containerd://1.7.20", "kernelVersion": "", "kubeProxyVersion": "",
                "machineID": "", "operatingSystem": "linux", "osImage": "", "systemUUID": ""}}}));
        server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fresh"}}));
        let timeout = Duration::from_secs(5);
        let version = kubelet_version(server.client(), "worker-1", timeout).await.expect("get");
        assert_eq!(version.as_deref(), Some("v1.25.16"));
        assert_eq!(kubelet_version(server.client(), "fresh", timeout).await.expect("get"), None);
        let error = kubelet_version(server.client(), "gone", timeout).await.expect_err("404");
        assert!(error.is_not_found(), "{error}");
        assert!(kubelet_version(server.client(), "Bad/Name", timeout).await.is_err());
    }

    #[tokio::test]
    async fn the_resources_a_node_advertises() {
        let server = fake_apiserver::FakeApiServer::start().await.expect("fake API server");
        server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "worker-1"},
            "status": {"capacity": {"cpu": "96", "huawei.com/Ascend910": "8"},
                "allocatable": {"cpu": "95500m", "huawei.com/Ascend910": "6"}}}));
        server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "fresh"}}));
        let timeout = Duration::from_secs(5);
        let found = resources(server.client(), "worker-1", timeout).await.expect("get");
        assert_eq!(found.capacity.get("huawei.com/Ascend910").map(String::as_str), Some("8"));
        assert_eq!(found.allocatable.get("huawei.com/Ascend910").map(String::as_str), Some("6"));
        assert_eq!(found.allocatable.get("cpu").map(String::as_str), Some("95500m"));
        assert_eq!(resources(server.client(), "fresh", timeout).await.expect("get"), NodeResources::default());
        let error = resources(server.client(), "gone", timeout).await.expect_err("404");
        assert!(error.is_not_found(), "{error}");
    }
}
