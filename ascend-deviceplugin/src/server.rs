//! One resource's gRPC server on its own socket in the plugin directory.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::net::UnixListener;
use tokio::sync::{watch, Notify};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnixListenerStream;
use tonic::transport::Server;

use crate::allocate::AllocateConfig;
use crate::api::v1beta1::device_plugin_client::DevicePluginClient;
use crate::api::v1beta1::device_plugin_server::DevicePluginServer;
use crate::api::v1beta1::Empty;
use crate::assigner::DeviceAssigner;
use crate::error::{grpc_error, Result};
use crate::held::Holdings;
use crate::observer::PluginObserver;
use crate::service::DevicePluginService;
use ascend_node::Snapshot;
use kubelet_socket::{bind_fresh, connect, identity, remove_if_same, FileIdentity};

/// How long a stopping server may take to finish its calls before it is aborted.
const STOP_GRACE: Duration = Duration::from_secs(5);

/// A running server for one resource.
#[derive(Debug)]
pub struct ResourceServer {
    resource: String,
    socket: String,
    path: PathBuf,
    identity: FileIdentity,
    stopping: watch::Sender<bool>,
    task: JoinHandle<()>,
}

/// What a server needs besides its resource.
#[derive(Clone)]
pub struct ServerContext {
    /// Published health.
    pub snapshot: watch::Receiver<Arc<Snapshot>>,
    /// Allocation settings.
    pub allocate: Arc<AllocateConfig>,
    /// Event hooks.
    pub observer: Arc<dyn PluginObserver>,
    /// Who chooses a container's devices, when not the kubelet.
    pub assigner: Option<Arc<dyn DeviceAssigner>>,
    /// What the kubelet's PodResources says running pods hold ([`crate::HoldingsTracker`]).
    pub holdings: watch::Receiver<Arc<Holdings>>,
}

impl ResourceServer {
    /// Binds `<plugin_dir>/<socket>` (replacing a stale file), serves the resource there, and returns once a
    /// client call through the socket has succeeded.
    ///
    /// # Errors
    /// [`crate::Error::Io`] if the socket cannot be bound, [`crate::Error::Grpc`] if the server does not answer in `timeout`.
    pub async fn start(
        plugin_dir: &Path,
        resource: &str,
        socket: &str,
        context: &ServerContext,
        timeout: Duration,
    ) -> Result<Self> {
        Self::start_telling_end(plugin_dir, resource, socket, context, timeout, None).await
    }

    /// [`start`](Self::start), and `ended` is notified when the server stops serving, whether stopped or failed:
    /// the supervisor serves it again at once rather than at its next periodic check.
    pub(crate) async fn start_telling_end(
        plugin_dir: &Path,
        resource: &str,
        socket: &str,
        context: &ServerContext,
        timeout: Duration,
        ended: Option<Arc<Notify>>,
    ) -> Result<Self> {
        let path = plugin_dir.join(socket);
        let (listener, identity) = bind_fresh(&path)?;
        let (stopping, stop_signal) = watch::channel(false);
        let service = DevicePluginService::new(
            resource.to_owned(),
            context.snapshot.clone(),
            Arc::clone(&context.allocate),
            Arc::clone(&context.observer),
            stop_signal.clone(),
        )
        .with_assigner(context.assigner.clone())
        .with_holdings(context.holdings.clone());
        let serving = serve(service, listener, stop_signal, resource.to_owned());
        let task = tokio::spawn(async move {
            serving.await;
            if let Some(ended) = ended {
                ended.notify_one();
            }
        });
        let server =
            ResourceServer { resource: resource.to_owned(), socket: socket.to_owned(), path, identity, stopping, task };
        if let Err(error) = server.check_serving(timeout).await {
            server.stop().await;
            return Err(error);
        }
        tracing::info!(resource, socket = %server.path.display(), "serving");
        Ok(server)
    }

    async fn check_serving(&self, timeout: Duration) -> Result<()> {
        let channel = connect(&self.path, timeout).await?;
        let mut client = DevicePluginClient::new(channel);
        let call = client.get_device_plugin_options(Empty {});
        match tokio::time::timeout(timeout, call).await {
            Ok(Ok(_)) => Ok(()),
            Ok(Err(status)) => Err(grpc_error("GetDevicePluginOptions", &self.path, status.to_string())),
            Err(_) => Err(grpc_error("GetDevicePluginOptions", &self.path, format!("no answer within {timeout:?}"))),
        }
    }

    /// The resource served.
    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The socket file name.
    pub fn socket(&self) -> &str {
        &self.socket
    }

    /// Whether our socket file is still in place (the kubelet deletes it when it restarts) and the server runs.
    pub fn is_intact(&self) -> bool {
        identity(&self.path) == Some(self.identity) && !self.task.is_finished()
    }

    /// Stops serving: ends ListAndWatch streams, waits for calls to finish (aborting after a grace period), and
    /// removes the socket file if it is still ours.
    pub async fn stop(self) {
        let _ = self.stopping.send(true);
        let mut task = self.task;
        if tokio::time::timeout(STOP_GRACE, &mut task).await.is_err() {
            tracing::warn!(resource = %self.resource, "server did not stop in time; aborting it");
            task.abort();
        }
        if let Err(error) = remove_if_same(&self.path, self.identity) {
            tracing::warn!(%error, "cannot remove socket");
        }
        tracing::info!(resource = %self.resource, "stopped serving");
    }
}

async fn serve(
    service: DevicePluginService,
    listener: UnixListener,
    mut stop_signal: watch::Receiver<bool>,
    resource: String,
) {
    let result = Server::builder()
        .add_service(DevicePluginServer::new(service))
        .serve_with_incoming_shutdown(UnixListenerStream::new(listener), async move {
            let _ = stop_signal.wait_for(|stop| *stop).await;
        })
        .await;
    if let Err(error) = result {
        tracing::error!(%resource, %error, "gRPC server failed");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::held::Holdings;
    use ascend_node::NoopObserver;

    #[tokio::test]
    async fn a_server_that_stops_serving_says_so() {
        let dir = tempfile::tempdir().expect("temp dir");
        let (_snapshots, snapshot) = watch::channel(Arc::new(Snapshot::default()));
        let (_holdings, holdings) = watch::channel(Arc::new(Holdings::default()));
        let context = ServerContext {
            snapshot,
            allocate: Arc::new(AllocateConfig::default()),
            observer: Arc::new(NoopObserver),
            assigner: None,
            holdings,
        };
        let ended = Arc::new(Notify::new());
        let timeout = Duration::from_secs(5);
        let told = Some(Arc::clone(&ended));
        let server =
            ResourceServer::start_telling_end(dir.path(), "huawei.com/Ascend910", "a.sock", &context, timeout, told)
                .await
                .expect("serves");
        let waiting = tokio::time::timeout(Duration::from_millis(200), ended.notified()).await;
        assert!(waiting.is_err(), "told while still serving");
        server.stop().await;
        let told = tokio::time::timeout(Duration::from_secs(5), ended.notified()).await;
        assert!(told.is_ok(), "not told that the server stopped");
    }
}
