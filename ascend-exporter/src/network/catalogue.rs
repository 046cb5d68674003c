//! The catalogue entries of the readings through `hccn_tool`: native names in base units, and Huawei's 47 names of
//! the `network`, `roce` and `optical` groups with Huawei's labels and units.
//!
//! Huawei's names, units, labels and failure values come from Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_network.go (link, speed, link-up count, bandwidth),
//! collector_for_roce.go (the `-stat` counters), collector_for_optical.go (optical modules): on an Ascend950 chip
//! every name is per UB port, with the labels `udie` and `port` after the card labels; a failed link read shows
//! `npu_chip_info_link_status` -1, any other failed read leaves its names out.

use std::time::Duration;

use ascend_hccn::{LinkState, StatCounters};

use super::group::NetworkGroup;
use super::readings::{GroupReadings, LinkReadings, OpticalReadings, PortName, PortReadings};
use super::target::huawei_reads_optical;
use crate::metric_def::{ChipView, Extract, MetricDef, MetricKind, Naming};
use crate::metric_group::SampledGroup;
use crate::sample::{LabelText, SampleSink};

use Extract::Chip;
use MetricKind::{Counter, Gauge};
use Naming::{Huawei, Native};
use NetworkGroup::{Network, Optical, Roce};

/// A network metric with its fields in declaration order.
const fn net(
    name: &'static str,
    kind: MetricKind,
    naming: Naming,
    group: NetworkGroup,
    own_labels: &'static str,
    help: &'static str,
    extract: fn(&ChipView<'_>, &mut SampleSink),
) -> MetricDef {
    MetricDef {
        name,
        kind,
        naming,
        group: Some(SampledGroup::Network(group)),
        help,
        own_labels,
        extract: Chip(extract),
    }
}

/// Bytes in hccn_tool's "MB" of `-bandwidth` (decimal, as network rates are counted).
const BYTES_PER_MEGABYTE: f64 = 1e6;

/// The labels of Ascend950's per-port series; none on a training card's single port.
const PORT_LABELS: &str = "udie, port (Ascend950)";

/// Every metric read through `hccn_tool`, native names first, then Huawei's.
pub static NETWORK_METRICS: &[MetricDef] = &[
    // ---- network group ----
    net("ascend_npu_network_link_up", Gauge, Native, Network, PORT_LABELS,
        "1 if the chip's network port (RoCE; each UB port on Ascend950) is up, 0 if down; absent when hccn_tool failed.",
        |c, s| link_ports(c, s, |r| r.link.map(|link| f64::from(u8::from(link == LinkState::Up))))),
    net("ascend_npu_network_link_speed_bytes_per_second", Gauge, Native, Network, PORT_LABELS,
        "Negotiated speed of the network port (bytes, as promtool's base-unit rule and node_exporter's network speed).",
        |c, s| link_ports(c, s, |r| r.speed_bits_per_second.map(|bits| bits / 8.0))),
    net("ascend_npu_network_link_ups", Counter, Native, Network, "",
        "How often the RoCE link came up (training cards); a rise means the link flapped.",
        |c, s| link_ports(c, s, |r| r.link_ups.map(|ups| ups as f64))),
    net("ascend_npu_network_bandwidth_bytes_per_second", Gauge, Native, Network, "direction; udie, port (Ascend950)",
        "Traffic of the network port, direction=\"transmit\" or \"receive\" (hccn_tool's MB/s taken as 10^6 bytes/s).",
        |c, s| for (port, readings) in ports(c.chip.hccn.as_deref().and_then(|n| n.network.as_ref())) {
            if let Some(rates) = readings.bandwidth {
                let bytes = |megabytes: f64| megabytes * BYTES_PER_MEGABYTE;
                push_at(s, port, &[("direction", "transmit".into())], bytes(rates.tx_megabytes_per_second));
                push_at(s, port, &[("direction", "receive".into())], bytes(rates.rx_megabytes_per_second));
            }
        }),
    // ---- roce group ----
    net("ascend_npu_mac_pause_frames", Counter, Native, Roce, "direction", "MAC pause frames.",
        |c, s| directions(c, s, "mac_rx_mac_pause_num", "mac_tx_mac_pause_num")),
    net("ascend_npu_mac_pfc_frames", Counter, Native, Roce, "direction", "MAC priority flow control frames.",
        |c, s| directions(c, s, "mac_rx_pfc_pkt_num", "mac_tx_pfc_pkt_num")),
    net("ascend_npu_mac_bad_packets", Counter, Native, Roce, "direction", "Bad packets at the MAC.",
        |c, s| directions(c, s, "mac_rx_bad_pkt_num", "mac_tx_bad_pkt_num")),
    net("ascend_npu_mac_bad_bytes", Counter, Native, Roce, "direction", "Bytes of bad packets at the MAC.",
        |c, s| directions(c, s, "mac_rx_bad_oct_num", "mac_tx_bad_oct_num")),
    net("ascend_npu_mac_fcs_errors", Counter, Native, Roce, "", "Received frames with a frame check sequence error.",
        |c, s| counter(c, s, "mac_rx_fcs_err_pkt_num")),
    net("ascend_npu_roce_packets", Counter, Native, Roce, "direction", "RoCE packets.",
        |c, s| directions(c, s, "roce_rx_all_pkt_num", "roce_tx_all_pkt_num")),
    net("ascend_npu_roce_error_packets", Counter, Native, Roce, "direction", "RoCE packets in error.",
        |c, s| directions(c, s, "roce_rx_err_pkt_num", "roce_tx_err_pkt_num")),
    net("ascend_npu_roce_cnp_packets", Counter, Native, Roce, "direction", "RoCE congestion notification packets.",
        |c, s| directions(c, s, "roce_rx_cnp_pkt_num", "roce_tx_cnp_pkt_num")),
    net("ascend_npu_roce_ecn_packets", Counter, Native, Roce, "", "Received RoCE packets marked with ECN.",
        |c, s| counter(c, s, "roce_ecn_db_num")),
    net("ascend_npu_roce_retransmissions", Counter, Native, Roce, "", "RoCE packets retransmitted.",
        |c, s| counter(c, s, "roce_new_pkt_rty_num")),
    net("ascend_npu_roce_out_of_order_packets", Counter, Native, Roce, "", "RoCE packets received out of order.",
        |c, s| counter(c, s, "roce_out_of_order_num")),
    net("ascend_npu_roce_qp_status_errors", Counter, Native, Roce, "", "RoCE queue-pair status errors.",
        |c, s| counter(c, s, "roce_qp_status_err_num")),
    net("ascend_npu_roce_unexpected_acks", Counter, Native, Roce, "", "Unexpected RoCE acknowledgements.",
        |c, s| counter(c, s, "roce_unexpected_ack_num")),
    net("ascend_npu_roce_verification_errors", Counter, Native, Roce, "", "RoCE packets that failed verification.",
        |c, s| counter(c, s, "roce_verification_err_num")),
    // ---- optical group ----
    net("ascend_npu_optical_present", Gauge, Native, Optical, "",
        "1 if an optical module sits in the RoCE port (training cards), else 0.",
        |c, s| training_optical(c, s, |o| Some(f64::from(u8::from(o.present))))),
    net("ascend_npu_optical_supply_volts", Gauge, Native, Optical, "", "Supply voltage of the optical module.",
        |c, s| training_optical(c, s, |o| o.vcc_millivolts.map(|mv| mv / 1000.0))),
    net("ascend_npu_optical_temperature_celsius", Gauge, Native, Optical, "", "Temperature of the optical module.",
        |c, s| training_optical(c, s, |o| o.temperature_celsius)),
    net("ascend_npu_optical_power_watts", Gauge, Native, Optical, "direction, lane; udie, port (Ascend950)",
        "Optical power per lane, direction=\"transmit\" or \"receive\" (Ascend950's dBm converted).",
        |c, s| for (port, optical) in optical_ports(c) {
            let (tx, rx) = lanes_in_watts(optical);
            for (direction, lanes) in [("transmit", tx), ("receive", rx)] {
                for (lane, watts) in lanes.into_iter().enumerate() {
                    if let Some(watts) = watts {
                        let labels = [("direction", direction.into()), ("lane", LabelText::Int(lane as i64))];
                        push_at(s, port, &labels, watts);
                    }
                }
            }
        }),
    net("ascend_npu_optical_modules", Gauge, Native, Optical, PORT_LABELS,
        "Optical modules the UB port's table lists (Ascend950).",
        |c, s| for (port, optical) in optical_ports(c) {
            if let OpticalReadings::Ub(info) = optical {
                push_at(s, port, &[], f64::from(info.modules));
            }
        }),
    // ======== Huawei npu-exporter compatible names (units as Huawei: MB/s, Mb/s, G, mW, mV, °C, dBm) ========
    net("npu_chip_info_bandwidth_tx", Gauge, Huawei, Network, PORT_LABELS,
        "the npu interface transport speed, unit is 'MB/s'",
        |c, s| link_ports(c, s, |r| r.bandwidth.map(|b| b.tx_megabytes_per_second))),
    net("npu_chip_info_bandwidth_rx", Gauge, Huawei, Network, PORT_LABELS,
        "the npu interface receive speed, unit is 'MB/s'",
        |c, s| link_ports(c, s, |r| r.bandwidth.map(|b| b.rx_megabytes_per_second))),
    net("npu_chip_link_speed", Gauge, Huawei, Network, "", "the npu interface receive link speed, unit is 'Mb/s'",
        |c, s| training_link(c, s, |r| r.speed_bits_per_second.map(|bits| bits / 1e6))),
    net("npu_chip_link_up_num", Gauge, Huawei, Network, "", "the npu interface receive link-up num",
        |c, s| training_link(c, s, |r| r.link_ups.map(|ups| ups as f64))),
    net("npu_chip_info_link_status", Gauge, Huawei, Network, PORT_LABELS,
        "the npu link status",
        |c, s| link_ports(c, s, |r| Some(match r.link {
            Some(LinkState::Up) => 1.0,
            Some(_) => 0.0,
            None => -1.0,
        }))),
    net("npu_chip_info_link_speed", Gauge, Huawei, Network, "udie, port", "the npu port link speed, unit is 'G'",
        |c, s| ub_link(c, s, |r| r.speed_bits_per_second.map(|bits| bits / 1e9))),
    net("npu_chip_mac_rx_pause_num", Gauge, Huawei, Roce, "", "npu interface receive mac-rx-pause-num",
        |c, s| counter(c, s, "mac_rx_mac_pause_num")),
    net("npu_chip_mac_tx_pause_num", Gauge, Huawei, Roce, "", "npu interface receive mac-tx-pause-num",
        |c, s| counter(c, s, "mac_tx_mac_pause_num")),
    net("npu_chip_mac_rx_pfc_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive mac-rx-pfc-pkt-num",
        |c, s| counter(c, s, "mac_rx_pfc_pkt_num")),
    net("npu_chip_mac_tx_pfc_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive mac-tx-pfc-pkt-num",
        |c, s| counter(c, s, "mac_tx_pfc_pkt_num")),
    net("npu_chip_mac_rx_bad_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive mac-rx-bad-pkt-num",
        |c, s| counter(c, s, "mac_rx_bad_pkt_num")),
    net("npu_chip_mac_tx_bad_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive mac-tx-bad-pkt-num",
        |c, s| counter(c, s, "mac_tx_bad_pkt_num")),
    net("npu_chip_mac_tx_bad_oct_num", Gauge, Huawei, Roce, "", "npu interface receive mac-tx-bad-oct-num",
        |c, s| counter(c, s, "mac_tx_bad_oct_num")),
    net("npu_chip_mac_rx_bad_oct_num", Gauge, Huawei, Roce, "", "npu interface receive mac-rx-bad-oct-num",
        |c, s| counter(c, s, "mac_rx_bad_oct_num")),
    net("npu_chip_info_rx_fcs_num", Gauge, Huawei, Roce, "", "the npu network fcs receive number",
        |c, s| counter(c, s, "mac_rx_fcs_err_pkt_num")),
    net("npu_chip_info_rx_ecn_num", Gauge, Huawei, Roce, "", "the npu network ecn receive number",
        |c, s| counter(c, s, "roce_ecn_db_num")),
    net("npu_chip_roce_rx_all_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-rx-all-pkt-num",
        |c, s| counter(c, s, "roce_rx_all_pkt_num")),
    net("npu_chip_roce_tx_all_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-tx-all-pkt-num",
        |c, s| counter(c, s, "roce_tx_all_pkt_num")),
    net("npu_chip_roce_rx_err_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-rx-err-pkt-num",
        |c, s| counter(c, s, "roce_rx_err_pkt_num")),
    net("npu_chip_roce_tx_err_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-tx-err-pkt-num",
        |c, s| counter(c, s, "roce_tx_err_pkt_num")),
    net("npu_chip_roce_rx_cnp_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-rx-cnp-pkt-num",
        |c, s| counter(c, s, "roce_rx_cnp_pkt_num")),
    net("npu_chip_roce_tx_cnp_pkt_num", Gauge, Huawei, Roce, "", "npu interface receive roce-tx-cnp-pkt-num",
        |c, s| counter(c, s, "roce_tx_cnp_pkt_num")),
    net("npu_chip_roce_new_pkt_rty_num", Gauge, Huawei, Roce, "", "npu interface receive roce-new-pkt-rty-num",
        |c, s| counter(c, s, "roce_new_pkt_rty_num")),
    net("npu_chip_roce_out_of_order_num", Gauge, Huawei, Roce, "", "the npu interface receive roce-out-of-order-num",
        |c, s| counter(c, s, "roce_out_of_order_num")),
    net("npu_chip_roce_qp_status_err_num", Gauge, Huawei, Roce, "", "the npu interface receive roce-qp-status-err-num",
        |c, s| counter(c, s, "roce_qp_status_err_num")),
    net("npu_chip_roce_unexpected_ack_num", Gauge, Huawei, Roce, "", "the npu interface receive roce-unexpected-ack-num",
        |c, s| counter(c, s, "roce_unexpected_ack_num")),
    net("npu_chip_roce_verification_err_num", Gauge, Huawei, Roce, "",
        "the npu interface receive roce-verification-err-num",
        |c, s| counter(c, s, "roce_verification_err_num")),
    net("npu_chip_optical_state", Gauge, Huawei, Optical, "", "the npu interface receive optical-state",
        |c, s| training_optical(c, s, |o| Some(f64::from(u8::from(o.present))))),
    net("npu_chip_optical_vcc", Gauge, Huawei, Optical, "", "the npu interface receive optical-vcc",
        |c, s| training_optical(c, s, |o| o.vcc_millivolts)),
    net("npu_chip_optical_temp", Gauge, Huawei, Optical, "", "the npu interface receive optical-temperature",
        |c, s| training_optical(c, s, |o| o.temperature_celsius)),
    net("npu_chip_optical_tx_power_0", Gauge, Huawei, Optical, "", "npu interface receive optical-tx-power-0",
        |c, s| training_optical(c, s, |o| o.tx_power_milliwatts[0])),
    net("npu_chip_optical_tx_power_1", Gauge, Huawei, Optical, "", "npu interface receive optical-tx-power-1",
        |c, s| training_optical(c, s, |o| o.tx_power_milliwatts[1])),
    net("npu_chip_optical_tx_power_2", Gauge, Huawei, Optical, "", "npu interface receive optical-tx-power-2",
        |c, s| training_optical(c, s, |o| o.tx_power_milliwatts[2])),
    net("npu_chip_optical_tx_power_3", Gauge, Huawei, Optical, "", "npu interface receive optical-tx-power-3",
        |c, s| training_optical(c, s, |o| o.tx_power_milliwatts[3])),
    net("npu_chip_optical_rx_power_0", Gauge, Huawei, Optical, "", "npu interface receive optical-rx-power-0",
        |c, s| training_optical(c, s, |o| o.rx_power_milliwatts[0])),
    net("npu_chip_optical_rx_power_1", Gauge, Huawei, Optical, "", "npu interface receive optical-rx-power-1",
        |c, s| training_optical(c, s, |o| o.rx_power_milliwatts[1])),
    net("npu_chip_optical_rx_power_2", Gauge, Huawei, Optical, "", "npu interface receive optical-rx-power-2",
        |c, s| training_optical(c, s, |o| o.rx_power_milliwatts[2])),
    net("npu_chip_optical_rx_power_3", Gauge, Huawei, Optical, "", "npu interface receive optical-rx-power-3",
        |c, s| training_optical(c, s, |o| o.rx_power_milliwatts[3])),
    net("npu_chip_info_optical_index_num", Gauge, Huawei, Optical, "udie, port",
        "the npu link optical index num on ub port",
        |c, s| ub_optical(c, s, |o| Some(f64::from(o.modules)))),
    net("npu_chip_info_optical_tx_power_0", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_tx_power_0 on ub port", |c, s| ub_optical(c, s, |o| o.tx_power_dbm[0])),
    net("npu_chip_info_optical_tx_power_1", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_tx_power_1 on ub port", |c, s| ub_optical(c, s, |o| o.tx_power_dbm[1])),
    net("npu_chip_info_optical_tx_power_2", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_tx_power_2 on ub port", |c, s| ub_optical(c, s, |o| o.tx_power_dbm[2])),
    net("npu_chip_info_optical_tx_power_3", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_tx_power_3 on ub port", |c, s| ub_optical(c, s, |o| o.tx_power_dbm[3])),
    net("npu_chip_info_optical_rx_power_0", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_rx_power_0 on ub port", |c, s| ub_optical(c, s, |o| o.rx_power_dbm[0])),
    net("npu_chip_info_optical_rx_power_1", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_rx_power_1 on ub port", |c, s| ub_optical(c, s, |o| o.rx_power_dbm[1])),
    net("npu_chip_info_optical_rx_power_2", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_rx_power_2 on ub port", |c, s| ub_optical(c, s, |o| o.rx_power_dbm[2])),
    net("npu_chip_info_optical_rx_power_3", Gauge, Huawei, Optical, "udie, port",
        "npu interface receive optical_rx_power_3 on ub port", |c, s| ub_optical(c, s, |o| o.rx_power_dbm[3])),
];

/// The HELP of Huawei's `network` names on an Ascend950 host, where each is per UB port and Huawei's exporter builds
/// them with other texts (mind-cluster `component/npu-exporter/collector/metrics/collector_for_network.go`,
/// `initNpuNetWorkDesc`).
pub const UB_PORT_HELP: [(&str, &str); 3] = [
    ("npu_chip_info_link_status", "the npu link status on ub port"),
    ("npu_chip_info_bandwidth_tx", "the npu port transport speed, unit is 'MB/s'"),
    ("npu_chip_info_bandwidth_rx", "the npu port receive speed, unit is 'MB/s'"),
];

/// Adds the network groups' values of `ascend_npu_sample_age_seconds` and `_timestamp_seconds`: `value` turns the
/// age of the last fully successful read into the sample.
pub fn push_ages(c: &ChipView<'_>, s: &mut SampleSink, value: impl Fn(Duration) -> f64) {
    let Some(network) = c.chip.hccn.as_deref() else { return };
    for group in NetworkGroup::ALL {
        if let Some(age) = network.age(group, c.now) {
            s.push_labeled([("group", group.name().into())], value(age));
        }
    }
}

/// The readings of a group's ports, with each port's name.
fn ports<T>(group: Option<&GroupReadings<T>>) -> impl Iterator<Item = (Option<PortName>, &T)> {
    group.into_iter().flat_map(|group| group.ports.iter()).map(|PortReadings { port, readings }| (*port, readings))
}

/// A value at a port's series: the sample's `labels`, then `udie` and `port` on Ascend950.
fn push_at(s: &mut SampleSink, port: Option<PortName>, labels: &[(&'static str, LabelText)], value: f64) {
    match port {
        None => s.push_labels(labels, value),
        Some(PortName { udie, port }) => {
            let mut all = labels.to_vec();
            all.extend([("udie", LabelText::Int(i64::from(udie))), ("port", LabelText::Int(i64::from(port)))]);
            s.push_labels(&all, value);
        }
    }
}

/// One value per port of the `network` group, on every chip.
fn link_ports(c: &ChipView<'_>, s: &mut SampleSink, value: fn(&LinkReadings) -> Option<f64>) {
    for (port, readings) in ports(c.chip.hccn.as_deref().and_then(|n| n.network.as_ref())) {
        if let Some(value) = value(readings) {
            push_at(s, port, &[], value);
        }
    }
}

/// One value of the `network` group on a training card (Huawei's names without a port).
fn training_link(c: &ChipView<'_>, s: &mut SampleSink, value: fn(&LinkReadings) -> Option<f64>) {
    for (port, readings) in ports(c.chip.hccn.as_deref().and_then(|n| n.network.as_ref())) {
        if let (None, Some(value)) = (port, value(readings)) {
            s.push(value);
        }
    }
}

/// One value per UB port of the `network` group (Huawei's Ascend950-only names).
fn ub_link(c: &ChipView<'_>, s: &mut SampleSink, value: fn(&LinkReadings) -> Option<f64>) {
    for (port, readings) in ports(c.chip.hccn.as_deref().and_then(|n| n.network.as_ref())) {
        if let (Some(port), Some(value)) = (port, value(readings)) {
            push_at(s, Some(port), &[], value);
        }
    }
}

/// The `-stat` counters of a training card's port, when the last read worked.
fn stat_counters<'a>(c: &'a ChipView<'_>) -> Option<&'a StatCounters> {
    ports(c.chip.hccn.as_deref().and_then(|n| n.roce.as_ref())).find_map(|(_, counters)| counters.as_ref())
}

fn counter(c: &ChipView<'_>, s: &mut SampleSink, key: &str) {
    if let Some(value) = stat_counters(c).and_then(|counters| counters.get(key)) {
        s.push(value as f64);
    }
}

fn directions(c: &ChipView<'_>, s: &mut SampleSink, receive: &str, transmit: &str) {
    let Some(counters) = stat_counters(c) else { return };
    for (direction, key) in [("receive", receive), ("transmit", transmit)] {
        if let Some(value) = counters.get(key) {
            s.push_labeled([("direction", direction.into())], value as f64);
        }
    }
}

/// The optical readings of every port whose last read worked.
fn optical_ports<'a>(c: &'a ChipView<'_>) -> impl Iterator<Item = (Option<PortName>, &'a OpticalReadings)> {
    let group = c.chip.hccn.as_deref().and_then(|n| n.optical.as_ref());
    ports(group).filter_map(|(port, optical)| optical.as_ref().map(|optical| (port, optical)))
}

fn training_optical(c: &ChipView<'_>, s: &mut SampleSink, value: fn(&ascend_hccn::OpticalInfo) -> Option<f64>) {
    for (_, optical) in optical_ports(c) {
        if let Some(value) = match optical {
            OpticalReadings::Training(info) => value(info),
            OpticalReadings::Ub(_) => None,
        } {
            s.push(value);
        }
    }
}

fn ub_optical(c: &ChipView<'_>, s: &mut SampleSink, value: fn(&ascend_hccn::UbOpticalInfo) -> Option<f64>) {
    if !huawei_reads_optical(c.chip) {
        return;
    }
    for (port, optical) in optical_ports(c) {
        if let (OpticalReadings::Ub(info), Some(port)) = (optical, port) {
            if let Some(value) = value(info) {
                push_at(s, Some(port), &[], value);
            }
        }
    }
}

/// Transmit and receive power per lane in watts, from mW (training cards) or dBm (Ascend950).
fn lanes_in_watts(optical: &OpticalReadings) -> ([Option<f64>; 4], [Option<f64>; 4]) {
    let milliwatts = |lanes: [Option<f64>; 4]| lanes.map(|mw| mw.map(|mw| mw / 1000.0));
    let dbm = |lanes: [Option<f64>; 4]| lanes.map(|dbm| dbm.map(|dbm| 10f64.powf(dbm / 10.0) / 1000.0));
    match optical {
        OpticalReadings::Training(info) => (milliwatts(info.tx_power_milliwatts), milliwatts(info.rx_power_milliwatts)),
        OpticalReadings::Ub(info) => (dbm(info.tx_power_dbm), dbm(info.rx_power_dbm)),
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::network::readings::ChipNetwork;

    #[test]
    fn huawei_names_are_the_47_of_the_three_groups() {
        let huawei = NETWORK_METRICS.iter().filter(|m| m.naming == Huawei);
        let counts = NetworkGroup::ALL
            .map(|group| huawei.clone().filter(|m| m.group == Some(SampledGroup::Network(group))).count());
        assert_eq!(counts, [6, 21, 20], "network, roce, optical as in Huawei's exporter");
    }

    #[test]
    fn decibel_milliwatts_become_watts() {
        let info =
            ascend_hccn::UbOpticalInfo { modules: 1, tx_power_dbm: [Some(0.0); 4], rx_power_dbm: [Some(-10.0); 4] };
        let (tx, rx) = lanes_in_watts(&OpticalReadings::Ub(info));
        assert_eq!(tx[0], Some(0.001));
        assert!((rx[3].expect("lane") - 0.0001).abs() < 1e-12);
    }

    #[test]
    fn the_age_of_a_group_comes_from_its_last_success() {
        let now = Instant::now();
        let network = ChipNetwork {
            roce: Some(GroupReadings { ports: Vec::new(), read_at: now, last_success: None }),
            ..ChipNetwork::default()
        };
        assert_eq!(network.age(NetworkGroup::Roce, now), None);
        assert!(network.was_read(NetworkGroup::Roce) && !network.was_read(NetworkGroup::Optical));
    }
}
