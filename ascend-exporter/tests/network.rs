//! The readings through `hccn_tool` end to end: the exporter runs the simulated tool of a dcmi-sim fake host and
//! serves Huawei's network, roce and optical names for each sample host, a link taken down by the overlay, and fresh
//! readings of the other chips while one chip's tool hangs.
//!
//! Cargo builds no binary of a dev-dependency, so this test executable is the tool too (as in ascend-hccn's
//! `simulated_tool.rs`): installed in the fake host as `hccn_tool`, it runs `dcmi_sim::hccn_tool::run`; started as
//! the exporter's child (see `support`), it runs the exporter; otherwise it runs the tests below (`harness = false`;
//! a name given on the command line filters them).

mod support;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use dcmi_sim::fake_host::{beside_library, FakeHost, FakeHostOptions};
use dcmi_sim::hccn_tool::{Link, NetworkOverlay};
use dcmi_sim::library_home::{CONFIG_FILE_NAME, OVERLAY_FILE_NAME};
use dcmi_sim::Overlay;
use support::{get, promtool_check_metrics, Exporter};

fn main() -> ExitCode {
    let mut arguments = std::env::args_os();
    let program = PathBuf::from(arguments.next().unwrap_or_default());
    let arguments: Vec<String> = arguments.map(|arg| arg.to_string_lossy().into_owned()).collect();
    if program.file_name().is_some_and(|name| name == "hccn_tool") {
        return ExitCode::from(dcmi_sim::hccn_tool::run(
            &program,
            &arguments,
            &mut std::io::stdout(),
            &mut std::io::stderr(),
        ));
    }
    if arguments.iter().any(|arg| arg == "exporter_child") {
        support::run_exporter_child();
        return ExitCode::SUCCESS;
    }
    let filters: Vec<&String> = arguments.iter().filter(|arg| !arg.starts_with('-')).collect();
    let tests: [(&str, fn()); 4] = [
        (
            "every_hccn_tool_name_huawei_emits_on_each_sample_host",
            every_hccn_tool_name_huawei_emits_on_each_sample_host,
        ),
        ("a_link_down_overlay_shows_as_link_status_0", a_link_down_overlay_shows_as_link_status_0),
        ("a_hung_tool_on_one_chip_leaves_the_other_chips_fresh", a_hung_tool_on_one_chip_leaves_the_other_chips_fresh),
        ("promtool_accepts_the_native_network_names", promtool_accepts_the_native_network_names),
    ];
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let mut failed = 0;
    for (name, test) in &chosen {
        let outcome = std::panic::catch_unwind(test);
        println!("test {name} ... {}", if outcome.is_ok() { "ok" } else { "FAILED" });
        failed += usize::from(outcome.is_err());
    }
    let verdict = if failed == 0 { "ok" } else { "FAILED" };
    println!("\ntest result: {verdict}. {} passed; {failed} failed\n", chosen.len() - failed);
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Huawei's card labels (`CardLabel`), then a UB port's.
const CARD_LABELS: [&str; 7] =
    ["id", "model_name", "vdie_id", "pcie_bus_info", "namespace", "pod_name", "container_name"];

/// The hccn_tool names Huawei's exporter registers on a training card (collector_for_network.go, _roce.go,
/// _optical.go of Ascend/mind-cluster component/npu-exporter/collector/metrics).
const TRAINING_NAMES: [&str; 37] = [
    "npu_chip_info_bandwidth_tx",
    "npu_chip_info_bandwidth_rx",
    "npu_chip_link_speed",
    "npu_chip_link_up_num",
    "npu_chip_info_link_status",
    "npu_chip_mac_rx_pause_num",
    "npu_chip_mac_tx_pause_num",
    "npu_chip_mac_rx_pfc_pkt_num",
    "npu_chip_mac_tx_pfc_pkt_num",
    "npu_chip_mac_rx_bad_pkt_num",
    "npu_chip_mac_tx_bad_pkt_num",
    "npu_chip_mac_tx_bad_oct_num",
    "npu_chip_mac_rx_bad_oct_num",
    "npu_chip_info_rx_fcs_num",
    "npu_chip_info_rx_ecn_num",
    "npu_chip_roce_rx_all_pkt_num",
    "npu_chip_roce_tx_all_pkt_num",
    "npu_chip_roce_rx_err_pkt_num",
    "npu_chip_roce_tx_err_pkt_num",
    "npu_chip_roce_rx_cnp_pkt_num",
    "npu_chip_roce_tx_cnp_pkt_num",
    "npu_chip_roce_new_pkt_rty_num",
    "npu_chip_roce_out_of_order_num",
    "npu_chip_roce_qp_status_err_num",
    "npu_chip_roce_unexpected_ack_num",
    "npu_chip_roce_verification_err_num",
    "npu_chip_optical_state",
    "npu_chip_optical_vcc",
    "npu_chip_optical_temp",
    "npu_chip_optical_tx_power_0",
    "npu_chip_optical_tx_power_1",
    "npu_chip_optical_tx_power_2",
    "npu_chip_optical_tx_power_3",
    "npu_chip_optical_rx_power_0",
    "npu_chip_optical_rx_power_1",
    "npu_chip_optical_rx_power_2",
    "npu_chip_optical_rx_power_3",
];

/// The hccn_tool names Huawei's exporter registers on Ascend950, each per UB port.
const UB_NAMES: [&str; 13] = [
    "npu_chip_info_bandwidth_tx",
    "npu_chip_info_bandwidth_rx",
    "npu_chip_info_link_status",
    "npu_chip_info_link_speed",
    "npu_chip_info_optical_index_num",
    "npu_chip_info_optical_tx_power_0",
    "npu_chip_info_optical_tx_power_1",
    "npu_chip_info_optical_tx_power_2",
    "npu_chip_info_optical_tx_power_3",
    "npu_chip_info_optical_rx_power_0",
    "npu_chip_info_optical_rx_power_1",
    "npu_chip_info_optical_rx_power_2",
    "npu_chip_info_optical_rx_power_3",
];

/// Every name of the three groups, to count those a host serves.
fn all_hccn_names() -> Vec<&'static str> {
    let mut names: Vec<&str> = TRAINING_NAMES.iter().chain(UB_NAMES.iter()).copied().collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The topology of a sample host of dcmi-sim.
fn sample_topology(sample: &str) -> dcmi_sim::Topology {
    dcmi_sim::samples::by_name(sample).expect("sample").topology().expect("valid sample")
}

/// A fake host of `sample` with this executable as its `hccn_tool`.
struct Host {
    _root: tempfile::TempDir,
    host: FakeHost,
}

impl Host {
    fn new(sample: &str) -> Host {
        let options = FakeHostOptions::with_built_library(std::env::current_exe().expect("this test executable"))
            .unwrap_or_else(|error| panic!("{error}"));
        let root = tempfile::tempdir().expect("temporary directory");
        let host =
            FakeHost::build(&sample_topology(sample), root.path(), &options).unwrap_or_else(|error| panic!("{error}"));
        Host { _root: root, host }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.host.path(&beside_library(name))
    }

    /// Writes the overlay both the simulated library and tool read.
    fn overlay(&self, entries: &[(u32, NetworkOverlay)]) {
        self.host.write_overlay(&Overlay::network_faults(entries)).expect("overlay written");
    }

    /// The exporter on this host, its network groups read every `interval`.
    fn exporter(&self, dir: &Path, interval: &str, extra_args: &[&str]) -> Exporter {
        let selection = dir.join("selection.toml");
        let groups =
            ["network", "roce", "optical"].map(|group| format!("[groups.{group}]\ninterval = \"{interval}\"\n"));
        std::fs::write(&selection, groups.concat()).expect("write selection");
        let selection = format!("--metrics.selection-file={}", selection.display());
        let tool = format!("--hccn-tool.path={}", self.host.hccn_tool.as_ref().expect("tool installed").display());
        let mut args = vec![selection.as_str(), tool.as_str()];
        args.extend_from_slice(extra_args);
        let overlay = self.file(OVERLAY_FILE_NAME);
        let exporter = Exporter::start(&self.file(CONFIG_FILE_NAME), &args, &[("DCMI_SIM_OVERLAY", &overlay)]);
        exporter.wait_healthy();
        exporter
    }
}

/// One scraped series: its name and labels in order, and its value.
#[derive(Debug)]
struct Series {
    name: String,
    labels: Vec<(String, String)>,
    value: f64,
}

fn scrape(exporter: &Exporter) -> Vec<Series> {
    let response = get(exporter.address, "/metrics", &[]).expect("scrape");
    assert_eq!(response.status, 200);
    response.body.lines().filter(|line| !line.starts_with('#') && !line.is_empty()).map(parse_series).collect()
}

fn parse_series(line: &str) -> Series {
    let (head, value) = line.rsplit_once(' ').expect("a value");
    let (name, labels) = match head.split_once('{') {
        Some((name, rest)) => (name, rest.trim_end_matches('}')),
        None => (head, ""),
    };
    let labels = labels
        .split("\",")
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').expect("key=value");
            (key.to_owned(), value.trim_matches('"').to_owned())
        })
        .collect();
    Series { name: name.to_owned(), labels, value: value.parse().expect("a number") }
}

fn label<'a>(series: &'a Series, key: &str) -> Option<&'a str> {
    series.labels.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
}

/// Scrapes until `done` accepts the series or `timeout` passes; returns the last scrape.
fn scrape_until(exporter: &Exporter, timeout: Duration, done: impl Fn(&[Series]) -> bool) -> Vec<Series> {
    let started = Instant::now();
    loop {
        let series = scrape(exporter);
        if done(&series) || started.elapsed() > timeout {
            return series;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn every_hccn_tool_name_huawei_emits_on_each_sample_host() {
    let hosts: [(&str, &[&str], &[&str]); 4] = [
        ("atlas-800t-a2", &TRAINING_NAMES, &[]),
        ("atlas-800i-a3", &TRAINING_NAMES, &[]),
        ("atlas-950-8", &UB_NAMES, &["udie", "port"]),
        ("atlas-300i-duo", &[], &[]),
    ];
    for (sample, expected, port_labels) in hosts {
        let dir = tempfile::tempdir().expect("temporary directory");
        let host = Host::new(sample);
        let exporter = host.exporter(dir.path(), "1s", &["--metrics.naming=huawei"]);
        let wanted: Vec<String> = CARD_LABELS.iter().chain(port_labels).map(|l| (*l).to_owned()).collect();
        let served = |series: &[Series]| -> BTreeMap<String, usize> {
            let mut names = BTreeMap::new();
            for found in series.iter().filter(|s| all_hccn_names().contains(&s.name.as_str())) {
                let keys: Vec<String> = found.labels.iter().map(|(k, _)| k.clone()).collect();
                assert_eq!(keys, wanted, "{sample}: labels of {found:?}");
                *names.entry(found.name.clone()).or_default() += 1;
            }
            names
        };
        let chips = |series: &[Series]| series.iter().filter(|s| s.name == "npu_chip_info_health_status").count();
        let series = scrape_until(&exporter, Duration::from_secs(20), |series| {
            served(series).len() == expected.len() && expected.iter().all(|name| served(series)[*name] >= chips(series))
        });
        let names = served(&series);
        let missing: Vec<&&str> = expected.iter().filter(|name| !names.contains_key(**name)).collect();
        assert!(missing.is_empty(), "{sample} lacks {missing:?}");
        assert_eq!(names.len(), expected.len(), "{sample} serves {names:?}");
        println!("{sample}: {} hccn_tool names of Huawei's, {} series", names.len(), names.values().sum::<usize>());
        let status = series.iter().filter(|s| s.name == "npu_chip_info_link_status");
        assert!(status.clone().all(|s| s.value == 1.0), "{sample}: every link up");
    }
}

fn a_link_down_overlay_shows_as_link_status_0() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let host = Host::new("atlas-800t-a2");
    let topology = sample_topology("atlas-800t-a2");
    let first = topology.chips().next().expect("a chip").chip;
    host.overlay(&[(first.logic_id, NetworkOverlay { link: Some(Link::Down), ..Default::default() })]);
    let exporter = host.exporter(dir.path(), "1s", &["--metrics.naming=both"]);
    let down = first.phy_id.to_string();
    let status = |series: &[Series], id: &str, name: &str, key: &str| {
        series.iter().find(|s| s.name == name && label(s, key) == Some(id)).map(|s| s.value)
    };
    let series = scrape_until(&exporter, Duration::from_secs(20), |series| {
        status(series, &down, "npu_chip_info_link_status", "id").is_some()
    });
    assert_eq!(status(&series, &down, "npu_chip_info_link_status", "id"), Some(0.0));
    assert_eq!(status(&series, &down, "ascend_npu_network_link_up", "chip"), Some(0.0));
    let others = series.iter().filter(|s| s.name == "npu_chip_info_link_status" && label(s, "id") != Some(&down));
    assert!(others.clone().count() > 0 && others.clone().all(|s| s.value == 1.0), "only that chip is down");
}

fn a_hung_tool_on_one_chip_leaves_the_other_chips_fresh() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let host = Host::new("atlas-800t-a2");
    let topology = sample_topology("atlas-800t-a2");
    let first = topology.chips().next().expect("a chip").chip;
    host.overlay(&[(first.logic_id, NetworkOverlay { tool_hangs: Some(true), ..Default::default() })]);
    let args = ["--metrics.naming=both", "--hccn-tool.timeout=500ms", "--metrics.cache-max-age=0s"];
    let exporter = host.exporter(dir.path(), "1s", &args);
    let hung = first.phy_id.to_string();
    let network_age = |series: &[Series], chip: &str| {
        let age = series.iter().find(|s| {
            s.name == "ascend_npu_sample_age_seconds"
                && label(s, "group") == Some("network")
                && label(s, "chip") == Some(chip)
        });
        age.map(|s| s.value)
    };
    // Several rounds, each with the hung chip's calls killed at the deadline.
    std::thread::sleep(Duration::from_secs(4));
    let series = scrape(&exporter);
    let others: Vec<String> =
        topology.chips().map(|found| found.chip.phy_id.to_string()).filter(|id| *id != hung).collect();
    for chip in &others {
        let age = network_age(&series, chip).unwrap_or_else(|| panic!("chip {chip} has a network age"));
        assert!(age < 2.5, "chip {chip}'s network readings are {age} s old");
        let up = series.iter().find(|s| s.name == "npu_chip_info_link_status" && label(s, "id") == Some(chip));
        assert_eq!(up.map(|s| s.value), Some(1.0), "chip {chip}");
    }
    assert_eq!(network_age(&series, &hung), None, "the hung chip never answered");
    let hung_status = series.iter().find(|s| s.name == "npu_chip_info_link_status" && label(s, "id") == Some(&hung));
    assert_eq!(hung_status.map(|s| s.value), Some(-1.0), "Huawei shows an unread link as -1");
    assert!(!series.iter().any(|s| s.name == "npu_chip_roce_rx_all_pkt_num" && label(s, "id") == Some(&hung)));
    let driver = series.iter().find(|s| s.name == "ascend_npu_up" && label(s, "chip") == Some(&hung));
    assert_eq!(driver.map(|s| s.value), Some(1.0), "the driver's readings are not affected");
}

fn promtool_accepts_the_native_network_names() {
    for sample in ["atlas-800t-a2", "atlas-950-8"] {
        let dir = tempfile::tempdir().expect("temporary directory");
        let host = Host::new(sample);
        let exporter = host.exporter(dir.path(), "1s", &["--metrics.naming=both"]);
        scrape_until(&exporter, Duration::from_secs(20), |series| {
            ["ascend_npu_network_link_up", "ascend_npu_optical_power_watts"]
                .iter()
                .all(|name| series.iter().any(|s| s.name == *name))
        });
        let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
        for name in ["ascend_npu_network_bandwidth_bytes_per_second", "ascend_npu_optical_power_watts"] {
            assert!(body.contains(name), "{sample} serves {name}");
        }
        // As in metrics.rs: Huawei's verbatim names may draw lint findings (exit 3), native ones none.
        let (code, message) = promtool_check_metrics(&body);
        assert!(code == 0 || code == 3, "{sample}: promtool check metrics failed to parse: {message}");
        for finding in message.lines().filter(|line| !line.trim().is_empty()) {
            let metric = finding.split_whitespace().next().unwrap_or_default();
            assert!(!metric.starts_with("ascend_npu_"), "{sample}: lint finding on a native metric: {finding}");
        }
    }
}
