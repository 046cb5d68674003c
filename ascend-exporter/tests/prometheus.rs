//! A real Prometheus (Debian's 2.42) scrapes the real exporter on a simulated host and returns the simulated values
//! through its query API. Proves the OpenMetrics output is ingested as Prometheus negotiates it.

mod support;

use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use support::prometheus::{query, start_prometheus};
use support::{expected_temperature, get, write_topology, Exporter, PROMETHEUS_ACCEPT};

support::child_entry!();

const CHIPS: usize = 3;

/// Waits (up to 60 s: a fresh Prometheus scrapes after 5 to 6 s) until `promql` returns `count` series.
fn wait_results(prometheus: SocketAddr, promql: &str, count: usize) -> Vec<serde_json::Value> {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if get(prometheus, "/-/ready", &[]).is_ok_and(|r| r.status == 200) {
            let answer = query(prometheus, promql);
            let results = answer["data"]["result"].as_array().cloned().unwrap_or_default();
            if results.len() == count {
                return results;
            }
        }
        assert!(Instant::now() < deadline, "Prometheus returned no {count} series of {promql} within 60 s");
        std::thread::sleep(Duration::from_millis(250));
    }
}

#[test]
fn prometheus_scrapes_and_returns_the_simulated_values() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), CHIPS, "");
    let exporter = Exporter::start(&topology, &["--pod-resources.disable"], &[]);
    exporter.wait_healthy();
    let (_prometheus, address) = start_prometheus(dir.path(), exporter.address, &[]);
    let temperatures = wait_results(address, "ascend_npu_temperature_celsius", CHIPS);
    for result in &temperatures {
        let phy: usize = result["metric"]["chip"].as_str().and_then(|c| c.parse().ok()).expect("chip label");
        let logic = CHIPS - 1 - phy;
        let value: f64 = result["value"][1].as_str().and_then(|v| v.parse().ok()).expect("sample value");
        assert_eq!(value, expected_temperature(logic) as f64, "chip {phy}");
        assert_eq!(result["metric"]["node"], "test-node");
        assert_eq!(result["metric"]["job"], "npu-exporter");
    }
    let up = query(address, "up{job=\"npu-exporter\"}");
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "scrape succeeded: {up}");
    let info = query(address, "ascend_npu_chip_info");
    let info_results = info["data"]["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(info_results.len(), CHIPS, "the OpenMetrics info metric is ingested: {info}");
    assert_eq!(info_results[0]["metric"]["chip_name"], "910B3");
    let ratio = query(address, "sum(ascend_npu_utilization_ratio{unit=\"aicore\"})");
    let total: f64 = ratio["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse().ok()).expect("sum");
    let expected: f64 = (0..CHIPS).map(|logic| logic as f64 / 100.0).sum();
    assert!((total - expected).abs() < 1e-9, "{total} vs {expected}");
    prometheus_ingests_the_gzip_scrapes(address, &exporter);
}

fn single_value(prometheus: SocketAddr, promql: &str) -> Option<f64> {
    let answer = query(prometheus, promql);
    answer["data"]["result"][0]["value"][1].as_str().and_then(|v| v.parse().ok())
}

/// Prometheus 2.42 asks for gzip on every scrape; what it reports having ingested must be what the exporter serves
/// uncompressed: as many samples as the body's sample lines, and the body's size. (Prometheus reports the decoded size
/// only; the compressed size on the wire is checked by tests/compression.rs.)
fn prometheus_ingests_the_gzip_scrapes(prometheus: SocketAddr, exporter: &Exporter) {
    let headers = [("Accept", PROMETHEUS_ACCEPT), ("Accept-Encoding", "gzip")];
    let answer = get(exporter.address, "/metrics", &headers).expect("scrape as Prometheus does");
    assert_eq!(answer.header("content-encoding"), Some("gzip"), "Prometheus' request headers get gzip");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let body = get(exporter.address, "/metrics", &[("Accept", PROMETHEUS_ACCEPT)]).expect("scrape").body;
        let samples = body.lines().filter(|line| !line.is_empty() && !line.starts_with('#')).count() as f64;
        let scraped = single_value(prometheus, "scrape_samples_scraped{job=\"npu-exporter\"}");
        let size = single_value(prometheus, "scrape_body_size_bytes{job=\"npu-exporter\"}");
        // Sample values change length between rounds (ages, timestamps): the size agrees within a few bytes a line.
        let size_agrees = size.is_some_and(|size| (size - body.len() as f64).abs() <= samples * 4.0);
        if scraped == Some(samples) && size_agrees {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "Prometheus ingested {scraped:?} samples of {size:?} bytes; the exporter serves {samples} in {} bytes",
            body.len()
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}

/// An Atlas 950 node (DCMI V2): Prometheus ingests the same metric set for its eight NPUs, and what the V2 API has no
/// call for is absent, not zero: no card/device locator in `ascend_npu_chip_info` (V2 has no card/device pair), no
/// card power (no MCU call), no DDR series.
#[test]
fn prometheus_scrapes_an_atlas_950_node() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dcmi-sim/topologies/atlas-950-8.toml");
    let exporter = Exporter::start(&topology, &["--pod-resources.disable"], &[]);
    exporter.wait_healthy();
    let (_prometheus, address) = start_prometheus(dir.path(), exporter.address, &[]);
    let info = wait_results(address, "ascend_npu_chip_info", 8);
    let mut chips: Vec<u32> = info.iter().filter_map(|r| r["metric"]["chip"].as_str()?.parse().ok()).collect();
    chips.sort_unstable();
    assert_eq!(chips, (0..8).collect::<Vec<u32>>());
    for result in &info {
        let labels = &result["metric"];
        assert_eq!(
            (labels["chip_type"].as_str(), labels["chip_name"].as_str()),
            (Some("Ascend950"), Some("Ascend950DT"))
        );
        // Prometheus drops empty labels: the series has none rather than an invented card 0.
        assert!(labels.get("card").is_none() && labels.get("device").is_none(), "{labels}");
    }
    for present in [
        "ascend_npu_healthy",
        "ascend_npu_temperature_celsius",
        "ascend_npu_power_watts{scope=\"chip\"}",
        "ascend_npu_memory_total_bytes{memory=\"hbm\"}",
        "ascend_npu_utilization_ratio{unit=\"aicore\"}",
        "ascend_npu_network_healthy",
    ] {
        assert_eq!(wait_results(address, present, 8).len(), 8, "{present}");
    }
    for absent in [
        "ascend_npu_power_watts{scope=\"card\"}",
        "ascend_npu_memory_total_bytes{memory=\"ddr\"}",
        "ascend_npu_ddr_hugepages",
    ] {
        let answer = query(address, absent);
        assert_eq!(answer["data"]["result"].as_array().map(Vec::len), Some(0), "{absent} must be absent: {answer}");
    }
    let up = query(address, "up{job=\"npu-exporter\"}");
    assert_eq!(up["data"]["result"][0]["value"][1], "1", "scrape succeeded: {up}");
}
