//! Volcano mode's super-pod placement on a simulated Atlas 950 SuperPoD server (dcmi-sim `atlas-950-8`: super-pod
//! 1, server 1, rack 1 of a 1D super-pod): read from the driver as Huawei's plugin reads it and written beside
//! `baseDeviceInfos` as the Node annotations `superPodID`, `serverIndex`, `serverType` and `rackID` (mind-cluster
//! `component/ascend-device-plugin/pkg/server/manager.go`, `getNewNodeAnnotation`), which Volcano's Ascend plugin
//! reads on Ascend950 (`component/ascend-for-volcano/plugin/node.go`, `initNPUNodeByNodeInf`); and the HCCL
//! topology file of the same super-pod type (`pkg/server/plugin_v2.go`, `setHcclTopoFilePathEnv`).

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::DeviceManager;
use ascend_deviceplugin::volcano::VolcanoConfig;
use ascend_kube::device_info::{NodePlacement, Placement, BASE_DEVICE_INFOS_ANNOTATION};
use k8s_openapi::api::core::v1::Node;

mod support;
use support::{annotated_node, simulator};

const NODE: &str = "worker-1";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_ascend950_node_is_annotated_with_its_super_pod_placement() {
    let (dcmi, _library) = simulator("atlas-950-8");
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let placement = NodePlacement::read(manager.as_ref());
    assert_eq!(placement.placement, Placement { super_pod_id: 1, server_index: 1, rack_id: Some(1) });
    // The same super-pod type (1D) names the driver's HCCL topology file Allocate hands out in every mode.
    assert_eq!(
        ascend_deviceplugin::hccl_topo_file(manager.as_ref()).as_deref(),
        Some("/usr/local/Ascend/driver/topo/950/atlas_950_1.json")
    );

    let mut config = VolcanoConfig::new(NODE);
    config.placement = Some(placement);
    let (server, monitor) = annotated_node(manager, &config).await;

    let deadline = Instant::now() + Duration::from_secs(10);
    let annotations = loop {
        let annotations = server.get::<Node>(None, NODE).and_then(|node| node.metadata.annotations).unwrap_or_default();
        if annotations.contains_key(BASE_DEVICE_INFOS_ANNOTATION) || Instant::now() > deadline {
            break annotations;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let get = |key: &str| annotations.get(key).map(String::as_str);
    assert!(get(BASE_DEVICE_INFOS_ANNOTATION).is_some(), "no annotations within 10 s: {annotations:?}");
    assert_eq!(get("superPodID"), Some("1"));
    assert_eq!(get("serverIndex"), Some("1"));
    assert_eq!(get("serverType"), Some("npu"));
    assert_eq!(get("rackID"), Some("1"));
    assert_eq!(get("volcano.sh/other"), Some("kept"));
    drop(monitor);
}
