//! The device-info contract between an Ascend device plugin and Volcano's Ascend scheduling plugin (mind-cluster's
//! `ascend-for-volcano`): the per-node ConfigMap `kube-system/mindx-dl-deviceinfo-<node>`, labelled
//! `mx-consumer-cim: "true"`, whose `DeviceInfoCfg` key holds the node's chips by state.
//!
//! The scheduler picks chips itself from this map, so the JSON must be exactly what it decodes, and it is written
//! here as Huawei's Go device plugin writes it (`json.Marshal` of its `NodeDeviceInfoCache`):
//!
//! ```json
//! {"DeviceInfo":{"DeviceList":{"huawei.com/Ascend910":"Ascend910-0,Ascend910-1", ...},"UpdateTime":1764561600},
//!  "SuperPodID":-1,"ServerIndex":-1,"CheckCode":"<sha256 hex>"}
//! ```
//!
//! - Struct fields in Go's declaration order, map keys sorted bytewise, and strings escaped as Go's encoder does
//!   (`<`, `>`, `&`, U+2028 and U+2029 as `\uXXXX`): [`go_json`].
//! - `CheckCode` is the lower-case hex SHA-256 of the Go JSON of `DeviceInfo` alone ([`check_code`]). Current
//!   Volcano plugins ignore it, older ones (`checkNodeDeviceInfo`) reject a map whose code does not match.
//! - `DeviceList` per chip family ([`KeySet`]): the free healthy chips under the resource name itself, then the
//!   `-Unhealthy`, `-NetworkUnhealthy`, `-Recovering` and `-Fault` keys; chip names sorted as strings and joined by
//!   commas; `-Fault` is itself the JSON of a list of [`DeviceFault`].
//! - `SuperPodID` and `ServerIndex` are `-1` outside a super-pod; `RackID` is written only when known.
//!
//! Sources (Ascend/mind-cluster, 2026-08): the writer in `component/ascend-device-plugin/pkg/common/proto.go`
//! (`NodeDeviceInfoCache`, `NodeDeviceInfo`, `DeviceFault`, `FaultTimeAndLevel`), `pkg/kubeclient/client_server.go`
//! (`WriteDeviceInfoDataIntoCM`: name, namespace, label, data keys), `pkg/common/common.go` (`MakeDataHash`),
//! `pkg/device/ascend910.go` (`updateDeviceInfo`: the 910 keys) and `pkg/device/ascendcommon.go`
//! (`getDeviceFaults`: the fault entries); the reader in `component/ascend-for-volcano/common/k8s/type.go`
//! (`NodeDeviceInfoWithDevPlugin`) and `common/k8s/cmmgr.go` (`createOrUpdateDeviceInfo`), with the label and key
//! names of `ascend-for-volcano/common/util` (`NormalCmConsumer`, `DevInfoCMKey`).
//!
//! [`DeviceInfoPublisher`] writes the ConfigMap at the pace Volcano expects ([`PublisherConfig`],
//! [`DEFAULT_REFRESH_INTERVAL`]) and reads back the chips an operator separated by hand.
//!
//! The same scheduler also reads the Node annotation `baseDeviceInfos` (every chip of the node with its IP address
//! and super-device id), from which it computes the free chips: [`BASE_DEVICE_INFOS_ANNOTATION`],
//! [`BaseDeviceInfos`] and its writer [`BaseInfoWriter`], documented in their module. The node's super-pod
//! placement, which the ConfigMap and the Node annotations `superPodID`, `serverIndex`, `serverType` and `rackID`
//! carry, is read by [`NodePlacement`].

mod base_device_infos;
mod document;
mod placement;
mod publisher;

pub use base_device_infos::{
    BaseDeviceInfos, BaseInfoWriter, NpuBaseInfo, BASE_DEVICE_INFOS_ANNOTATION, BASE_INFO_CHECK_INTERVAL,
};
pub use document::{
    check_code, config_map_name, device_info_cfg, go_json, parse_device_info_cfg, parse_manually_separated,
    DeviceFault, DeviceInfoDocument, DeviceList, FamilyDevices, FaultTimeAndLevel, KeySet, Placement,
    CARD_NETWORK_UNHEALTHY, CARD_UNHEALTHY, CONSUMER_LABEL, CONSUMER_LABEL_VALUE, DEVICE_INFO_KEY,
    DEVICE_INFO_NAMESPACE, DEVICE_INFO_NAME_PREFIX, FAULT_SUFFIX, MANUALLY_SEPARATE_NPU_KEY, NETWORK_UNHEALTHY_SUFFIX,
    NOT_IN_SUPER_POD, RECOVERING_SUFFIX, UNHEALTHY_SUFFIX,
};
pub use placement::{
    NodePlacement, PLACEMENT_UNREADABLE, RACK_ID_ANNOTATION, SERVER_INDEX_ANNOTATION, SERVER_TYPE_ANNOTATION,
    SUPER_POD_ID_ANNOTATION,
};
pub use publisher::{
    next_update_time, DeviceInfoPublisher, Published, PublisherConfig, DEFAULT_REFRESH_INTERVAL,
    VOLCANO_DEVICE_INFO_REFRESH_TIME,
};
