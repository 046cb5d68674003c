//! The stale-allocation check against a PodResources server on the fake host's kubelet socket.

mod smi_doctor_support;

use ascend_doctor::run;
use ascend_doctor::Status;
use ascend_node::pod_resources::api::pod_resources_lister_server::{PodResourcesLister, PodResourcesListerServer};
use ascend_node::pod_resources::api::{
    AllocatableResourcesRequest, AllocatableResourcesResponse, ContainerDevices, ContainerResources,
    GetPodResourcesRequest, GetPodResourcesResponse, ListPodResourcesRequest, ListPodResourcesResponse, PodResources,
};
use smi_doctor_support::doctor_host::DoctorHost;
use tokio_stream::wrappers::UnixListenerStream;

/// A kubelet that reports one allocation per listed pod.
struct Lister {
    pods: Vec<(&'static str, &'static str)>,
}

fn pod(namespace: &str, name: &str, device: &str) -> PodResources {
    PodResources {
        name: name.to_owned(),
        namespace: namespace.to_owned(),
        containers: vec![ContainerResources {
            name: "main".to_owned(),
            devices: vec![
                ContainerDevices {
                    resource_name: "huawei.com/Ascend910".to_owned(),
                    device_ids: vec![device.to_owned()],
                    topology: None,
                },
                ContainerDevices {
                    resource_name: "example.com/other".to_owned(),
                    device_ids: vec!["x".to_owned()],
                    topology: None,
                },
            ],
            ..ContainerResources::default()
        }],
        ..PodResources::default()
    }
}

#[tonic::async_trait]
impl PodResourcesLister for Lister {
    async fn list(
        &self,
        _request: tonic::Request<ListPodResourcesRequest>,
    ) -> Result<tonic::Response<ListPodResourcesResponse>, tonic::Status> {
        let pod_resources = self
            .pods
            .iter()
            .enumerate()
            .map(|(index, (ns, name))| pod(ns, name, &format!("Ascend910-{index}")))
            .collect();
        Ok(tonic::Response::new(ListPodResourcesResponse { pod_resources }))
    }

    async fn get_allocatable_resources(
        &self,
        _request: tonic::Request<AllocatableResourcesRequest>,
    ) -> Result<tonic::Response<AllocatableResourcesResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not needed"))
    }

    async fn get(
        &self,
        _request: tonic::Request<GetPodResourcesRequest>,
    ) -> Result<tonic::Response<GetPodResourcesResponse>, tonic::Status> {
        Err(tonic::Status::unimplemented("not needed"))
    }
}

#[test]
fn allocations_of_deleted_pods_are_found_through_pod_resources() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let socket = host.path("var/lib/kubelet/pod-resources/kubelet.sock");
    std::fs::create_dir_all(socket.parent().expect("parent")).expect("socket dir");
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().expect("runtime");
    let listener = runtime.block_on(async { tokio::net::UnixListener::bind(&socket) }).expect("bind");
    let lister = Lister { pods: vec![("default", "train-0"), ("team-a", "deleted-0")] };
    runtime.spawn(
        tonic::transport::Server::builder()
            .add_service(PodResourcesListerServer::new(lister))
            .serve_with_incoming(UnixListenerStream::new(listener)),
    );
    host.cluster_answers("ascend", 8, 8, &[("uid-live", "default", "train-0", "Running")]);

    let report = run(&host.default_options());
    let check = report.check("kubernetes.stale_allocations").expect("check");
    assert_eq!(check.status, Status::Fail, "{check:#?}");
    let evidence = check.evidence.join("\n");
    assert!(
        evidence.contains("PodResources List on /var/lib/kubelet/pod-resources/kubelet.sock: 2 NPU allocation(s)"),
        "{evidence}"
    );
    assert!(
        evidence.contains("stale: team-a/deleted-0 container main holds huawei.com/Ascend910 Ascend910-1"),
        "{evidence}"
    );
    assert!(!evidence.contains("train-0 container"), "the live pod is not stale: {evidence}");
    assert!(check.fix.as_deref().unwrap_or("").contains("restart the device plugin"));

    host.cluster_answers(
        "ascend",
        8,
        8,
        &[("a", "default", "train-0", "Running"), ("b", "team-a", "deleted-0", "Running")],
    );
    let report = run(&host.default_options());
    assert_eq!(report.check("kubernetes.stale_allocations").expect("check").status, Status::Ok);
    runtime.shutdown_background();
}
