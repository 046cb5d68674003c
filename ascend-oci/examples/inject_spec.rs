//! Equips an OCI bundle for chip 0 the way the runtime does before runc starts it, and shows what changed: the device
//! nodes and their cgroup rules, the driver's read-only mounts, the environment.
//!
//! ```text
//! cargo run -p ascend-oci --example inject_spec                          # on a dcmi-sim fake host (Atlas 300I Pro)
//! cargo run -p ascend-oci --example inject_spec -- --host-root / BUNDLE  # this machine's driver, a bundle of yours
//! ```
//!
//! The fake host is what `dcmi-sim fake-host` lays out: `/dev/davinci*` and the manager nodes, the driver's files and
//! its simulated `libdcmi.so`. The chips are named by chip type here (no DCMI call); the runtime asks the driver.

use std::path::{Path, PathBuf};

use ascend_oci::{prepare_bundle, PrepareOptions};
use ascend_oci::{MountDelivery, DEFAULT_CDI_KIND};

type Failure = Box<dyn std::error::Error>;

fn main() -> Result<(), Failure> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scratch = tempfile::tempdir()?;
    let (host_root, chip_type, bundle) = match args.as_slice() {
        [flag, root, bundle] if flag == "--host-root" => (PathBuf::from(root), None, PathBuf::from(bundle)),
        [] => {
            let root = scratch.path().join("host");
            let topology = dcmi_sim::samples::by_name("atlas-300i-pro")
                .and_then(|sample| sample.topology().ok())
                .ok_or("the sample topology atlas-300i-pro is missing")?;
            dcmi_sim::fake_host::FakeHost::build(&topology, &root, &Default::default())?;
            let bundle = scratch.path().join("bundle");
            write_bundle(&bundle)?;
            (root, Some("310P".to_owned()), bundle)
        }
        _ => return Err("usage: inject_spec [--host-root ROOT BUNDLE]".into()),
    };

    let options = PrepareOptions {
        host_root,
        injection: Default::default(),
        chip_type,
        cdi_kind: DEFAULT_CDI_KIND.to_owned(),
        delivery: MountDelivery::InSpec,
        chip_cache: None,
    };
    let outcome = prepare_bundle(&bundle, &options)?;
    println!("chips {:?}", outcome.chips);
    let config: serde_json::Value = serde_json::from_slice(&std::fs::read(bundle.join("config.json"))?)?;
    for device in config["linux"]["devices"].as_array().into_iter().flatten() {
        println!("device {} ({}, {}:{})", device["path"], device["type"], device["major"], device["minor"]);
    }
    for mount in outcome.mounts {
        println!("mount  {} (read-only)", mount.display());
    }
    for variable in config["process"]["env"].as_array().into_iter().flatten() {
        println!("env    {variable}");
    }
    if outcome.chips.is_empty() {
        return Err("the bundle asked for no chip (ASCEND_VISIBLE_DEVICES)".into());
    }
    Ok(())
}

/// A bundle whose process asks for chip 0, as `docker run -e ASCEND_VISIBLE_DEVICES=0` leaves it.
fn write_bundle(bundle: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(bundle.join("rootfs"))?;
    let config = serde_json::json!({
        "ociVersion": "1.0.2",
        "process": { "user": { "uid": 0, "gid": 0 }, "cwd": "/", "args": ["sh"],
                     "env": ["PATH=/usr/bin:/bin", "ASCEND_VISIBLE_DEVICES=0"] },
        "root": { "path": "rootfs" },
        "linux": { "namespaces": [{ "type": "mount" }] }
    });
    std::fs::write(bundle.join("config.json"), config.to_string())
}
