//! The `baseDeviceInfos` Node annotation: every chip of the node by name, with its RoCE IP address and super-device
//! id, as Huawei's device plugin writes it.
//!
//! Volcano's Ascend plugin computes a node's free chips from it by default (`self-maintain-available-card: true`):
//! the chips named here, less the chips of the node's running pods, less the ConfigMap's `-Unhealthy` and
//! `-Recovering` chips (mind-cluster `component/ascend-for-volcano/common/k8s/cmmgr.go`,
//! `initNodeDeviceInfoByCmMgr`; `common/util/util.go`, `GetNodeDevListFromAnno`). A node without the annotation,
//! or with one that does not decode, has no free chip at all; a chip missing from it is never free. Names with more
//! than one `-` are vNPUs: their presence turns that computation off for the node. Ascend950 nodes also need
//! `DeviceID` on every entry (`plugin/node.go`, `buildPhyIdToDeviceIdMap`).
//!
//! The value is the Go JSON of a `map[string]*NpuBaseInfo` (mind-cluster
//! `component/ascend-device-plugin/pkg/common/proto.go`, `NpuBaseInfo`; the reader's copy is
//! `component/ascend-for-volcano/common/util/type.go`, `NpuBaseInfo`):
//!
//! ```json
//! {"Ascend910-0":{"IP":"192.168.100.10","SuperDeviceID":0},"Ascend910-1":{"IP":"192.168.100.11","SuperDeviceID":0}}
//! ```
//!
//! - keys sorted bytewise (Go's encoder sorts map keys), the chip names of the device-info ConfigMap;
//! - `DeviceID` (omitted when absent; the chip's logic id on Ascend950), `IP` (the RoCE address, `""` when the
//!   chip has none), `SuperDeviceID` (the chip's SDID in its super-pod, 0 outside one), in that order;
//! - Huawei's `levelList` (Ascend950 rank-table levels) is not written: nothing here models them.
//!
//! Huawei's plugin writes it at start in every mode (`pkg/server/manager.go`, `getNewNodeAnnotation`, through
//! `updateNode`) and then checks the chips' IP addresses every 60 s, writing again only when one changed
//! (`updateNodeAnnotations`, `doUpdateNodeAnnotations`). [`BaseInfoWriter`] writes it as a JSON merge patch of
//! this one annotation, so no other annotation of the Node is touched.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::time::Duration;

use ascend_dcmi::{ChipIds, ChipType, DeviceManager};

use k8s_openapi::api::core::v1::Node;
use kube::api::{Api, Patch, PatchParams};
use serde::{Deserialize, Serialize};
use serde_json::json;

use super::document::go_json;
use crate::client::{check_node_name, request, DEFAULT_REQUEST_TIMEOUT, DEVICE_PLUGIN_FIELD_MANAGER};
use crate::error::Result;

/// The Node annotation's key (mind-cluster `component/ascend-common/api/consts.go`, `BaseDevInfoAnno`).
pub const BASE_DEVICE_INFOS_ANNOTATION: &str = "baseDeviceInfos";

/// How often Huawei's plugin re-reads the chips' addresses (`nodeAnnotationUpdateInterval`, 60 s).
pub const BASE_INFO_CHECK_INTERVAL: Duration = Duration::from_secs(60);

/// One chip's entry. The field names are Go's: `DeviceID`, `IP`, `SuperDeviceID`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct NpuBaseInfo {
    /// `DeviceID`: the chip's logic id on Ascend950, absent elsewhere.
    #[serde(rename = "DeviceID", default, skip_serializing_if = "Option::is_none")]
    pub device_id: Option<i32>,
    /// `IP`: the address of the chip's RoCE port, empty when it has none.
    #[serde(rename = "IP", default)]
    pub ip: String,
    /// `SuperDeviceID`: the chip's SDID in its super-pod, 0 outside one.
    #[serde(rename = "SuperDeviceID", default)]
    pub super_device_id: u32,
}

impl NpuBaseInfo {
    /// Reads one chip's entry from the driver as Huawei's plugin fills it (`getDavinCiDev`, `getDcmiDeviceIP`,
    /// `getSuperPodInfo`, `getNpuBaseInfo`): the RoCE address (IPv4, else IPv6 that is not link-local; Ascend950
    /// none), the SDID where the driver reports a super-pod, the logic id as `DeviceID` on Ascend950. A reading
    /// the driver refuses leaves its field empty or 0, as there; it is logged at debug level. Blocks on the driver.
    pub fn read(manager: &dyn DeviceManager, chip: ChipIds, chip_type: ChipType) -> Self {
        let is_950 = chip_type == ChipType::Ascend950;
        let ip = match manager.roce_ip(chip.logic) {
            _ if is_950 => String::new(),
            Ok(IpAddr::V6(address)) if address.is_unicast_link_local() => String::new(),
            Ok(address) => address.to_string(),
            Err(error) => {
                tracing::debug!(logic = %chip.logic, %error, "no RoCE address for baseDeviceInfos");
                String::new()
            }
        };
        let super_device_id = match manager.super_pod_info(chip.logic) {
            Ok(info) => info.sdid,
            Err(error) => {
                tracing::debug!(logic = %chip.logic, %error, "no super-pod information for baseDeviceInfos");
                0
            }
        };
        let device_id = is_950.then(|| i32::try_from(chip.logic.get()).unwrap_or(i32::MAX));
        NpuBaseInfo { device_id, ip, super_device_id }
    }
}

/// The annotation's content: chip name (`Ascend910-0`) to its entry.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BaseDeviceInfos(pub BTreeMap<String, NpuBaseInfo>);

impl BaseDeviceInfos {
    /// The annotation's value, byte for byte as Go's `json.Marshal` writes the map.
    pub fn to_annotation(&self) -> String {
        go_json(&self.0)
    }

    /// Reads an annotation's value back (as Volcano's plugin does, unknown fields such as `levelList` ignored).
    ///
    /// # Errors
    /// The JSON error when the value is not such a map.
    pub fn parse(value: &str) -> serde_json::Result<Self> {
        serde_json::from_str(value).map(BaseDeviceInfos)
    }
}

/// Writes the annotation on one Node.
pub struct BaseInfoWriter {
    nodes: Api<Node>,
    node: String,
    timeout: Duration,
    others: BTreeMap<String, String>,
}

impl std::fmt::Debug for BaseInfoWriter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BaseInfoWriter").field("node", &self.node).finish_non_exhaustive()
    }
}

impl BaseInfoWriter {
    /// A writer for Node `node`, each request bounded by [`DEFAULT_REQUEST_TIMEOUT`].
    ///
    /// # Errors
    /// [`crate::Error::InvalidNodeName`].
    pub fn new(client: kube::Client, node: &str) -> Result<Self> {
        check_node_name(node)?;
        Ok(BaseInfoWriter {
            nodes: Api::all(client),
            node: node.to_owned(),
            timeout: DEFAULT_REQUEST_TIMEOUT,
            others: BTreeMap::new(),
        })
    }

    /// Bounds each request by `timeout` instead.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Writes these annotations too, with the same patch: the node's placement
    /// ([`super::NodePlacement::annotations`]), which Huawei's plugin writes beside `baseDeviceInfos`.
    pub fn with_annotations(mut self, annotations: BTreeMap<String, String>) -> Self {
        self.others = annotations;
        self
    }

    /// The Node's name.
    pub fn node(&self) -> &str {
        &self.node
    }

    /// Sets the annotation to `infos` with one PATCH (a JSON merge patch of this key and those of
    /// [`BaseInfoWriter::with_annotations`] alone).
    ///
    /// # Errors
    /// [`crate::Error::Api`] (a missing Node included), [`crate::Error::Transport`] or [`crate::Error::Timeout`].
    pub async fn write(&self, infos: &BaseDeviceInfos) -> Result<()> {
        let mut annotations = self.others.clone();
        annotations.insert(BASE_DEVICE_INFOS_ANNOTATION.to_owned(), infos.to_annotation());
        let patch = json!({"metadata": {"annotations": annotations}});
        let params = PatchParams { field_manager: Some(DEVICE_PLUGIN_FIELD_MANAGER.into()), ..PatchParams::default() };
        request(
            "patch",
            format!("nodes/{}", self.node),
            self.timeout,
            self.nodes.patch(&self.node, &params, &Patch::Merge(&patch)),
        )
        .await
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_written_in_gos_order_and_device_id_only_when_known() {
        let mut infos = BaseDeviceInfos::default();
        infos.0.insert("Ascend910-1".into(), NpuBaseInfo { device_id: None, ip: String::new(), super_device_id: 0 });
        infos.0.insert(
            "Ascend910-0".into(),
            NpuBaseInfo { device_id: Some(3), ip: "10.0.0.1".into(), super_device_id: 7 },
        );
        let text = infos.to_annotation();
        assert_eq!(
            text,
            r#"{"Ascend910-0":{"DeviceID":3,"IP":"10.0.0.1","SuperDeviceID":7},"Ascend910-1":{"IP":"","SuperDeviceID":0}}"#
        );
        assert_eq!(BaseDeviceInfos::parse(&text).unwrap(), infos);
    }

    #[test]
    fn a_value_that_is_not_the_map_is_refused() {
        assert!(BaseDeviceInfos::parse("[]").is_err());
        assert!(BaseDeviceInfos::parse(r#"{"Ascend910-0":{"SuperDeviceID":-1}}"#).is_err());
    }
}
