//! Scrape latency stays flat when the simulated driver is slow (5 ms per call) or a chip hangs; a hung chip keeps
//! its last values, marked by `ascend_npu_up 0` and a growing sample age. Prints the measured figures
//! (`cargo test -p ascend-programs --test exporter_latency -- --nocapture`); docs/npu-exporter.md quotes them.

mod support;

use std::path::Path;
use std::time::{Duration, Instant};

use support::{get, sample_value, write_topology, Exporter, PROMETHEUS_ACCEPT};

support::child_entry!();

const CHIPS: usize = 8;
const HUNG_LOGIC: usize = 2;
const SCRAPES: usize = 40;

/// Atomically replaces the simulator's overlay file (it re-reads it within 20 ms).
fn write_overlay(path: &Path, text: &str) {
    let temporary = path.with_extension("tmp");
    std::fs::write(&temporary, text).expect("write overlay");
    std::fs::rename(&temporary, path).expect("replace overlay");
    std::thread::sleep(Duration::from_millis(150));
}

/// Median and maximum of `SCRAPES` scrape latencies, in milliseconds.
fn measure(exporter: &Exporter) -> (f64, f64, String) {
    let mut latencies = Vec::with_capacity(SCRAPES);
    let mut body = String::new();
    for _ in 0..SCRAPES {
        let start = Instant::now();
        let response = get(exporter.address, "/metrics", &[("Accept", PROMETHEUS_ACCEPT)]).expect("scrape");
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
        assert_eq!(response.status, 200);
        body = response.body;
        std::thread::sleep(Duration::from_millis(25));
    }
    latencies.sort_by(f64::total_cmp);
    (latencies[SCRAPES / 2], latencies[SCRAPES - 1], body)
}

fn chip_series(name: &str, phy: usize) -> String {
    format!("{name}{{chip=\"{phy}\",namespace=\"\",pod=\"\",container=\"\"")
}

#[test]
fn scrape_latency_is_flat_under_a_slow_driver_and_a_hung_chip() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), CHIPS, "");
    let overlay = dir.path().join("overlay.toml");
    std::fs::write(&overlay, "").expect("empty overlay");
    let exporter = Exporter::start(
        &topology,
        &["--pod-resources.disable", "--dcmi.deadline=500ms"],
        &[("DCMI_SIM_OVERLAY", overlay.as_path())],
    );
    exporter.wait_healthy();
    std::thread::sleep(Duration::from_millis(1500));

    let (fast_median, fast_max, _) = measure(&exporter);

    write_overlay(&overlay, "[[inject]]\nfunction = \"*\"\nlatency_ms = 5\n");
    std::thread::sleep(Duration::from_secs(2));
    let (slow_median, slow_max, slow_body) = measure(&exporter);
    let hung_phy = CHIPS - 1 - HUNG_LOGIC;
    assert_eq!(
        sample_value(&slow_body, &chip_series("ascend_npu_up", hung_phy)),
        Some(1.0),
        "5 ms calls fit the deadline"
    );

    write_overlay(
        &overlay,
        &format!("[[inject]]\nfunction = \"*\"\nlatency_ms = 5\n\n[[inject]]\nfunction = \"*\"\nlogic_id = {HUNG_LOGIC}\nhang = true\n"),
    );
    std::thread::sleep(Duration::from_secs(3));
    let (hung_median, hung_max, hung_body) = measure(&exporter);

    eprintln!(
        "scrape latency over {SCRAPES} scrapes of {CHIPS} chips (median / max ms): driver instant {fast_median:.2} / {fast_max:.2}; 5 ms per call {slow_median:.2} / {slow_max:.2}; 5 ms per call + one chip hung {hung_median:.2} / {hung_max:.2}"
    );
    let flat = |median: f64, max: f64, case: &str| {
        assert!(
            median < fast_median * 3.0 + 5.0,
            "{case}: median {median:.2} ms vs {fast_median:.2} ms with an instant driver"
        );
        assert!(max < 250.0, "{case}: a scrape took {max:.2} ms");
    };
    flat(slow_median, slow_max, "slow driver");
    flat(hung_median, hung_max, "hung chip");

    assert_eq!(sample_value(&hung_body, &chip_series("ascend_npu_up", hung_phy)), Some(0.0), "the hung chip is down");
    assert_eq!(
        sample_value(&hung_body, &chip_series("ascend_npu_temperature_celsius", hung_phy)),
        Some((40 + HUNG_LOGIC) as f64),
        "the hung chip keeps its last temperature"
    );
    let age_of = |phy: usize| {
        let prefix = chip_series("ascend_npu_sample_age_seconds", phy);
        hung_body
            .lines()
            .find(|line| line.starts_with(&prefix) && line.contains("group=\"utilization\""))
            .and_then(|line| line.rsplit(' ').next())
            .and_then(|value| value.parse::<f64>().ok())
            .expect("utilization sample age")
    };
    assert!(age_of(hung_phy) > 2.0, "the hung chip's values age: {}", age_of(hung_phy));
    let healthy_phy = CHIPS - 1;
    assert!(age_of(healthy_phy) < 2.0, "other chips stay fresh: {}", age_of(healthy_phy));
    assert_eq!(sample_value(&hung_body, &chip_series("ascend_npu_up", healthy_phy)), Some(1.0));
}

/// The largest `ascend_npu_sample_age_seconds` of `group` over every chip in `body`.
fn oldest_sample(body: &str, group: &str) -> Option<f64> {
    let label = format!("group=\"{group}\"");
    body.lines()
        .filter(|line| line.starts_with("ascend_npu_sample_age_seconds{") && line.contains(&label))
        .filter_map(|line| line.rsplit(' ').next()?.parse::<f64>().ok())
        .reduce(f64::max)
}

/// HCCS bandwidth calls that take 1.5 s each (a driver waiting out a long window) run in the slow group's own
/// rounds: the utilisation group keeps its 200 ms interval meanwhile, and the bandwidth still arrives.
#[test]
fn a_slow_bandwidth_call_never_delays_the_fast_groups() {
    let dir = tempfile::tempdir().expect("temp dir");
    let slow_call = "\n[[inject]]\nfunction = \"dcmi_get_hccs_link_bandwidth_info\"\nlatency_ms = 1500\n";
    let topology = write_topology(dir.path(), 4, slow_call);
    let selection = dir.path().join("selection.toml");
    let groups = "[groups.utilization]\ninterval = \"200ms\"\n[groups.bandwidth]\ninterval = \"100ms\"\n";
    std::fs::write(&selection, groups).expect("write selection");
    let selection_flag = format!("--metrics.selection-file={}", selection.display());
    let flags = ["--pod-resources.disable", "--metrics.cache-max-age=0s", selection_flag.as_str()];
    let exporter = Exporter::start(&topology, &flags, &[]);
    exporter.wait_healthy();
    let start = Instant::now();
    let mut worst: f64 = 0.0;
    let mut bandwidth_seen = false;
    while start.elapsed() < Duration::from_secs(4) {
        let body = get(exporter.address, "/metrics", &[]).expect("scrape").body;
        worst = worst.max(oldest_sample(&body, "utilization").unwrap_or(0.0));
        bandwidth_seen |= body.contains("ascend_npu_hccs_total_bandwidth_bytes_per_second{");
        std::thread::sleep(Duration::from_millis(100));
    }
    println!("oldest utilisation sample while HCCS bandwidth calls took 1.5 s each: {worst:.3} s");
    assert!(worst < 0.9, "a utilisation sample was {worst} s old: the slow group delayed it");
    assert!(bandwidth_seen, "the slow group's values arrive");
}
