//! The DRA driver's ResourceSlices for the other sample hosts, validated by the real API server: an Atlas 800I A3
//! (16 Ascend 910 A3 chips in HCCS groups), an Atlas 950 node (8 Ascend950 chips through DCMI V2, no card/device
//! pair) and, in partitionable mode, an Atlas 300I Duo (310P chips and their vNPU templates consuming shared
//! counters, with the DRAPartitionableDevices gate on). The test node is the 910B host; for these the release
//! driver runs as a process against a Node object of each sample's name and a fake host of its topology, and
//! publishes exactly as its pod would. The API server refusing a slice (it refused our first partition names and
//! counter names) fails the test with the server's message.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use ascend_cluster_tests::stack::DRA_DRIVER;
use ascend_cluster_tests::{wait_until, Cluster, Timer};
use k8s_openapi::api::core::v1::Node;
use k8s_openapi::api::resource::v1::{Device, ResourceSlice};
use kube::api::{Api, DeleteParams, ListParams, PostParams};

struct Sample {
    topology: &'static str,
    chips: usize,
    chip_type: &'static str,
    partitionable: bool,
}

const SAMPLES: [Sample; 3] = [
    Sample { topology: "atlas-800i-a3", chips: 16, chip_type: "Ascend910A3", partitionable: false },
    Sample { topology: "atlas-950-8", chips: 8, chip_type: "Ascend950", partitionable: false },
    Sample { topology: "atlas-300i-duo", chips: 8, chip_type: "Ascend310P", partitionable: true },
];

fn release_binary(cluster: &Cluster, name: &str) -> PathBuf {
    let path = ascend_cluster_tests::stack::release_dir(cluster).join(name);
    assert!(path.exists(), "{}: scripts/cluster/up.sh builds it", path.display());
    path
}

/// Where a sample's fake host and its driver's files go: root-owned, as the driver insists for its libdcmi.so.
fn sample_root(sample: &Sample) -> PathBuf {
    Cluster::state_dir().join("samples").join(sample.topology)
}

/// The driver process; killed when dropped.
struct Driver(Child);

impl Drop for Driver {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_driver(cluster: &Cluster, sample: &Sample, node: &str) -> Driver {
    let root = sample_root(sample);
    let _ = std::fs::remove_dir_all(&root);
    std::fs::create_dir_all(&root).expect("sample root");
    let status = Command::new(release_binary(cluster, "dcmi-sim"))
        .args(["fake-host", "--topology", sample.topology, "--root"])
        .arg(&root)
        .arg("--library")
        .arg(release_binary(cluster, "libdcmi_sim.so"))
        .stdout(Stdio::null())
        .status()
        .expect("dcmi-sim fake-host");
    assert!(status.success(), "dcmi-sim fake-host --topology {}", sample.topology);
    let mut command = Command::new(release_binary(cluster, "ascend-dra-driver"));
    command
        .env("KUBECONFIG", Cluster::admin_kubeconfig())
        .env("DCMI_SIM_CONFIG", root.join("etc/dcmi-sim/topology.toml"))
        .args(["--node-name", node, "--listen", "127.0.0.1:0", "--host-root"])
        .arg(&root)
        .arg("--registry-dir")
        .arg(root.join("run/registry"))
        .arg("--plugins-dir")
        .arg(root.join("run/plugins"))
        .arg("--cdi-dir")
        .arg(root.join("run/cdi"))
        .arg("--dcmi-library")
        .arg(root.join("usr/local/dcmi/libdcmi.so"))
        .stdout(Stdio::null())
        .stderr(std::fs::File::create(root.join("driver.log")).expect("driver log"));
    if sample.partitionable {
        command.arg("--partitionable");
    }
    Driver(command.spawn().expect("start ascend-dra-driver"))
}

async fn node_slices(cluster: &Cluster, node: &str) -> Vec<ResourceSlice> {
    let slices: Api<ResourceSlice> = Api::all(cluster.client());
    let list = slices.list(&ListParams::default()).await.expect("list slices");
    list.items
        .into_iter()
        .filter(|slice| slice.spec.driver == DRA_DRIVER && slice.spec.node_name.as_deref() == Some(node))
        .collect()
}

fn attribute<'a>(device: &'a Device, name: &str) -> Option<&'a k8s_openapi::api::resource::v1::DeviceAttribute> {
    device.attributes.as_ref().and_then(|attributes| attributes.get(name))
}

#[tokio::test]
async fn the_real_api_server_accepts_the_slices_of_every_sample_host() {
    let cluster = Cluster::connect().await;
    let mut timer = Timer::start("dra slices");
    let nodes: Api<Node> = Api::all(cluster.client());
    for sample in &SAMPLES {
        let node = format!("sample-{}", sample.topology);
        let _ = nodes.delete(&node, &DeleteParams::default()).await;
        let object: Node = serde_json::from_value(serde_json::json!({"metadata": {"name": node}})).expect("node");
        wait_until(&format!("Node {node} created"), Duration::from_secs(30), || async {
            nodes.create(&PostParams::default(), &object).await.map_err(|error| error.to_string())
        })
        .await;
        let driver = start_driver(&cluster, sample, &node);
        let log = sample_root(sample).join("driver.log");
        let slices = wait_until(&format!("{node}'s slices"), Duration::from_secs(30), || async {
            let slices = node_slices(&cluster, &node).await;
            let whole = slices
                .iter()
                .flat_map(|slice| slice.spec.devices.iter().flatten())
                .filter(|device| attribute(device, "vnpu").and_then(|value| value.bool) == Some(false))
                .count();
            if whole == sample.chips {
                Ok(slices)
            } else {
                let log = std::fs::read_to_string(&log).unwrap_or_default();
                let errors: Vec<&str> = log.lines().filter(|line| line.contains("ERROR")).take(1).collect();
                Err(format!("{whole} whole chips published; driver: {errors:?}"))
            }
        })
        .await;
        timer.mark(&format!("{} accepted", sample.topology));
        drop(driver);

        let devices: Vec<&Device> = slices.iter().flat_map(|slice| slice.spec.devices.iter().flatten()).collect();
        for device in &devices {
            let chip_type = attribute(device, "type").and_then(|value| value.string.as_deref());
            assert_eq!(chip_type, Some(sample.chip_type), "{}: {device:?}", device.name);
            assert!(device.capacity.as_ref().is_some_and(|capacity| capacity.contains_key("aiCores")), "{device:?}");
        }
        match sample.topology {
            "atlas-800i-a3" => {
                assert!(devices.iter().all(|device| attribute(device, "hccsGroup").is_some()), "HCCS groups");
                assert!(devices.iter().all(|device| attribute(device, "cardId").is_some()), "card ids");
            }
            "atlas-950-8" => {
                assert!(devices.iter().all(|device| attribute(device, "cardId").is_none()), "V2 chips have no card");
            }
            _ => {
                // Partitions, and the counters the API server keeps only with DRAPartitionableDevices on.
                let partitions: Vec<&str> = devices
                    .iter()
                    .filter(|device| attribute(device, "vnpu").and_then(|value| value.bool) == Some(true))
                    .map(|device| device.name.as_str())
                    .collect();
                assert!(partitions.contains(&"npu-0-vir02"), "{partitions:?}");
                assert!(partitions.contains(&"npu-0-vir04-3c-ndvpp"), "{partitions:?}");
                let sets: usize = slices.iter().map(|slice| slice.spec.shared_counters.iter().flatten().count()).sum();
                assert_eq!(sets, sample.chips, "a counter set per chip, kept by the API server");
                assert!(
                    devices.iter().all(|device| device.consumes_counters.as_ref().is_some_and(|c| !c.is_empty())),
                    "every device consumes its chip's counters"
                );
            }
        }
        println!("{}: {} devices in {} slice(s)", sample.topology, devices.len(), slices.len());

        // The Node goes, and its slices with it (they are owned by the Node).
        nodes.delete(&node, &DeleteParams::default()).await.expect("delete node");
        wait_until(&format!("{node}'s slices collected"), Duration::from_secs(60), || async {
            let left = node_slices(&cluster, &node).await.len();
            if left == 0 {
                Ok(())
            } else {
                Err(format!("{left} left"))
            }
        })
        .await;
        let _ = std::fs::remove_dir_all(sample_root(sample));
    }
}
