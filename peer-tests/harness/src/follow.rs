//! What a chip recovery does, as the kubelet sees it: the device lists followed after the record (`--follow-seconds`),
//! and the kubelet's PodResources socket a plugin that resets chips reads to know nothing holds them
//! (`--pod-resources`).

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use ascend_deviceplugin::fake_kubelet::{FakeKubelet, FakePodResources};
use serde_json::{json, Value};

/// How often the device lists are read while followed.
const FOLLOW_PERIOD: Duration = Duration::from_millis(200);

/// Serves the kubelet's PodResources on `<dir>/kubelet.sock`, listing no pod: every chip is free.
pub fn serve_pod_resources(dir: &Path) -> Result<FakePodResources> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let socket = dir.join("kubelet.sock");
    FakePodResources::start(&socket, Vec::new())
        .with_context(|| format!("serving PodResources on {}", socket.display()))
}

/// Every device's health as it changes, from now until every device has been healthy for `settle` or `limit` has
/// passed: `[{"at": seconds since ready, "resource", "id", "health"}]`, every device's state now first.
pub async fn follow(kubelet: &FakeKubelet, ready: Instant, settle: Duration, limit: Duration) -> Value {
    let started = Instant::now();
    let mut healthy_since: Option<Instant> = None;
    let mut last: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut timeline = Vec::new();
    while started.elapsed() < limit {
        let now = health(kubelet);
        let at = (ready.elapsed().as_millis() / 100) as f64 / 10.0;
        for ((resource, id), state) in &now {
            if last.get(&(resource.clone(), id.clone())) != Some(state) {
                timeline.push(json!({"at": at, "resource": resource, "id": id, "health": state}));
            }
        }
        let all_healthy = !now.is_empty() && now.values().all(|state| state == "Healthy");
        healthy_since = if all_healthy { healthy_since.or(Some(Instant::now())) } else { None };
        if healthy_since.is_some_and(|since| since.elapsed() >= settle) {
            break;
        }
        last = now;
        tokio::time::sleep(FOLLOW_PERIOD).await;
    }
    json!(timeline)
}

/// (resource, device id) -> health, of every device the kubelet has been listed.
fn health(kubelet: &FakeKubelet) -> BTreeMap<(String, String), String> {
    let mut out = BTreeMap::new();
    for registration in kubelet.registrations() {
        let resource = registration.request.resource_name;
        for device in kubelet.devices(&resource).unwrap_or_default() {
            out.insert((resource.clone(), device.id), device.health);
        }
    }
    out
}
