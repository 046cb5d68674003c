//! Huawei naming on the simulator's sample hosts: each Huawei npu-exporter name is served on the chip types whose
//! collector emits it and absent on the others, with Huawei's labels and values.
//!
//! Which names appear where follows Huawei's collectors (Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_*.go, their `IsSupported` checks).

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ascend_exporter::catalogue::{MetricDef, Naming, CATALOGUE};

use support::{get, sample_value, Exporter};

support::child_entry!();

/// The Huawei names of every sample in a classic-text body.
fn served_names(body: &str) -> BTreeSet<String> {
    let huawei: BTreeSet<String> =
        CATALOGUE.iter().filter(|metric| metric.naming == Naming::Huawei).map(MetricDef::exposed_name).collect();
    body.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| line.split(['{', ' ']).next())
        .filter(|name| huawei.contains(*name))
        .map(str::to_owned)
        .collect()
}

fn sample_topology(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../dcmi-sim/topologies/{name}.toml"))
}

/// A Huawei-naming scrape of the sample host `name` (dcmi-sim/topologies/<name>.toml), after the first round.
fn huawei_scrape(name: &str) -> String {
    scrape_topology(name, &sample_topology(name))
}

/// A scrape in both namings once every group, the slow bandwidth group too, has been read on every chip (the native
/// sample ages say when).
fn scrape_topology(name: &str, topology: &Path) -> String {
    let flags = ["--metrics.naming=both", "--pod-resources.disable", "--metrics.cache-max-age=0s"];
    let exporter = Exporter::start(topology, &flags, &[]);
    exporter.wait_healthy();
    let give_up = Instant::now() + Duration::from_secs(10);
    loop {
        let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
        let chips = sample_value(&body, "machine_npu_nums ").unwrap_or_default() as usize;
        let read = |group: &str| {
            let label = format!("group=\"{group}\"");
            body.lines()
                .filter(|line| line.starts_with("ascend_npu_sample_age_seconds{") && line.contains(&label))
                .count()
        };
        if (chips > 0 && read("bandwidth") == chips && read("links") == chips) || Instant::now() > give_up {
            eprintln!("{name}: {} Huawei names served", served_names(&body).len());
            return body;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Names every sample host serves.
const EVERYWHERE: [&str; 3] = ["node_base_info", "machine_npu_nums", "machine_unknown_npu_nums"];

/// Scrapes the sample host `name` and checks the Huawei names it must and must not serve and the values of some
/// series (`series` is a line prefix up to the value).
fn check_host(name: &str, present: &[String], absent: &[String], values: &[(&str, f64)]) -> String {
    let body = huawei_scrape(name);
    let names = served_names(&body);
    for wanted in EVERYWHERE.iter().copied().chain(present.iter().map(String::as_str)) {
        assert!(names.contains(wanted), "{name}: {wanted} missing; served: {names:?}");
    }
    for unwanted in absent {
        assert!(!names.contains(unwanted), "{name}: {unwanted} served");
    }
    for (series, value) in values {
        assert_eq!(sample_value(&body, series), Some(*value), "{name}: {series}");
    }
    body
}

/// Owned copies of name lists, to join them.
fn names<'a>(lists: impl IntoIterator<Item = &'a [&'a str]>) -> Vec<String> {
    lists.into_iter().flatten().map(|name| (*name).to_owned()).collect()
}

/// The per-link HCCS names of links `links`: statistics and bandwidth.
fn hccs_link_names(links: std::ops::Range<usize>) -> Vec<String> {
    let kinds = [
        "statistic_info_tx_cnt",
        "statistic_info_rx_cnt",
        "statistic_info_crc_err_cnt",
        "bandwidth_info_tx",
        "bandwidth_info_rx",
    ];
    links.flat_map(|link| kinds.map(|kind| format!("npu_chip_info_hccs_{kind}_{link}"))).collect()
}

/// Huawei's HCCS names that are not per link.
const HCCS_TOTALS: [&str; 3] = [
    "npu_chip_info_hccs_bandwidth_info_profiling_time",
    "npu_chip_info_hccs_bandwidth_info_total_tx",
    "npu_chip_info_hccs_bandwidth_info_total_rx",
];

const PCIE: [&str; 6] = [
    "npu_chip_info_pcie_rx_p_bw",
    "npu_chip_info_pcie_rx_np_bw",
    "npu_chip_info_pcie_rx_cpl_bw",
    "npu_chip_info_pcie_tx_p_bw",
    "npu_chip_info_pcie_tx_np_bw",
    "npu_chip_info_pcie_tx_cpl_bw",
];

const SIO: [&str; 2] = ["npu_chip_info_sio_crc_tx_err_cnt", "npu_chip_info_sio_crc_rx_err_cnt"];

const CARDS: [&str; 1] = ["machine_card_nums"];

/// Names Huawei's exporter does not serve on 310 and 310P (read through its single-utilisation path), nor without
/// faults.
const V1_UNSERVED: [&str; 3] =
    ["npu_chip_info_overall_utilization", "npu_chip_info_cube_utilization", "npu_chip_info_error_code"];

/// Huawei's 48 UB port counter names (Ascend950).
fn ub_names() -> Vec<String> {
    ascend_dcmi::UB_COUNTER_NAMES.iter().map(|name| format!("npu_chip_info_{name}")).collect()
}

/// Huawei's card labels of chip `phy` without a holder, up to the model name.
fn chip(name: &str, phy: u32) -> String {
    format!("{name}{{id=\"{phy}\",model_name=")
}

#[test]
fn atlas_800t_a2_serves_the_910b_names() {
    let node = "node_base_info{exporterVersion=\"0.1.0\",driverVersion=\"24.1.rc2\"}";
    let values = [("machine_card_nums ", 8.0), ("machine_unknown_npu_nums ", 0.0), (node, 1.0)];
    let present = [names([&CARDS[..], &PCIE, &HCCS_TOTALS]), hccs_link_names(1..8)].concat();
    // Link 0 is never reported on 910B; no SIO on a one-die chip.
    let absent = [hccs_link_names(0..1), names([&SIO[..]]), ub_names()].concat();
    let body = check_host("atlas-800t-a2", &present, &absent, &values);
    let crc = chip("npu_chip_info_hccs_statistic_info_crc_err_cnt_1", 4);
    assert_eq!(sample_value(&body, &crc), Some(0.0));
    let tx = chip("npu_chip_info_hccs_statistic_info_tx_cnt_3", 4);
    assert!(sample_value(&body, &tx).is_some_and(|count| count > 0.0), "message counters grow: {tx}");
    let window = chip("npu_chip_info_hccs_bandwidth_info_profiling_time", 4);
    assert_eq!(sample_value(&body, &window), Some(200.0), "Huawei's default window, in ms");
    let average = body
        .lines()
        .filter(|line| line.starts_with("npu_chip_info_pcie_tx_p_bw{") && line.contains("pcie_bw_type=\"avgPcieBw\""))
        .count();
    assert_eq!(average, 8, "one average per chip");
    // Huawei's spelling of the chip labels and values (peer-tests compares them with Huawei's exporter).
    let huawei_lines = || body.lines().filter(|line| line.starts_with("npu_chip_info_"));
    assert!(huawei_lines().any(|line| line.contains("pcie_bus_info=\"0000:C1:00.0\"")), "upper-case PCIe address");
    assert!(!huawei_lines().any(|line| line.contains("pcie_bus_info=\"0000:c1")), "no lower-case PCIe address");
    let name = "npu_chip_info_name{id=\"4\",name=\"910B3-Ascend-V1\",vdie_id=";
    assert_eq!(sample_value(&body, name), Some(1.0), "name stands where model_name is");
    let hbm_rate = sample_value(
        &body,
        "ascend_npu_utilization_ratio{chip=\"4\",namespace=\"\",pod=\"\",container=\"\",unit=\"hbm\"}",
    );
    let hbm = sample_value(&body, &chip("npu_chip_info_hbm_utilization", 4));
    assert_eq!(hbm, hbm_rate.map(|ratio| (ratio * 100.0).round()), "the driver's HBM utilisation rate");
}

/// A failed HCCS read (statistics or bandwidth) is -1 on every link and in total, as Huawei reports it; the other
/// chips keep their values.
#[test]
fn a_failed_hccs_read_is_minus_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = std::fs::read_to_string(sample_topology("atlas-800t-a2")).expect("sample topology");
    let failing = ["dcmi_get_device_info", "dcmi_get_hccs_link_bandwidth_info"]
        .map(|function| format!("\n[[inject]]\nfunction = \"{function}\"\nlogic_id = 0\ncode = -8005\n"))
        .concat();
    let topology = dir.path().join("failing-hccs.toml");
    std::fs::write(&topology, format!("{sample}{failing}")).expect("write topology");
    let body = scrape_topology("failing-hccs", &topology);
    for name in [hccs_link_names(1..8), names([&HCCS_TOTALS[1..]])].concat() {
        assert_eq!(sample_value(&body, &chip(&name, 4)), Some(-1.0), "{name} of the failing chip");
        assert!(sample_value(&body, &chip(&name, 5)).is_some_and(|value| value >= 0.0), "{name} of another chip");
    }
}

#[test]
fn atlas_300i_duo_counts_its_cards_not_its_chips() {
    let values = [("machine_card_nums ", 4.0), ("machine_npu_nums ", 8.0)];
    // Huawei reads overall and cube utilisation only through the multi-utilisation call (910B, A3, Ascend950); no
    // fault codes without faults.
    let absent = [hccs_link_names(0..8), names([&HCCS_TOTALS[..], &PCIE, &SIO, &V1_UNSERVED]), ub_names()].concat();
    let present = names([&CARDS[..], &["npu_chip_info_product_type"]]);
    check_host("atlas-300i-duo", &present, &absent, &values);
}

#[test]
fn atlas_800i_a3_serves_the_a3_names() {
    let present = [names([&CARDS[..], &SIO, &HCCS_TOTALS]), hccs_link_names(1..8)].concat();
    let crc = chip("npu_chip_info_hccs_statistic_info_crc_err_cnt_7", 0);
    let (sio_tx, sio_rx) = (chip(SIO[0], 0), chip(SIO[1], 0));
    let values = [("machine_card_nums ", 8.0), (crc.as_str(), 3.0), (sio_tx.as_str(), 1.0), (sio_rx.as_str(), 2.0)];
    let absent = [hccs_link_names(0..1), names([&PCIE[..]]), ub_names()].concat();
    check_host("atlas-800i-a3", &present, &absent, &values);
}

#[test]
fn atlas_950_has_no_cards_and_no_hccs() {
    // Huawei reads PCIe bandwidth only on four Ascend950 main boards; this node's is none of them.
    let absent = [hccs_link_names(0..8), names([&CARDS[..], &PCIE, &HCCS_TOTALS])].concat();
    let present = [names([&SIO[..]]), ub_names()].concat();
    let body = check_host("atlas-950-8", &present, &absent, &[]);
    // Two dies of nine UBoE ports per chip in the sample: every counter on every port, with Huawei's udie and port.
    let crc: Vec<&str> = body.lines().filter(|line| line.starts_with("npu_chip_info_crc_error_sum{")).collect();
    assert_eq!(crc.len(), 8 * 2 * 9, "{crc:?}");
    assert!(crc.iter().any(|line| line.contains(",udie=\"1\",port=\"8\"}")), "{crc:?}");
    let pause = body.lines().filter(|line| line.starts_with("npu_chip_info_core_mib_rxpausepkts{")).count();
    assert_eq!(pause, 8 * 2 * 9, "UBoE ports report the core_mib counters");
}

#[test]
fn edge_310_is_not_counted_by_card() {
    // Huawei reads the product type on 310P only.
    let absent = [hccs_link_names(0..8), names([&CARDS[..], &SIO, &PCIE, &HCCS_TOTALS, &V1_UNSERVED]), ub_names()];
    let absent = [absent.concat(), names([&["npu_chip_info_product_type"][..]])].concat();
    check_host("edge-310", &[], &absent, &[]);
}
