//! A real Prometheus (Debian's `prometheus` package) for the exporter's tests: started on a free loopback port with
//! its storage in the test's directory, killed when dropped.

use std::net::{SocketAddr, TcpListener};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::get;

/// The Prometheus process; dropping it kills it.
pub struct Prometheus(Child);

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_loopback_port() -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local address")
}

/// A GET of `path` on the HTTP API of the Prometheus at `prometheus`, parsed.
pub fn api(prometheus: SocketAddr, path: &str) -> serde_json::Value {
    let response = get(prometheus, path, &[]).expect("the API answers");
    assert_eq!(response.status, 200, "{path}: {}", response.body);
    serde_json::from_str(&response.body).expect("JSON answer")
}

/// An instant query.
pub fn query(prometheus: SocketAddr, promql: &str) -> serde_json::Value {
    let encoded: String = promql
        .bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'_' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect();
    api(prometheus, &format!("/api/v1/query?query={encoded}"))
}

/// How often Prometheus scrapes and evaluates its rules.
pub const INTERVAL: Duration = Duration::from_secs(1);

/// Starts Prometheus scraping `target` and evaluating `rule_files` every [`INTERVAL`] (label `node="test-node"` on
/// the target), with its data under `dir`; returns once its API answers.
pub fn start_prometheus(dir: &Path, target: SocketAddr, rule_files: &[PathBuf]) -> (Prometheus, SocketAddr) {
    let config = dir.join("prometheus.yml");
    let interval = INTERVAL.as_secs();
    let mut text = format!(
        "global:\n  scrape_interval: {interval}s\n  scrape_timeout: {interval}s\n  evaluation_interval: {interval}s\n"
    );
    if !rule_files.is_empty() {
        text.push_str("rule_files:\n");
        for file in rule_files {
            text.push_str(&format!("  - {}\n", file.display()));
        }
    }
    text.push_str(&format!(
        "scrape_configs:\n  - job_name: npu-exporter\n    static_configs:\n      - targets: ['{target}']\n        labels:\n          node: test-node\n"
    ));
    std::fs::write(&config, text).expect("write prometheus.yml");
    let address = free_loopback_port();
    let child = Command::new("prometheus")
        .arg(format!("--config.file={}", config.display()))
        .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
        .arg(format!("--web.listen-address={address}"))
        // scrape_body_size_bytes: the size of each scrape's body as Prometheus decoded it.
        .arg("--enable-feature=extra-scrape-metrics")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("prometheus must be installed (Debian package `prometheus`, see scripts/deps/debian.txt)");
    let prometheus = Prometheus(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while !get(address, "/-/ready", &[]).is_ok_and(|response| response.status == 200) {
        assert!(Instant::now() < deadline, "Prometheus at {address} not ready within 60 s");
        std::thread::sleep(Duration::from_millis(100));
    }
    (prometheus, address)
}
