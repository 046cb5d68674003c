//! Every metric the exporter can serve: name, type, help, group, and how to read it from a snapshot.
//!
//! One table drives rendering, the selection file's validation and the metric table in the docs, so the three cannot
//! drift apart. Native names follow Prometheus conventions (base units, `_total` counters, `_info` metadata);
//! [`Naming::Huawei`] entries reproduce the vendor exporter's `npu_chip_info_*` names, units and labels for existing
//! dashboards.

use std::sync::LazyLock;
use std::time::Instant;

use ascend_dcmi::{EccComponent, EccCounters, FrequencyKind, Power, UtilizationKind, BYTES_PER_MB};

use crate::metric_group::{MetricGroup, SampledGroup};
use crate::pod_attribution::ContainerRef;
use crate::sample::{LabelText, SampleSink};
use crate::snapshot::{ChipSnapshot, Snapshot};

/// The Prometheus type of a metric.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MetricKind {
    /// A value that goes up and down.
    Gauge,
    /// A value that only goes up; exposed with `_total`.
    Counter,
    /// Constant 1 carrying metadata in labels; exposed with `_info`.
    Info,
}

/// Which naming scheme a metric belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Naming {
    /// This exporter's Prometheus-conventional names (`ascend_npu_*`).
    Native,
    /// Huawei npu-exporter's names and labels (`npu_chip_info_*`, `machine_*`, `container_npu_*`).
    Huawei,
}

/// What one chip's extractor sees.
#[derive(Debug)]
pub struct ChipView<'a> {
    /// The chip.
    pub chip: &'a ChipSnapshot,
    /// Containers holding it.
    pub holders: &'a [ContainerRef],
    /// The render time, for sample ages.
    pub now: Instant,
    /// The render time as seconds since the Unix epoch, for sample timestamps.
    pub unix_now: f64,
    /// The driver version, once read.
    pub driver_version: Option<&'a str>,
}

/// What one container's extractor sees.
#[derive(Debug)]
pub struct ContainerView<'a> {
    /// The container.
    pub container: &'a ContainerRef,
    /// The chips it holds that the snapshot knows.
    pub chips: Vec<&'a ChipSnapshot>,
}

/// What a machine-wide extractor sees.
#[derive(Debug)]
pub struct MachineView<'a> {
    /// The latest snapshot, `None` before the first one.
    pub snapshot: Option<&'a Snapshot>,
    /// This exporter's version.
    pub exporter_version: &'static str,
    /// Whether the last PodResources `List` worked.
    pub pod_resources_reachable: bool,
}

/// How a metric's samples are read, and for which series.
#[derive(Debug, Clone, Copy)]
pub enum Extract {
    /// One set of samples per chip, on the chip's series labels.
    Chip(fn(&ChipView<'_>, &mut SampleSink)),
    /// One set of samples per container holding chips, on `namespace`, `pod`, `container`.
    Container(fn(&ContainerView<'_>, &mut SampleSink)),
    /// Machine-wide samples without series labels.
    Machine(fn(&MachineView<'_>, &mut SampleSink)),
    /// An info metric per chip: the labels of its one series beyond the chip's series labels, `None` to skip it.
    ChipInfo(fn(&ChipView<'_>) -> Option<InfoLabels>),
}

/// The labels of an info metric's series beyond the chip's series labels.
pub type InfoLabels = Vec<(&'static str, LabelText)>;

/// One metric of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct MetricDef {
    /// The name without the `_total`/`_info` suffix that the exposition format adds for counters and info metrics.
    pub name: &'static str,
    /// Prometheus type.
    pub kind: MetricKind,
    /// Naming scheme.
    pub naming: Naming,
    /// The sampling group whose values it shows; `None` for the exporter's own metrics, which are always served.
    pub group: Option<SampledGroup>,
    /// HELP text, with the unit where the name does not carry it.
    pub help: &'static str,
    /// Labels the metric adds to the series labels, for the docs.
    pub own_labels: &'static str,
    /// How to read it.
    pub extract: Extract,
}

impl MetricDef {
    /// The name as it appears in the exposition (with `_total` or `_info`).
    pub fn exposed_name(&self) -> String {
        match self.kind {
            MetricKind::Gauge => self.name.to_owned(),
            MetricKind::Counter => format!("{}_total", self.name),
            MetricKind::Info => format!("{}_info", self.name),
        }
    }
}

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

use Extract::{Chip, ChipInfo, Container, Machine};
use MetricGroup as G;
use MetricKind::{Counter, Gauge, Info};
use Naming::{Huawei, Native};

/// Every metric: the driver's (native names first, then the Huawei-compatible ones), then the network's
/// ([`crate::network::catalogue`]).
pub static CATALOGUE: LazyLock<Vec<MetricDef>> =
    LazyLock::new(|| DRIVER_METRICS.iter().chain(crate::network::catalogue::NETWORK_METRICS).copied().collect());

/// The metrics read through DCMI, native names first, then the Huawei-compatible ones.
static DRIVER_METRICS: &[MetricDef] = &[
    // ---- exporter and machine ----
    def("ascend_npu_exporter_build", Info, Native, None, "version", "Build of the running npu-exporter.",
        Machine(|m, s| s.push_labeled([("version", m.exporter_version.into())], 1.0))),
    def("ascend_npu_chips", Gauge, Native, None, "", "Chips the driver enumerates.",
        Machine(|m, s| s.push(m.snapshot.map_or(0, |snap| snap.chips.len()) as f64))),
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
    def("machine_npu_nums", Gauge, Huawei, None, "", "Amount of npu installed on the machine.",
        Machine(|m, s| s.push(m.snapshot.map_or(0, |snap| snap.chips.len()) as f64))),
    def("machine_healthy_npu_nums", Gauge, Huawei, Some(G::ChipState), "", "Amount of healthy npu on the machine.",
        Machine(|m, s| s.push(count_health(m, true)))),
    def("machine_unhealthy_npu_nums", Gauge, Huawei, Some(G::ChipState), "", "Amount of unhealthy npu on the machine.",
        Machine(|m, s| s.push(count_health(m, false)))),
    def("npu_chip_info_name", Gauge, Huawei, Some(G::Identity), "name", "the Ascend npu name with value '1'",
        Chip(|c, s| if let Some(id) = &c.chip.identity { s.push_labeled([("name", id.info.model_name().into())], 1.0) })),
    def("npu_chip_info_serial_number", Gauge, Huawei, Some(G::Identity), "serial_number", "the npu serial number with value '1'",
        Chip(|c, s| if let Some(sn) = c.chip.identity.as_ref().and_then(|id| id.serial_number()) {
            s.push_labeled([("serial_number", sn.to_owned().into())], 1.0);
        })),
    def("npu_chip_info_product_type", Gauge, Huawei, Some(G::Identity), "product_type", "the npu product type with value '1'",
        Chip(|c, s| if let Some(pt) = c.chip.identity.as_ref().and_then(|id| id.product_type.clone()) {
            s.push_labeled([("product_type", pt.into())], 1.0);
        })),
    def("npu_chip_info_health_status", Gauge, Huawei, Some(G::ChipState), "", "the npu health status: 1 healthy, 0 unhealthy, -1 unknown",
        Chip(|c, s| s.push(match &c.chip.health { Some(h) if h.is_healthy() => 1.0, Some(_) => 0.0, None => -1.0 }))),
    def("npu_chip_info_error_code", Gauge, Huawei, Some(G::ChipState), "", "the npu first error code (decimal), 0 if none",
        Chip(|c, s| if let Some(h) = &c.chip.health { s.push(h.faults.as_slice().first().map_or(0.0, |f| f.0 as f64)) })),
    def("npu_chip_info_error_code_1", Gauge, Huawei, Some(G::ChipState), "", "the npu 2nd error code", Chip(|c, s| error_code(c, s, 1))),
    def("npu_chip_info_error_code_2", Gauge, Huawei, Some(G::ChipState), "", "the npu 3rd error code", Chip(|c, s| error_code(c, s, 2))),
    def("npu_chip_info_error_code_3", Gauge, Huawei, Some(G::ChipState), "", "the npu 4th error code", Chip(|c, s| error_code(c, s, 3))),
    def("npu_chip_info_error_code_4", Gauge, Huawei, Some(G::ChipState), "", "the npu 5th error code", Chip(|c, s| error_code(c, s, 4))),
    def("npu_chip_info_error_code_5", Gauge, Huawei, Some(G::ChipState), "", "the npu 6th error code", Chip(|c, s| error_code(c, s, 5))),
    def("npu_chip_info_error_code_6", Gauge, Huawei, Some(G::ChipState), "", "the npu 7th error code", Chip(|c, s| error_code(c, s, 6))),
    def("npu_chip_info_error_code_7", Gauge, Huawei, Some(G::ChipState), "", "the npu 8th error code", Chip(|c, s| error_code(c, s, 7))),
    def("npu_chip_info_error_code_8", Gauge, Huawei, Some(G::ChipState), "", "the npu 9th error code", Chip(|c, s| error_code(c, s, 8))),
    def("npu_chip_info_error_code_9", Gauge, Huawei, Some(G::ChipState), "", "the npu 10th error code", Chip(|c, s| error_code(c, s, 9))),
    def("npu_chip_info_temperature", Gauge, Huawei, Some(G::ChipState), "", "the npu temperature (celsius)",
        Chip(|c, s| if let Some(t) = c.chip.temperature { s.push(f64::from(t.0)) })),
    def("npu_chip_info_power", Gauge, Huawei, Some(G::ChipState), "", "the npu power (W; 310P: whole card)",
        Chip(|c, s| if let Some(p) = c.chip.power { s.push(p.watts().0) })),
    def("npu_chip_info_voltage", Gauge, Huawei, Some(G::ChipState), "", "the npu voltage (V)",
        Chip(|c, s| if let Some(v) = c.chip.voltage { s.push(v.0) })),
    def("npu_chip_info_aicore_current_freq", Gauge, Huawei, Some(G::ChipState), "", "the npu ai core current frequency (MHz)",
        Chip(|c, s| if let Some(f) = c.chip.clock_of(FrequencyKind::AiCoreCurrent) { s.push(f64::from(f.0)) })),
    def("npu_chip_info_process_info_num", Gauge, Huawei, Some(G::Memory), "", "the npu process num",
        Chip(|c, s| if let Some(p) = &c.chip.processes { s.push(p.len() as f64) })),
    def("npu_chip_info_process_info", Gauge, Huawei, Some(G::Memory), "process_id, container_id",
        "the npu process memory (MB); container_id is empty (attribution is per pod)",
        Chip(|c, s| if let Some(p) = &c.chip.processes {
            for process in p.as_slice() {
                let labels = [("process_id", LabelText::Int(i64::from(process.pid))), ("container_id", "".into())];
                s.push_labeled(labels, megabytes(process.memory_bytes));
            }
        })),
    def("npu_chip_info_utilization", Gauge, Huawei, Some(G::Utilization), "", "the ai core utilization (%)",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::AiCore))),
    def("npu_chip_info_overall_utilization", Gauge, Huawei, Some(G::Utilization), "", "the overall utilization of npu (%)",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::Overall))),
    def("npu_chip_info_vector_utilization", Gauge, Huawei, Some(G::Utilization), "", "the vector ai core utilization (%)",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::VectorCore))),
    def("npu_chip_info_cube_utilization", Gauge, Huawei, Some(G::Utilization), "", "the cube ai core utilization (%)",
        Chip(|c, s| utilization_percent(c, s, UtilizationKind::AiCube))),
    def("npu_chip_info_total_memory", Gauge, Huawei, Some(G::Memory), "", "the npu total memory (DDR, MB)",
        Chip(|c, s| if let Some(d) = &c.chip.ddr { s.push(megabytes(d.total_bytes)) })),
    def("npu_chip_info_used_memory", Gauge, Huawei, Some(G::Memory), "", "the npu used memory (DDR, MB)",
        Chip(|c, s| if let Some(d) = &c.chip.ddr { s.push(megabytes(d.used_bytes())) })),
    def("npu_chip_info_hbm_total_memory", Gauge, Huawei, Some(G::Memory), "", "the npu hbm total memory (MB)",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(megabytes(h.total_bytes)) })),
    def("npu_chip_info_hbm_used_memory", Gauge, Huawei, Some(G::Memory), "", "the npu hbm used memory (MB)",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(megabytes(h.used_bytes)) })),
    def("npu_chip_info_hbm_utilization", Gauge, Huawei, Some(G::Memory), "", "the npu hbm utilization (%)",
        Chip(|c, s| if let Some(h) = c.chip.hbm.filter(|h| h.total_bytes > 0) {
            s.push(h.used_bytes as f64 * 100.0 / h.total_bytes as f64);
        })),
    def("npu_chip_info_hbm_temperature", Gauge, Huawei, Some(G::Memory), "", "the npu hbm temperature (celsius)",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(f64::from(h.temperature.0)) })),
    def("npu_chip_info_hbm_bandwidth_utilization", Gauge, Huawei, Some(G::Memory), "", "the npu hbm bandwidth utilization (%)",
        Chip(|c, s| if let Some(h) = &c.chip.hbm { s.push(f64::from(h.bandwidth_utilization.get())) })),
    def("npu_chip_info_hbm_ecc_enable_flag", Gauge, Huawei, Some(G::Memory), "", "whether HBM ecc detection is enabled",
        Chip(|c, s| hbm_ecc(c, s, |e| u32::from(e.enabled)))),
    def("npu_chip_info_hbm_ecc_single_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm single bit error count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.single_bit_errors))),
    def("npu_chip_info_hbm_ecc_double_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm double bit error count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.double_bit_errors))),
    def("npu_chip_info_hbm_ecc_total_single_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm lifetime single bit error count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.total_single_bit_errors))),
    def("npu_chip_info_hbm_ecc_total_double_bit_error_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm lifetime double bit error count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.total_double_bit_errors))),
    def("npu_chip_info_hbm_ecc_single_bit_isolated_pages_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm single bit isolated pages count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.single_bit_isolated_pages))),
    def("npu_chip_info_hbm_ecc_double_bit_isolated_pages_cnt", Gauge, Huawei, Some(G::Memory), "", "the npu hbm double bit isolated pages count",
        Chip(|c, s| hbm_ecc(c, s, |e| e.double_bit_isolated_pages))),
    def("npu_chip_info_network_status", Gauge, Huawei, Some(G::ChipState), "", "the npu network health state: 1 healthy, 0 unhealthy",
        Chip(|c, s| if let Some(n) = c.chip.network { s.push_bool(n.is_healthy()) })),
    def("container_npu_utilization", Gauge, Huawei, Some(G::Utilization), "",
        "the npu ai core utilization in container (%), on chips held by one container",
        Chip(|c, s| if c.holders.len() == 1 { utilization_percent(c, s, UtilizationKind::AiCore) })),
    def("container_npu_total_memory", Gauge, Huawei, Some(G::Memory), "",
        "the npu total memory in container (MB: HBM, else DDR)",
        Chip(|c, s| if c.holders.len() == 1 { if let Some(total) = device_memory_total(c.chip) { s.push(megabytes(total)) } })),
    def("container_npu_used_memory", Gauge, Huawei, Some(G::Memory), "",
        "the npu used memory in container (MB: HBM, else DDR)",
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

fn count_health(m: &MachineView<'_>, healthy: bool) -> f64 {
    let chips = m.snapshot.map_or(&[][..], |snap| snap.chips.as_slice());
    chips.iter().filter(|c| c.health.as_ref().is_some_and(|h| h.is_healthy() == healthy)).count() as f64
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
pub fn device_memory_used(chip: &ChipSnapshot) -> Option<u64> {
    chip.hbm.map(|h| h.used_bytes).or_else(|| chip.ddr.map(|d| d.used_bytes()))
}

/// Device memory size: HBM where the chip has it, else DDR.
pub fn device_memory_total(chip: &ChipSnapshot) -> Option<u64> {
    chip.hbm.map(|h| h.total_bytes).or_else(|| chip.ddr.map(|d| d.total_bytes))
}
