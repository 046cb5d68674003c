//! The cluster's RuntimeClasses (`node.k8s.io/v1`): which name a pod's `runtimeClassName` selects and which runtime
//! handler the node's container engine then runs. A tool compares the handlers with the runtimes the engine has
//! registered: a class whose handler the engine does not know makes pods fail to start, and a pod without the
//! Ascend class runs with runc and no devices.

use std::collections::BTreeMap;
use std::time::Duration;

use k8s_openapi::api::node::v1::RuntimeClass;
use kube::api::{Api, ListParams};

use crate::client::request;
use crate::error::Result;

/// Every RuntimeClass of the cluster: its name and its `handler`.
///
/// # Errors
/// The request's error: [`crate::Error::Api`] (403 without `list` on `runtimeclasses.node.k8s.io`),
/// [`crate::Error::Transport`], [`crate::Error::Timeout`].
pub async fn runtime_class_handlers(client: kube::Client, timeout: Duration) -> Result<BTreeMap<String, String>> {
    let classes: Api<RuntimeClass> = Api::all(client);
    let listed = request("list", "runtimeclasses", timeout, classes.list(&ListParams::default())).await?;
    Ok(listed.items.into_iter().map(|class| (class.metadata.name.unwrap_or_default(), class.handler)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_handlers_of_every_runtime_class() {
        let server = fake_apiserver::FakeApiServer::start().await.expect("fake API server");
        let timeout = Duration::from_secs(5);
        assert!(runtime_class_handlers(server.client(), timeout).await.expect("list").is_empty());
        for (name, handler) in [("ascend", "ascend-runtime"), ("gvisor", "runsc")] {
            server.seed(serde_json::json!({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass",
                "metadata": {"name": name}, "handler": handler}));
        }
        let found = runtime_class_handlers(server.client(), timeout).await.expect("list");
        assert_eq!(found.get("ascend").map(String::as_str), Some("ascend-runtime"));
        assert_eq!(found.len(), 2);
        server.stop_listening();
        let error = runtime_class_handlers(server.client(), timeout).await.expect_err("unreachable");
        assert!(error.to_string().contains("runtimeclasses"), "{error}");
    }
}
