//! Node labels computed from the simulated driver (dcmi-sim) with its sample topologies and a mixed-node fixture:
//! the same DCMI calls, in the same order, as on an Atlas server, on both DCMI API families (V1 and Ascend950's V2).

mod node_labels_support;

use ascend_kube::node_labels::{
    NodeLabels, ACCELERATOR_LABEL, CHIP_COUNT_LABEL, CHIP_MEMORY_LABEL, CHIP_NAME_LABEL, CHIP_TYPE_LABEL,
    DRIVER_VERSION_LABEL, HUAWEI_DRIVER_VERSION_LABEL, INFER_CARD_LABEL, MIXED, PRODUCT_LABEL, SERVER_TYPE_LABEL,
    TOPO_RACK_LABEL, TOPO_SERVER_LABEL, TOPO_SUPER_POD_LABEL,
};
use node_labels_support::{mixed_fixture, start, topology};

/// What a sample's node must be labelled with (the chip count comes from the topology itself).
struct Expected {
    sample: &'static str,
    chip_type: &'static str,
    product: &'static str,
    accelerator: &'static str,
    chip_name: &'static str,
    /// Huawei's labels, as Huawei's device plugin writes them on the same simulated host (the comparison tier,
    /// peer-tests, checks these against it): servertype, mind-cluster/npu-chip-memory, infer-card-type.
    huawei: [Option<&'static str>; 3],
    /// Huawei's topology labels: huawei.com/topotree.superpodid, .serverid, .rackid.
    topology: [Option<&'static str>; 3],
}

/// DCMI V1 samples, then the Ascend950 (DCMI V2) ones.
const SAMPLES: [Expected; 7] = [
    Expected {
        sample: "atlas-300i-duo",
        chip_type: "310P",
        product: "Atlas-300I-Duo",
        accelerator: "huawei-Ascend310P",
        chip_name: "310P3",
        huawei: [Some("Ascend310P-8"), None, Some("card-300i-duo")],
        topology: [None, None, None],
    },
    Expected {
        sample: "atlas-300i-pro",
        chip_type: "310P",
        product: "Atlas-300I-Pro",
        accelerator: "huawei-Ascend310P",
        chip_name: "310P3",
        huawei: [Some("Ascend310P-8"), None, None],
        topology: [None, None, None],
    },
    Expected {
        sample: "atlas-800t-a2",
        chip_type: "910B",
        product: "Atlas-800T-A2",
        accelerator: "huawei-Ascend910",
        chip_name: "910B3",
        huawei: [Some("Ascend910B-20"), Some("64G"), None],
        topology: [None, None, None],
    },
    Expected {
        sample: "atlas-800i-a3",
        chip_type: "910A3",
        product: "Atlas-800I-A3",
        accelerator: "huawei-Ascend910",
        chip_name: "910_9382",
        huawei: [Some("Ascend910A3-24"), Some("64G"), None],
        topology: [Some("0"), None, None],
    },
    Expected {
        sample: "edge-310",
        chip_type: "310",
        product: "Atlas-200-Model-3000",
        accelerator: "huawei-Ascend310",
        chip_name: "310",
        huawei: [None, None, None],
        topology: [None, None, None],
    },
    Expected {
        sample: "atlas-950-8",
        chip_type: "950",
        product: "Atlas-950-SuperPoD",
        accelerator: "huawei-npu",
        chip_name: "Ascend950DT",
        huawei: [Some("npu-32"), Some("144G"), None],
        topology: [Some("1"), Some("1"), Some("1")],
    },
    Expected {
        sample: "atlas-950-16",
        chip_type: "950",
        product: "Atlas-950-16P",
        accelerator: "huawei-npu",
        chip_name: "Ascend950PR",
        huawei: [Some("npu-32"), Some("128G"), None],
        topology: [None, None, None],
    },
];

#[test]
fn every_sample_host_gets_its_pool_labels() {
    for expected in SAMPLES {
        let simulator = start(expected.sample);
        let host = topology(expected.sample);
        let chips: usize = host.cards.iter().map(|card| card.chips.len()).sum();
        let labels = NodeLabels::read(&simulator.dcmi).unwrap_or_else(|error| panic!("{}: {error}", expected.sample));
        let context = expected.sample;
        assert_eq!(labels.get(CHIP_TYPE_LABEL), Some(expected.chip_type), "{context}");
        assert_eq!(labels.get(CHIP_COUNT_LABEL), Some(chips.to_string().as_str()), "{context}");
        assert_eq!(labels.get(DRIVER_VERSION_LABEL), Some(host.simulation.driver_version.as_str()), "{context}");
        assert_eq!(labels.get(PRODUCT_LABEL), Some(expected.product), "{context}");
        assert_eq!(labels.get(ACCELERATOR_LABEL), Some(expected.accelerator), "{context}");
        assert_eq!(labels.get(CHIP_NAME_LABEL), Some(expected.chip_name), "{context}");
        assert_eq!(labels.get(HUAWEI_DRIVER_VERSION_LABEL), Some(host.simulation.driver_version.as_str()), "{context}");
        let [server_type, memory, infer_card] = expected.huawei;
        assert_eq!(labels.get(SERVER_TYPE_LABEL), server_type, "{context}");
        assert_eq!(labels.get(CHIP_MEMORY_LABEL), memory, "{context}");
        assert_eq!(labels.get(INFER_CARD_LABEL), infer_card, "{context}");
        let [super_pod, server, rack] = expected.topology;
        assert_eq!(labels.get(TOPO_SUPER_POD_LABEL), super_pod, "{context}");
        assert_eq!(labels.get(TOPO_SERVER_LABEL), server, "{context}");
        assert_eq!(labels.get(TOPO_RACK_LABEL), rack, "{context}");
        let huawei = expected.huawei.iter().chain(&expected.topology).flatten().count();
        assert_eq!(labels.len(), 7 + huawei, "{context}");
    }
}

#[test]
fn a_mixed_host_is_labelled_mixed_with_a_sanitised_driver_version() {
    let fixture = mixed_fixture();
    let fixture = fixture.to_str().expect("UTF-8 path");
    let simulator = start(fixture);
    let labels = NodeLabels::read(&simulator.dcmi).expect("labels");
    assert_eq!(labels.get(CHIP_TYPE_LABEL), Some(MIXED));
    assert_eq!(labels.get(CHIP_COUNT_LABEL), Some("2"));
    assert_eq!(topology(fixture).simulation.driver_version, "Ascend HDK 24.1.RC2 (B080)");
    assert_eq!(labels.get(DRIVER_VERSION_LABEL), Some("Ascend-HDK-24.1.RC2-B080"));
    assert_eq!(labels.get(PRODUCT_LABEL), Some(MIXED));
    assert_eq!(labels.get(ACCELERATOR_LABEL), None, "Huawei has no accelerator value for 310P and 910B together");
    assert_eq!(labels.get(CHIP_NAME_LABEL), None);
}
