//! `e2e-kubelet`: the kubelet side of `deploy/e2e.sh`.
//!
//! Serves the kubelet's `Registration` socket in a plugin directory (the in-process fake kubelet of
//! `ascend-deviceplugin`), waits for a device plugin to register, takes the first `ListAndWatch` list, calls
//! `Allocate` for one healthy device as the kubelet does for a container asking for one chip, and prints one JSON
//! object on stdout:
//!
//! ```json
//! { "resource": "huawei.com/Ascend910", "endpoint": "ascend-Ascend910.sock",
//!   "devices": [{ "id": "Ascend910-0", "health": "Healthy" }],
//!   "allocated": "Ascend910-0",
//!   "response": { "containerResponses": [{ "envs": {}, "mounts": [], "devices": [], "annotations": {},
//!                                          "cdiDevices": [] }] } }
//! ```
//!
//! The response uses the field names of the kubelet API's JSON mapping. Progress goes to stderr; any failure
//! exits non-zero with the step that failed and what the kubelet saw.

#![forbid(unsafe_code)]

use std::path::PathBuf;
use std::time::Duration;

use anyhow::{bail, Context, Result};
use ascend_deviceplugin::api::v1beta1::{
    AllocateRequest, AllocateResponse, ContainerAllocateRequest, ContainerAllocateResponse, Device,
};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use clap::{Parser, ValueEnum};
use serde_json::{json, Value};

/// The health string of a schedulable device in the device plugin API.
const HEALTHY: &str = "Healthy";

/// Fake kubelet for the end-to-end run: register, list, allocate one device, print the response as JSON.
#[derive(Debug, Parser)]
#[command(name = "e2e-kubelet")]
struct Args {
    /// The device-plugin directory to serve `kubelet.sock` in (must exist).
    #[arg(long)]
    plugin_dir: PathBuf,
    /// The resource to allocate from (default: the first resource that registers).
    #[arg(long)]
    resource: Option<String>,
    /// Which healthy device of the list to allocate.
    #[arg(long, value_enum, default_value_t = Pick::First)]
    pick: Pick,
    /// Seconds to wait for the registration and for the first device list, each.
    #[arg(long, default_value_t = 30)]
    timeout_secs: u64,
}

/// `--pick`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Pick {
    /// The first healthy device in list order.
    First,
    /// The last healthy device in list order (on most hosts a chip whose physical id is not 0, so that a test
    /// can tell the host's numbering from the container's).
    Last,
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<()> {
    let args = Args::parse();
    let timeout = Duration::from_secs(args.timeout_secs);
    let mut kubelet = FakeKubelet::start(&args.plugin_dir)
        .await
        .with_context(|| format!("serving the kubelet socket in {}", args.plugin_dir.display()))?;
    eprintln!("e2e-kubelet: serving {}", args.plugin_dir.join("kubelet.sock").display());
    let result = allocate_one(&kubelet, args.resource.as_deref(), args.pick, timeout).await;
    kubelet.shutdown().await;
    let report = result?;
    println!("{report}");
    Ok(())
}

/// Waits for the registration and the first device list, allocates one healthy device, and returns the report.
async fn allocate_one(kubelet: &FakeKubelet, wanted: Option<&str>, pick: Pick, timeout: Duration) -> Result<Value> {
    let registered = |k: &FakeKubelet| {
        k.registrations().iter().any(|r| wanted.is_none_or(|resource| r.request.resource_name == resource))
    };
    kubelet.wait_until("a device plugin to register", timeout, registered).await?;
    let registration = kubelet
        .registrations()
        .into_iter()
        .find(|r| wanted.is_none_or(|resource| r.request.resource_name == resource))
        .context("the registration seen a moment ago is gone")?;
    let resource = registration.request.resource_name.clone();
    eprintln!("e2e-kubelet: {resource} registered on endpoint {}", registration.request.endpoint);

    kubelet
        .wait_until(&format!("the first ListAndWatch list of {resource}"), timeout, |k| k.devices(&resource).is_some())
        .await?;
    let devices = kubelet.devices(&resource).unwrap_or_default();
    eprintln!("e2e-kubelet: ListAndWatch sent {} devices", devices.len());
    let mut healthy = devices.iter().filter(|device| device.health == HEALTHY);
    let chosen = match if pick == Pick::First { healthy.next() } else { healthy.next_back() } {
        Some(device) => device.id.clone(),
        None => bail!("{resource} advertises no healthy device: {}", describe_devices(&devices)),
    };

    let mut client = kubelet.plugin_client(&resource).await?;
    let request =
        AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: vec![chosen.clone()] }] };
    let response = tokio::time::timeout(timeout, client.allocate(request))
        .await
        .with_context(|| format!("Allocate of {chosen} on {resource}: no answer within {timeout:?}"))?
        .with_context(|| format!("Allocate of {chosen} on {resource}"))?
        .into_inner();
    eprintln!("e2e-kubelet: allocated {chosen}");
    Ok(json!({
        "resource": resource,
        "endpoint": registration.request.endpoint,
        "devices": devices.iter().map(|d| json!({ "id": d.id, "health": d.health })).collect::<Vec<_>>(),
        "allocated": chosen,
        "response": allocate_response_json(&response),
    }))
}

fn describe_devices(devices: &[Device]) -> String {
    if devices.is_empty() {
        return "the list is empty".to_owned();
    }
    devices.iter().map(|d| format!("{} {}", d.id, d.health)).collect::<Vec<_>>().join(", ")
}

/// The response in the JSON mapping of the kubelet API (camelCase field names).
fn allocate_response_json(response: &AllocateResponse) -> Value {
    json!({ "containerResponses": response.container_responses.iter().map(container_json).collect::<Vec<_>>() })
}

fn container_json(container: &ContainerAllocateResponse) -> Value {
    let sorted = |map: &std::collections::HashMap<String, String>| {
        map.iter().map(|(k, v)| (k.clone(), v.clone())).collect::<std::collections::BTreeMap<_, _>>()
    };
    json!({
        "envs": sorted(&container.envs),
        "mounts": container.mounts.iter().map(|m| json!({
            "containerPath": m.container_path, "hostPath": m.host_path, "readOnly": m.read_only,
        })).collect::<Vec<_>>(),
        "devices": container.devices.iter().map(|d| json!({
            "containerPath": d.container_path, "hostPath": d.host_path, "permissions": d.permissions,
        })).collect::<Vec<_>>(),
        "annotations": sorted(&container.annotations),
        "cdiDevices": container.cdi_devices.iter().map(|c| json!({ "name": c.name })).collect::<Vec<_>>(),
    })
}
