//! Huawei naming on the simulator's sample hosts: each Huawei npu-exporter name is served on the chip types whose
//! collector emits it and absent on the others, with Huawei's labels and values.
//!
//! Which names appear where follows Huawei's collectors (Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_*.go, their `IsSupported` checks).

mod support;

use std::collections::BTreeSet;
use std::path::PathBuf;

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

/// A Huawei-naming scrape of the sample host `name` (dcmi-sim/topologies/<name>.toml), after the first round.
fn huawei_scrape(name: &str) -> String {
    let topology = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("../dcmi-sim/topologies/{name}.toml"));
    let exporter = Exporter::start(&topology, &["--metrics.naming=huawei", "--pod-resources.disable"], &[]);
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

#[test]
fn atlas_800t_a2_serves_the_910b_names() {
    let node = "node_base_info{exporterVersion=\"0.1.0\",driverVersion=\"24.1.rc2\"}";
    let values = [("machine_card_nums ", 8.0), ("machine_unknown_npu_nums ", 0.0), (node, 1.0)];
    check_host("atlas-800t-a2", &["machine_card_nums"], &[], &values);
}

#[test]
fn atlas_300i_duo_counts_its_cards_not_its_chips() {
    let values = [("machine_card_nums ", 4.0), ("machine_npu_nums ", 8.0)];
    check_host("atlas-300i-duo", &["machine_card_nums"], &[], &values);
}

#[test]
fn atlas_800i_a3_serves_the_a3_names() {
    check_host("atlas-800i-a3", &["machine_card_nums"], &[], &[("machine_card_nums ", 8.0)]);
}

#[test]
fn atlas_950_has_no_cards() {
    check_host("atlas-950-8", &[], &["machine_card_nums"], &[]);
}

#[test]
fn edge_310_is_not_counted_by_card() {
    check_host("edge-310", &[], &["machine_card_nums"], &[]);
}
