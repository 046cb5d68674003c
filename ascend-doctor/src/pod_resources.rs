//! What the kubelet says it has allocated: the PodResources API (`List`), and the device-plugin checkpoint.

use std::path::Path;
use std::time::Duration;

use ascend_node::pod_resources::PodResourcesClient;

use super::error::{Error, Result};

/// The kubelet's PodResources socket (a host path): the node layer's default.
pub const POD_RESOURCES_SOCKET: &str = ascend_node::pod_resources::DEFAULT_SOCKET;

/// The default PodResources socket as a path.
pub fn default_pod_resources_socket() -> std::path::PathBuf {
    Path::new(POD_RESOURCES_SOCKET).to_path_buf()
}

/// One allocation of NPU devices to a pod's container.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allocation {
    /// `namespace/name` from PodResources, or the pod UID from the checkpoint.
    pub pod: PodRef,
    /// The container.
    pub container: String,
    /// The extended resource.
    pub resource: String,
    /// The device ids.
    pub device_ids: Vec<String>,
}

/// How an allocation names its pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PodRef {
    /// By name (PodResources).
    Name {
        /// Namespace.
        namespace: String,
        /// Name.
        name: String,
    },
    /// By UID (checkpoint).
    Uid(String),
}

impl std::fmt::Display for PodRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PodRef::Name { namespace, name } => write!(f, "{namespace}/{name}"),
            PodRef::Uid(uid) => write!(f, "pod uid {uid}"),
        }
    }
}

/// Lists allocations of resources under `prefix/` through the PodResources API at `socket` (a real path).
///
/// # Errors
/// [`Error::PodResources`], naming the socket, when connecting or `List` failed; [`Error::AsyncRuntime`] when no
/// runtime could be started.
pub fn list_pod_resources(socket: &Path, prefix: &str, timeout: Duration) -> Result<Vec<Allocation>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|source| Error::AsyncRuntime { purpose: "the PodResources client", source })?;
    let response = runtime
        .block_on(async {
            let mut client = PodResourcesClient::connect(socket, timeout).await?;
            client.list().await
        })
        .map_err(Error::PodResources)?;
    let wanted = format!("{prefix}/");
    let mut allocations = Vec::new();
    for pod in response.pod_resources {
        for container in pod.containers {
            for devices in container.devices.into_iter().filter(|d| d.resource_name.starts_with(&wanted)) {
                allocations.push(Allocation {
                    pod: PodRef::Name { namespace: pod.namespace.clone(), name: pod.name.clone() },
                    container: container.name.clone(),
                    resource: devices.resource_name,
                    device_ids: devices.device_ids,
                });
            }
        }
    }
    Ok(allocations)
}

/// Allocations of resources under `prefix/` in a `kubelet_internal_checkpoint` (JSON): the fallback when the
/// PodResources socket is not there. The format is the kubelet's internal one, so fields that do not parse are skipped.
pub fn checkpoint_allocations(text: &str, prefix: &str) -> Vec<Allocation> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return Vec::new() };
    let wanted = format!("{prefix}/");
    let entries = value.pointer("/Data/PodDeviceEntries").and_then(|e| e.as_array()).cloned().unwrap_or_default();
    entries
        .iter()
        .filter_map(|entry| {
            let resource = entry.get("ResourceName")?.as_str()?.to_owned();
            if !resource.starts_with(&wanted) {
                return None;
            }
            let mut device_ids = Vec::new();
            match entry.get("DeviceIDs") {
                // Current format: NUMA node -> ids; older: a flat list.
                Some(serde_json::Value::Object(by_node)) => {
                    for ids in by_node.values().filter_map(|ids| ids.as_array()) {
                        device_ids.extend(ids.iter().filter_map(|id| id.as_str().map(str::to_owned)));
                    }
                }
                Some(serde_json::Value::Array(ids)) => {
                    device_ids.extend(ids.iter().filter_map(|id| id.as_str().map(str::to_owned)))
                }
                _ => {}
            }
            device_ids.sort();
            Some(Allocation {
                pod: PodRef::Uid(entry.get("PodUID")?.as_str()?.to_owned()),
                container: entry.get("ContainerName").and_then(|c| c.as_str()).unwrap_or_default().to_owned(),
                resource,
                device_ids,
            })
        })
        .collect()
}

/// The resources the checkpoint says plugins registered, with their device counts.
pub fn checkpoint_registered(text: &str) -> Vec<(String, usize)> {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(text) else { return Vec::new() };
    value
        .pointer("/Data/RegisteredDevices")
        .and_then(|r| r.as_object())
        .map(|registered| {
            registered.iter().map(|(resource, ids)| (resource.clone(), ids.as_array().map_or(0, Vec::len))).collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checkpoint_in_both_formats() {
        let text = r#"{"Data":{"PodDeviceEntries":[
            {"PodUID":"u1","ContainerName":"c","ResourceName":"huawei.com/Ascend910","DeviceIDs":{"0":["Ascend910-1","Ascend910-0"]}},
            {"PodUID":"u2","ContainerName":"c","ResourceName":"huawei.com/Ascend910","DeviceIDs":["Ascend910-2"]},
            {"PodUID":"u3","ContainerName":"c","ResourceName":"nvidia.com/gpu","DeviceIDs":["g"]}],
            "RegisteredDevices":{"huawei.com/Ascend910":["Ascend910-0","Ascend910-1","Ascend910-2"]}},"Checksum":1}"#;
        let found = checkpoint_allocations(text, "huawei.com");
        assert_eq!(found.len(), 2);
        assert_eq!(found[0].device_ids, ["Ascend910-0", "Ascend910-1"]);
        assert_eq!(found[1].pod, PodRef::Uid("u2".into()));
        assert_eq!(checkpoint_registered(text), [("huawei.com/Ascend910".to_owned(), 3)]);
        assert!(checkpoint_allocations("not json", "huawei.com").is_empty());
    }
}
