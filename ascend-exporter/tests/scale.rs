//! Scrape latency and steady-state memory of the real exporter on simulated hosts of 8, 64 and 256 chips. Prints
//! the figures (`-- --nocapture`); `NPU_EXPORTER_BINARY=target/release/npu-exporter` measures a release build.

mod support;

use std::time::{Duration, Instant};

use support::{get, sample_value, write_topology, Exporter, PROMETHEUS_ACCEPT};

support::child_entry!();

fn measure(chips: usize) -> (f64, u64, usize) {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), chips, "");
    let exporter = Exporter::start(&topology, &["--pod-resources.disable", "--metrics.naming=both"], &[]);
    exporter.wait_healthy();
    // Let every group complete a few rounds so that the memory figure is the steady state.
    std::thread::sleep(Duration::from_secs(3));
    let mut latencies = Vec::new();
    let mut body = String::new();
    for _ in 0..25 {
        let start = Instant::now();
        body = get(exporter.address, "/metrics", &[("Accept", PROMETHEUS_ACCEPT)]).expect("scrape").body;
        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    latencies.sort_by(f64::total_cmp);
    assert_eq!(sample_value(&body, "ascend_npu_chips "), Some(chips as f64));
    let series = format!("ascend_npu_temperature_celsius{{chip=\"{}\"", chips - 1);
    assert_eq!(sample_value(&body, &series), Some(40.0), "chip with logic id 0");
    (latencies[latencies.len() / 2], exporter.rss_kib(), body.len())
}

#[test]
fn scrape_latency_and_memory_for_8_64_256_chips() {
    for chips in [8, 64, 256] {
        let (median_ms, rss_kib, bytes) = measure(chips);
        eprintln!(
            "{chips} chips: median scrape {median_ms:.2} ms, {bytes} bytes (both namings, OpenMetrics), RSS {} MiB",
            rss_kib / 1024
        );
        assert!(median_ms < 1000.0, "{chips} chips: median scrape {median_ms:.2} ms");
        assert!(rss_kib < 256 * 1024, "{chips} chips: RSS {rss_kib} KiB");
    }
}
