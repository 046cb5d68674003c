//! The readings through `hccn_tool` end to end: the exporter runs the simulated tool of a dcmi-sim fake host and
//! serves Huawei's network, roce and optical names for each sample host, a link taken down by the overlay, and fresh
//! readings of the other chips while one chip's tool hangs.
//!
//! Cargo builds no binary of a dev-dependency, so this test executable is the tool too (as in ascend-hccn's
//! `simulated_tool.rs`): installed in the fake host as `hccn_tool`, it runs `dcmi_sim::hccn_tool::run`; started as
//! the exporter's child (see `support`), it runs the exporter; otherwise it runs the tests below (`harness = false`;
//! a name given on the command line filters them).

mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use dcmi_sim::fake_host::{beside_library, FakeHost, FakeHostOptions};
use dcmi_sim::hccn_tool::{Link, NetworkOverlay};
use dcmi_sim::{Overlay, CONFIG_FILE_NAME, OVERLAY_FILE_NAME};
use support::kubelet::{pod, FakeKubelet};
use support::prometheus::{api, query, start_prometheus, INTERVAL};
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
    let tests: [(&str, fn()); 7] = [
        (
            "every_chip_is_read_soon_after_start_at_huawei_s_60_s_interval",
            every_chip_is_read_soon_after_start_at_huawei_s_60_s_interval,
        ),
        (
            "a_link_down_and_falling_receive_power_fire_the_chart_s_alerts_in_prometheus",
            a_link_down_and_falling_receive_power_fire_the_chart_s_alerts_in_prometheus,
        ),
        ("the_sample_hosts_together_serve_huawei_s_name_list", the_sample_hosts_together_serve_huawei_s_name_list),
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

/// How many of [`UB_NAMES`] come first and are not the optical group's.
const UB_LINK_NAMES: usize = 4;

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
        Host::of(&sample_topology(sample))
    }

    fn of(topology: &dcmi_sim::Topology) -> Host {
        let options = FakeHostOptions::with_built_library(std::env::current_exe().expect("this test executable"))
            .unwrap_or_else(|error| panic!("{error}"));
        let root = tempfile::tempdir().expect("temporary directory");
        let host = FakeHost::build(topology, root.path(), &options).unwrap_or_else(|error| panic!("{error}"));
        Host { _root: root, host }
    }

    fn file(&self, name: &str) -> PathBuf {
        self.host.path(&beside_library(name))
    }

    /// Writes an overlay of network faults, which both the simulated library and tool read.
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
    // Huawei reads no optical modules on the Atlas 950 1D main board (0x07) of atlas-950-8, and reads them on the
    // 16-NPU board (0x44) of atlas-950-16 (collector_for_optical.go, `IsSupported`).
    let hosts: [(&str, &[&str], &[&str]); 5] = [
        ("atlas-800t-a2", &TRAINING_NAMES, &[]),
        ("atlas-800i-a3", &TRAINING_NAMES, &[]),
        ("atlas-950-8", &UB_NAMES[..UB_LINK_NAMES], &["udie", "port"]),
        ("atlas-950-16", &UB_NAMES, &["udie", "port"]),
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
        let series = scrape_until(&exporter, Duration::from_secs(60), |series| {
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
    // The default 5 s deadline, five rounds of the groups: the hung chip's queries wait for it, one at a time.
    let args = ["--metrics.naming=both", "--metrics.cache-max-age=0s"];
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
    // Past the first of the hung chip's calls killed at the deadline.
    std::thread::sleep(Duration::from_secs(6));
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

/// The 199 names Huawei's exporter registers (see the file's header).
const HUAWEI_NAME_LIST: &str = include_str!("fixtures/huawei-metric-names.txt");

/// The names of that list no sample host serves, each with the reason.
const NEVER_SERVED: [(&str, &str); 6] = [
    ("npu_chip_info_hccs_statistic_info_tx_cnt_0", HCCS_INDEX_0),
    ("npu_chip_info_hccs_statistic_info_rx_cnt_0", HCCS_INDEX_0),
    ("npu_chip_info_hccs_statistic_info_crc_err_cnt_0", HCCS_INDEX_0),
    ("npu_chip_info_hccs_bandwidth_info_tx_0", HCCS_INDEX_0),
    ("npu_chip_info_hccs_bandwidth_info_rx_0", HCCS_INDEX_0),
    (
        "npu_container_info",
        "needs each container's id from the container runtime; chips are attributed to pods through the kubelet's \
         PodResources, which has no container id (docs/npu-exporter.md)",
    ),
];

const HCCS_INDEX_0: &str = "registered by Huawei's collector, never emitted: links count from 1 (2 on an A3 SuperPoD)";

/// Ten fault codes, for `npu_chip_info_error_code` to `npu_chip_info_error_code_9`.
fn ten_faults() -> Vec<dcmi_sim::topology::FaultSpec> {
    (0..10).map(|n| dcmi_sim::topology::FaultSpec::Code(0x80E0_1801 + n)).collect()
}

/// The names a Huawei-naming scrape of `sample` serves once every group has been read on every chip, with the
/// network groups read through the simulated tool, ten fault codes on the first chip, and on the 310P two vNPUs of
/// which a pod holds one. Native names (`ascend_npu_*`) are left out.
fn names_served_by(sample: &str, groups: &[&str]) -> BTreeSet<String> {
    let dir = tempfile::tempdir().expect("temporary directory");
    let mut text = dcmi_sim::samples::by_name(sample).expect("sample").toml.to_owned();
    let mut args = vec!["--metrics.naming=both".to_owned(), "--metrics.cache-max-age=0s".to_owned()];
    let mut kubelet = None;
    if sample == "atlas-300i-duo" {
        // The last chip (logic 7, physical 3) gets two vNPUs; a pod holds the first.
        text.push_str("\n[[card.chip.vnpu]]\ntemplate = \"vir02\"\nvdev_id = 100\n");
        text.push_str("\n[[card.chip.vnpu]]\ntemplate = \"vir02\"\nvdev_id = 101\n");
        let socket = dir.path().join("kubelet.sock");
        let holder = pod("infer", "svc-0", "server", "huawei.com/Ascend310P-2c", &["Ascend310P-2c-100-3"]);
        kubelet = Some(FakeKubelet::start(&socket, vec![holder]));
        args.push(format!("--pod-resources.socket={}", socket.display()));
        args.push("--pod-resources.interval=200ms".to_owned());
    } else {
        args.push("--pod-resources.disable".to_owned());
    }
    let topology = dcmi_sim::Topology::from_toml_str(&text, Path::new(sample)).expect("valid topology");
    let host = Host::of(&topology);
    let first = topology.chips().next().expect("a chip").chip.logic_id;
    let faults = dcmi_sim::ChipOverlay { logic_id: first, faults: Some(ten_faults()), ..Default::default() };
    host.host.write_overlay(&Overlay { chips: vec![faults], ..Default::default() }).expect("overlay written");
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let exporter = host.exporter(dir.path(), "1s", &args);
    let chips = topology.chips().count();
    let ready = |series: &[Series]| {
        let read = |group: &str| {
            series
                .iter()
                .filter(|s| s.name == "ascend_npu_sample_age_seconds" && label(s, "group") == Some(group))
                .count()
        };
        let has = |name: &str| series.iter().any(|s| s.name == name);
        groups.iter().all(|group| read(group) == chips)
            && has("npu_chip_info_error_code_9")
            && (kubelet.is_none() || has("vnpu_pod_total_memory"))
    };
    let series = scrape_until(&exporter, Duration::from_secs(60), ready);
    assert!(ready(&series), "{sample}: not every group was read on every chip within 60 s");
    series.into_iter().map(|s| s.name).filter(|name| !name.starts_with("ascend_npu_")).collect()
}

fn the_sample_hosts_together_serve_huawei_s_name_list() {
    let list: BTreeSet<&str> =
        HUAWEI_NAME_LIST.lines().map(str::trim).filter(|line| !line.is_empty() && !line.starts_with('#')).collect();
    assert_eq!(list.len(), 199, "the committed list has Huawei's 199 names");
    let hosts: [(&str, &[&str]); 4] = [
        ("atlas-800t-a2", &["links", "bandwidth", "network", "roce", "optical"]),
        ("atlas-800i-a3", &["links", "bandwidth", "network", "roce", "optical"]),
        ("atlas-950-16", &["links", "network", "optical"]),
        ("atlas-300i-duo", &["vnpu"]),
    ];
    let mut served = BTreeSet::new();
    for (sample, groups) in hosts {
        let names = names_served_by(sample, groups);
        println!("{sample}: {} of Huawei's names", names.len());
        served.extend(names);
    }
    let unknown: Vec<&String> = served.iter().filter(|name| !list.contains(name.as_str())).collect();
    assert!(unknown.is_empty(), "served under names Huawei's exporter does not register (renamed?): {unknown:?}");
    let excepted: BTreeSet<&str> = NEVER_SERVED.iter().map(|(name, _)| *name).collect();
    let missing: Vec<&&str> =
        list.iter().filter(|name| !served.contains(**name) && !excepted.contains(**name)).collect();
    assert!(missing.is_empty(), "no sample host serves {missing:?}");
    for (name, reason) in NEVER_SERVED {
        assert!(list.contains(name), "{name} is not one of Huawei's names");
        assert!(!served.contains(name), "{name} is served now: take it off NEVER_SERVED ({reason})");
    }
    println!("the sample hosts together serve {} of Huawei's {} names", served.len(), list.len());
    assert!(served.len() >= 190, "{} of Huawei's names served; at least 190 wanted", served.len());
}

/// The chart's alerting rules (deploy/helm/ascend-npu/files/alerts.yaml) with every `for:` set to 0s, so that an alert
/// fires at the first evaluation that finds its condition. `promtool test rules` (tests/deploy.rs) covers the
/// durations; what is left here is the path from a fault to a firing alert through a real Prometheus.
fn chart_rules_without_durations(dir: &Path) -> PathBuf {
    let chart = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/helm/ascend-npu/files/alerts.yaml");
    let rules = std::fs::read_to_string(&chart).expect("the chart's rules");
    let mut durations = 0;
    let rewritten: Vec<String> = rules
        .lines()
        .map(|line| match line.trim_start().strip_prefix("for: ") {
            Some(_) => {
                durations += 1;
                format!("{}for: 0s", &line[..line.len() - line.trim_start().len()])
            }
            None => line.to_owned(),
        })
        .collect();
    assert!(durations > 0, "the chart's rules have durations");
    let path = dir.join("alerts.yaml");
    std::fs::write(&path, rewritten.join("\n")).expect("write rules");
    path
}

/// The firing alerts called `name`, by their `chip` label.
fn firing(prometheus: std::net::SocketAddr, name: &str) -> Vec<String> {
    let alerts = api(prometheus, "/api/v1/alerts");
    let list = alerts["data"]["alerts"].as_array().cloned().unwrap_or_default();
    list.iter()
        .filter(|alert| alert["labels"]["alertname"] == name && alert["state"] == "firing")
        .filter_map(|alert| {
            Some(format!("{}@{}", alert["labels"]["chip"].as_str()?, alert["labels"]["node"].as_str()?))
        })
        .collect()
}

fn a_link_down_and_falling_receive_power_fire_the_chart_s_alerts_in_prometheus() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let host = Host::new("atlas-800t-a2");
    let topology = sample_topology("atlas-800t-a2");
    let mut chips = topology.chips().map(|found| found.chip);
    let (down, dark) = (chips.next().expect("a chip"), chips.next().expect("a second chip"));
    let exporter = host.exporter(dir.path(), "1s", &["--pod-resources.disable"]);
    let rules = chart_rules_without_durations(dir.path());
    let (_prometheus, address) = start_prometheus(dir.path(), exporter.address, &[rules]);
    let chip_count = topology.chips().count();
    let ingested = |promql: &str| query(address, promql)["data"]["result"].as_array().map_or(0, Vec::len);
    let started = Instant::now();
    while ingested("ascend_npu_network_link_up == 1") < chip_count {
        assert!(started.elapsed() < Duration::from_secs(60), "Prometheus never had every chip's link up");
        std::thread::sleep(Duration::from_millis(200));
    }
    assert_eq!(firing(address, "AscendNpuNetworkLinkDown"), Vec::<String>::new(), "no link is down yet");
    assert_eq!(firing(address, "AscendNpuOpticalRxPowerLow"), Vec::<String>::new(), "no lane is dark yet");

    let link_down = NetworkOverlay { link: Some(Link::Down), ..Default::default() };
    let falling = NetworkOverlay { rx_power_fall_mw_per_s: Some(1000.0), ..Default::default() };
    host.overlay(&[(down.logic_id, link_down), (dark.logic_id, falling)]);
    let (down_id, dark_id) = (down.phy_id.to_string(), dark.phy_id.to_string());
    // When the exporter first serves each fault.
    let served = |series: &[Series]| {
        let link = series
            .iter()
            .any(|s| s.name == "ascend_npu_network_link_up" && label(s, "chip") == Some(&down_id) && s.value == 0.0);
        let power = series.iter().any(|s| {
            s.name == "ascend_npu_optical_power_watts"
                && label(s, "chip") == Some(&dark_id)
                && label(s, "direction") == Some("receive")
                && s.value < 0.0001
        });
        (link, power)
    };
    let (mut link_served, mut power_served, mut link_fired, mut power_fired) = (None, None, None, None);
    let deadline = Instant::now() + Duration::from_secs(30);
    while (link_fired.is_none() || power_fired.is_none()) && Instant::now() < deadline {
        let now = Instant::now();
        let (link, power) = served(&scrape(&exporter));
        link_served = link_served.or(link.then_some(now));
        power_served = power_served.or(power.then_some(now));
        let expected = |chip: &str| vec![format!("{chip}@test-node")];
        if link_fired.is_none() && firing(address, "AscendNpuNetworkLinkDown") == expected(&down_id) {
            link_fired = Some(Instant::now());
        }
        if power_fired.is_none() && firing(address, "AscendNpuOpticalRxPowerLow").contains(&expected(&dark_id)[0]) {
            power_fired = Some(Instant::now());
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    let (link_served, link_fired) = (link_served.expect("link down served"), link_fired.expect("link alert fired"));
    let (power_served, power_fired) = (power_served.expect("dark lane served"), power_fired.expect("power alert"));
    let link_delay = link_fired.saturating_duration_since(link_served);
    let power_delay = power_fired.saturating_duration_since(power_served);
    println!("served to firing: link down {link_delay:?}, receive power low {power_delay:?}");
    // A scrape picks the fault up within one interval and the next evaluation (every interval too) fires the alert;
    // half a second more for the scrape and the evaluation themselves and this loop's polling, on a busy machine.
    let bound = 2 * INTERVAL + Duration::from_millis(500);
    assert!(link_delay <= bound, "link down fired {link_delay:?} after it was served");
    assert!(power_delay <= bound, "receive power low fired {power_delay:?} after it was served");
    let dark_lanes = firing(address, "AscendNpuOpticalRxPowerLow");
    assert!(dark_lanes.iter().all(|alert| alert == &format!("{dark_id}@test-node")), "only that chip: {dark_lanes:?}");
}

/// The groups' first round may come before the driver's sampler knows every chip's identity (which says whether it has
/// a port): the chips it missed are read once they are known, not an interval later.
fn every_chip_is_read_soon_after_start_at_huawei_s_60_s_interval() {
    let dir = tempfile::tempdir().expect("temporary directory");
    let host = Host::new("atlas-800i-a3");
    let topology = sample_topology("atlas-800i-a3");
    let chips = topology.chips().count();
    // The last chip's type is read late: the groups' first round does not know it has a port.
    let last = topology.chips().last().expect("a chip").chip.logic_id;
    let late: String = ["dcmi_get_device_chip_info", "dcmi_get_device_chip_info_v2"]
        .map(|function| format!("[[inject]]\nfunction = \"{function}\"\nlogic_id = {last}\nlatency_ms = 400\n\n"))
        .concat();
    let overlay = Overlay::from_toml_str(&late, Path::new("overlay")).expect("overlay");
    host.host.write_overlay(&overlay).expect("overlay written");
    let exporter = host.exporter(dir.path(), "60s", &["--metrics.cache-max-age=0s"]);
    let read = |series: &[Series], group: &str| {
        series.iter().filter(|s| s.name == "ascend_npu_sample_age_seconds" && label(s, "group") == Some(group)).count()
    };
    let groups = ["network", "roce", "optical"];
    let series = scrape_until(&exporter, Duration::from_secs(10), |series| {
        groups.iter().all(|group| read(series, group) == chips)
    });
    for group in groups {
        assert_eq!(read(&series, group), chips, "chips with a {group} reading within 10 s of start");
    }
}
