//! Allocate, GetPreferredAllocation and PreStartContainer through the fake kubelet's client, checked field by
//! field for every allocation mode, plus the rejections of bad requests.

mod support;

use std::collections::{BTreeSet, HashMap};

use ascend_dcmi::FaultCode;
use ascend_deviceplugin::api::v1beta1::{
    AllocateRequest, ContainerAllocateRequest, ContainerAllocateResponse, ContainerPreferredAllocationRequest, Empty,
    PreStartContainerRequest, PreferredAllocationRequest,
};
use ascend_deviceplugin::{AllocateMode, CdiDelivery, PluginConfig};
use support::{health_of, FakeHost, Harness};
use tonic::Code;

const ASCEND910: &str = "huawei.com/Ascend910";
const ASCEND310P: &str = "huawei.com/Ascend310P";

fn ids(names: &[&str]) -> Vec<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

fn map(pairs: &[(&str, &str)]) -> HashMap<String, String> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

async fn started(host: FakeHost, resource: &str, count: usize, configure: impl FnOnce(&mut PluginConfig)) -> Harness {
    let harness = Harness::start(host, configure).await;
    harness
        .wait_devices(resource, "devices healthy", |d| d.len() == count && d.iter().all(|(_, h)| h == "Healthy"))
        .await;
    harness
}

async fn allocate(
    harness: &Harness,
    resource: &str,
    containers: &[&[&str]],
) -> Result<Vec<ContainerAllocateResponse>, tonic::Status> {
    let mut client = harness.kubelet.plugin_client(resource).await.expect("plugin client");
    let request = AllocateRequest {
        container_requests: containers.iter().map(|c| ContainerAllocateRequest { devices_ids: ids(c) }).collect(),
    };
    client.allocate(request).await.map(|r| r.into_inner().container_responses)
}

async fn preferred(
    harness: &Harness,
    resource: &str,
    available: &[&str],
    must: &[&str],
    size: i32,
) -> Result<Vec<String>, tonic::Status> {
    let mut client = harness.kubelet.plugin_client(resource).await.expect("plugin client");
    let request = PreferredAllocationRequest {
        container_requests: vec![ContainerPreferredAllocationRequest {
            available_device_i_ds: ids(available),
            must_include_device_i_ds: ids(must),
            allocation_size: size,
        }],
    };
    let response = client.get_preferred_allocation(request).await?.into_inner();
    Ok(response.container_responses.into_iter().next().map(|c| c.device_i_ds).unwrap_or_default())
}

fn device_specs(response: &ContainerAllocateResponse) -> Vec<(String, String, String)> {
    response.devices.iter().map(|d| (d.container_path.clone(), d.host_path.clone(), d.permissions.clone())).collect()
}

fn spec(container: &str, host: &str) -> (String, String, String) {
    (container.to_owned(), host.to_owned(), "rw".to_owned())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cdi_mode_names_the_chips_of_the_ascend_oci_spec() {
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |_| {}).await;
    let responses =
        allocate(&harness, ASCEND910, &[&["Ascend910-5", "Ascend910-2"], &["Ascend910-7"]]).await.expect("allocates");
    assert_eq!(responses.len(), 2);
    let first = &responses[0];
    let names: Vec<&str> = first.cdi_devices.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["huawei.com/npu=2", "huawei.com/npu=5"]);
    assert_eq!(first.envs, map(&[("ASCEND_RT_VISIBLE_DEVICES", "0,1")]));
    assert_eq!(first.annotations, map(&[("huawei.com/AscendReal", "Ascend910-2,Ascend910-5")]));
    assert!(first.devices.is_empty() && first.mounts.is_empty());
    let second = &responses[1];
    assert_eq!(second.cdi_devices.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["huawei.com/npu=7"]);
    assert_eq!(second.envs, map(&[("ASCEND_RT_VISIBLE_DEVICES", "0")]));

    let mut client = harness.kubelet.plugin_client(ASCEND910).await.expect("client");
    client.pre_start_container(PreStartContainerRequest { devices_ids: ids(&["Ascend910-1"]) }).await.expect("no-op");
    let options = client.get_device_plugin_options(Empty {}).await.expect("options").into_inner();
    assert!(options.get_preferred_allocation_available);
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cdi_annotation_fallback_and_custom_kind() {
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |config| {
        config.allocate.mode = AllocateMode::Cdi { kind: "example.com/npu".into(), delivery: CdiDelivery::Both };
    })
    .await;
    let responses = allocate(&harness, ASCEND910, &[&["Ascend910-0", "Ascend910-1"]]).await.expect("allocates");
    let response = &responses[0];
    assert_eq!(
        response.cdi_devices.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(),
        ["example.com/npu=0", "example.com/npu=1"]
    );
    assert_eq!(
        response.annotations,
        map(&[
            ("cdi.k8s.io/ascend-device-plugin_Ascend910", "example.com/npu=0,example.com/npu=1"),
            ("huawei.com/AscendReal", "Ascend910-0,Ascend910-1"),
        ])
    );
    harness.stop().await;

    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |config| {
        config.allocate.mode = AllocateMode::Cdi { kind: "huawei.com/npu".into(), delivery: CdiDelivery::Annotations };
    })
    .await;
    let responses = allocate(&harness, ASCEND910, &[&["Ascend910-3"]]).await.expect("allocates");
    assert!(responses[0].cdi_devices.is_empty(), "annotations only");
    assert_eq!(
        responses[0].annotations.get("cdi.k8s.io/ascend-device-plugin_Ascend910").map(String::as_str),
        Some("huawei.com/npu=3")
    );
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn device_spec_mode_passes_nodes_and_existing_driver_paths_read_only() {
    let host_root = tempfile::tempdir().expect("host root");
    std::fs::create_dir_all(host_root.path().join("dev")).expect("dev");
    std::fs::write(host_root.path().join("dev/dvpp_cmdlist"), b"").expect("dvpp node");
    std::fs::create_dir_all(host_root.path().join("usr/local/dcmi")).expect("dcmi dir");
    let root = host_root.path().to_owned();
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, move |config| {
        config.allocate.host_root = root;
        config.allocate.mode = AllocateMode::DeviceSpecs {
            driver_mounts: vec!["/usr/local/dcmi".into(), "/usr/local/Ascend/driver/lib64".into()],
        };
    })
    .await;
    let responses = allocate(&harness, ASCEND910, &[&["Ascend910-6", "Ascend910-4"]]).await.expect("allocates");
    let response = &responses[0];
    assert_eq!(
        device_specs(response),
        [
            spec("/dev/davinci4", "/dev/davinci4"),
            spec("/dev/davinci6", "/dev/davinci6"),
            spec("/dev/davinci_manager", "/dev/davinci_manager"),
            spec("/dev/devmm_svm", "/dev/devmm_svm"),
            spec("/dev/hisi_hdc", "/dev/hisi_hdc"),
            spec("/dev/dvpp_cmdlist", "/dev/dvpp_cmdlist"),
        ]
    );
    let mounts: Vec<(&str, &str, bool)> =
        response.mounts.iter().map(|m| (m.container_path.as_str(), m.host_path.as_str(), m.read_only)).collect();
    assert_eq!(mounts, [("/usr/local/dcmi", "/usr/local/dcmi", true)], "only paths that exist on the host");
    assert_eq!(response.envs, map(&[("ASCEND_RT_VISIBLE_DEVICES", "0,1")]));
    assert!(response.cdi_devices.is_empty());
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn runtime_env_mode_sets_the_hook_variables() {
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |config| {
        config.allocate.mode = AllocateMode::RuntimeEnv;
    })
    .await;
    let responses =
        allocate(&harness, ASCEND910, &[&["Ascend910-7", "Ascend910-0", "Ascend910-3"]]).await.expect("allocates");
    let response = &responses[0];
    assert_eq!(
        response.envs,
        map(&[
            ("ASCEND_VISIBLE_DEVICES", "0,3,7"),
            ("ASCEND_RUNTIME_OPTIONS", ""),
            ("ASCEND_RT_VISIBLE_DEVICES", "0,1,2"),
        ])
    );
    assert_eq!(response.annotations, map(&[("huawei.com/AscendReal", "Ascend910-0,Ascend910-3,Ascend910-7")]));
    assert!(response.devices.is_empty() && response.mounts.is_empty() && response.cdi_devices.is_empty());
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vnpus_and_replicas_are_separate_resources_and_ids() {
    let host = FakeHost::four_duo_cards();
    host.edit(0, |chip| chip.vnpus = vec![(100, "vir02"), (101, "vir02")]);
    host.edit(1, |chip| chip.vnpus = vec![(102, "vir04")]);
    let mut harness = Harness::start(host, |config| {
        config.allocate.mode = AllocateMode::RuntimeEnv;
        config.monitor.inventory.replicas = 2;
    })
    .await;
    let two_core = harness.wait_devices("huawei.com/Ascend310P-2c", "2c vNPUs", |d| d.len() == 2).await;
    assert_eq!(
        two_core.iter().map(|(id, _)| id.as_str()).collect::<Vec<_>>(),
        ["Ascend310P-2c-100-0", "Ascend310P-2c-101-0"]
    );
    harness.wait_devices("huawei.com/Ascend310P-4c", "4c vNPU", |d| d.len() == 1).await;
    let shared = harness.wait_devices(ASCEND310P, "replicas of chips 2-7", |d| d.len() == 12).await;
    assert_eq!(health_of(&shared, "Ascend310P-2-1"), Some("Healthy"));
    assert_eq!(health_of(&shared, "Ascend310P-0-0"), None, "chips with vNPUs are advertised as vNPUs");

    let vnpu = allocate(&harness, "huawei.com/Ascend310P-2c", &[&["Ascend310P-2c-101-0"]]).await.expect("vNPU");
    assert_eq!(
        vnpu[0].envs,
        map(&[
            ("ASCEND_VISIBLE_DEVICES", "101"),
            ("ASCEND_RUNTIME_OPTIONS", "VIRTUAL"),
            ("ASCEND_RT_VISIBLE_DEVICES", "0")
        ])
    );
    let two_vnpus =
        allocate(&harness, "huawei.com/Ascend310P-2c", &[&["Ascend310P-2c-100-0", "Ascend310P-2c-101-0"]]).await;
    let status = two_vnpus.expect_err("at most one vNPU per container");
    assert_eq!(status.code(), Code::InvalidArgument, "{status:?}");

    let replicas = allocate(&harness, ASCEND310P, &[&["Ascend310P-3-0", "Ascend310P-3-1", "Ascend310P-4-1"]])
        .await
        .expect("replicas");
    assert_eq!(
        replicas[0].envs,
        map(&[("ASCEND_VISIBLE_DEVICES", "3,4"), ("ASCEND_RUNTIME_OPTIONS", ""), ("ASCEND_RT_VISIBLE_DEVICES", "0,1")])
    );
    assert_eq!(replicas[0].annotations, map(&[("huawei.com/AscendReal", "Ascend310P-3,Ascend310P-4")]));
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn vnpus_get_their_virtual_device_node_in_device_spec_and_cdi_modes() {
    for mode in [AllocateMode::DeviceSpecs { driver_mounts: Vec::new() }, AllocateMode::default()] {
        let host = FakeHost::four_duo_cards();
        host.edit(2, |chip| chip.vnpus = vec![(110, "vir01")]);
        let mut harness = Harness::start(host, move |config| config.allocate.mode = mode).await;
        harness.wait_devices("huawei.com/Ascend310P-1c", "1c vNPU", |d| d.len() == 1).await;
        let responses =
            allocate(&harness, "huawei.com/Ascend310P-1c", &[&["Ascend310P-1c-110-2"]]).await.expect("vNPU");
        let specs = device_specs(&responses[0]);
        assert_eq!(specs.first(), Some(&spec("/dev/davinci110", "/dev/vdavinci110")), "{specs:?}");
        assert!(responses[0].cdi_devices.is_empty(), "the CDI spec has no vNPU names");
        harness.stop().await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_requests_are_rejected_naming_the_devices() {
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |_| {}).await;
    harness.host.raise(2, FaultCode(0x80E0_1801), true);
    harness.wait_devices(ASCEND910, "chip 2 unhealthy", |d| health_of(d, "Ascend910-2") == Some("Unhealthy")).await;

    let unknown =
        allocate(&harness, ASCEND910, &[&["Ascend910-1", "Ascend910-99", "gpu-0"]]).await.expect_err("unknown");
    assert_eq!(unknown.code(), Code::InvalidArgument);
    assert!(unknown.message().contains("Ascend910-99, gpu-0"), "{}", unknown.message());
    assert!(!unknown.message().contains("Ascend910-1,"), "{}", unknown.message());

    let unhealthy = allocate(&harness, ASCEND910, &[&["Ascend910-2", "Ascend910-3"]]).await.expect_err("unhealthy");
    assert_eq!(unhealthy.code(), Code::FailedPrecondition);
    assert!(
        unhealthy.message().contains("Ascend910-2") && unhealthy.message().contains("80E01801"),
        "{}",
        unhealthy.message()
    );

    let empty = allocate(&harness, ASCEND910, &[&[]]).await.expect_err("empty");
    assert_eq!(empty.code(), Code::InvalidArgument);

    let all: Vec<String> = (0..8).filter(|p| *p != 2).map(|p| format!("Ascend910-{p}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let too_many = preferred(&harness, ASCEND910, &all, &[], 8).await.expect_err("size too large");
    assert_eq!(too_many.code(), Code::InvalidArgument);
    assert!(too_many.message().contains("allocation size 8"), "{}", too_many.message());
    let outside =
        preferred(&harness, ASCEND910, &["Ascend910-0"], &["Ascend910-1"], 1).await.expect_err("must-include");
    assert!(outside.message().contains("Ascend910-1"), "{}", outside.message());
    let zero = preferred(&harness, ASCEND910, &["Ascend910-0"], &[], 0).await.expect_err("size 0");
    assert_eq!(zero.code(), Code::InvalidArgument);
    harness.stop().await;
}

fn as_set(ids: &[String]) -> BTreeSet<String> {
    ids.iter().cloned().collect()
}

fn set(names: &[&str]) -> BTreeSet<String> {
    names.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferred_allocation_keeps_duo_cards_whole() {
    let mut harness = started(FakeHost::four_duo_cards(), ASCEND310P, 8, |_| {}).await;
    let all: Vec<String> = (0..8).map(|p| format!("Ascend310P-{p}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();

    let pair = preferred(&harness, ASCEND310P, &all, &[], 2).await.expect("pair");
    let cards: BTreeSet<u32> =
        pair.iter().map(|id| id.trim_start_matches("Ascend310P-").parse::<u32>().unwrap_or(99) / 2).collect();
    assert_eq!(cards.len(), 1, "both chips of one card: {pair:?}");

    // Chip 4 is taken: a single chip comes from its half-used card, keeping whole cards free.
    let without_4: Vec<&str> = all.iter().copied().filter(|id| *id != "Ascend310P-4").collect();
    assert_eq!(preferred(&harness, ASCEND310P, &without_4, &[], 1).await.expect("one"), ["Ascend310P-5"]);

    // Chips 1 and 4 taken: a pair comes from a whole free card, not from the two half cards.
    let free = ["Ascend310P-0", "Ascend310P-2", "Ascend310P-3", "Ascend310P-5", "Ascend310P-6", "Ascend310P-7"];
    let pair = preferred(&harness, ASCEND310P, &free, &[], 2).await.expect("pair");
    assert!(
        [set(&["Ascend310P-2", "Ascend310P-3"]), set(&["Ascend310P-6", "Ascend310P-7"])].contains(&as_set(&pair)),
        "{pair:?}"
    );

    // Must-include chip 6: its sibling, then the rest of its NUMA node.
    let four = preferred(&harness, ASCEND310P, &all, &["Ascend310P-6"], 4).await.expect("four");
    assert_eq!(four[..2], ids(&["Ascend310P-6", "Ascend310P-7"]));
    assert_eq!(as_set(&four), set(&["Ascend310P-4", "Ascend310P-5", "Ascend310P-6", "Ascend310P-7"]));
    harness.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn preferred_allocation_follows_numa_and_hccs_groups_on_eight_chips() {
    let mut harness = started(FakeHost::eight_910b(), ASCEND910, 8, |_| {}).await;
    let all: Vec<String> = (0..8).map(|p| format!("Ascend910-{p}")).collect();
    let all: Vec<&str> = all.iter().map(String::as_str).collect();
    let group = |phys: [u32; 4]| -> BTreeSet<String> { phys.iter().map(|p| format!("Ascend910-{p}")).collect() };

    assert_eq!(as_set(&preferred(&harness, ASCEND910, &all, &[], 4).await.expect("4")), group([0, 1, 2, 3]));
    let without_1: Vec<&str> = all.iter().copied().filter(|id| *id != "Ascend910-1").collect();
    assert_eq!(as_set(&preferred(&harness, ASCEND910, &without_1, &[], 4).await.expect("4")), group([4, 5, 6, 7]));
    assert_eq!(
        as_set(&preferred(&harness, ASCEND910, &all, &["Ascend910-5"], 4).await.expect("4")),
        group([4, 5, 6, 7])
    );
    // Best fit: two free chips left in the first group are used before breaking into the full second group.
    let free = ["Ascend910-0", "Ascend910-1", "Ascend910-4", "Ascend910-5", "Ascend910-6", "Ascend910-7"];
    assert_eq!(
        as_set(&preferred(&harness, ASCEND910, &free, &[], 2).await.expect("2")),
        set(&["Ascend910-0", "Ascend910-1"])
    );
    let eight = preferred(&harness, ASCEND910, &all, &[], 8).await.expect("8");
    assert_eq!(eight.len(), 8);
    harness.stop().await;
}

/// A node taken over from another device plugin (issue 49): the kubelet's PodResources says which pods hold which
/// ids. Ids the kubelet counts as this resource's are its own to keep from other pods; a chip held under another
/// resource's name or an id this plugin does not advertise is listed Unhealthy, refused by Allocate and left out of
/// the preferred allocation until its pod ends.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn chips_running_pods_hold_under_other_ids_are_not_offered_until_the_pods_end() {
    use ascend_deviceplugin::fake_kubelet::FakePodResources;
    let (_sockets, socket, mut pod_resources) = support::pod_resources(vec![
        // Huawei's plugin sharing chips (`-shareDevCount`), and under a custom resource name.
        FakePodResources::pod("jobs", "shared", ASCEND910, &["Ascend910-2-1"]),
        FakePodResources::pod("jobs", "renamed", "huawei.com/npu-train", &["Ascend910-3"]),
        // Our own ids under our resource: the kubelet's bookkeeping keeps chip 5 from other pods.
        FakePodResources::pod("jobs", "same-ids", ASCEND910, &["Ascend910-5"]),
    ]);
    let harness = Harness::start(FakeHost::eight_910b(), |config| {
        config.pod_resources_socket = Some(socket.clone());
        config.pod_resources_interval = std::time::Duration::from_millis(100);
    })
    .await;
    let healthy = |d: &[(String, String)]| d.iter().filter(|(_, h)| h == "Healthy").count();
    let devices = harness.wait_devices(ASCEND910, "six offered", |d| d.len() == 8 && healthy(d) == 6).await;
    assert_eq!(health_of(&devices, "Ascend910-2"), Some("Unhealthy"));
    assert_eq!(health_of(&devices, "Ascend910-3"), Some("Unhealthy"));
    assert_eq!(health_of(&devices, "Ascend910-5"), Some("Healthy"), "left to the kubelet");

    let refused = allocate(&harness, ASCEND910, &[&["Ascend910-2", "Ascend910-4"]]).await.expect_err("chip 2 is held");
    assert_eq!(refused.code(), Code::FailedPrecondition);
    assert!(refused.message().contains("Ascend910-2 by jobs/shared"), "{}", refused.message());
    let all = ["Ascend910-0", "Ascend910-1", "Ascend910-2", "Ascend910-3", "Ascend910-4", "Ascend910-6", "Ascend910-7"];
    let chosen = preferred(&harness, ASCEND910, &all, &[], 5).await.expect("preferred");
    assert_eq!(
        as_set(&chosen),
        as_set(&ids(&["Ascend910-0", "Ascend910-1", "Ascend910-4", "Ascend910-6", "Ascend910-7"]))
    );

    // The pods end: the kubelet lists them no more, and their chips are offered again.
    pod_resources.set(Vec::new());
    harness.wait_devices(ASCEND910, "all offered", |d| d.len() == 8 && healthy(d) == 8).await;
    allocate(&harness, ASCEND910, &[&["Ascend910-2", "Ascend910-3"]]).await.expect("offered again");
    pod_resources.shutdown().await;
}
