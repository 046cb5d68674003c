//! Chips from DCMI (feature `dcmi`) against the simulator installed on a `dcmi_sim` fake host:
//! node numbers, chip type and product type as the topology says, the device-node cross-check,
//! the product-dependent shared nodes, and the order operator flag → DCMI → `/dev` scan.
//!
//! One test function: the simulator reads `DCMI_SIM_CONFIG` from the process environment, so the
//! steps must not run in parallel. The fake host lives under the target directory because the
//! library ownership check refuses anything below the world-writable `/tmp`; building device
//! nodes and passing that check need root (CI runs as root).
#![cfg(feature = "dcmi")]

use std::path::Path;

use ascend_dcmi::Dcmi;
use ascend_oci::cdi::{generate_spec, GenerateOptions};
use ascend_oci::Error;
use ascend_oci::HostRoot;
use ascend_oci::{discover_chips, ChipSource};
use ascend_oci::{shared_device_nodes, DeviceRequest, HostChips, InjectionConfig, InjectionPlan};
use dcmi_sim::fake_host::{DeviceNodeKind, FakeHost, FakeHostOptions};
use dcmi_sim::Topology;

fn sample(name: &str) -> Topology {
    dcmi_sim::samples::by_name(name).expect("sample exists").topology().expect("sample is valid")
}

fn fake_host(topology: &Topology, parent: &Path) -> FakeHost {
    assert!(rustix::process::geteuid().is_root(), "needs root for device nodes and the ownership check");
    let host = FakeHost::build(topology, &parent.join("host"), &FakeHostOptions::default()).expect("fake host");
    assert_eq!(host.device_nodes, DeviceNodeKind::CharacterDevices);
    std::env::set_var("DCMI_SIM_CONFIG", &host.topology);
    host
}

fn dcmi_of(host: &FakeHost) -> Dcmi {
    Dcmi::builder().library_path(&host.library).init().expect("the simulator loads and initialises")
}

fn container_names(root: &HostRoot, chips: &HostChips) -> Vec<String> {
    let nodes = shared_device_nodes(root, chips).expect("shared nodes");
    nodes.iter().map(|node| node.container_path.to_string_lossy().into_owned()).collect()
}

#[test]
fn chips_from_dcmi_are_cross_checked_and_ordered_after_the_flag() {
    let dir = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).expect("temporary directory");

    // The chips, chip type and product type of the topology.
    let topology = sample("atlas-300i-duo");
    let host = fake_host(&topology, &dir.path().join("duo"));
    let root = HostRoot::open(&host.root).expect("host root");
    let chips = HostChips::from_dcmi(&root, &dcmi_of(&host)).expect("chips from DCMI");
    assert_eq!(chips.node_ids().into_iter().collect::<Vec<_>>(), host.node_numbers());
    let first = topology.chips().next().expect("a chip");
    assert_eq!(chips.chip_type.as_deref(), Some(first.chip.chip_type.as_str()));
    assert_eq!(chips.product_type.as_deref(), Some(first.card.product_type.as_str()));
    assert_eq!(
        container_names(&root, &chips),
        ["/dev/dvpp_cmdlist", "/dev/davinci_manager", "/dev/devmm_svm", "/dev/hisi_hdc"]
    );

    // Discovery through the host root finds the installed library; the operator's chip type wins.
    let discovered = discover_chips(&root, None).expect("discovery");
    assert!(matches!(discovered.source, ChipSource::Dcmi { .. }), "{}", discovered.summary());
    assert_eq!(discovered.chips, chips);
    let flagged = discover_chips(&root, Some("950".to_owned())).expect("flag");
    assert_eq!(flagged.source, ChipSource::ChipTypeFlag);
    assert_eq!(flagged.chips.chip_type.as_deref(), Some("950"));
    assert_eq!(flagged.chips.node_ids(), chips.node_ids());

    // A simulator without its topology fails dcmi_init: the /dev scan, saying why. (The variable names a file that
    // is not there; without it the simulator would read the topology the fake host put beside the library.)
    std::env::set_var("DCMI_SIM_CONFIG", "/nonexistent/dcmi-sim/topology.toml");
    let fallback = discover_chips(&root, None).expect("fallback");
    let warning = fallback.source.fallback_warning().expect("a warning");
    assert!(warning.contains("dcmi_init") || warning.contains("-8005"), "{warning}");
    assert_eq!(fallback.chips.node_ids(), chips.node_ids());
    assert_eq!(fallback.chips.chip_type, None);
    std::env::set_var("DCMI_SIM_CONFIG", &host.topology);

    // A chip the driver reports without its node is an error naming the node.
    let missing = host.node_numbers()[1];
    let node = host.path(&format!("dev/davinci{missing}"));
    std::fs::remove_file(&node).expect("remove a chip node");
    match HostChips::from_dcmi(&root, &dcmi_of(&host)) {
        Err(Error::DeviceNodeMissing { node_id, path, reported_by }) => {
            assert_eq!((node_id, reported_by), (missing, "DCMI"));
            assert_eq!(path, node);
        }
        other => panic!("expected DeviceNodeMissing, got {other:?}"),
    }
    let error = discover_chips(&root, None).expect_err("discovery must not shrink the chip list");
    assert!(error.to_string().contains(&node.display().to_string()), "{error}");

    // Products without devmm_svm and hisi_hdc, as DCMI reports them.
    let mut soc = sample("atlas-300i-pro");
    for card in &mut soc.cards {
        card.product_type = "Atlas 200I SoC A1".to_owned();
    }
    let soc_host = fake_host(&soc, &dir.path().join("soc"));
    let soc_root = HostRoot::open(&soc_host.root).expect("host root");
    let soc_chips = HostChips::from_dcmi(&soc_root, &dcmi_of(&soc_host)).expect("chips from DCMI");
    assert_eq!(soc_chips.product_type.as_deref(), Some("Atlas 200I SoC A1"));
    assert_eq!(container_names(&soc_root, &soc_chips), ["/dev/dvpp_cmdlist", "/dev/davinci_manager"]);

    // An Ascend950 (DCMI V2) host: found through the V2 API, its own manager nodes and every unified-bus node.
    let a5 = sample("atlas-950-8");
    let a5_host = fake_host(&a5, &dir.path().join("a5"));
    let a5_root = HostRoot::open(&a5_host.root).expect("host root");
    let a5_dcmi = dcmi_of(&a5_host);
    assert_eq!(a5_dcmi.api_family(), ascend_dcmi::ApiFamily::V2);
    let a5_chips = HostChips::from_dcmi(&a5_root, &a5_dcmi).expect("chips from DCMI V2");
    assert_eq!(a5_chips.chip_type.as_deref(), Some("Ascend950"));
    assert_eq!(a5_chips.node_ids().into_iter().collect::<Vec<_>>(), a5_host.node_numbers());
    let names = container_names(&a5_root, &a5_chips);
    assert_eq!(&names[..3], ["/dev/davinci_manager", "/dev/hisi_hdc", "/dev/uburma/uburma0"]);
    assert_eq!(names.len(), 2 + 2 * 8, "{names:?}");
    assert!(names.contains(&"/dev/ummu/ummu7".to_owned()), "{names:?}");
    // What Huawei's plugin gives the chip of physical id 4 (logic 0), ASCEND_VISIBLE_DEVICES=0, injects that chip's
    // /dev/davinci0, the Ascend950 manager nodes and every unified-bus node, and no dvpp_cmdlist.
    assert_eq!(a5_host.node_number(4), Some(0));
    let request =
        DeviceRequest::from_env(["ASCEND_VISIBLE_DEVICES=0", "ASCEND_RUNTIME_OPTIONS=NODRV"]).expect("request");
    let plan = InjectionPlan::build(&a5_root, &a5_chips, &request, &InjectionConfig::default()).expect("plan");
    let injected: Vec<String> =
        plan.device_nodes.iter().map(|node| node.container_path.to_string_lossy().into_owned()).collect();
    assert_eq!(injected[0], "/dev/davinci0");
    assert_eq!(&injected[1..], names.as_slice(), "the shared nodes follow the chip");
    assert!(!injected.iter().any(|node| node.contains("dvpp_cmdlist") || node.contains("devmm_svm")), "{injected:?}");

    // The nodes of an Ascend950 are numbered by logic id: with physical ids that are no permutation of the logic
    // ids (logic n is physical n + 10), DCMI's chips are /dev/davinci0..7, as the driver made them, and the CDI spec
    // names each chip's device after that number.
    let mut shifted = sample("atlas-950-8");
    for chip in shifted.cards.iter_mut().flat_map(|card| card.chips.iter_mut()) {
        chip.phy_id = chip.logic_id + 10;
    }
    let shifted_host = fake_host(&shifted, &dir.path().join("a5-shifted"));
    assert_eq!(shifted_host.node_number(14), Some(4));
    let shifted_root = HostRoot::open(&shifted_host.root).expect("host root");
    let shifted_chips = HostChips::from_dcmi(&shifted_root, &dcmi_of(&shifted_host)).expect("chips by logic id");
    assert_eq!(shifted_chips.node_ids().into_iter().collect::<Vec<_>>(), (0..8).collect::<Vec<u32>>());
    let options = GenerateOptions {
        kind: "huawei.com/npu".to_owned(),
        mount_lists: Vec::new(),
        injection: InjectionConfig::default(),
        allow_link: false,
        no_driver: true,
    };
    let spec = generate_spec(&shifted_root, &shifted_chips, &options).expect("CDI spec");
    let chip_4 = spec.devices.iter().find(|device| device.name == "4").expect("a device named after node 4");
    let paths: Vec<&str> = chip_4.container_edits.device_nodes.iter().map(|node| node.path.as_str()).collect();
    assert_eq!(paths, ["/dev/davinci4"]);
    assert!(!spec.devices.iter().any(|device| device.name == "14"), "no device is named by physical id");
}
