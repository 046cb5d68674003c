//! The labels that identify a chip's (or a container's) series, in both naming schemes.

use ascend_dcmi::{PcieAddress, PhyId, Vnpu, VnpuId};

use crate::pod_attribution::ContainerRef;
use crate::snapshot::ChipSnapshot;

/// Pod label value of a chip that several containers hold (vNPUs, time sharing), in native naming.
pub const MULTIPLE_HOLDERS: &str = "multiple";

/// The same in Huawei naming, as the vendor exporter writes it.
pub const HUAWEI_MULTIPLE_HOLDERS: &str = "not_displayed_for_multi_pod";

/// Label pairs shared by every sample of one chip or container.
pub type SeriesLabels = Vec<(&'static str, String)>;

/// `namespace`, `pod`, `container` of a chip's holders: empty if none, the sentinel if several.
fn holder_values(holders: &[ContainerRef], multiple: &str) -> [String; 3] {
    match holders {
        [] => Default::default(),
        [only] => [only.namespace.clone(), only.pod.clone(), only.container.clone()],
        _ => [multiple.to_owned(), multiple.to_owned(), multiple.to_owned()],
    }
}

/// Native chip labels: `chip` (the physical id), `namespace`, `pod`, `container`.
pub fn native_chip_labels(phy: PhyId, holders: &[ContainerRef]) -> SeriesLabels {
    let [namespace, pod, container] = holder_values(holders, MULTIPLE_HOLDERS);
    vec![("chip", phy.to_string()), ("namespace", namespace), ("pod", pod), ("container", container)]
}

/// Huawei chip labels: `id`, `model_name`, `vdie_id`, `pcie_bus_info`, `namespace`, `pod_name`, `container_name`.
/// The PCIe address is in upper-case hex, as Huawei's exporter formats it (mind-cluster
/// `component/ascend-common/devmanager/dcmi/dcmi.go`, `DcGetPCIeBusInfo`: `%04X:%02X:%02X.%X`).
pub fn huawei_chip_labels(chip: &ChipSnapshot, holders: &[ContainerRef]) -> SeriesLabels {
    let [namespace, pod, container] = holder_values(holders, HUAWEI_MULTIPLE_HOLDERS);
    let identity = chip.identity.as_ref();
    vec![
        ("id", chip.ids.phy.to_string()),
        ("model_name", identity.map(|i| i.info.model_name()).unwrap_or_default()),
        ("vdie_id", identity.and_then(|i| i.die_id).map(|d| d.to_string()).unwrap_or_default()),
        ("pcie_bus_info", identity.and_then(|i| i.pcie_address).map(huawei_pcie_bus_info).unwrap_or_default()),
        ("namespace", namespace),
        ("pod_name", pod),
        ("container_name", container),
    ]
}

/// A PCIe address as Huawei's `pcie_bus_info` spells it: `DDDD:BB:DD.F` in upper-case hex (`0000:3B:00.0`).
pub fn huawei_pcie_bus_info(address: PcieAddress) -> String {
    format!("{:04X}:{:02X}:{:02X}.{:X}", address.domain, address.bus, address.device, address.function)
}

/// The Huawei metric whose series labels are [`huawei_npu_name_labels`].
pub const HUAWEI_NPU_NAME: &str = "npu_chip_info_name";

/// The Huawei chip labels of `npu_chip_info_name`, whose `name` label stands where the others have `model_name`
/// (mind-cluster `component/npu-exporter/collector/metrics/collector_for_npu.go`, `init`: `cardLabelForNpuName[1] =
/// "name"`).
pub fn huawei_npu_name_labels(labels: &SeriesLabels) -> SeriesLabels {
    labels.iter().map(|(key, value)| (if *key == "model_name" { "name" } else { key }, value.clone())).collect()
}

/// Native vNPU labels: `chip` (the physical id of the chip it is carved from), `vnpu`, `namespace`, `pod`,
/// `container`.
pub fn native_vnpu_labels(phy: PhyId, vnpu: VnpuId, holders: &[ContainerRef]) -> SeriesLabels {
    let [namespace, pod, container] = holder_values(holders, MULTIPLE_HOLDERS);
    vec![
        ("chip", phy.to_string()),
        ("vnpu", vnpu.to_string()),
        ("namespace", namespace),
        ("pod", pod),
        ("container", container),
    ]
}

/// Huawei's vNPU labels (`getPodDisplayInfo` in Ascend/mind-cluster
/// component/npu-exporter/collector/metrics/collector_for_vnpu.go): `id`, `model_name`, `v_dev_id`, `aicore_count`
/// (two decimals), `namespace`, `pod_name`, `container_name`, `is_virtual`.
pub fn huawei_vnpu_labels(chip: &ChipSnapshot, vnpu: &Vnpu, holder: &ContainerRef) -> SeriesLabels {
    let model_name = chip.identity.as_ref().map(|identity| identity.info.model_name()).unwrap_or_default();
    vec![
        ("id", chip.ids.phy.to_string()),
        ("model_name", model_name),
        ("v_dev_id", vnpu.id.to_string()),
        ("aicore_count", format!("{:.2}", vnpu.aicore)),
        ("namespace", holder.namespace.clone()),
        ("pod_name", holder.pod.clone()),
        ("container_name", holder.container.clone()),
        ("is_virtual", "true".to_owned()),
    ]
}

/// Labels of a container's own series: `namespace`, `pod`, `container`.
pub fn container_labels(container: &ContainerRef) -> SeriesLabels {
    vec![
        ("namespace", container.namespace.clone()),
        ("pod", container.pod.clone()),
        ("container", container.container.clone()),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    fn holder(pod: &str) -> ContainerRef {
        ContainerRef { namespace: "ns".into(), pod: pod.into(), container: "c".into() }
    }

    #[test]
    fn holders_become_labels() {
        let none = native_chip_labels(PhyId(4), &[]);
        assert_eq!(none[0], ("chip", "4".to_owned()));
        assert_eq!(none[2], ("pod", String::new()));
        let one = native_chip_labels(PhyId(4), &[holder("p")]);
        assert_eq!(one[1..], [("namespace", "ns".into()), ("pod", "p".into()), ("container", "c".into())]);
        let two = native_chip_labels(PhyId(4), &[holder("p"), holder("q")]);
        assert_eq!(two[2], ("pod", MULTIPLE_HOLDERS.to_owned()));
    }

    #[test]
    fn huawei_writes_the_pcie_address_in_upper_case() {
        let address = PcieAddress { domain: 0, bus: 0x3b, device: 0x1f, function: 1 };
        assert_eq!(huawei_pcie_bus_info(address), "0000:3B:1F.1");
        assert_eq!(address.to_string(), "0000:3b:1f.1", "the native spelling stays Linux's");
    }

    #[test]
    fn the_npu_name_metric_has_name_where_the_others_have_model_name() {
        let labels = vec![("id", "0".to_owned()), ("model_name", "910B3".to_owned()), ("vdie_id", String::new())];
        let keys: Vec<&str> = huawei_npu_name_labels(&labels).iter().map(|(key, _)| *key).collect();
        assert_eq!(keys, ["id", "name", "vdie_id"]);
    }
}
