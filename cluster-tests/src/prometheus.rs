//! A real Prometheus (Debian's `prometheus`) beside the test cluster, scraping pods of the node at their pod
//! addresses, which the host reaches over the node's pod bridge. It finds its targets as a `kubernetes_sd_configs`
//! job of role `pod` would (every running pod of the selected ones, at its IP and the given port): the test keeps a
//! file of targets current from the API server (Debian builds Prometheus without Kubernetes discovery), and
//! Prometheus reads it on change.

use std::collections::BTreeMap;
use std::net::{SocketAddr, TcpListener};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::api::{Api, ListParams};

use crate::{wait_until, Cluster, NODE_NAME};

/// Pods to scrape: those of `selector` in `namespace`, at `port`.
#[derive(Debug, Clone)]
pub struct PodTargets {
    /// The pods' namespace.
    pub namespace: &'static str,
    /// A label selector.
    pub selector: &'static str,
    /// The port serving `/metrics`.
    pub port: u16,
}

/// The running Prometheus and the task keeping its targets current; both stopped when dropped.
#[derive(Debug)]
pub struct Prometheus {
    child: Child,
    dir: PathBuf,
    address: SocketAddr,
    discovery: tokio::task::JoinHandle<()>,
    seen: Arc<Mutex<BTreeMap<String, &'static str>>>,
}

impl Prometheus {
    /// Starts Prometheus with one job, `job`, scraping every `interval` the running pods of `targets` (each target
    /// labelled `node`), and returns once its API answers. A sample's time is its scrape's: the job ignores the times
    /// an exporter writes on its samples (Huawei's npu-exporter stamps each with its collection's time, which moves
    /// only as often as its collectors run).
    pub async fn start(cluster: &Cluster, job: &str, interval: Duration, targets: &[PodTargets]) -> Prometheus {
        let dir = std::env::temp_dir().join(format!("ascend-prometheus-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("Prometheus' directory");
        let file = dir.join("targets.json");
        std::fs::write(&file, "[]").expect("write the targets");
        let seconds = format!("{}ms", interval.as_millis());
        let config = format!(
            "global:\n  scrape_interval: {seconds}\n  scrape_timeout: {seconds}\nscrape_configs:\n  - job_name: {job}\n    \
             honor_timestamps: false\n    file_sd_configs:\n      - files: ['{}']\n        refresh_interval: 1s\n",
            file.display()
        );
        std::fs::write(dir.join("prometheus.yml"), config).expect("write prometheus.yml");
        let address = TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).expect("a free port");
        let child = Command::new("prometheus")
            .arg(format!("--config.file={}", dir.join("prometheus.yml").display()))
            .arg(format!("--storage.tsdb.path={}", dir.join("data").display()))
            .arg(format!("--web.listen-address={address}"))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("prometheus.log")).map_or(Stdio::null(), Stdio::from))
            .spawn()
            .expect("prometheus must be installed (Debian package `prometheus`, scripts/deps/debian.txt)");
        let seen = Arc::new(Mutex::new(BTreeMap::new()));
        let discovery = tokio::spawn(discover(cluster.clone(), targets.to_vec(), file, seen.clone()));
        let prometheus = Prometheus { child, dir, address, discovery, seen };
        wait_until("Prometheus ready", Duration::from_secs(60), || async {
            crate::port_forward::http_get(prometheus.address, "/-/ready").map(|_| ())
        })
        .await;
        prometheus
    }

    /// The address of its HTTP API, `http://127.0.0.1:<port>`.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Every target scraped so far (`address:port`, as Prometheus' `instance` label), with its pods' namespace.
    pub fn targets_seen(&self) -> BTreeMap<String, &'static str> {
        self.seen.lock().expect("targets").clone()
    }

    /// An instant query at `time` (seconds since the epoch; now when `None`): its `data.result`.
    pub fn query(&self, promql: &str, time: Option<f64>) -> Result<Vec<serde_json::Value>, String> {
        let encoded: String = promql
            .bytes()
            .map(|b| if b.is_ascii_alphanumeric() || b == b'_' { (b as char).to_string() } else { format!("%{b:02X}") })
            .collect();
        let mut path = format!("/api/v1/query?query={encoded}");
        if let Some(time) = time {
            path.push_str(&format!("&time={time:.3}"));
        }
        let body = crate::port_forward::http_get(self.address, &path)?;
        let answer: serde_json::Value = serde_json::from_str(&body).map_err(|error| format!("{path}: {error}"))?;
        match answer["data"]["result"].as_array() {
            Some(result) if answer["status"] == "success" => Ok(result.clone()),
            _ => Err(format!("{promql}: {body}")),
        }
    }

    /// The raw samples of every series of `metric` in the last `range` before `end` (seconds since the epoch): per
    /// series its labels and its sample times.
    pub fn samples(&self, metric: &str, range: Duration, end: f64) -> Result<Vec<Series>, String> {
        let result = self.query(&format!("{metric}[{}s]", range.as_secs()), Some(end))?;
        result
            .iter()
            .map(|series| {
                let labels = series["metric"].as_object().ok_or_else(|| format!("{metric}: {series}"))?;
                let labels =
                    labels.iter().map(|(key, value)| (key.clone(), value.as_str().unwrap_or_default().to_owned()));
                let values = series["values"].as_array().ok_or_else(|| format!("{metric}: {series}"))?;
                let times = values.iter().filter_map(|pair| pair[0].as_f64()).collect();
                Ok(Series { labels: labels.collect(), times })
            })
            .collect()
    }
}

/// One series of a range selection: its labels (`__name__` included) and its samples' times in seconds.
#[derive(Debug, Clone)]
pub struct Series {
    /// Every label of the series.
    pub labels: BTreeMap<String, String>,
    /// When each sample was scraped, in order.
    pub times: Vec<f64>,
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        self.discovery.abort();
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Keeps `file` listing the running pods of `targets` (what a pod-role Kubernetes discovery keeps, checked every
/// 250 ms), written whole and renamed into place, which Prometheus watches for.
async fn discover(
    cluster: Cluster,
    targets: Vec<PodTargets>,
    file: PathBuf,
    seen: Arc<Mutex<BTreeMap<String, &'static str>>>,
) {
    let mut written = String::new();
    // Each group's last listing, kept while the API does not answer: a failed list is no reason to drop a target.
    let mut listed: Vec<Vec<(String, &'static str)>> = vec![Vec::new(); targets.len()];
    loop {
        for (target, last) in targets.iter().zip(&mut listed) {
            let pods: Api<Pod> = Api::namespaced(cluster.client(), target.namespace);
            let Ok(list) = pods.list(&ListParams::default().labels(target.selector)).await else { continue };
            *last = list
                .items
                .into_iter()
                .filter_map(|pod| {
                    let status = pod.status.unwrap_or_default();
                    let ip = status.pod_ip.filter(|_| status.phase.as_deref() == Some("Running"))?;
                    Some((format!("{ip}:{}", target.port), target.namespace))
                })
                .collect();
        }
        let addresses: Vec<(String, &'static str)> = listed.concat();
        let entries: Vec<serde_json::Value> = addresses
            .iter()
            .map(|(address, _)| serde_json::json!({"targets": [address], "labels": {"node": NODE_NAME}}))
            .collect();
        let text = serde_json::Value::from(entries).to_string();
        if text != written {
            let partial = file.with_extension("partial");
            if std::fs::write(&partial, &text).and_then(|()| std::fs::rename(&partial, &file)).is_ok() {
                seen.lock().expect("targets").extend(addresses);
                written = text;
            }
        }
        tokio::time::sleep(Duration::from_millis(250)).await;
    }
}
