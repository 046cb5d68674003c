//! An in-process fake kubelet for tests (feature `fake-kubelet`): it serves `Registration` on
//! `<dir>/kubelet.sock`, and for each registration does what the kubelet does: calls `GetDevicePluginOptions`
//! before answering, then follows `ListAndWatch` and keeps the latest device list. [`FakeKubelet::restart`]
//! behaves like a restarting kubelet: it deletes every file in the directory except the checkpoint and serves a
//! new `kubelet.sock`. [`FakePodResources`] is the kubelet's PodResources socket.
//!
//! **Outside the semver promise.** A test double (feature `fake-kubelet`): it follows what this workspace's tests need,
//! and its API may change in any release, patch releases included. Use it from `[dev-dependencies]`, and pin the exact
//! version (`=0.1.x`) if your tests depend on its details.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::net::UnixListener;
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tokio_stream::wrappers::UnixListenerStream;
use tokio_stream::StreamExt;
use tonic::transport::{Channel, Server};
use tonic::{Request, Response, Status};

use crate::api::v1beta1::device_plugin_client::DevicePluginClient;
use crate::api::v1beta1::registration_server::{Registration, RegistrationServer};
use crate::api::v1beta1::{Device, DevicePluginOptions, Empty, RegisterRequest};
use crate::error::grpc_error;
use crate::error::{Error, Result};
use crate::kubelet::{API_VERSION, KUBELET_SOCKET};
use ascend_node::pod_resources::api::pod_resources_lister_server::{PodResourcesLister, PodResourcesListerServer};
use ascend_node::pod_resources::api::{
    AllocatableResourcesRequest, AllocatableResourcesResponse, ContainerDevices, ContainerResources,
    GetPodResourcesRequest, GetPodResourcesResponse, ListPodResourcesRequest, ListPodResourcesResponse, PodResources,
};
use kubelet_socket::{connect, AuthorityRewriter};

/// The file a restarting kubelet keeps.
pub const CHECKPOINT_FILE: &str = "kubelet_internal_checkpoint";

const CALL_TIMEOUT: Duration = Duration::from_secs(5);

/// One accepted registration.
#[derive(Debug, Clone)]
pub struct Registered {
    /// The request.
    pub request: RegisterRequest,
    /// What the plugin answered to `GetDevicePluginOptions`.
    pub options: DevicePluginOptions,
    /// When it was accepted.
    pub at: Instant,
}

#[derive(Default)]
struct State {
    registrations: Mutex<Vec<Registered>>,
    devices: Mutex<BTreeMap<String, Vec<Device>>>,
    changes: Mutex<Option<watch::Sender<u64>>>,
}

impl State {
    fn bump(&self) {
        if let Ok(changes) = self.changes.lock() {
            if let Some(sender) = changes.as_ref() {
                sender.send_modify(|generation| *generation += 1);
            }
        }
    }
}

struct RegistrationService {
    dir: PathBuf,
    state: Arc<State>,
}

#[tonic::async_trait]
impl Registration for RegistrationService {
    async fn register(&self, request: Request<RegisterRequest>) -> std::result::Result<Response<Empty>, Status> {
        let request = request.into_inner();
        if request.version != API_VERSION {
            return Err(Status::invalid_argument(format!("unsupported version {:?}", request.version)));
        }
        let socket = self.dir.join(&request.endpoint);
        let channel = connect(&socket, CALL_TIMEOUT).await.map_err(|e| Status::unavailable(e.to_string()))?;
        let mut client = DevicePluginClient::new(channel);
        let options = client.get_device_plugin_options(Empty {}).await?.into_inner();
        let resource = request.resource_name.clone();
        if let Ok(mut registrations) = self.state.registrations.lock() {
            registrations.push(Registered { request, options, at: Instant::now() });
        }
        self.state.bump();
        tokio::spawn(follow_list_and_watch(client, resource, Arc::clone(&self.state)));
        Ok(Response::new(Empty {}))
    }
}

async fn follow_list_and_watch(mut client: DevicePluginClient<Channel>, resource: String, state: Arc<State>) {
    let Ok(response) = client.list_and_watch(Empty {}).await else { return };
    let mut stream = response.into_inner();
    while let Ok(Some(update)) = stream.message().await {
        if let Ok(mut devices) = state.devices.lock() {
            devices.insert(resource.clone(), update.devices);
        }
        state.bump();
    }
}

/// The fake kubelet.
pub struct FakeKubelet {
    dir: PathBuf,
    state: Arc<State>,
    changes: watch::Receiver<u64>,
    server: Option<Serving>,
}

impl std::fmt::Debug for FakeKubelet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeKubelet").field("dir", &self.dir).finish()
    }
}

impl FakeKubelet {
    /// Serves `Registration` on `<dir>/kubelet.sock`.
    ///
    /// # Errors
    /// [`Error::Io`] if the socket cannot be bound.
    pub async fn start(dir: &Path) -> Result<Self> {
        let (sender, changes) = watch::channel(0);
        let state = Arc::new(State::default());
        if let Ok(mut slot) = state.changes.lock() {
            *slot = Some(sender);
        }
        let mut kubelet = FakeKubelet { dir: dir.to_owned(), state, changes, server: None };
        kubelet.serve()?;
        Ok(kubelet)
    }

    fn serve(&mut self) -> Result<()> {
        let path = self.dir.join(KUBELET_SOCKET);
        let listener = UnixListener::bind(&path).map_err(|source| Error::Io {
            operation: "binding kubelet socket",
            path: path.clone(),
            source,
        })?;
        let service = RegistrationService { dir: self.dir.clone(), state: Arc::clone(&self.state) };
        // The kubelet is a grpc-go server, which takes any `:authority`; a grpc-go plugin (Huawei's) registers with
        // the socket path as its authority, which tonic's h2 refuses unless it is rewritten.
        let incoming = UnixListenerStream::new(listener).map(|accepted| accepted.map(AuthorityRewriter::new));
        self.server = Some(spawn_server(Server::builder().add_service(RegistrationServer::new(service)), incoming));
        Ok(())
    }

    /// Restarts like a kubelet: stops serving, deletes every file in the directory except the checkpoint,
    /// forgets the device lists, and serves a new `kubelet.sock`.
    ///
    /// # Errors
    /// [`Error::Io`] if the directory cannot be read or cleaned, or the socket cannot be bound.
    pub async fn restart(&mut self) -> Result<()> {
        self.shutdown().await;
        let entries = std::fs::read_dir(&self.dir).map_err(|source| Error::Io {
            operation: "reading",
            path: self.dir.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            if entry.file_name() != CHECKPOINT_FILE {
                let path = entry.path();
                std::fs::remove_file(&path).map_err(|source| Error::Io { operation: "removing", path, source })?;
            }
        }
        if let Ok(mut devices) = self.state.devices.lock() {
            devices.clear();
        }
        self.serve()
    }

    /// Stops serving (the socket file stays, as after a kubelet crash).
    pub async fn shutdown(&mut self) {
        stop_server(self.server.take()).await;
    }

    /// Every registration so far.
    pub fn registrations(&self) -> Vec<Registered> {
        self.state.registrations.lock().map(|r| r.clone()).unwrap_or_default()
    }

    /// The latest device list of a resource, if it has sent one.
    pub fn devices(&self, resource: &str) -> Option<Vec<Device>> {
        self.state.devices.lock().ok().and_then(|devices| devices.get(resource).cloned())
    }

    /// Waits until `condition` holds for the kubelet's state, checking on every registration and device update.
    ///
    /// # Errors
    /// [`Error::Grpc`] describing `what` when `timeout` passes first.
    pub async fn wait_until(
        &self,
        what: &str,
        timeout: Duration,
        condition: impl Fn(&FakeKubelet) -> bool,
    ) -> Result<()> {
        let mut changes = self.changes.clone();
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            if condition(self) {
                return Ok(());
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                // A change that is ready at once is taken even past the deadline: the deadline is checked too.
                Ok(Ok(())) if tokio::time::Instant::now() < deadline => {}
                _ => {
                    return Err(grpc_error(
                        format!("waiting for {what}"),
                        &self.dir,
                        format!(
                            "not reached within {timeout:?}; registrations {:?}, devices {:?}",
                            self.registered_resources(),
                            self.all_devices()
                        ),
                    ))
                }
            }
        }
    }

    fn registered_resources(&self) -> Vec<String> {
        self.registrations().into_iter().map(|r| r.request.resource_name).collect()
    }

    fn all_devices(&self) -> BTreeMap<String, Vec<(String, String)>> {
        self.state
            .devices
            .lock()
            .map(|d| {
                d.iter()
                    .map(|(k, v)| (k.clone(), v.iter().map(|d| (d.id.clone(), d.health.clone())).collect()))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// A client of a registered resource's plugin, as the kubelet uses for Allocate.
    ///
    /// # Errors
    /// [`Error::UnknownResource`] if the resource never registered, [`Error::Grpc`] if its socket does not answer.
    pub async fn plugin_client(&self, resource: &str) -> Result<DevicePluginClient<Channel>> {
        let endpoint = self
            .registrations()
            .into_iter()
            .rev()
            .find(|r| r.request.resource_name == resource)
            .map(|r| r.request.endpoint)
            .ok_or_else(|| Error::UnknownResource(resource.to_owned()))?;
        Ok(DevicePluginClient::new(connect(&self.dir.join(endpoint), CALL_TIMEOUT).await?))
    }
}

/// The kubelet's PodResources socket for tests: `List` answers the pods last given to [`FakePodResources::set`], as
/// a kubelet reports the devices of the pods it runs.
pub struct FakePodResources {
    pods: Arc<Mutex<Vec<PodResources>>>,
    server: Option<Serving>,
}

impl std::fmt::Debug for FakePodResources {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakePodResources").finish_non_exhaustive()
    }
}

struct PodResourcesService {
    pods: Arc<Mutex<Vec<PodResources>>>,
}

#[tonic::async_trait]
impl PodResourcesLister for PodResourcesService {
    async fn list(
        &self,
        _: Request<ListPodResourcesRequest>,
    ) -> std::result::Result<Response<ListPodResourcesResponse>, Status> {
        let pods = self.pods.lock().map(|pods| pods.clone()).map_err(|_| Status::internal("poisoned"))?;
        Ok(Response::new(ListPodResourcesResponse { pod_resources: pods }))
    }

    async fn get_allocatable_resources(
        &self,
        _: Request<AllocatableResourcesRequest>,
    ) -> std::result::Result<Response<AllocatableResourcesResponse>, Status> {
        Err(Status::unimplemented("not served by the fake kubelet"))
    }

    async fn get(
        &self,
        _: Request<GetPodResourcesRequest>,
    ) -> std::result::Result<Response<GetPodResourcesResponse>, Status> {
        Err(Status::unimplemented("not served by the fake kubelet"))
    }
}

impl FakePodResources {
    /// Serves PodResources on `socket`, listing `pods`.
    ///
    /// # Errors
    /// [`Error::Io`] if the socket cannot be bound.
    pub fn start(socket: &Path, pods: Vec<PodResources>) -> Result<Self> {
        let listener = UnixListener::bind(socket).map_err(|source| Error::Io {
            operation: "binding PodResources socket",
            path: socket.to_owned(),
            source,
        })?;
        let pods = Arc::new(Mutex::new(pods));
        let service = PodResourcesService { pods: Arc::clone(&pods) };
        let router = Server::builder().add_service(PodResourcesListerServer::new(service));
        Ok(FakePodResources { pods, server: Some(spawn_server(router, UnixListenerStream::new(listener))) })
    }

    /// Replaces the pods `List` answers (a pod that ended is left out).
    pub fn set(&self, pods: Vec<PodResources>) {
        if let Ok(mut current) = self.pods.lock() {
            *current = pods;
        }
    }

    /// A pod whose one container holds `ids` of `resource`.
    pub fn pod(namespace: &str, name: &str, resource: &str, ids: &[&str]) -> PodResources {
        PodResources {
            name: name.to_owned(),
            namespace: namespace.to_owned(),
            containers: vec![ContainerResources {
                name: "main".to_owned(),
                devices: vec![ContainerDevices {
                    resource_name: resource.to_owned(),
                    device_ids: ids.iter().map(|id| (*id).to_owned()).collect(),
                    topology: None,
                }],
                ..ContainerResources::default()
            }],
            ..PodResources::default()
        }
    }

    /// Stops serving.
    pub async fn shutdown(&mut self) {
        stop_server(self.server.take()).await;
    }
}

type Serving = (oneshot::Sender<()>, JoinHandle<()>);

/// Serves `router` on `incoming` until the sender is used or dropped.
fn spawn_server<I, IO, IE>(router: tonic::transport::server::Router, incoming: I) -> Serving
where
    I: tokio_stream::Stream<Item = std::result::Result<IO, IE>> + Send + 'static,
    IO: tokio::io::AsyncRead + tokio::io::AsyncWrite + tonic::transport::server::Connected + Unpin + Send + 'static,
    IO::ConnectInfo: Clone + Send + Sync + 'static,
    IE: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    let (stop, stopped) = oneshot::channel::<()>();
    let task = tokio::spawn(async move {
        let _ = router
            .serve_with_incoming_shutdown(incoming, async {
                let _ = stopped.await;
            })
            .await;
    });
    (stop, task)
}

async fn stop_server(server: Option<Serving>) {
    if let Some((stop, task)) = server {
        let _ = stop.send(());
        let _ = tokio::time::timeout(CALL_TIMEOUT, task).await;
    }
}
