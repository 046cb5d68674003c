//! The thin tonic adapter: the `DevicePlugin` gRPC service of one resource over the domain core, and the one place
//! where domain errors become gRPC status codes.

use std::collections::BTreeMap;
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
use crate::held::Holdings;
use crate::observer::PluginObserver;
use crate::preferred::preferred_allocation;
use ascend_node::{Resource, Snapshot};

impl From<Error> for Status {
    fn from(error: Error) -> Self {
        let message = error.to_string();
        match error {
            Error::UnknownDevices { .. } | Error::InvalidRequest { .. } => Status::invalid_argument(message),
            Error::UnhealthyDevices { .. } | Error::Assignment { .. } | Error::HeldDevices { .. } => {
                Status::failed_precondition(message)
            }
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
    holdings: watch::Receiver<Arc<Holdings>>,
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
        let holdings = watch::channel(Arc::new(Holdings::default())).1;
        Self { resource, snapshot, allocate, observer, assigner: None, holdings, stopping }
    }

    /// The same service, with Allocate asking `assigner` which devices a container gets.
    pub fn with_assigner(self, assigner: Option<Arc<dyn DeviceAssigner>>) -> Self {
        Self { assigner, ..self }
    }

    /// The same service, holding back the chips `holdings` say running pods hold under ids the kubelet does not
    /// count (see [`Holdings::held_back`]).
    pub fn with_holdings(self, holdings: watch::Receiver<Arc<Holdings>>) -> Self {
        Self { holdings, ..self }
    }

    /// Whether the assigner, not the kubelet, picks this resource's devices.
    fn assigned(&self, resource: &Resource) -> bool {
        self.assigner.is_some() && resource.devices.values().all(|d| matches!(d.kind, crate::DeviceKind::Chip { .. }))
    }

    /// The devices to hold back, when the kubelet picks them (with an assigner the assigner checks the chips).
    fn held_back(&self, resource: &Resource) -> BTreeMap<String, String> {
        if self.assigned(resource) {
            return Default::default();
        }
        self.holdings.borrow().held_back(resource)
    }

    /// The ids a container gets: the assigner's for whole chips, else the kubelet's (vNPUs are always the kubelet's,
    /// as in Huawei's Volcano mode), never one held back.
    async fn devices_for(&self, resource: &Resource, kubelet_ids: &[String]) -> Result<Vec<String>, Error> {
        if self.assigned(resource) {
            if let Some(assigner) = &self.assigner {
                let holdings = self.holdings.borrow().clone();
                return assigner.assign(resource, kubelet_ids, &holdings).await;
            }
        }
        let held = self.held_back(resource);
        let ids: Vec<String> = kubelet_ids.iter().filter(|id| held.contains_key(*id)).cloned().collect();
        if !ids.is_empty() {
            let holders = ids.iter().map(|id| format!("{id} by {}", held[id])).collect::<Vec<_>>().join(", ");
            return Err(Error::HeldDevices { resource: resource.name.clone(), ids, holders });
        }
        Ok(kubelet_ids.to_vec())
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

/// [`list_response`], with every device [`Holdings::held_back`] names listed Unhealthy so that the kubelet neither
/// counts nor offers it, unless an assigner picks the resource's devices (`assigned`: Volcano mode's whole chips,
/// whose kubelet ids are only a count).
/// Returns the list and the held devices with their pods.
fn held_list_response(
    snapshot: &Snapshot,
    resource: &str,
    holdings: &Holdings,
    assigned: bool,
) -> (ListAndWatchResponse, BTreeMap<String, String>) {
    let mut response = list_response(snapshot, resource);
    let Some(current) = snapshot.resource(resource) else { return (response, BTreeMap::new()) };
    let whole_chips = current.devices.values().all(|d| matches!(d.kind, crate::DeviceKind::Chip { .. }));
    if assigned && whole_chips {
        return (response, BTreeMap::new());
    }
    let held = holdings.held_back(current);
    for device in response.devices.iter_mut().filter(|device| held.contains_key(&device.id)) {
        device.health = "Unhealthy".to_owned();
    }
    (response, held)
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
        let mut holdings = self.holdings.clone();
        let mut holdings_open = true;
        let mut stopping = self.stopping.clone();
        let resource = self.resource.clone();
        let assigner = self.assigner.is_some();
        tokio::spawn(async move {
            let mut last_sent: Option<ListAndWatchResponse> = None;
            loop {
                let current = snapshot.borrow_and_update().clone();
                let held = holdings.borrow_and_update().clone();
                let (response, held) = held_list_response(&current, &resource, &held, assigner);
                if last_sent.as_ref() != Some(&response) {
                    if !held.is_empty() {
                        tracing::info!(%resource, ?held, "devices held by running pods the kubelet does not count; listed Unhealthy");
                    }
                    tracing::debug!(%resource, devices = response.devices.len(), "ListAndWatch update");
                    if sender.send(Ok(response.clone())).await.is_err() {
                        break;
                    }
                    last_sent = Some(response);
                }
                tokio::select! {
                    changed = snapshot.changed() => if changed.is_err() { break },
                    changed = holdings.changed(), if holdings_open => holdings_open = changed.is_ok(),
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
        let held = self.held_back(&resource);
        let mut container_responses = Vec::new();
        for container in request.into_inner().container_requests {
            let available: Vec<String> =
                container.available_device_i_ds.into_iter().filter(|id| !held.contains_key(id)).collect();
            let device_i_ds = preferred_allocation(
                &resource,
                &available,
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
