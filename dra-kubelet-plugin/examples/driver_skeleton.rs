//! The node half of a DRA driver in one file: a driver that hands out the node's serial ports, served on sockets in a
//! directory of your choice, registered and called by the in-repo kubelet peer as a kubelet would.
//!
//! ```text
//! cargo run -p dra-kubelet-plugin --all-features --example driver_skeleton              # a temporary directory
//! cargo run -p dra-kubelet-plugin --all-features --example driver_skeleton -- /tmp/dra  # this directory
//! ```
//!
//! What a real driver adds: reading each claim's `status.allocation` from the API server (the scheduler chose the
//! devices), writing the CDI spec the container runtime reads, publishing the node's `ResourceSlice`s whenever the
//! kubelet registers the driver again. The example fails unless registration, prepare and unprepare all succeed.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use dra_kubelet_plugin::fake_kubelet::FakeKubelet;
use dra_kubelet_plugin::{ClaimError, ClaimRef, Driver, KubeletPlugin, PluginConfig, PreparedDevice};

const DRIVER: &str = "serial.example.com";

/// Hands out `ttyS<n>`, one per claim, and remembers which claim holds which port.
#[derive(Default)]
struct SerialPorts {
    held: Mutex<BTreeMap<String, String>>,
}

impl Driver for SerialPorts {
    async fn prepare(&self, claim: &ClaimRef) -> Result<Vec<PreparedDevice>, ClaimError> {
        let mut held = self.held.lock().map_err(|_| ClaimError::new("the port table is poisoned"))?;
        let next = format!("ttyS{}", held.len());
        let port = held.entry(claim.uid.clone()).or_insert(next).clone();
        Ok(vec![PreparedDevice {
            pool: "node-1".to_owned(),
            cdi_device_ids: vec![format!("example.com/serial={port}")],
            device: port,
            ..PreparedDevice::default()
        }])
    }

    async fn unprepare(&self, claim: &ClaimRef) -> Result<(), ClaimError> {
        self.held.lock().map_err(|_| ClaimError::new("the port table is poisoned"))?.remove(&claim.uid);
        Ok(())
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let root = std::env::args().nth(1).map_or_else(|| scratch.path().to_path_buf(), PathBuf::from);
    let mut config = PluginConfig::new(DRIVER);
    config.registry_dir = root.join("plugins_registry");
    config.plugins_dir = root.join("plugins");
    std::fs::create_dir_all(&config.registry_dir)?;
    std::fs::create_dir_all(&config.plugins_dir)?;

    let kubelet = FakeKubelet::start(&config.registry_dir);
    let driver = Arc::new(SerialPorts::default());
    let plugin = KubeletPlugin::start(config.clone(), Arc::clone(&driver)).await?;
    let registered = kubelet.wait_registered(DRIVER, Duration::from_secs(10)).await?;
    println!("registered {DRIVER}, the kubelet speaks {}", registered.service);
    println!("DRA socket {}", config.dra_socket().display());

    let claim = ClaimRef { namespace: "default".to_owned(), name: "console".to_owned(), uid: "uid-1".to_owned() };
    let prepared = kubelet.prepare(DRIVER, std::slice::from_ref(&claim)).await?;
    let devices = prepared.get(&claim.uid).ok_or("no answer for the claim")?.as_ref().map_err(String::clone)?;
    println!("prepared {claim}: {devices:?}");
    if devices.is_empty() {
        return Err("the claim was prepared with no device".into());
    }
    let unprepared = kubelet.unprepare(DRIVER, std::slice::from_ref(&claim)).await?;
    unprepared.get(&claim.uid).ok_or("no answer for the claim")?.as_ref().map_err(String::clone)?;
    println!("unprepared {claim}; ports still held: {}", driver.held.lock().map(|held| held.len()).unwrap_or(0));

    plugin.shutdown().await;
    Ok(())
}
