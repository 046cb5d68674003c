//! Volcano mode's Node annotation `baseDeviceInfos` on a simulated Atlas 800I A3 (dcmi-sim, sixteen 910_9382 dies
//! with RoCE addresses and super-device ids): the plugin reads the chips through the real DCMI calls and patches
//! the Node on a fake API server with the document of `tests/fixtures/base-device-infos-atlas-800i-a3.json`, which
//! Volcano's struct decodes, and never writes an unchanged content again.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::DeviceManager;
use ascend_deviceplugin::volcano::VolcanoConfig;
use ascend_kube::device_info::BASE_DEVICE_INFOS_ANNOTATION;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::core::v1::Node;
use serde::Deserialize;

mod support;
use support::{annotated_node, simulator};

const NODE: &str = "worker-1";

/// What Volcano's plugin decodes each entry into: mind-cluster `component/ascend-for-volcano/common/util/type.go`,
/// `NpuBaseInfo` (`DeviceID *int32` with `json:"DeviceID,omitempty"`, `IP string`, `SuperDeviceID uint32`,
/// `LevelList []RankLevel` with `json:"levelList,omitempty"`), read by `common/util/util.go`,
/// `GetNodeDevListFromAnno`, into a `map[string]NpuBaseInfo`. Unknown fields are refused here, so a misspelt key
/// fails instead of decoding to a zero value as Go would let it.
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
#[allow(non_snake_case, dead_code)]
struct VolcanoNpuBaseInfo {
    #[serde(default)]
    DeviceID: Option<i32>,
    IP: String,
    SuperDeviceID: u32,
    #[serde(default)]
    levelList: Option<Vec<serde_json::Value>>,
}

fn annotation(server: &FakeApiServer) -> Option<String> {
    server.get::<Node>(None, NODE)?.metadata.annotations?.remove(BASE_DEVICE_INFOS_ANNOTATION)
}

/// The annotation of every PATCH of the Node, in order.
fn node_patches(server: &FakeApiServer) -> Vec<String> {
    server
        .requests()
        .iter()
        .filter(|request| request.method == "PATCH" && request.path.contains("/nodes/"))
        .filter_map(|request| {
            let body = request.body.as_ref()?;
            Some(body.pointer(&format!("/metadata/annotations/{BASE_DEVICE_INFOS_ANNOTATION}"))?.as_str()?.to_owned())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_node_gets_each_chips_address_and_super_device_id() {
    let (dcmi, _library) = simulator("atlas-800i-a3");
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let mut config = VolcanoConfig::new(NODE);
    config.base_info_interval = Duration::from_millis(200);
    let (server, monitor) = annotated_node(manager, &config).await;

    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/base-device-infos-atlas-800i-a3.json");
    let expected = std::fs::read_to_string(&fixture).expect("fixture");
    let expected = expected.trim_end();
    let deadline = Instant::now() + Duration::from_secs(10);
    let written = loop {
        let written = annotation(&server);
        if written.as_deref() == Some(expected) || Instant::now() > deadline {
            break written.unwrap_or_else(|| panic!("no {BASE_DEVICE_INFOS_ANNOTATION} annotation within 10 s"));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(written, expected, "the annotation differs from {}", fixture.display());

    let decoded: BTreeMap<String, VolcanoNpuBaseInfo> =
        serde_json::from_str(&written).expect("Volcano's NpuBaseInfo decodes every entry");
    // The keys are the chip names of the device-info ConfigMap: every chip is countable as free.
    let names: BTreeSet<String> = (0..16).map(|phy| format!("Ascend910-{phy}")).collect();
    assert_eq!(decoded.keys().cloned().collect::<BTreeSet<_>>(), names);
    assert!(decoded.values().all(|entry| entry.DeviceID.is_none() && !entry.IP.is_empty()), "{decoded:?}");

    // Five re-reads of unchanged chips later, no new PATCH; no PATCH ever repeats the one before it. (The chips appear
    // one by one in the monitor's first round; the plugin waits for the set to hold still: normally one PATCH.)
    let patches = node_patches(&server);
    tokio::time::sleep(Duration::from_millis(1000)).await;
    let sent = node_patches(&server);
    eprintln!("{} PATCH of the Node", sent.len());
    assert_eq!(sent.len(), patches.len(), "unchanged content is not written again");
    assert!(sent.windows(2).all(|pair| pair[0] != pair[1]), "a PATCH repeated the one before it: {sent:#?}");
    let node: Node = server.get(None, NODE).expect("node");
    assert_eq!(node.metadata.annotations.unwrap_or_default().get("volcano.sh/other").map(String::as_str), Some("kept"));
    drop(monitor);
}
