//! A device plugin on a socket directory of your choice, with the in-repo kubelet peer registering it: what the
//! kubelet sees, then one Allocate.
//!
//! ```text
//! cargo run -p ascend-deviceplugin --all-features --example serve_plugin              # a temporary directory
//! cargo run -p ascend-deviceplugin --all-features --example serve_plugin -- /tmp/dp   # this directory
//! ```
//!
//! The chips are dcmi-sim's (an Atlas 800T A2, `DCMI_SIM_CONFIG=sample:atlas-800t-a2`); the kubelet is
//! `fake_kubelet::FakeKubelet` (feature `fake-kubelet`), which serves the registration socket in the directory as
//! the kubelet does. The example fails unless all eight chips are advertised Healthy and Allocate hands out one.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_deviceplugin::api::v1beta1::{AllocateRequest, ContainerAllocateRequest};
use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use ascend_deviceplugin::{NoopObserver, PluginConfig};
use ascend_node::{load_driver, DriverOptions};

const RESOURCE: &str = "huawei.com/Ascend910";
const CHIPS: usize = 8;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let plugin_dir = std::env::args().nth(1).map_or_else(|| scratch.path().to_path_buf(), PathBuf::from);
    std::fs::create_dir_all(&plugin_dir)?;

    // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership rule
    // is for the driver's libdcmi.so.
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
    let options = DriverOptions {
        library: Some(dcmi_sim::library_path()?),
        verify_library_ownership: false,
        ..DriverOptions::default()
    };
    let manager = Arc::new(load_driver(&options).await?);

    let kubelet = FakeKubelet::start(&plugin_dir).await?;
    let config = PluginConfig { plugin_dir: plugin_dir.clone(), ..PluginConfig::default() };
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let running = tokio::spawn(ascend_deviceplugin::run(manager, config, Arc::new(NoopObserver), async move {
        let _ = stopped.await;
    }));

    kubelet
        .wait_until("eight healthy chips", Duration::from_secs(20), |kubelet| {
            kubelet.devices(RESOURCE).is_some_and(|devices| {
                devices.len() == CHIPS && devices.iter().all(|device| device.health == "Healthy")
            })
        })
        .await?;
    println!("plugin directory {}", plugin_dir.display());
    for registered in kubelet.registrations() {
        println!("registered {} on {}", registered.request.resource_name, registered.request.endpoint);
    }
    for device in kubelet.devices(RESOURCE).unwrap_or_default() {
        println!("  {} {}", device.id, device.health);
    }

    let first = kubelet.devices(RESOURCE).unwrap_or_default().remove(0).id;
    let request =
        AllocateRequest { container_requests: vec![ContainerAllocateRequest { devices_ids: vec![first.clone()] }] };
    let answer = kubelet.plugin_client(RESOURCE).await?.allocate(request).await?.into_inner();
    let container = answer.container_responses.first().ok_or("Allocate answered no container")?;
    println!("Allocate {first}: CDI devices {:?}", container.cdi_devices.iter().map(|d| &d.name).collect::<Vec<_>>());
    if container.cdi_devices.is_empty() && container.devices.is_empty() {
        return Err(format!("Allocate of {first} gave the container nothing").into());
    }

    let _ = stop.send(());
    running.await??;
    Ok(())
}
