//! The kubelet's PodResources API (`v1`): which devices the kubelet gave to which container.
//!
//! The kubelet recreates its socket when it restarts; callers that keep a [`PodResourcesClient`] reconnect by path
//! when a call fails. See <https://kubernetes.io/docs/concepts/extend-kubernetes/compute-storage-net/device-plugins/#monitoring-device-plugin-resources>.

use std::path::{Path, PathBuf};
use std::time::Duration;

use tonic::transport::Channel;

use crate::error::{Error, Result};
use api::pod_resources_lister_client::PodResourcesListerClient;
use api::{ListPodResourcesRequest, ListPodResourcesResponse};

/// The generated `v1` API: the `PodResourcesLister` client (`List`, `GetAllocatableResources`, `Get`) and server,
/// from `proto/podresources/v1/api.proto` by `scripts/gen_protos.sh` (committed; builds need no protoc).
#[allow(missing_docs, clippy::all, clippy::pedantic, rust_2018_idioms, unreachable_pub)]
#[rustfmt::skip]
#[path = "generated/v1.rs"]
pub mod api;

/// The kubelet's PodResources socket.
pub const DEFAULT_SOCKET: &str = "/var/lib/kubelet/pod-resources/kubelet.sock";

/// A connection to the kubelet's PodResources socket; every call has the deadline given at connect time.
#[derive(Debug, Clone)]
pub struct PodResourcesClient {
    socket: PathBuf,
    timeout: Duration,
    client: PodResourcesListerClient<Channel>,
}

impl PodResourcesClient {
    /// Connects to `socket` within `timeout`.
    ///
    /// # Errors
    /// [`Error::PodResources`] naming the socket when it cannot be reached.
    pub async fn connect(socket: &Path, timeout: Duration) -> Result<Self> {
        let channel = kubelet_socket::connect(socket, timeout).await.map_err(|error| Error::PodResources {
            operation: "connecting",
            socket: socket.to_path_buf(),
            detail: error.to_string(),
        })?;
        Ok(Self { socket: socket.to_path_buf(), timeout, client: PodResourcesListerClient::new(channel) })
    }

    /// The socket this client talks to.
    pub fn socket(&self) -> &Path {
        &self.socket
    }

    /// Every pod's devices (`List`).
    ///
    /// # Errors
    /// [`Error::PodResources`] naming the socket: the kubelet answered with an error or not within the deadline.
    pub async fn list(&mut self) -> Result<ListPodResourcesResponse> {
        let failed = |detail: String| Error::PodResources { operation: "List", socket: self.socket.clone(), detail };
        match tokio::time::timeout(self.timeout, self.client.list(ListPodResourcesRequest {})).await {
            Ok(Ok(response)) => Ok(response.into_inner()),
            Ok(Err(status)) => Err(failed(status.message().to_owned())),
            Err(_) => Err(failed(format!("no answer within {:?}", self.timeout))),
        }
    }
}
