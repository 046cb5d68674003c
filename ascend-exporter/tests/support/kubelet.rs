//! A kubelet's PodResources socket for the exporter's tests: a gRPC server on a Unix socket whose `List` answers
//! fixed pods.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use ascend_node::pod_resources::api::pod_resources_lister_server::{PodResourcesLister, PodResourcesListerServer};
use ascend_node::pod_resources::api::{
    AllocatableResourcesRequest, AllocatableResourcesResponse, ContainerDevices, ContainerResources,
    GetPodResourcesRequest, GetPodResourcesResponse, ListPodResourcesRequest, ListPodResourcesResponse, PodResources,
};
use tokio_stream::wrappers::UnixListenerStream;

struct FakeLister {
    pods: Vec<PodResources>,
}

#[tonic::async_trait]
impl PodResourcesLister for FakeLister {
    async fn list(
        &self,
        _request: tonic::Request<ListPodResourcesRequest>,
    ) -> Result<tonic::Response<ListPodResourcesResponse>, tonic::Status> {
        Ok(tonic::Response::new(ListPodResourcesResponse { pod_resources: self.pods.clone() }))
    }

    async fn get_allocatable_resources(
        &self,
        _request: tonic::Request<AllocatableResourcesRequest>,
    ) -> Result<tonic::Response<AllocatableResourcesResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not used by the exporter"))
    }

    async fn get(
        &self,
        _request: tonic::Request<GetPodResourcesRequest>,
    ) -> Result<tonic::Response<GetPodResourcesResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not used by the exporter"))
    }
}

/// A pod whose one container holds `device_ids` of `resource`.
pub fn pod(namespace: &str, name: &str, container: &str, resource: &str, device_ids: &[&str]) -> PodResources {
    PodResources {
        name: name.into(),
        namespace: namespace.into(),
        containers: vec![ContainerResources {
            name: container.into(),
            devices: vec![ContainerDevices {
                resource_name: resource.into(),
                device_ids: device_ids.iter().map(|id| id.to_string()).collect(),
                topology: None,
            }],
            ..Default::default()
        }],
        ..Default::default()
    }
}

/// A kubelet socket served on its own runtime thread; dropping it stops the server and removes the socket, as a
/// kubelet restart does.
pub struct FakeKubelet {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
    socket: PathBuf,
}

impl FakeKubelet {
    /// Serves `pods` on `socket` (replacing a file left there) once the socket is bound.
    pub fn start(socket: &Path, pods: Vec<PodResources>) -> FakeKubelet {
        let _ = std::fs::remove_file(socket);
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (ready, is_ready) = std::sync::mpsc::channel();
        let path = socket.to_owned();
        let thread = std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            runtime.block_on(async move {
                let listener = tokio::net::UnixListener::bind(&path).expect("bind fake kubelet socket");
                ready.send(()).expect("signal ready");
                tonic::transport::Server::builder()
                    .add_service(PodResourcesListerServer::from_arc(Arc::new(FakeLister { pods })))
                    .serve_with_incoming_shutdown(UnixListenerStream::new(listener), async {
                        let _ = stopped.await;
                    })
                    .await
                    .expect("fake kubelet serves");
            });
        });
        is_ready.recv_timeout(Duration::from_secs(10)).expect("fake kubelet started");
        FakeKubelet { stop: Some(stop), thread: Some(thread), socket: socket.to_owned() }
    }
}

impl Drop for FakeKubelet {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
        let _ = std::fs::remove_file(&self.socket);
    }
}
