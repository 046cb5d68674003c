//! The labels that identify a chip's (or a container's) series, in both naming schemes.

use ascend_dcmi::{PcieAddress, PhyId, Vnpu, VnpuId};
use prometheus_client::encoding::{EncodeLabel, EncodeLabelKey, EncodeLabelSet, LabelKeyEncoder, LabelSetEncoder};

use crate::pod_attribution::ContainerRef;
use crate::sample::LabelText;
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

/// A series' labels in exposition text, made once per render: every sample of the series then writes them as one
/// string instead of label by label.
///
/// Encoding each label of each sample through prometheus-client (key, `="`, the value scanned for escapes, `"`) was
/// over a third of a scrape's CPU (`perf record` of a scrape rendered anew on `atlas-800t-a2` in Huawei naming, 955
/// series of seven chip labels: docs/performance.md section 11). The text is `k1="v1",…,kN` with the values
/// escaped as the text formats escape them (`\\`, `\"`, `\n`); the last value is left to the encoder, so the label set
/// goes out as one label whose key is the text: what the encoder writes is byte for byte what it wrote label by
/// label (both text formats write a key as given; `tests::one_text_writes_what_the_labels_wrote` compares them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeriesText {
    /// Every label but the last value, ending with the last key; empty for a series without labels.
    head: String,
    /// The last label's value, unescaped.
    last: String,
}

impl SeriesText {
    /// The text of `labels`.
    pub fn new(labels: &[(&'static str, String)]) -> Self {
        let Some(((last_key, last), rest)) = labels.split_last() else { return Self::default() };
        let mut head = String::with_capacity(rest.iter().map(|(key, value)| key.len() + value.len() + 4).sum());
        for (key, value) in rest {
            head.push_str(key);
            head.push_str("=\"");
            escape_into(&mut head, value);
            head.push_str("\",");
        }
        head.push_str(last_key);
        Self { head, last: last.clone() }
    }
}

/// `value` escaped as a label value of the text formats.
fn escape_into(out: &mut String, value: &str) {
    for c in value.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Text written where a label key goes: a [`SeriesText`]'s head.
struct KeyText<'a>(&'a str);

impl EncodeLabelKey for KeyText<'_> {
    fn encode(&self, encoder: &mut LabelKeyEncoder<'_>) -> Result<(), std::fmt::Error> {
        std::fmt::Write::write_str(encoder, self.0)
    }
}

/// Series labels followed by a sample's own labels, encoded as one label set.
#[derive(Debug)]
pub struct LabelsWith<'a> {
    /// The series' labels.
    pub series: &'a SeriesText,
    /// The sample's labels.
    pub own: &'a [(&'static str, LabelText)],
}

impl EncodeLabelSet for LabelsWith<'_> {
    fn encode(&self, encoder: &mut LabelSetEncoder<'_>) -> Result<(), std::fmt::Error> {
        if !self.series.head.is_empty() {
            (KeyText(&self.series.head), self.series.last.as_str()).encode(encoder.encode_label())?;
        }
        for (key, value) in self.own {
            (*key, value).encode(encoder.encode_label())?;
        }
        Ok(())
    }
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

    use prometheus_client::collector::Collector;
    use prometheus_client::encoding::DescriptorEncoder;
    use prometheus_client::metrics::MetricType;

    /// One gauge sample labelled through [`LabelsWith`].
    #[derive(Debug)]
    struct AsText(SeriesText, Vec<(&'static str, LabelText)>);

    /// The same labelled one label at a time.
    #[derive(Debug)]
    struct ByLabel(Vec<(&'static str, String)>, Vec<(&'static str, LabelText)>);

    impl Collector for AsText {
        fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
            let mut metric = encoder.encode_descriptor("m", "h", None, MetricType::Gauge)?;
            metric.encode_family(&LabelsWith { series: &self.0, own: &self.1 })?.encode_gauge(&1i64)
        }
    }

    impl Collector for ByLabel {
        fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> Result<(), std::fmt::Error> {
            let mut metric = encoder.encode_descriptor("m", "h", None, MetricType::Gauge)?;
            let labels: Vec<(&str, LabelText)> = self
                .0
                .iter()
                .map(|(key, value)| (*key, LabelText::Owned(value.clone())))
                .chain(self.1.iter().cloned())
                .collect();
            metric.encode_family(&labels)?.encode_gauge(&1i64)
        }
    }

    fn rendered(collector: Box<dyn Collector>, openmetrics: bool) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(collector);
        let mut text = String::new();
        if openmetrics {
            prometheus_client::encoding::text::encode(&mut text, &registry).expect("renders");
        } else {
            prometheus_client::encoding::prometheus_text::encode(&mut text, &registry).expect("renders");
        }
        text
    }

    #[test]
    fn one_text_writes_what_the_labels_wrote() {
        let odd = "a \"quoted\" back\\slash\nnew line, ünïcode";
        let series: SeriesLabels = vec![("id", "3".into()), ("model_name", odd.into()), ("pod_name", String::new())];
        let own = vec![("udie", LabelText::Int(1)), ("direction", "receive".into())];
        let last_odd: SeriesLabels = vec![("id", "3".into()), ("name", odd.into())];
        for openmetrics in [true, false] {
            for series in [&series, &last_odd, &Vec::new()] {
                for own in [&own, &Vec::new()] {
                    let as_text = rendered(Box::new(AsText(SeriesText::new(series), own.clone())), openmetrics);
                    let by_label = rendered(Box::new(ByLabel(series.clone(), own.clone())), openmetrics);
                    assert_eq!(as_text, by_label);
                    assert!(series.is_empty() || as_text.contains("id=\"3\""), "{as_text}");
                }
            }
        }
    }

    #[test]
    fn the_npu_name_metric_has_name_where_the_others_have_model_name() {
        let labels = vec![("id", "0".to_owned()), ("model_name", "910B3".to_owned()), ("vdie_id", String::new())];
        let keys: Vec<&str> = huawei_npu_name_labels(&labels).iter().map(|(key, _)| *key).collect();
        assert_eq!(keys, ["id", "name", "vdie_id"]);
    }
}
