//! Huawei naming on the simulator's sample hosts: each Huawei npu-exporter name is served on the chip types whose
//! collector emits it and absent on the others, with Huawei's labels and values.
//!
//! Which names appear where follows Huawei's collectors (Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_*.go, their `IsSupported` checks).

mod support;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use support::{get, sample_value, Exporter};

support::child_entry!();

/// The names of every sample in a classic-text body.
fn served_names(body: &str) -> BTreeSet<String> {
    body.lines()
        .filter(|line| !line.starts_with('#') && !line.is_empty())
        .filter_map(|line| line.split(['{', ' ']).next())
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

fn scrape_topology(name: &str, topology: &Path) -> String {
    let exporter = Exporter::start(topology, &["--metrics.naming=huawei", "--pod-resources.disable"], &[]);
    exporter.wait_healthy();
    let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
    eprintln!("{name}: {} Huawei names served", served_names(&body).len());
    body
}

/// Names every sample host serves.
const EVERYWHERE: [&str; 3] = ["node_base_info", "machine_npu_nums", "machine_unknown_npu_nums"];

/// Scrapes the sample host `name` in Huawei naming and checks the names it must and must not serve and the values
/// of some series (`series` is a line prefix up to the value).
fn check_host(name: &str, present: &[&str], absent: &[&str], values: &[(&str, f64)]) -> String {
    let body = huawei_scrape(name);
    let names = served_names(&body);
    for wanted in EVERYWHERE.iter().chain(present) {
        assert!(names.contains(*wanted), "{name}: {wanted} missing; served: {names:?}");
    }
    for unwanted in absent {
        assert!(!names.contains(*unwanted), "{name}: {unwanted} served");
    }
    for (series, value) in values {
        assert_eq!(sample_value(&body, series), Some(*value), "{name}: {series}");
    }
    body
}

/// The HCCS statistic names of links `links`.
fn hccs_statistic_names(links: std::ops::Range<usize>) -> Vec<String> {
    let kinds = ["tx_cnt", "rx_cnt", "crc_err_cnt"];
    links.flat_map(|link| kinds.map(|kind| format!("npu_chip_info_hccs_statistic_info_{kind}_{link}"))).collect()
}

const SIO: [&str; 2] = ["npu_chip_info_sio_crc_tx_err_cnt", "npu_chip_info_sio_crc_rx_err_cnt"];

/// Huawei's card labels of chip `phy` without a holder, up to the model name.
fn chip(name: &str, phy: u32) -> String {
    format!("{name}{{id=\"{phy}\",model_name=")
}

#[test]
fn atlas_800t_a2_serves_the_910b_names() {
    let node = "node_base_info{exporterVersion=\"0.1.0\",driverVersion=\"24.1.rc2\"}";
    let values = [("machine_card_nums ", 8.0), ("machine_unknown_npu_nums ", 0.0), (node, 1.0)];
    let links = hccs_statistic_names(1..8);
    let present: Vec<&str> = ["machine_card_nums"].into_iter().chain(links.iter().map(String::as_str)).collect();
    // Link 0 is never reported on 910B; no SIO on a one-die chip.
    let absent: Vec<String> = hccs_statistic_names(0..1).into_iter().chain(SIO.map(str::to_owned)).collect();
    let absent: Vec<&str> = absent.iter().map(String::as_str).collect();
    let body = check_host("atlas-800t-a2", &present, &absent, &values);
    let crc = chip("npu_chip_info_hccs_statistic_info_crc_err_cnt_1", 4);
    assert_eq!(sample_value(&body, &crc), Some(0.0));
    let tx = chip("npu_chip_info_hccs_statistic_info_tx_cnt_3", 4);
    assert!(sample_value(&body, &tx).is_some_and(|count| count > 0.0), "message counters grow: {tx}");
}

/// A failed HCCS read is -1 on every link, as Huawei reports it; the other chips keep their counters.
#[test]
fn a_failed_hccs_read_is_minus_one() {
    let dir = tempfile::tempdir().expect("temp dir");
    let sample = std::fs::read_to_string(sample_topology("atlas-800t-a2")).expect("sample topology");
    let failing = "\n[[inject]]\nfunction = \"dcmi_get_device_info\"\nlogic_id = 0\ncode = -8005\n";
    let topology = dir.path().join("failing-hccs.toml");
    std::fs::write(&topology, format!("{sample}{failing}")).expect("write topology");
    let body = scrape_topology("failing-hccs", &topology);
    for name in hccs_statistic_names(1..8) {
        assert_eq!(sample_value(&body, &chip(&name, 4)), Some(-1.0), "{name} of the failing chip");
        assert!(sample_value(&body, &chip(&name, 5)).is_some_and(|value| value >= 0.0), "{name} of another chip");
    }
}

#[test]
fn atlas_300i_duo_counts_its_cards_not_its_chips() {
    let values = [("machine_card_nums ", 4.0), ("machine_npu_nums ", 8.0)];
    check_host("atlas-300i-duo", &["machine_card_nums"], &[], &values);
}

#[test]
fn atlas_800i_a3_serves_the_a3_names() {
    let links = hccs_statistic_names(1..8);
    let present: Vec<&str> =
        ["machine_card_nums"].into_iter().chain(SIO).chain(links.iter().map(String::as_str)).collect();
    let crc = chip("npu_chip_info_hccs_statistic_info_crc_err_cnt_7", 0);
    let (sio_tx, sio_rx) = (chip(SIO[0], 0), chip(SIO[1], 0));
    let values = [("machine_card_nums ", 8.0), (crc.as_str(), 3.0), (sio_tx.as_str(), 1.0), (sio_rx.as_str(), 2.0)];
    let absent = hccs_statistic_names(0..1);
    check_host("atlas-800i-a3", &present, &absent.iter().map(String::as_str).collect::<Vec<_>>(), &values);
}

#[test]
fn atlas_950_has_no_cards_and_no_hccs() {
    let hccs = hccs_statistic_names(0..8);
    let absent: Vec<&str> = ["machine_card_nums"].into_iter().chain(hccs.iter().map(String::as_str)).collect();
    check_host("atlas-950-8", &SIO, &absent, &[]);
}

#[test]
fn edge_310_is_not_counted_by_card() {
    let hccs = hccs_statistic_names(0..8);
    let absent: Vec<&str> =
        ["machine_card_nums"].into_iter().chain(SIO).chain(hccs.iter().map(String::as_str)).collect();
    check_host("edge-310", &[], &absent, &[]);
}
