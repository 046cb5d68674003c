//! The DRA driver on one node, end to end: it publishes the node's chips as a ResourceSlice, the kubelet prepares a
//! claim of two chips (the driver writes the claim's CDI spec), then unprepares it.
//!
//! ```text
//! cargo run -p ascend-dra --example node_driver
//! ```
//!
//! Everything is in process and on loopback: the chips are a dcmi-sim fake host (an Atlas 800T A2, device nodes and
//! driver files under a temporary root), the API server is the in-repo fake that speaks the real protocol to
//! kube-rs, and the kubelet is `dra_kubelet_plugin`'s peer. The example fails unless eight devices are published and
//! the claim is prepared with a CDI device per chip.

use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{Dcmi, DeviceManager};
use ascend_dra::{DriverConfig, DEFAULT_DRIVER_NAME};
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::ClaimRef;
use fake_apiserver::FakeApiServer;
use k8s_openapi::api::resource::v1::ResourceSlice;
use serde_json::json;

const NODE: &str = "worker-1";

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir = tempfile::tempdir()?;
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").ok_or("no sample atlas-800t-a2")?.topology()?;
    let host = FakeHost::build(&topology, &dir.path().join("host"), &FakeHostOptions::default())?;
    std::env::set_var(dcmi_sim::CONFIG_ENV, &host.topology);
    // The fake host lies in a temporary directory, not root's to guard: the ownership rule is for a server's driver.
    let dcmi = Dcmi::builder().host_root(&host.root).verify_library_ownership(false).init()?;
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);

    let config = DriverConfig::in_work_dir(NODE, dir.path(), &host.root);
    let server = FakeApiServer::start().await?;
    server.seed(json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": NODE}}));
    let kubelet = FakeKubelet::start(&config.plugin.registry_dir);
    let client = server.client();
    let driver = tokio::spawn(ascend_dra::run(config, manager, client, async {
        tokio::time::sleep(Duration::from_secs(30)).await;
    }));

    kubelet.wait_registered(DEFAULT_DRIVER_NAME, Duration::from_secs(30)).await?;
    let started = Instant::now();
    let devices = loop {
        let devices: Vec<String> = server
            .list::<ResourceSlice>()
            .into_iter()
            .filter(|slice| slice.spec.driver == DEFAULT_DRIVER_NAME)
            .flat_map(|slice| slice.spec.devices.unwrap_or_default())
            .map(|device| device.name)
            .collect();
        if devices.len() == 8 {
            break devices;
        }
        if started.elapsed() > Duration::from_secs(30) {
            return Err(format!("{} devices published after 30 s, expected 8", devices.len()).into());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    println!("published in the ResourceSlice of {NODE}: {}", devices.join(", "));

    // What the scheduler writes: the claim's allocation names two of the published devices.
    let results: Vec<_> = ["npu-0", "npu-1"]
        .iter()
        .map(|device| json!({"request": "npu", "driver": DEFAULT_DRIVER_NAME, "pool": NODE, "device": device}))
        .collect();
    let stored = server.seed(json!({
        "apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
        "metadata": {"name": "two-chips", "namespace": "default"},
        "spec": {}, "status": {"allocation": {"devices": {"results": results}}},
    }));
    let uid = stored["metadata"]["uid"].as_str().ok_or("the claim has no uid")?.to_owned();
    let claim = ClaimRef { namespace: "default".into(), name: "two-chips".into(), uid };

    let prepared = kubelet.prepare(DEFAULT_DRIVER_NAME, std::slice::from_ref(&claim)).await?;
    let devices = prepared.get(&claim.uid).ok_or("no answer for the claim")?.as_ref().map_err(String::clone)?;
    for device in devices {
        println!("prepared {} for {claim}: CDI {:?}", device.device, device.cdi_device_ids);
    }
    if devices.len() != 2 || devices.iter().any(|device| device.cdi_device_ids.is_empty()) {
        return Err(format!("expected two devices with CDI ids, got {devices:?}").into());
    }
    let unprepared = kubelet.unprepare(DEFAULT_DRIVER_NAME, std::slice::from_ref(&claim)).await?;
    unprepared.get(&claim.uid).ok_or("no answer for the claim")?.as_ref().map_err(String::clone)?;
    println!("unprepared {claim}");
    driver.abort();
    Ok(())
}
