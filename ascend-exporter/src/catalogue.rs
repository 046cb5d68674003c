//! Every metric the exporter can serve: name, type, help, group, and how to read it from a snapshot.
//!
//! One table drives rendering, the selection file's validation and the metric table in the docs, so the three cannot
//! drift apart. Native names follow Prometheus conventions (base units, `_total` counters, `_info` metadata);
//! [`Naming::Huawei`] entries reproduce the vendor exporter's `npu_chip_info_*` names, units and labels for existing
//! dashboards.
//!
//! Each [`MetricDef`] says how its samples are read ([`Extract`]): a function over a view of one chip, container,
//! vNPU or the machine that pushes values with their own labels into a [`SampleSink`]; the renderer adds the series
//! labels of the chosen naming.

use std::sync::LazyLock;

use ascend_dcmi::{
    BandwidthStats, ChipType, EccComponent, EccCounters, FrequencyKind, HccsBandwidth, HccsStatistics, PcieBandwidth,
    Power, UbPortCounters, UtilizationKind, BYTES_PER_MB, UBOE_COUNTERS_FROM, UB_COUNTERS, UB_COUNTER_NAMES,
};

pub use crate::metric_def::{
    ChipView, ContainerView, Extract, InfoLabels, MachineView, MetricDef, MetricKind, Naming, VnpuView,
};
pub use crate::metric_group::SampledGroup;
pub use crate::sample::{LabelText, Sample, SampleSink, MAX_SAMPLE_LABELS};

use crate::metric_group::MetricGroup;
use crate::snapshot::ChipSnapshot;

/// A metric of the driver's groups with its fields in declaration order; keeps the table below readable.
const fn def(
    name: &'static str,
    kind: MetricKind,
    naming: Naming,
    group: Option<MetricGroup>,
    own_labels: &'static str,
    help: &'static str,
    extract: Extract,
) -> MetricDef {
    let group = match group {
        Some(group) => Some(SampledGroup::Driver(group)),
        None => None,
    };
    MetricDef { name, kind, naming, group, help, own_labels, extract }
}

use Extract::{Chip, ChipInfo, Container, Machine, Vnpu};
use MetricGroup as G;
use MetricKind::{Counter, Gauge, Info};
use Naming::{Huawei, Native};

/// One of Huawei's per-link HCCS statistic names: `field` of link `link` (Huawei names a metric per link).
macro_rules! hccs_statistic {
    ($name:literal, $help:literal, $field:ident, $link:literal) => {
        def(
            $name,
            Gauge,
            Huawei,
            Some(G::Links),
            "",
            $help,
            Chip(|c, s| huawei_hccs_statistic(c, s, $link, |h| h.$field[$link])),
        )
    };
}

/// One of Huawei's per-link HCCS bandwidth names: `field` of link `link`, -1 when the read failed.
macro_rules! hccs_link_bandwidth {
    ($name:literal, $help:literal, $field:ident, $link:literal) => {
        def(
            $name,
            Gauge,
            Huawei,
            Some(G::Bandwidth),
            "",
            $help,
            Chip(|c, s| huawei_hccs_bandwidth(c, s, Some($link), |b| b.$field[$link])),
        )
    };
}

/// One of Huawei's PCIe bandwidth names: `field` as its average, minimum and maximum.
macro_rules! pcie_bandwidth {
    ($name:literal, $help:literal, $field:ident) => {
        def(
            $name,
            Gauge,
            Huawei,
            Some(G::Bandwidth),
            "pcie_bw_type",
            $help,
            Chip(|c, s| huawei_pcie_bandwidth(c, s, |p| p.$field)),
        )
    };
}

/// One of Huawei's UB port counter names: counter `index` of [`UB_COUNTER_NAMES`] per `udie` and `port`.
macro_rules! ub_counter {
    ($name:literal, $help:literal, $index:literal) => {
        def($name, Gauge, Huawei, Some(G::Links), "udie, port", $help, Chip(|c, s| huawei_ub_counter(c, s, $index)))
    };
}

/// Every metric: the driver's (native names first, then the Huawei-compatible ones), then the network's (read
/// through `hccn_tool`, [`crate::network`]).
pub static CATALOGUE: LazyLock<Vec<MetricDef>> =
    LazyLock::new(|| DRIVER_METRICS.iter().chain(crate::network::catalogue::NETWORK_METRICS).copied().collect());

/// The metrics read through DCMI, native names first, then the Huawei-compatible ones.
static DRIVER_METRICS: &[MetricDef] = &[
    // ---- exporter and machine ----
    def("ascend_npu_exporter_build", Info, Native, None, "version", "Build of the running npu-exporter.",
        Machine(|m, s| s.push_labeled([("version", m.exporter_version.into())], 1.0))),
    def("ascend_npu_chips", Gauge, Native, None, "", "Chips the driver enumerates.",
        Machine(|m, s| s.push(m.snapshot.map_or(0, |snap| snap.chips.len()) as f64))),
    def("ascend_npu_cards", Gauge, Native, Some(G::Identity), "",
        "Cards the driver lists (dcmi_get_card_list; a card holds one or two chips); absent on Ascend310 and Ascend950.",
        Machine(|m, s| if let Some(cards) = card_count(m) { s.push(cards as f64) })),
    def("ascend_npu_chips_health_unknown", Gauge, Native, Some(G::ChipState), "",
        "Chips whose health could not be read (the call failed or has not answered yet).",
        Machine(|m, s| s.push(count_health_unknown(m)))),
    def("ascend_npu_driver", Info, Native, None, "version", "The driver (DCMI) version, empty if it could not be read.",
        Machine(|m, s| s.push_labeled([("version", driver_version(m).into())], 1.0))),
    def("ascend_npu_pod_resources_up", Gauge, Native, None, "",
        "1 if the last kubelet PodResources List call succeeded, else 0 (pod labels may be out of date).",
        Machine(|m, s| s.push_bool(m.pod_resources_reachable))),
    // ---- staleness ----
    def("ascend_npu_up", Gauge, Native, None, "",
        "1 if the chip answered the last read of every group in time, 0 if a read timed out or failed (its values are kept from the last success).",
        Chip(|c, s| s.push_bool(c.chip.is_up()))),
    def("ascend_npu_sample_age_seconds", Gauge, Native, None, "group",
        "Age of the chip's values per sampling group at scrape time.",
        Chip(|c, s| {
            for group in MetricGroup::ALL {
                if let Some(age) = c.chip.freshness(group).age(c.now) {
                    s.push_labeled([("group", group.name().into())], age.as_secs_f64());
                }
            }
            crate::network::catalogue::push_ages(c, s, |age| age.as_secs_f64());
        })),
    def("ascend_npu_sample_timestamp_seconds", Gauge, Native, None, "group",
        "Unix time of the chip's last successful read per sampling group; exact however long a body is cached (its age is time() minus this).",
        Chip(|c, s| {
            for group in MetricGroup::ALL {
                if let Some(age) = c.chip.freshness(group).age(c.now) {
                    s.push_labeled([("group", group.name().into())], sample_timestamp(c.unix_now, age));
                }
            }
            crate::network::catalogue::push_ages(c, s, |age| sample_timestamp(c.unix_now, age));
        })),
    // ---- identity ----
    def("ascend_npu_chip", Info, Native, Some(G::Identity),
        "logic_id, card, device, chip_type, chip_name, chip_version, model_name, serial_number, die_id, pcie_bus_info, driver_version, product_type",
        "Chip identity; constant 1.", ChipInfo(chip_info)),
    // ---- state ----
    def("ascend_npu_healthy", Gauge, Native, Some(G::ChipState), "",
        "1 if the chip is healthy (DCMI health ok or a fault level that keeps it schedulable), else 0.",
        Chip(|c, s| if let Some(h) = &c.chip.health { s.push_bool(h.is_healthy()) })),
    def("ascend_npu_fault_level", Gauge, Native, Some(G::ChipState), "level",
        "Severity rank of the chip's worst active fault: 0 NormalNPU, 1 NotHandleFault, 2 SubHealthFault, 3 RestartRequest, 4 RestartBusiness, 5 FreeRestartNPU, 6 RestartNPU, 7 PreSeparateNPU, 8 SeparateNPU, 9 ManuallySeparateNPU.",
        Chip(|c, s| if let Some(h) = &c.chip.health {
            s.push_labeled([("level", h.level.name().into())], f64::from(h.level.severity_rank()));
        })),
    def("ascend_npu_fault_codes", Gauge, Native, Some(G::ChipState), "", "Active fault codes on the chip.",
        Chip(|c, s| if let Some(h) = &c.chip.health { s.push(h.faults.len() as f64) })),
    def("ascend_npu_card_dropped", Gauge, Native, Some(G::ChipState), "",
        "1 if the chip's card dropped off the bus, else 0.",
        Chip(|c, s| if let Some(h) = &c.chip.health { s.push_bool(h.card_dropped) })),
    def("ascend_npu_temperature_celsius", Gauge, Native, Some(G::ChipState), "", "Chip temperature.",
        Chip(|c, s| if let Some(t) = c.chip.temperature { s.push(f64::from(t.0)) })),
    def("ascend_npu_power_watts", Gauge, Native, Some(G::ChipState), "scope",
        "Power draw; scope=\"chip\" for the chip, scope=\"card\" where only the whole card is measured (310P).",
        Chip(|c, s| match c.chip.power {
            Some(Power::Chip(w)) => s.push_labeled([("scope", "chip".into())], w.0),
            Some(Power::Card(w)) => s.push_labeled([("scope", "card".into())], w.0),
            None => {}
        })),
    def("ascend_npu_voltage_volts", Gauge, Native, Some(G::ChipState), "", "Chip voltage.",
        Chip(|c, s| if let Some(v) = c.chip.voltage { s.push(v.0) })),
    def("ascend_npu_clock_hertz", Gauge, Native, Some(G::ChipState), "clock",
        "Clock frequency per clock (aicore, aicore_max, vector_core, ctrl_cpu, ddr, hbm).",
        Chip(|c, s| for (kind, mhz) in &c.chip.clocks {
            s.push_labeled([("clock", kind.name().into())], mhz.hertz() as f64);
        })),
    def("ascend_npu_processes", Gauge, Native, Some(G::Memory), "", "Host processes using the chip.",
        Chip(|c, s| if let Some(p) = &c.chip.processes { s.push(p.len() as f64) })),
    def("ascend_npu_process_memory_bytes", Gauge, Native, Some(G::Memory), "pid",
        "Device memory held by each process using the chip.",
        Chip(|c, s| if let Some(p) = &c.chip.processes {
            for process in p.as_slice() {
                s.push_labeled([("pid", LabelText::Int(i64::from(process.pid)))], process.memory_bytes as f64);
            }
        })),
    // ---- utilisation ----
    def("ascend_npu_utilization_ratio", Gauge, Native, Some(G::Utilization), "unit",
        "Utilisation 0..1 per unit (aicore, vector_core, aicube, overall, aicpu, ctrl_cpu, memory, memory_bandwidth, hbm, hbm_bandwidth, ddr).",
        Chip(|c, s| for (kind, percent) in &c.chip.utilization {
            s.push_labeled([("unit", kind.name().into())], percent.ratio());
        })),
    // ---- memory ----
    def("ascend_npu_memory_total_bytes", Gauge, Native, Some(G::Memory), "memory", "Memory size, memory=\"hbm\" or \"ddr\".",
        Chip(|c, s| {
            if let Some(hbm) = &c.chip.hbm { s.push_labeled([("memory", "hbm".into())], hbm.total_bytes as f64) }
            if let Some(ddr) = &c.chip.ddr { s.push_labeled([("memory", "ddr".into())], ddr.total_bytes as f64) }
        })),
    def("ascend_npu_memory_used_bytes", Gauge, Native, Some(G::Memory), "memory", "Memory in use, memory=\"hbm\" or \"ddr\".",
        Chip(|c, s| {
            if let Some(hbm) = &c.chip.hbm { s.push_labeled([("memory", "hbm".into())], hbm.used_bytes as f64) }
            if let Some(ddr) = &c.chip.ddr { s.push_labeled([("memory", "ddr".into())], ddr.used_bytes() as f64) }
        })),
    def("ascend_npu_memory_clock_hertz", Gauge, Native, Some(G::Memory), "memory", "Memory clock.",
        Chip(|c, s| {
            if let Some(hbm) = &c.chip.hbm { s.push_labeled([("memory", "hbm".into())], hbm.frequency.hertz() as f64) }
            if let Some(ddr) = &c.chip.ddr { s.push_labeled([("memory", "ddr".into())], ddr.frequency.hertz() as f64) }
        })),
    def("ascend_npu_hbm_temperature_celsius", Gauge, Native, Some(G::Memory), "", "HBM temperature.",
        Chip(|c, s| if let Some(hbm) = &c.chip.hbm { s.push(f64::from(hbm.temperature.0)) })),
    def("ascend_npu_hbm_bandwidth_utilization_ratio", Gauge, Native, Some(G::Memory), "",
        "HBM bandwidth utilisation 0..1 as reported with the HBM info.",
        Chip(|c, s| if let Some(hbm) = &c.chip.hbm { s.push(hbm.bandwidth_utilization.ratio()) })),
    def("ascend_npu_ddr_hugepages", Gauge, Native, Some(G::Memory), "state", "DDR huge pages, state=\"total\" or \"free\".",
        Chip(|c, s| if let Some(ddr) = &c.chip.ddr {
            s.push_labeled([("state", "total".into())], ddr.hugepages_total as f64);
            s.push_labeled([("state", "free".into())], ddr.hugepages_free as f64);
        })),
    // ---- ECC ----
    def("ascend_npu_ecc_enabled", Gauge, Native, Some(G::Memory), "memory", "1 if ECC is enabled on the memory component.",
        Chip(|c, s| for (component, ecc) in &c.chip.ecc {
            s.push_labeled([("memory", ecc_component_name(*component).into())], if ecc.enabled { 1.0 } else { 0.0 });
        })),
    def("ascend_npu_ecc_errors", Gauge, Native, Some(G::Memory), "memory, bits",
        "ECC errors the driver currently counts, bits=\"single\" or \"double\".",
        Chip(|c, s| ecc_pair(c, s, |e| (e.single_bit_errors, e.double_bit_errors)))),
    def("ascend_npu_ecc_lifetime_errors", Counter, Native, Some(G::Memory), "memory, bits",
        "ECC errors since manufacture, bits=\"single\" or \"double\".",
        Chip(|c, s| ecc_pair(c, s, |e| (e.total_single_bit_errors, e.total_double_bit_errors)))),
    def("ascend_npu_ecc_isolated_pages", Gauge, Native, Some(G::Memory), "memory, bits",
        "Memory pages isolated for ECC errors.",
        Chip(|c, s| ecc_pair(c, s, |e| (e.single_bit_isolated_pages, e.double_bit_isolated_pages)))),
    def("ascend_npu_ecc_pending_isolated_pages", Gauge, Native, Some(G::Memory), "memory, bits",
        "Memory pages to be isolated for ECC errors at the next reboot.",
        Chip(|c, s| ecc_pair(c, s, |e| (e.single_bit_next_isolated_pages, e.double_bit_next_isolated_pages)))),
    // ---- network ----
    def("ascend_npu_network_healthy", Gauge, Native, Some(G::ChipState), "",
        "1 if the RoCE network probe reports healthy (training cards), else 0.",
        Chip(|c, s| if let Some(n) = c.chip.network { s.push_bool(n.is_healthy()) })),
    // ---- chip-to-chip links ----
    def("ascend_npu_hccs_tx_messages", Counter, Native, Some(G::Links), "link",
        "Messages sent on each HCCS link since the driver started (910B, A3).",
        Chip(|c, s| hccs_per_link(c, s, |h, link| h.tx_messages[link]))),
    def("ascend_npu_hccs_rx_messages", Counter, Native, Some(G::Links), "link",
        "Messages received on each HCCS link since the driver started (910B, A3).",
        Chip(|c, s| hccs_per_link(c, s, |h, link| h.rx_messages[link]))),
    def("ascend_npu_hccs_crc_errors", Counter, Native, Some(G::Links), "link",
        "CRC errors on each HCCS link since the driver started (910B, A3).",
        Chip(|c, s| hccs_per_link(c, s, |h, link| h.crc_errors[link]))),
    def("ascend_npu_sio_crc_errors", Counter, Native, Some(G::Links), "direction",
        "CRC errors on the SIO between the two dies of a card, direction=\"tx\" or \"rx\" (A3, Ascend950).",
        Chip(|c, s| if let Some(sio) = c.chip.sio_crc_errors.and_then(|r| r.value) {
            s.push_labeled([("direction", "tx".into())], f64::from(sio.tx));
            s.push_labeled([("direction", "rx".into())], f64::from(sio.rx));
        })),
    def("ascend_npu_ub_port_packets", Counter, Native, Some(G::Links), "udie, port, counter",
        "Packet and error counters of each unified-bus port (Ascend950), counter= the driver's field name (core_mib_* on UBoE ports only).",
        Chip(|c, s| native_ub_counters(c, s, UbUnit::Packets))),
    def("ascend_npu_ub_port_flits", Counter, Native, Some(G::Links), "udie, port, counter",
        "Flit counters of each unified-bus port (Ascend950): business flits and acknowledgements, counter= the driver's field name.",
        Chip(|c, s| native_ub_counters(c, s, UbUnit::Flits))),
    def("ascend_npu_ub_port_bad_bytes", Counter, Native, Some(G::Links), "udie, port, counter",
        "Bytes of bad frames on each UBoE port (Ascend950), counter=\"core_mib_rxbadoctets\" or \"core_mib_txbadoctets\".",
        Chip(|c, s| native_ub_counters(c, s, UbUnit::Bytes))),
    // ---- bandwidth (slow group: each read waits out a profiling window) ----
    def("ascend_npu_hccs_bandwidth_bytes_per_second", Gauge, Native, Some(G::Bandwidth), "link, direction",
        "HCCS bandwidth of each link over the profiling window, direction=\"tx\" or \"rx\" (910B, A3).",
        Chip(|c, s| if let Some(bandwidth) = c.chip.hccs_bandwidth.and_then(|r| r.value) {
            for link in hccs_links(c) {
                let link_label = LabelText::Int(link as i64);
                s.push_labeled([("link", link_label.clone()), ("direction", "tx".into())], gigabytes_per_second(bandwidth.tx_per_link[link]));
                s.push_labeled([("link", link_label), ("direction", "rx".into())], gigabytes_per_second(bandwidth.rx_per_link[link]));
            }
        })),
    def("ascend_npu_hccs_total_bandwidth_bytes_per_second", Gauge, Native, Some(G::Bandwidth), "direction",
        "HCCS bandwidth of all links together over the profiling window (910B, A3).",
        Chip(|c, s| if let Some(bandwidth) = c.chip.hccs_bandwidth.and_then(|r| r.value) {
            s.push_labeled([("direction", "tx".into())], gigabytes_per_second(bandwidth.total_tx));
            s.push_labeled([("direction", "rx".into())], gigabytes_per_second(bandwidth.total_rx));
        })),
    def("ascend_npu_pcie_bandwidth_bytes_per_second", Gauge, Native, Some(G::Bandwidth), "direction, traffic, stat",
        "PCIe bandwidth over the profiling window by direction (tx, rx), traffic (posted, non_posted, completion) and stat (avg, min, max) (910B, Ascend950).",
        Chip(|c, s| if let Some(bandwidth) = c.chip.pcie_bandwidth.and_then(|r| r.value) {
            for (direction, traffic, stats) in pcie_traffic(&bandwidth) {
                for (stat, value) in [("avg", stats.avg), ("min", stats.min), ("max", stats.max)] {
                    let labels = [("direction", direction.into()), ("traffic", traffic.into()), ("stat", stat.into())];
                    s.push_labeled(labels, gigabytes_per_second(f64::from(value)));
                }
            }
        })),
    def("ascend_npu_bandwidth_window_seconds", Gauge, Native, Some(G::Bandwidth), "bus",
        "The profiling window the driver averaged each bandwidth over, bus=\"hccs\" or \"pcie\".",
        Chip(|c, s| {
            if let Some(hccs) = c.chip.hccs_bandwidth.and_then(|r| r.value) {
                s.push_labeled([("bus", "hccs".into())], hccs.profiling.as_secs_f64());
            }
            if let Some(pcie) = c.chip.pcie_bandwidth.and_then(|r| r.value) {
                s.push_labeled([("bus", "pcie".into())], pcie.profiling.as_secs_f64());
            }
        })),
    // ---- vNPUs ----
    def("ascend_npu_vnpu_utilization_ratio", Gauge, Native, Some(G::Vnpu), "",
        "AI-core utilisation 0..1 of each vNPU (310P).",
        Vnpu(|v, s| if let Some(percent) = v.vnpu.aicore_utilization { s.push(f64::from(percent) / 100.0) })),
    def("ascend_npu_vnpu_memory_total_bytes", Gauge, Native, Some(G::Vnpu), "", "Memory of each vNPU (310P).",
        Vnpu(|v, s| if let Some(kb) = v.vnpu.activity_memory_total_kb { s.push((kb * 1024) as f64) })),
    def("ascend_npu_vnpu_memory_used_bytes", Gauge, Native, Some(G::Vnpu), "", "Memory in use on each vNPU (310P).",
        Vnpu(|v, s| if let Some(kb) = v.vnpu.activity_memory_used_kb { s.push((kb * 1024) as f64) })),
    // ---- per container ----
    def("ascend_npu_container_chips", Gauge, Native, None, "", "Chips (or vNPU/shared slices of chips) a container holds.",
        Container(|v, s| s.push(v.chips.len() as f64))),
    def("ascend_npu_container_memory_used_bytes", Gauge, Native, Some(G::Memory), "",
        "Device memory in use on the chips a container holds (HBM, else DDR; a shared chip counts fully for each holder).",
        Container(|v, s| s.push(v.chips.iter().filter_map(|c| device_memory_used(c)).sum::<u64>() as f64))),
    def("ascend_npu_container_utilization_ratio", Gauge, Native, Some(G::Utilization), "",
        "Mean AI-core utilisation 0..1 of the chips a container holds.",
        Container(|v, s| {
            let values: Vec<f64> = v.chips.iter().filter_map(|c| c.utilization_of(UtilizationKind::AiCore)).map(|p| p.ratio()).collect();
            if !values.is_empty() { s.push(values.iter().sum::<f64>() / values.len() as f64) }
        })),
    // ======== Huawei npu-exporter compatible names (units as Huawei: °C, W, V, MHz, MB, %) ========
    def("npu_exporter_version_info", Gauge, Huawei, None, "exporterVersion", "exporter version with value '1'",
        Machine(|m, s| s.push_labeled([("exporterVersion", m.exporter_version.into())], 1.0))),
    // Huawei's nodeBase group: the exporter's build and the driver version (`dcmi_get_dcmi_version`), both read once.
    // Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_node_base.go
    def("node_base_info", Gauge, Huawei, None, "exporterVersion, driverVersion", "the common information of this node",
        Machine(|m, s| s.push_labeled(
            [("exporterVersion", m.exporter_version.into()), ("driverVersion", driver_version(m).into())], 1.0))),
    def("machine_npu_nums", Gauge, Huawei, None, "", "Amount of npu installed on the machine.",
        Machine(|m, s| s.push(m.snapshot.map_or(0, |snap| snap.chips.len()) as f64))),
    // Huawei counts cards only on 310P, 910, 910B and A3 (`supportedCardNumDevices` in
    // Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_npu.go).
    def("machine_card_nums", Gauge, Huawei, Some(G::Identity), "", "Amount of card installed on the machine.",
        Machine(|m, s| if let Some(cards) = card_count(m) { s.push(cards as f64) })),
    def("machine_healthy_npu_nums", Gauge, Huawei, Some(G::ChipState), "", "Amount of healthy npu on the machine.",
        Machine(|m, s| s.push(count_health(m, true)))),
    def("machine_unhealthy_npu_nums", Gauge, Huawei, Some(G::ChipState), "", "Amount of unhealthy npu on the machine.",
        Machine(|m, s| s.push(count_health(m, false)))),
    def("machine_unknown_npu_nums", Gauge, Huawei, Some(G::ChipState), "",
        "Amount of the npus whose health status cannot be obtained via DCMI interface on the machine.",
        Machine(|m, s| s.push(count_health_unknown(m)))),
    def("npu_chip_info_name", Gauge, Huawei, Some(G::Identity), "", "the Ascend npu name with value '1'",
        // The series labels carry the model as `name` instead of `model_name` (render.rs, huawei_npu_name_labels).
        Chip(|c, s| if c.chip.identity.is_some() { s.push(1.0) })),
    def("npu_chip_info_serial_number", Gauge, Huawei, Some(G::Identity), "serial_number", "the npu serial number information",
        Chip(|c, s| if let Some(sn) = c.chip.identity.as_ref().and_then(|id| id.serial_number()) {
            s.push_labeled([("serial_number", sn.to_owned().into())], 1.0);
        })),
    def("npu_chip_info_product_type", Gauge, Huawei, Some(G::Identity), "product_type", "the npu product_type information",
        // Only on 310P, the one type whose product type Huawei's exporter reads (mind-cluster
        // `component/npu-exporter/collector/common/npu_collector.go`, `setProductType`).
        Chip(|c, s| if let Some(pt) = c.chip.identity.as_ref().filter(|id| id.chip_type == Some(ChipType::Ascend310P))
            .and_then(|id| id.product_type.clone()) {
            s.push_labeled([("product_type", pt.into())], 1.0);
        })),
    def("npu_chip_info_health_status", Gauge, Huawei, Some(G::ChipState), "", "the npu health status",
        Chip(|c, s| s.push(match &c.chip.health { Some(h) if h.is_healthy() => 1.0, Some(_) => 0.0, None => -1.0 }))),
    // One name per active fault code, none without faults (mind-cluster
    // `component/npu-exporter/collector/metrics/collector_for_npu.go`, `updateErrorCodesInfo`).
    def("npu_chip_info_error_code", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 0))),
    def("npu_chip_info_error_code_1", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 1))),
    def("npu_chip_info_error_code_2", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 2))),
    def("npu_chip_info_error_code_3", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 3))),
    def("npu_chip_info_error_code_4", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 4))),
    def("npu_chip_info_error_code_5", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 5))),
    def("npu_chip_info_error_code_6", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 6))),
    def("npu_chip_info_error_code_7", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 7))),
    def("npu_chip_info_error_code_8", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 8))),
    def("npu_chip_info_error_code_9", Gauge, Huawei, Some(G::ChipState), "", "the npu error code", Chip(|c, s| error_code(c, s, 9))),
    def("npu_chip_info_temperature", Gauge, Huawei, Some(G::ChipState), "", "the npu temperature",
        Chip(|c, s| if let Some(t) = c.chip.temperature { s.push(f64::from(t.0)) })),
    def("npu_chip_info_power", Gauge, Huawei, Some(G::ChipState), "", "the npu power",
        Chip(|c, s| if let Some(p) = c.chip.power { s.push(p.watts().0) })),
    def("npu_chip_info_voltage", Gauge, Huawei, Some(G::ChipState), "", "the npu voltage",
        Chip(|c, s| if let Some(v) = c.chip.voltage { s.push(v.0) })),
    def("npu_chip_info_aicore_current_freq", Gauge, Huawei, Some(G::ChipState), "", "the npu ai core current frequency, unit is 'MHz'",
        Chip(|c, s| if let Some(f) = c.chip.clock_of(FrequencyKind::AiCoreCurrent) { s.push(f64::from(f.0)) })),
    def("npu_chip_info_process_info_num", Gauge, Huawei, Some(G::Memory), "", "the npu process num",
        Chip(|c, s| if let Some(p) = &c.chip.processes { s.push(p.len() as f64) })),
    def("npu_chip_info_process_info", Gauge, Huawei, Some(G::Memory), "process_id, container_id",
        "the npu process info, unit is 'MB'. if process run on host, container_id and container_name will be empty",
        Chip(|c, s| if let Some(p) = &c.chip.processes {
            for process in p.as_slice() {
                let labels = [("process_id", LabelText::Int(i64::from(process.pid))), ("container_id", "".into())];
                s.push_labeled(labels, megabytes(process.memory_bytes));
            }
        })),
    def("npu_chip_info_utilization", Gauge, Huawei, Some(G::Utilization), "", "the ai core utilization",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::AiCore))),
    def("npu_chip_info_overall_utilization", Gauge, Huawei, Some(G::Utilization), "", "the overall utilization of npu",
        Chip(|c, s| if has_multi_utilization(c) { utilization_percent(c, s, UtilizationKind::Overall) })),
    def("npu_chip_info_vector_utilization", Gauge, Huawei, Some(G::Utilization), "", "the vector utilization",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::VectorCore))),
    def("npu_chip_info_cube_utilization", Gauge, Huawei, Some(G::Utilization), "", "the cube utilization",
        Chip(|c, s| if has_multi_utilization(c) { utilization_percent(c, s, UtilizationKind::AiCube) })),
    def("npu_chip_info_total_memory", Gauge, Huawei, Some(G::Memory), "", "the npu total memory",
        Chip(|c, s| if let Some(d) = &c.chip.ddr { s.push(megabytes(d.total_bytes)) })),
    def("npu_chip_info_used_memory", Gauge, Huawei, Some(G::Memory), "", "the npu used memory",
        Chip(|c, s| if let Some(d) = &c.chip.ddr { s.push(megabytes(d.used_bytes())) })),
    def("npu_chip_info_hbm_total_memory", Gauge, Huawei, Some(G::Memory), "", "the npu hbm total memory",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(megabytes(h.total_bytes)) })),
    def("npu_chip_info_hbm_used_memory", Gauge, Huawei, Some(G::Memory), "", "the npu hbm used memory",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(megabytes(h.used_bytes)) })),
    // The driver's HBM utilisation rate (type 6), not used over total: mind-cluster
    // `component/npu-exporter/collector/metrics/collector_for_hbm.go`, `getAllHBMEccInfo`.
    def("npu_chip_info_hbm_utilization", Gauge, Huawei, Some(G::Memory), "", "the npu hbm utilization",
        Chip(|c, s| if c.chip.hbm.is_some() { utilization_percent(c, s, UtilizationKind::Hbm) })),
    def("npu_chip_info_hbm_temperature", Gauge, Huawei, Some(G::Memory), "", "the npu hbm temperature",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(f64::from(h.temperature.0)) })),
    def("npu_chip_info_hbm_bandwidth_utilization", Gauge, Huawei, Some(G::Memory), "", "the npu hbm bandwidth util rate",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(f64::from(h.bandwidth_utilization.get())) })),
    def("npu_chip_info_hbm_ecc_enable_flag", Gauge, Huawei, Some(G::Memory), "", "whether HBM ecc detection is enabled",
        Chip(|c, s| hbm_ecc(c, s, |e| u32::from(e.enabled)))),
    def("npu_chip_info_hbm_ecc_single_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Single Bit Error Count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.single_bit_errors))),
    def("npu_chip_info_hbm_ecc_double_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Double Bit Error Count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.double_bit_errors))),
    def("npu_chip_info_hbm_ecc_total_single_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Single Bit Aggregate Total Err Cnt",
        Chip(|c, s| hbm_ecc(c, s, |e| e.total_single_bit_errors))),
    def("npu_chip_info_hbm_ecc_total_double_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Double Bit Aggregate Total Err Cnt",
        Chip(|c, s| hbm_ecc(c, s, |e| e.total_double_bit_errors))),
    def("npu_chip_info_hbm_ecc_single_bit_isolated_pages_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Single Bit Isolated Pages Count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.single_bit_isolated_pages))),
    def("npu_chip_info_hbm_ecc_double_bit_isolated_pages_cnt", Gauge, Huawei, Some(G::Memory), "", "HBM Double Bit Isolated Pages Count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.double_bit_isolated_pages))),
    def("npu_chip_info_network_status", Gauge, Huawei, Some(G::ChipState), "", "the npu network health status",
        Chip(|c, s| if let Some(n) = c.chip.network { s.push_bool(n.is_healthy()) })),
    // Huawei's sio group: Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_sio.go. A failed
    // read keeps the last value there as here (its cache entry is not replaced).
    def("npu_chip_info_sio_crc_tx_err_cnt", Gauge, Huawei, Some(G::Links), "", "sio transmitted error count between die",
        Chip(|c, s| if let Some(sio) = c.chip.sio_crc_errors.and_then(|r| r.value) { s.push(f64::from(sio.tx)) })),
    def("npu_chip_info_sio_crc_rx_err_cnt", Gauge, Huawei, Some(G::Links), "", "sio received error count between die",
        Chip(|c, s| if let Some(sio) = c.chip.sio_crc_errors.and_then(|r| r.value) { s.push(f64::from(sio.rx)) })),
    // Huawei's hccs group, statistics half: one name per link, -1 on every link when the read failed.
    // Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_hccs.go
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_0", "transmitted message count for hccs 0", tx_messages, 0),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_1", "transmitted message count for hccs 1", tx_messages, 1),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_2", "transmitted message count for hccs 2", tx_messages, 2),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_3", "transmitted message count for hccs 3", tx_messages, 3),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_4", "transmitted message count for hccs 4", tx_messages, 4),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_5", "transmitted message count for hccs 5", tx_messages, 5),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_6", "transmitted message count for hccs 6", tx_messages, 6),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_tx_cnt_7", "transmitted message count for hccs 7", tx_messages, 7),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_0", "received message count for hccs 0", rx_messages, 0),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_1", "received message count for hccs 1", rx_messages, 1),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_2", "received message count for hccs 2", rx_messages, 2),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_3", "received message count for hccs 3", rx_messages, 3),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_4", "received message count for hccs 4", rx_messages, 4),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_5", "received message count for hccs 5", rx_messages, 5),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_6", "received message count for hccs 6", rx_messages, 6),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_rx_cnt_7", "received message count for hccs 7", rx_messages, 7),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_0", "crc error count for hccs 0", crc_errors, 0),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_1", "crc error count for hccs 1", crc_errors, 1),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_2", "crc error count for hccs 2", crc_errors, 2),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_3", "crc error count for hccs 3", crc_errors, 3),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_4", "crc error count for hccs 4", crc_errors, 4),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_5", "crc error count for hccs 5", crc_errors, 5),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_6", "crc error count for hccs 6", crc_errors, 6),
    hccs_statistic!("npu_chip_info_hccs_statistic_info_crc_err_cnt_7", "crc error count for hccs 7", crc_errors, 7),
    // The bandwidth half of Huawei's hccs group (GB/s, over --hccsBWProfilingTime): -1 on a failed read, except the
    // profiling time. Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_hccs.go
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_0", "single-link transmission data bandwidth for hccs 0", tx_per_link, 0),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_1", "single-link transmission data bandwidth for hccs 1", tx_per_link, 1),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_2", "single-link transmission data bandwidth for hccs 2", tx_per_link, 2),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_3", "single-link transmission data bandwidth for hccs 3", tx_per_link, 3),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_4", "single-link transmission data bandwidth for hccs 4", tx_per_link, 4),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_5", "single-link transmission data bandwidth for hccs 5", tx_per_link, 5),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_6", "single-link transmission data bandwidth for hccs 6", tx_per_link, 6),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_tx_7", "single-link transmission data bandwidth for hccs 7", tx_per_link, 7),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_0", "single-link receive data bandwidth for hccs 0", rx_per_link, 0),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_1", "single-link receive data bandwidth for hccs 1", rx_per_link, 1),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_2", "single-link receive data bandwidth for hccs 2", rx_per_link, 2),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_3", "single-link receive data bandwidth for hccs 3", rx_per_link, 3),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_4", "single-link receive data bandwidth for hccs 4", rx_per_link, 4),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_5", "single-link receive data bandwidth for hccs 5", rx_per_link, 5),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_6", "single-link receive data bandwidth for hccs 6", rx_per_link, 6),
    hccs_link_bandwidth!("npu_chip_info_hccs_bandwidth_info_rx_7", "single-link receive data bandwidth for hccs 7", rx_per_link, 7),
    def("npu_chip_info_hccs_bandwidth_info_profiling_time", Gauge, Huawei, Some(G::Bandwidth), "",
        "sampling interval for hccs bandwidth",
        Chip(|c, s| if !hccs_links(c).is_empty() {
            if let Some(bandwidth) = c.chip.hccs_bandwidth.and_then(|r| r.value) {
                s.push(bandwidth.profiling.as_millis() as f64);
            }
        })),
    def("npu_chip_info_hccs_bandwidth_info_total_tx", Gauge, Huawei, Some(G::Bandwidth), "", "total sent data bandwidth",
        Chip(|c, s| huawei_hccs_bandwidth(c, s, None, |b| b.total_tx))),
    def("npu_chip_info_hccs_bandwidth_info_total_rx", Gauge, Huawei, Some(G::Bandwidth), "", "total received data bandwidth",
        Chip(|c, s| huawei_hccs_bandwidth(c, s, None, |b| b.total_rx))),
    // Huawei's pcie group (MB/ms over --profilingTime; a failed read keeps the last value there as here).
    // Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_pcie.go
    pcie_bandwidth!("npu_chip_info_pcie_rx_p_bw", "the npu write bw to remote‘s speed, unit is 'MB/ms'", rx_posted),
    pcie_bandwidth!("npu_chip_info_pcie_rx_np_bw", "the npu read bw's speed from remote, unit is 'MB/ms'", rx_non_posted),
    pcie_bandwidth!("npu_chip_info_pcie_rx_cpl_bw", "the npu reply remote read operate cpl's speed, unit is 'MB/ms'", rx_completion),
    pcie_bandwidth!("npu_chip_info_pcie_tx_p_bw", "the npu receive remote write operate's speed, unit is 'MB/ms'", tx_posted),
    pcie_bandwidth!("npu_chip_info_pcie_tx_np_bw", "the npu receive remote read operate's speed, unit is 'MB/ms'", tx_non_posted),
    pcie_bandwidth!("npu_chip_info_pcie_tx_cpl_bw", "the npu read cpl's responese bw speed from remote, unit is 'MB/ms'", tx_completion),
    // Huawei's ub group (Ascend950), read through dcmiv2_get_port_pkt_stats_info; the core_mib_* names on UBoE ports
    // only. Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_ub.go
    ub_counter!("npu_chip_info_ub_ipv4_pkt_cnt_rx", "number of ipv4 ub packets received by rx on ub port", 0),
    ub_counter!("npu_chip_info_ub_ipv6_pkt_cnt_rx", "number of ipv6 ub packets received by rx on ub port", 1),
    ub_counter!("npu_chip_info_unic_ipv4_pkt_cnt_rx", "number of ipv4 unic packets received by rx on ub port", 2),
    ub_counter!("npu_chip_info_unic_ipv6_pkt_cnt_rx", "number of ipv6 unic packets received by rx on ub port", 3),
    ub_counter!("npu_chip_info_ub_compact_pkt_cnt_rx", "number of cfg6 packets received by rx on ub port", 4),
    ub_counter!("npu_chip_info_ub_umoc_ctph_cnt_rx", "number of cfg7 clan packets received by rx on ub port", 5),
    ub_counter!("npu_chip_info_ub_umoc_ntph_cnt_rx", "number of cfg7 not clan packets received by rx on ub port", 6),
    ub_counter!("npu_chip_info_ub_mem_pkt_cnt_rx", "number of ub mem packets received by rx on ub port", 7),
    ub_counter!("npu_chip_info_unknown_pkt_cnt_rx", "number of unknown packets received by rx on ub port", 8),
    ub_counter!("npu_chip_info_drop_ind_cnt_rx", "number of packet with drop_ind received by rx on ub port", 9),
    ub_counter!("npu_chip_info_err_ind_cnt_rx", "number of err packets received by rx on ub port", 10),
    ub_counter!("npu_chip_info_to_host_pkt_cnt_rx", "number of landed packets after routing on the rx ub port", 11),
    ub_counter!("npu_chip_info_to_imp_pkt_cnt_rx", "number of landed enumeration configuration and management packets after routing on the rx ub port", 12),
    ub_counter!("npu_chip_info_to_mar_pkt_cnt_rx", "number of landed ub memory packets after routing on the rx ub port", 13),
    ub_counter!("npu_chip_info_to_link_pkt_cnt_rx", "number of packets forward from the rx to the tx of the same port after routing on ub port", 14),
    ub_counter!("npu_chip_info_to_noc_pkt_cnt_rx", "number of p2p packets received on the rx after routing on ub port", 15),
    ub_counter!("npu_chip_info_route_err_cnt_rx", "number of packets with routing lookup errors after processing received on the rx ub port", 16),
    ub_counter!("npu_chip_info_out_err_cnt_rx", "total number of erroneous packets after validation of packets received on the rx ub port", 17),
    ub_counter!("npu_chip_info_length_err_cnt_rx", "number of packets with length errors after validation of packets received on the rx ub port", 18),
    ub_counter!("npu_chip_info_rx_busi_flit_num", "number of flits of service packets received from the mac on the rx ub port", 19),
    ub_counter!("npu_chip_info_rx_send_ack_flit", "cumulative number of acks released to the peer on the rx ub port", 20),
    ub_counter!("npu_chip_info_ub_ipv4_pkt_cnt_tx", "number of ipv4 ub packets sent by tx on ub port", 21),
    ub_counter!("npu_chip_info_ub_ipv6_pkt_cnt_tx", "number of ipv6 ub packets sent by tx on ub port", 22),
    ub_counter!("npu_chip_info_unic_ipv4_pkt_cnt_tx", "number of ipv4 unic packets sent by tx on ub port", 23),
    ub_counter!("npu_chip_info_unic_ipv6_pkt_cnt_tx", "number of ipv6 unic packets sent by tx on ub port", 24),
    ub_counter!("npu_chip_info_ub_compact_pkt_cnt_tx", "number of cfg6 packets sent by tx on ub port", 25),
    ub_counter!("npu_chip_info_ub_umoc_ctph_cnt_tx", "number of cfg7 clan packets sent by tx on ub port", 26),
    ub_counter!("npu_chip_info_ub_umoc_ntph_cnt_tx", "number of cfg7 not clan packets sent by tx on ub port", 27),
    ub_counter!("npu_chip_info_ub_mem_pkt_cnt_tx", "number of ub mem packets sent by tx on ub port", 28),
    ub_counter!("npu_chip_info_unknown_pkt_cnt_tx", "number of unknown packets sent by tx on ub port", 29),
    ub_counter!("npu_chip_info_drop_ind_cnt_tx", "number of packet with drop_ind sent by tx on ub port", 30),
    ub_counter!("npu_chip_info_err_ind_cnt_tx", "number of err packets sent by tx on ub port", 31),
    ub_counter!("npu_chip_info_lpbk_ind_cnt_tx", "number of packets looped back at nl by tx on ub port", 32),
    ub_counter!("npu_chip_info_out_err_cnt_tx", "total number of erroneous packets after validation of packets sent on the tx ub port", 33),
    ub_counter!("npu_chip_info_length_err_cnt_tx", "number of packets with length errors after validation of packets sent on the tx ub port", 34),
    ub_counter!("npu_chip_info_tx_busi_flit_num", "number of flits of service packets sent from the mac on the tx ub port", 35),
    ub_counter!("npu_chip_info_tx_recv_ack_flit", "cumulative number of acks released to the peer on the tx ub port", 36),
    ub_counter!("npu_chip_info_retry_req_sum", "number of retransmission attempts initiated on ub port", 37),
    ub_counter!("npu_chip_info_retry_ack_sum", "number of response retransmissions on ub port", 38),
    ub_counter!("npu_chip_info_crc_error_sum", "number of crc check errors on ub port", 39),
    ub_counter!("npu_chip_info_core_mib_rxpausepkts", "uboe total number of rx pause frames on ub port", 40),
    ub_counter!("npu_chip_info_core_mib_txpausepkts", "uboe total number of tx pause frames on ub port", 41),
    ub_counter!("npu_chip_info_core_mib_rxpfcpkts", "uboe total number of rx pfc frames on ub port", 42),
    ub_counter!("npu_chip_info_core_mib_txpfcpkts", "uboe total number of tx pfc frames on ub port", 43),
    ub_counter!("npu_chip_info_core_mib_rxbadpkts", "uboe total number of rx bad packets on ub port", 44),
    ub_counter!("npu_chip_info_core_mib_txbadpkts", "uboe total number of tx bad packets on ub port", 45),
    ub_counter!("npu_chip_info_core_mib_rxbadoctets", "uboe total number of bytes in rx bad packets on ub port", 46),
    ub_counter!("npu_chip_info_core_mib_txbadoctets", "uboe total number of bytes in tx bad packets on ub port", 47),
    // Huawei's vnpu group (310P): per vNPU that one container holds, with its own labels instead of the card labels.
    // Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_vnpu.go
    def("vnpu_pod_aicore_utilization", Gauge, Huawei, Some(G::Vnpu), "", "the vnpu aicore utilization rate, unit is '%'",
        Vnpu(|v, s| if is_310p(v) { if let Some(percent) = v.vnpu.aicore_utilization { s.push(f64::from(percent)) } })),
    def("vnpu_pod_total_memory", Gauge, Huawei, Some(G::Vnpu), "", "the vnpu total memory on pod, unit is 'KB'",
        Vnpu(|v, s| if is_310p(v) { if let Some(kb) = v.vnpu.activity_memory_total_kb { s.push(kb as f64) } })),
    def("vnpu_pod_used_memory", Gauge, Huawei, Some(G::Vnpu), "", "the vnpu used memory on pod, unit is 'KB'",
        Vnpu(|v, s| if is_310p(v) { if let Some(kb) = v.vnpu.activity_memory_used_kb { s.push(kb as f64) } })),
    def("container_npu_utilization", Gauge, Huawei, Some(G::Utilization), "",
        "npu ai core utilization in container, unit is '%'",
        Chip(|c, s| if c.holders.len() == 1 { utilization_percent(c, s, UtilizationKind::AiCore) })),
    def("container_npu_total_memory", Gauge, Huawei, Some(G::Memory), "",
        "npu total memory in container, unit is 'MB'",
        Chip(|c, s| if c.holders.len() == 1 { if let Some(total) = device_memory_total(c.chip) { s.push(megabytes(total)) } })),
    def("container_npu_used_memory", Gauge, Huawei, Some(G::Memory), "",
        "the npu used memory in container, unit is 'MB'",
        Chip(|c, s| if c.holders.len() == 1 { if let Some(used) = device_memory_used(c.chip) { s.push(megabytes(used)) } })),
];

fn chip_info(c: &ChipView<'_>) -> Option<InfoLabels> {
    let identity = c.chip.identity.as_ref()?;
    let ids = &c.chip.ids;
    let text = |value: Option<String>| LabelText::Owned(value.unwrap_or_default());
    Some(vec![
        ("logic_id", LabelText::Int(i64::from(ids.logic.0))),
        // No card on the DCMI V2 API: an empty label is an absent one, never a made-up 0.
        ("card", ids.locator.map_or(LabelText::Owned(String::new()), |l| LabelText::Int(i64::from(l.card.0)))),
        ("device", ids.locator.map_or(LabelText::Owned(String::new()), |l| LabelText::Int(i64::from(l.device.0)))),
        ("chip_type", text(identity.chip_type.map(|t| t.as_str().to_owned()))),
        ("chip_name", identity.info.chip_name.clone().into()),
        ("chip_version", identity.info.chip_version.clone().into()),
        ("model_name", identity.info.model_name().into()),
        ("serial_number", text(identity.serial_number().map(str::to_owned))),
        ("die_id", text(identity.die_id.map(|d| d.to_string()))),
        ("pcie_bus_info", text(identity.pcie_address.map(|a| a.to_string()))),
        ("driver_version", text(c.driver_version.map(str::to_owned))),
        ("product_type", text(identity.product_type.clone())),
    ])
}

fn ecc_component_name(component: EccComponent) -> &'static str {
    match component {
        EccComponent::Ddr => "ddr",
        EccComponent::Sram => "sram",
        EccComponent::Hbm => "hbm",
        EccComponent::Npu => "npu",
        _ => "other",
    }
}

fn ecc_pair(c: &ChipView<'_>, s: &mut SampleSink, pick: fn(&EccCounters) -> (u32, u32)) {
    for (component, ecc) in &c.chip.ecc {
        let (single, double) = pick(ecc);
        let memory = LabelText::Static(ecc_component_name(*component));
        s.push_labeled([("memory", memory.clone()), ("bits", "single".into())], f64::from(single));
        s.push_labeled([("memory", memory), ("bits", "double".into())], f64::from(double));
    }
}

fn hbm_ecc(c: &ChipView<'_>, s: &mut SampleSink, pick: fn(&EccCounters) -> u32) {
    if let Some(ecc) = c.chip.ecc_of(EccComponent::Hbm) {
        s.push(f64::from(pick(&ecc)));
    }
}

fn error_code(c: &ChipView<'_>, s: &mut SampleSink, index: usize) {
    if let Some(code) = c.chip.health.as_ref().and_then(|h| h.faults.as_slice().get(index).copied()) {
        s.push(code.0 as f64);
    }
}

fn utilization_percent(c: &ChipView<'_>, s: &mut SampleSink, kind: UtilizationKind) {
    if let Some(percent) = c.chip.utilization_of(kind) {
        s.push(f64::from(percent.get()));
    }
}

/// Whether Huawei's exporter reads the chip's overall and cube utilisation: only on the types it reads through the
/// multi-utilisation call, 910B, A3 and Ascend950 (mind-cluster
/// `component/npu-exporter/collector/metrics/collector_for_utilization.go`, `PreCollect`; its `collectUtilV1` leaves
/// both unset on the others).
fn has_multi_utilization(c: &ChipView<'_>) -> bool {
    let chip_type = c.chip.identity.as_ref().and_then(|id| id.chip_type);
    matches!(chip_type, Some(ChipType::Ascend910B | ChipType::Ascend910A3 | ChipType::Ascend950))
}

fn count_health(m: &MachineView<'_>, healthy: bool) -> f64 {
    let chips = m.snapshot.map_or(&[][..], |snap| snap.chips.as_slice());
    chips.iter().filter(|c| c.health.as_ref().is_some_and(|h| h.is_healthy() == healthy)).count() as f64
}

/// The HCCS links Huawei's exporter reports: from link 1 on 910B, 800I A3 and A900 A3 SuperPoD, from link 2 on
/// A9000 A3 SuperPoD (main boards 0x1C, 0x1D), from 0 on other A3 main boards (its `hccsBeginIndex` keeps its zero
/// value there), up to link 7; none on chips without HCCS. `PreCollect` in
/// Ascend/mind-cluster component/npu-exporter/collector/metrics/collector_for_hccs.go.
fn hccs_links(c: &ChipView<'_>) -> std::ops::Range<usize> {
    const HUAWEI_LINKS: usize = 8;
    let identity = c.chip.identity.as_deref();
    let first = match identity.and_then(|id| id.chip_type) {
        Some(ChipType::Ascend910B) => 1,
        Some(ChipType::Ascend910A3) => match identity.and_then(|id| id.mainboard_id) {
            Some(0x14 | 0x18 | 0x19) => 1,
            Some(0x1C | 0x1D) => 2,
            _ => 0,
        },
        _ => HUAWEI_LINKS,
    };
    first..HUAWEI_LINKS
}

fn hccs_per_link(c: &ChipView<'_>, s: &mut SampleSink, pick: fn(&HccsStatistics, usize) -> u64) {
    if let Some(statistics) = c.chip.hccs_statistics.and_then(|r| r.value) {
        for link in hccs_links(c) {
            s.push_labeled([("link", LabelText::Int(link as i64))], pick(&statistics, link) as f64);
        }
    }
}

fn huawei_hccs_statistic(c: &ChipView<'_>, s: &mut SampleSink, link: usize, pick: fn(&HccsStatistics) -> u64) {
    let Some(reading) = c.chip.hccs_statistics else { return };
    if !hccs_links(c).contains(&link) {
        return;
    }
    match reading.value {
        _ if reading.failed => s.push(-1.0),
        Some(statistics) => s.push(pick(&statistics) as f64),
        None => {}
    }
}

/// Huawei's HCCS bandwidth of one link (`Some(link)`) or the total (`None`): -1 when the latest read failed.
fn huawei_hccs_bandwidth(c: &ChipView<'_>, s: &mut SampleSink, link: Option<usize>, pick: fn(&HccsBandwidth) -> f64) {
    let Some(reading) = c.chip.hccs_bandwidth else { return };
    let links = hccs_links(c);
    if links.is_empty() || link.is_some_and(|link| !links.contains(&link)) {
        return;
    }
    match reading.value {
        _ if reading.failed => s.push(-1.0),
        Some(bandwidth) => s.push(pick(&bandwidth)),
        None => {}
    }
}

/// Main boards of the Ascend950 products whose PCIe bandwidth Huawei's exporter reads (Atlas 350 3501P, 3502P,
/// 3504P and UBX: `supportedPcieA5MainBoards` in collector_for_pcie.go, ids from
/// Ascend/mind-cluster component/ascend-common/api/default_name.go).
const PCIE_950_MAIN_BOARDS: [u32; 4] = [0x68, 0x6b, 0x6c, 0x44];

fn huawei_pcie_bandwidth(c: &ChipView<'_>, s: &mut SampleSink, pick: fn(&PcieBandwidth) -> BandwidthStats) {
    let identity = c.chip.identity.as_deref();
    let served = match identity.and_then(|id| id.chip_type) {
        Some(ChipType::Ascend910B) => true,
        Some(ChipType::Ascend950) => {
            identity.and_then(|id| id.mainboard_id).is_some_and(|board| PCIE_950_MAIN_BOARDS.contains(&board))
        }
        _ => false,
    };
    if let Some(bandwidth) = c.chip.pcie_bandwidth.and_then(|r| r.value).filter(|_| served) {
        let stats = pick(&bandwidth);
        for (kind, value) in [("avgPcieBw", stats.avg), ("minPcieBw", stats.min), ("maxPcieBw", stats.max)] {
            s.push_labeled([("pcie_bw_type", kind.into())], f64::from(value));
        }
    }
}

/// The PCIe traffic classes by direction, as the native metric labels them.
fn pcie_traffic(bandwidth: &PcieBandwidth) -> [(&'static str, &'static str, BandwidthStats); 6] {
    [
        ("tx", "posted", bandwidth.tx_posted),
        ("tx", "non_posted", bandwidth.tx_non_posted),
        ("tx", "completion", bandwidth.tx_completion),
        ("rx", "posted", bandwidth.rx_posted),
        ("rx", "non_posted", bandwidth.rx_non_posted),
        ("rx", "completion", bandwidth.rx_completion),
    ]
}

/// The driver's bandwidth unit (MB/ms, which is GB/s) in bytes per second.
fn gigabytes_per_second(value: f64) -> f64 {
    value * 1e9
}

/// The unit of a UB port counter, from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum UbUnit {
    Packets,
    Flits,
    Bytes,
}

impl UbUnit {
    fn of(name: &str) -> UbUnit {
        if name.contains("flit") {
            UbUnit::Flits
        } else if name.ends_with("octets") {
            UbUnit::Bytes
        } else {
            UbUnit::Packets
        }
    }
}

/// The counters a port reports: the `core_mib_*` ones only on UBoE ports, as Huawei's exporter serves them.
fn ub_counters_of(port: &UbPortCounters) -> impl Iterator<Item = (usize, &'static str, u64)> + '_ {
    let reported = if port.is_uboe() { UB_COUNTERS } else { UBOE_COUNTERS_FROM };
    UB_COUNTER_NAMES
        .iter()
        .zip(port.values)
        .enumerate()
        .take(reported)
        .map(|(index, (name, value))| (index, *name, value))
}

fn ub_port_labels(port: &UbPortCounters) -> [(&'static str, LabelText); 2] {
    [("udie", LabelText::Int(i64::from(port.port.die))), ("port", LabelText::Int(i64::from(port.port.port)))]
}

fn native_ub_counters(c: &ChipView<'_>, s: &mut SampleSink, unit: UbUnit) {
    for port in c.chip.ub_ports.iter().flat_map(|ports| ports.iter()) {
        for (_, name, value) in ub_counters_of(port).filter(|(_, name, _)| UbUnit::of(name) == unit) {
            let [udie, port_label] = ub_port_labels(port);
            s.push_labeled([udie, port_label, ("counter", name.into())], value as f64);
        }
    }
}

fn huawei_ub_counter(c: &ChipView<'_>, s: &mut SampleSink, index: usize) {
    for port in c.chip.ub_ports.iter().flat_map(|ports| ports.iter()) {
        if let Some((_, _, value)) = ub_counters_of(port).find(|(position, _, _)| *position == index) {
            s.push_labeled(ub_port_labels(port), value as f64);
        }
    }
}

/// Huawei's exporter reads vNPU activity on 310P only (`supportedVnpuDevices` in collector_for_vnpu.go).
fn is_310p(v: &VnpuView<'_>) -> bool {
    v.chip.identity.as_ref().and_then(|id| id.chip_type) == Some(ChipType::Ascend310P)
}

/// Chips without a health reading: healthy + unhealthy + unknown is every chip, as in Huawei's `countHealthStatus`.
fn count_health_unknown(m: &MachineView<'_>) -> f64 {
    let chips = m.snapshot.map_or(&[][..], |snap| snap.chips.as_slice());
    chips.iter().filter(|c| c.health.is_none()).count() as f64
}

/// The driver version as a label value: empty when it could not be read, as Huawei writes it.
fn driver_version(m: &MachineView<'_>) -> String {
    m.snapshot.and_then(|snap| snap.driver_version.clone()).unwrap_or_default()
}

/// The card count, on chip types whose cards Huawei's exporter counts (310P, 910, 910B, A3). The type is known once
/// the identity group has been read; until then, and on other types, the count is absent.
fn card_count(m: &MachineView<'_>) -> Option<usize> {
    let snapshot = m.snapshot?;
    let chip_type = snapshot.chips.iter().find_map(|chip| chip.identity.as_ref().and_then(|id| id.chip_type))?;
    let counted =
        matches!(chip_type, ChipType::Ascend310P | ChipType::Ascend910 | ChipType::Ascend910B | ChipType::Ascend910A3);
    counted.then_some(snapshot.cards?)
}

/// The Unix time of a sample `age` old at `unix_now`, rounded to the millisecond: the sampler's instants are finer than
/// any alert needs, and whole milliseconds keep the text short and the value the same in two renders of one round
/// (both conversions of one instant land on the same millisecond unless the wall clock is stepped in between).
fn sample_timestamp(unix_now: f64, age: std::time::Duration) -> f64 {
    ((unix_now - age.as_secs_f64()) * 1000.0).round() / 1000.0
}

fn megabytes(bytes: u64) -> f64 {
    bytes as f64 / BYTES_PER_MB as f64
}

/// Device memory in use: HBM where the chip has it, else DDR.
fn device_memory_used(chip: &ChipSnapshot) -> Option<u64> {
    chip.hbm.map(|h| h.used_bytes).or_else(|| chip.ddr.map(|d| d.used_bytes()))
}

/// Device memory size: HBM where the chip has it, else DDR.
fn device_memory_total(chip: &ChipSnapshot) -> Option<u64> {
    chip.hbm.map(|h| h.total_bytes).or_else(|| chip.ddr.map(|d| d.total_bytes))
}
