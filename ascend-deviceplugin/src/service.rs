//! The thin tonic adapter: the `DevicePlugin` gRPC service of one resource over the domain core, and the one place
//! where domain errors become gRPC status codes.

use std::sync::Arc;

use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status};

use crate::allocate::{plan_container, AllocateConfig, ContainerAllocation};
use crate::api::v1beta1::{
    self, device_plugin_server, AllocateRequest, AllocateResponse, CdiDevice, ContainerAllocateResponse,
    ContainerPreferredAllocationResponse, DevicePluginOptions, Empty, ListAndWatchResponse, NumaNode,
    PreStartContainerRequest, PreStartContainerResponse, PreferredAllocationRequest, PreferredAllocationResponse,
    TopologyInfo,
};
use crate::assigner::DeviceAssigner;
use crate::error::Error;
use crate::observer::PluginObserver;
use crate::preferred::preferred_allocation;
use ascend_node::inventory::{Resource, Snapshot};

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        let message = error.to_string();
        match error {
            Error::UnknownDevices { .. } | Error::InvalidRequest { .. } => Status::invalid_argument(message),
            Error::UnhealthyDevices { .. } | Error::Assignment { .. } => Status::failed_precondition(message),
            Error::UnknownResource(_) => Status::not_found(message),
            Error::Config(_) | Error::Io { .. } | Error::Grpc { .. } | Error::Monitor(_) => Status::internal(message),
        }
    }
}

/// The options every resource announces: preferred allocation yes, PreStartContainer no.
pub const PLUGIN_OPTIONS: DevicePluginOptions =
    DevicePluginOptions { pre_start_required: false, get_preferred_allocation_available: true };

/// The `DevicePlugin` service of one resource.
pub struct DevicePluginService {
    resource: String,
    snapshot: watch::Receiver<Arc<Snapshot>>,
    allocate: Arc<AllocateConfig>,
    observer: Arc<dyn PluginObserver>,
    assigner: Option<Arc<dyn DeviceAssigner>>,
    stopping: watch::Receiver<bool>,
}

impl DevicePluginService {
    /// A service for `resource` reading health from `snapshot`; its ListAndWatch streams end when `stopping`
    /// turns true (so that a server can shut down gracefully).
    pub fn new(
        resource: String,
        snapshot: watch::Receiver<Arc<Snapshot>>,
        allocate: Arc<AllocateConfig>,
        observer: Arc<dyn PluginObserver>,
        stopping: watch::Receiver<bool>,
    ) -> Self {
        Self { resource, snapshot, allocate, observer, assigner: None, stopping }
    }

    /// The same service, with Allocate asking `assigner` which devices a container gets.
    pub fn with_assigner(self, assigner: Option<Arc<dyn DeviceAssigner>>) -> Self {
        Self { assigner, ..self }
    }

    /// The ids a container gets: the assigner's for whole chips, else the kubelet's (vNPUs are always the kubelet's,
    /// as in Huawei's Volcano mode).
    async fn devices_for(&self, resource: &Resource, kubelet_ids: &[String]) -> Result<Vec<String>, Error> {
        let whole_chips = resource.devices.values().all(|d| matches!(d.kind, crate::DeviceKind::Chip { .. }));
        match &self.assigner {
            Some(assigner) if whole_chips => assigner.assign(resource, kubelet_ids).await,
            _ => Ok(kubelet_ids.to_vec()),
        }
    }

    fn current_resource(&self) -> Result<Resource, Error> {
        self.snapshot
            .borrow()
            .resource(&self.resource)
            .cloned()
            .ok_or_else(|| Error::UnknownResource(self.resource.clone()))
    }
}

/// The kubelet's view of a resource's devices (empty when the resource is gone).
pub fn list_response(snapshot: &Snapshot, resource: &str) -> ListAndWatchResponse {
    let devices = snapshot
        .resource(resource)
        .map(|resource| {
            resource
                .devices
                .values()
                .map(|device| v1beta1::Device {
                    id: device.id.clone(),
                    health: device.health.as_kubelet_str().to_owned(),
                    topology: device
                        .numa_node
                        .map(|node| TopologyInfo { nodes: vec![NumaNode { id: i64::from(node) }] }),
                })
                .collect()
        })
        .unwrap_or_default();
    ListAndWatchResponse { devices }
}

/// The gRPC form of a planned allocation.
pub fn container_response(allocation: ContainerAllocation) -> ContainerAllocateResponse {
    ContainerAllocateResponse {
        envs: allocation.envs.into_iter().collect(),
        mounts: allocation
            .mounts
            .into_iter()
            .map(|m| v1beta1::Mount {
                container_path: m.container_path,
                host_path: m.host_path,
                read_only: m.read_only,
            })
            .collect(),
        devices: allocation
            .devices
            .into_iter()
            .map(|d| v1beta1::DeviceSpec {
                container_path: d.container_path,
                host_path: d.host_path,
                permissions: d.permissions,
            })
            .collect(),
        annotations: allocation.annotations.into_iter().collect(),
        cdi_devices: allocation.cdi_devices.into_iter().map(|name| CdiDevice { name }).collect(),
    }
}

#[tonic::async_trait]
impl device_plugin_server::DevicePlugin for DevicePluginService {
    async fn get_device_plugin_options(&self, _: Request<Empty>) -> Result<Response<DevicePluginOptions>, Status> {
        Ok(Response::new(PLUGIN_OPTIONS))
    }

    type ListAndWatchStream = ReceiverStream<Result<ListAndWatchResponse, Status>>;

    async fn list_and_watch(&self, _: Request<Empty>) -> Result<Response<Self::ListAndWatchStream>, Status> {
        let (sender, receiver) = mpsc::channel(4);
        let mut snapshot = self.snapshot.clone();
        let mut stopping = self.stopping.clone();
        let resource = self.resource.clone();
        tokio::spawn(async move {
            let mut last_sent: Option<ListAndWatchResponse> = None;
            loop {
                let response = list_response(&snapshot.borrow_and_update(), &resource);
                if last_sent.as_ref() != Some(&response) {
                    tracing::debug!(%resource, devices = response.devices.len(), "ListAndWatch update");
                    if sender.send(Ok(response.clone())).await.is_err() {
                        break;
                    }
                    last_sent = Some(response);
                }
                tokio::select! {
                    changed = snapshot.changed() => if changed.is_err() { break },
                    _ = stopping.wait_for(|stop| *stop) => break,
                    () = sender.closed() => break,
                }
            }
            tracing::debug!(%resource, "ListAndWatch stream ended");
        });
        Ok(Response::new(ReceiverStream::new(receiver)))
    }

    async fn get_preferred_allocation(
        &self,
        request: Request<PreferredAllocationRequest>,
    ) -> Result<Response<PreferredAllocationResponse>, Status> {
        let resource = self.current_resource()?;
        let mut container_responses = Vec::new();
        for container in request.into_inner().container_requests {
            let device_i_ds = preferred_allocation(
                &resource,
                &container.available_device_i_ds,
                &container.must_include_device_i_ds,
                container.allocation_size,
            )?;
            container_responses.push(ContainerPreferredAllocationResponse { device_i_ds });
        }
        Ok(Response::new(PreferredAllocationResponse { container_responses }))
    }

    async fn allocate(&self, request: Request<AllocateRequest>) -> Result<Response<AllocateResponse>, Status> {
        let resource = self.current_resource()?;
        let mut container_responses = Vec::new();
        for container in request.into_inner().container_requests {
            let planned = match self.devices_for(&resource, &container.devices_ids).await {
                Ok(ids) => plan_container(&resource, &ids, &self.allocate).map(|plan| (ids, plan)),
                Err(error) => Err(error),
            };
            match planned {
                Ok((ids, allocation)) => {
                    tracing::info!(resource = %self.resource, kubelet = ?container.devices_ids, devices = ?ids, "allocated");
                    self.observer.allocated(&self.resource, ids.len());
                    container_responses.push(container_response(allocation));
                }
                Err(error) => {
                    tracing::warn!(resource = %self.resource, %error, "allocation rejected");
                    self.observer.allocation_failed(&self.resource, &error);
                    return Err(error.into());
                }
            }
        }
        Ok(Response::new(AllocateResponse { container_responses }))
    }

    async fn pre_start_container(
        &self,
        _: Request<PreStartContainerRequest>,
    ) -> Result<Response<PreStartContainerResponse>, Status> {
        Ok(Response::new(PreStartContainerResponse {}))
    }
}
