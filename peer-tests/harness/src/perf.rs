//! `--perf`: the stand-in node as benches/scripts/beside_huawei.py measures a device plugin on it, Huawei's and ours
//! alike. Instead of a record it keeps files in the node's directory that the script reads while the plugin runs:
//!
//! * `registered`: the Unix times in milliseconds of the plugin's first registration (`registered_unix_ms`) and of
//!   its first device list (`devices_unix_ms`), written once the list has come;
//! * `health.jsonl`: one line per change of the set of devices not listed Healthy, from the first list on, with the
//!   Unix time the fake kubelet saw it (`unix_ms`) and the devices (`unhealthy`);
//! * `allocated-<k>.json`: the latencies in milliseconds of the Allocate calls asked for by `allocate-<k>` (which
//!   holds the number of calls): one container asking for one healthy device, devices taken in turn, calls back to
//!   back over one connection after a warm-up.
//!
//! The node serves until the script creates `stop`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{bail, Context, Result};
use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use serde_json::json;

/// Allocate calls made before the timed ones of each round (the connection and the plugin's first-call work).
const WARM_UP_CALLS: usize = 10;
/// How often the node looks for the script's `allocate-<k>` and `stop` files.
const COMMAND_POLL: Duration = Duration::from_millis(20);
/// A health watch waits this long for a change before looking again.
const WATCH_SLICE: Duration = Duration::from_secs(3600);

/// Serves the plugin under measurement until `<dir>/stop` appears; fails if it does not register within `timeout`.
pub async fn serve(dir: &Path, kubelet: FakeKubelet, timeout: Duration) -> Result<()> {
    let kubelet = Arc::new(kubelet);
    kubelet
        .wait_until("a registration and a device list", timeout, |k| first_resource(k).is_some())
        .await
        .context("the plugin under measurement")?;
    let registered = kubelet.registrations().first().map(|r| r.at).context("no registration")?;
    let devices_seen = unix_ms_now();
    let registered_ms = devices_seen - registered.elapsed().as_secs_f64() * 1000.0;
    write_atomically(
        &dir.join("registered"),
        &json!({"registered_unix_ms": registered_ms, "devices_unix_ms": devices_seen}).to_string(),
    )?;
    tokio::spawn(watch_health(Arc::clone(&kubelet), dir.join("health.jsonl")));

    for round in 0.. {
        let command = dir.join(format!("allocate-{round}"));
        loop {
            if dir.join("stop").exists() {
                return Ok(());
            }
            if command.exists() {
                break;
            }
            tokio::time::sleep(COMMAND_POLL).await;
        }
        let text = std::fs::read_to_string(&command).with_context(|| format!("reading {}", command.display()))?;
        let calls: usize =
            text.trim().parse().with_context(|| format!("{}: {text:?} is not a number of calls", command.display()))?;
        let latencies = allocate_round(&kubelet, calls).await?;
        write_atomically(&dir.join(format!("allocated-{round}.json")), &json!({ "ms": latencies }).to_string())?;
    }
    Ok(())
}

/// The first registered resource that has listed its devices.
fn first_resource(kubelet: &FakeKubelet) -> Option<String> {
    let resource = kubelet.registrations().first()?.request.resource_name.clone();
    kubelet.devices(&resource).filter(|list| !list.is_empty()).map(|_| resource)
}

/// Every resource's devices not listed Healthy, as `<resource>/<id>`, sorted.
fn unhealthy(kubelet: &FakeKubelet) -> Vec<String> {
    let mut out: Vec<String> = kubelet
        .registrations()
        .iter()
        .flat_map(|r| {
            let resource = r.request.resource_name.clone();
            kubelet
                .devices(&resource)
                .unwrap_or_default()
                .into_iter()
                .filter(|d| d.health != "Healthy")
                .map(move |d| format!("{resource}/{}", d.id))
        })
        .collect();
    out.sort();
    out.dedup();
    out
}

/// Appends a line to `path` whenever the set of devices not Healthy changes (the first set included).
async fn watch_health(kubelet: Arc<FakeKubelet>, path: std::path::PathBuf) {
    use std::io::Write;
    let Ok(mut file) = std::fs::OpenOptions::new().create(true).append(true).open(&path) else {
        eprintln!("peer-node: cannot open {}", path.display());
        return;
    };
    let mut last: Option<Vec<String>> = None;
    loop {
        let now = unhealthy(&kubelet);
        if last.as_ref() != Some(&now) {
            let line = json!({"unix_ms": unix_ms_now(), "unhealthy": now});
            if writeln!(file, "{line}").and_then(|()| file.flush()).is_err() {
                eprintln!("peer-node: cannot write {}", path.display());
                return;
            }
            last = Some(now);
        }
        let seen = last.clone().unwrap_or_default();
        // A timeout only means nothing changed for an hour: look again.
        let _ = kubelet.wait_until("a health change", WATCH_SLICE, |k| unhealthy(k) != seen).await;
    }
}

/// `calls` timed Allocate calls of one healthy device each, after a warm-up; milliseconds.
async fn allocate_round(kubelet: &FakeKubelet, calls: usize) -> Result<Vec<f64>> {
    let resource = first_resource(kubelet).context("no resource listed")?;
    let healthy: Vec<String> = kubelet
        .devices(&resource)
        .unwrap_or_default()
        .into_iter()
        .filter(|d| d.health == "Healthy")
        .map(|d| d.id)
        .collect();
    if healthy.is_empty() {
        bail!("{resource}: no healthy device to allocate");
    }
    let mut client = kubelet.plugin_client(&resource).await.with_context(|| format!("{resource}: client"))?;
    let mut latencies = Vec::with_capacity(calls);
    for call in 0..WARM_UP_CALLS + calls {
        let id = &healthy[call % healthy.len()];
        let request =
            AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: vec![id.clone()] }] };
        let started = Instant::now();
        let response = client.allocate(request).await.with_context(|| format!("Allocate of {id}"))?;
        let elapsed = started.elapsed();
        if response.into_inner().container_responses.len() != 1 {
            bail!("Allocate of {id}: not one container response");
        }
        if call >= WARM_UP_CALLS {
            latencies.push(elapsed.as_secs_f64() * 1000.0);
        }
    }
    Ok(latencies)
}

fn unix_ms_now() -> f64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0.0, |d| d.as_secs_f64() * 1000.0)
}

/// Writes `text` to `path` through a temporary file, so that a reader never sees half of it.
fn write_atomically(path: &Path, text: &str) -> Result<()> {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, text).with_context(|| format!("writing {}", partial.display()))?;
    std::fs::rename(&partial, path).with_context(|| format!("renaming {}", partial.display()))
}
