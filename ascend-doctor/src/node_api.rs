//! The cluster through kube-rs (crate `ascend-kube`, feature `kube`): the API server the kubeconfig or the pod's
//! service account names, or one given as a kube-rs configuration (tests pass the fake API server's). This is the
//! doctor's only way to the API server; it runs no `kubectl`.

use std::future::Future;
use std::sync::OnceLock;
use std::time::Duration;

use ascend_oci::runtime_config::RuntimeClassRef;

use super::cluster_api::{ClusterApi, ClusterPod, NodeEventRecord, NodeResources, PodContainers};
use super::error::{Error, Result};

/// The cluster `ascend_kube::connect` finds (in a pod its service account, else `KUBECONFIG` or
/// `~/.kube/config`), or the one a configuration names.
pub struct KubeClusterApi {
    timeout: Duration,
    /// The configuration, found once on first use (or given), or why there is none.
    config: OnceLock<std::result::Result<kube::Config, String>>,
}

impl std::fmt::Debug for KubeClusterApi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let server = match self.config.get() {
            Some(Ok(config)) => Some(config.cluster_url.to_string()),
            _ => None,
        };
        f.debug_struct("KubeClusterApi").field("timeout", &self.timeout).field("server", &server).finish()
    }
}

impl KubeClusterApi {
    /// The cluster this process is configured for, found on first use; each request, and finding the
    /// configuration, may take `timeout`.
    pub fn new(timeout: Duration) -> Self {
        KubeClusterApi { timeout, config: OnceLock::new() }
    }

    /// The cluster `config` names.
    pub fn with_config(config: kube::Config, timeout: Duration) -> Self {
        KubeClusterApi { timeout, config: OnceLock::from(Ok(config)) }
    }

    /// The doctor is synchronous; one small runtime per request keeps the checks free of async.
    fn block_on<T>(&self, work: impl Future<Output = Result<T>>) -> Result<T> {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|source| Error::AsyncRuntime { purpose: "the API client", source })?;
        runtime.block_on(work)
    }

    /// The configuration, or why there is none: found once, as text, since it is the reason every check that needs
    /// the cluster gives for its SKIP ([`ClusterApi::unavailable`]).
    fn configuration(&self) -> &std::result::Result<kube::Config, String> {
        self.config.get_or_init(|| {
            let found =
                self.block_on(async { Ok(tokio::time::timeout(self.timeout, ascend_kube::configuration()).await) });
            match found {
                Ok(Ok(Ok(config))) => Ok(config),
                Ok(Ok(Err(error))) => Err(error.to_string()),
                Ok(Err(_)) => Err(format!("no API server configuration within {:?}", self.timeout)),
                Err(error) => Err(error.to_string()),
            }
        })
    }

    /// Runs one request with a client of the cluster, within the timeout. kube-rs's client lives on the runtime
    /// that made it, so each request connects anew (a handful per run).
    fn call<T, F>(&self, request: impl FnOnce(kube::Client) -> F) -> Result<T>
    where
        F: Future<Output = ascend_kube::Result<T>>,
    {
        let config =
            self.configuration().as_ref().map_err(|reason| Error::NoCluster { reason: reason.clone() })?.clone();
        self.block_on(async {
            let client = ascend_kube::client_for(config, "ascend-doctor", env!("CARGO_PKG_VERSION"))?;
            Ok(request(client).await?)
        })
    }
}

impl ClusterApi for KubeClusterApi {
    fn unavailable(&self) -> Option<String> {
        self.configuration().as_ref().err().cloned()
    }

    fn kubelet_version(&self, node: &str) -> Result<Option<String>> {
        self.call(|client| ascend_kube::kubelet_version(client, node, self.timeout))
    }

    fn served_versions(&self, group: &str) -> Result<Option<Vec<String>>> {
        self.call(|client| ascend_kube::served_versions(client, group, self.timeout))
    }

    fn node_resources(&self, node: &str) -> Result<NodeResources> {
        let found = self.call(|client| ascend_kube::node_resources(client, node, self.timeout))?;
        Ok(NodeResources { capacity: found.capacity, allocatable: found.allocatable })
    }

    fn pods(&self, node: Option<&str>) -> Result<Vec<ClusterPod>> {
        let views = self.call(|client| ascend_kube::pod_assignment::pod_views(client, node, self.timeout))?;
        Ok(views
            .into_iter()
            .map(|view| ClusterPod { namespace: view.namespace, name: view.name, uid: view.uid, phase: view.phase })
            .collect())
    }

    fn pod(&self, namespace: &str, name: &str) -> Result<Option<PodContainers>> {
        // A dynamic object: the doctor reads three fields and names no k8s-openapi version of its own.
        let resource =
            kube::api::ApiResource::from_gvk_with_plural(&kube::api::GroupVersionKind::gvk("", "v1", "Pod"), "pods");
        let found = self.call(|client| {
            let pods: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(client, namespace, &resource);
            let object = format!("pods/{namespace}/{name}");
            ascend_kube::request("get", object, self.timeout, async move { pods.get_opt(name).await })
        })?;
        Ok(found.map(|object| PodContainers::from_pod_json(&object.data)))
    }

    fn node_events(&self, node: &str, reasons: &[&str]) -> Result<Vec<NodeEventRecord>> {
        // Filtered here, not by field selectors: which fields of events.k8s.io Events a server selects on varies.
        let gvk = kube::api::GroupVersionKind::gvk("events.k8s.io", "v1", "Event");
        let resource = kube::api::ApiResource::from_gvk_with_plural(&gvk, "events");
        let found = self.call(|client| {
            let events: kube::Api<kube::api::DynamicObject> = kube::Api::namespaced_with(client, "default", &resource);
            let request = "events.k8s.io/v1 events in namespace default";
            ascend_kube::request("list", request, self.timeout, async move {
                events.list(&kube::api::ListParams::default()).await
            })
        })?;
        Ok(found
            .items
            .iter()
            .filter(|event| event.data["regarding"]["kind"] == "Node" && event.data["regarding"]["name"] == node)
            .filter_map(|event| serde_json::to_value(event).ok())
            .map(|event| NodeEventRecord::from_event_json(&event))
            .filter(|event| reasons.contains(&event.reason.as_str()))
            .collect())
    }

    fn runtime_classes(&self) -> Result<Vec<RuntimeClassRef>> {
        let handlers = self.call(|client| ascend_kube::runtime_class_handlers(client, self.timeout))?;
        Ok(handlers.into_iter().map(|(name, handler)| RuntimeClassRef { name, handler }).collect())
    }
}
