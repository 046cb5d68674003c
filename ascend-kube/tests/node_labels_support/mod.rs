//! Shared by the node-label tests: a private copy of the simulated `libdcmi.so` per test, loaded with a topology.
//!
//! The dynamic loader maps each copied file as its own library, so each copy has its own simulator state and the
//! tests of one binary can run in parallel. The simulator reads `DCMI_SIM_CONFIG` in `dcmi_init`, so setting it and
//! initialising happen under one lock.
#![allow(dead_code)] // each test binary uses a different part of this module

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use ascend_dcmi::{
    CardId, ChipIdentity, ChipIds, ChipInfo, ChipLocator, ChipType, Dcmi, DeviceId, Elabel, Error, LogicId,
    MockDeviceManager, PhyId,
};

static ENVIRONMENT: Mutex<()> = Mutex::new(());

/// A loaded simulator; the directory holds the library copy and must outlive the handle.
pub struct Simulator {
    /// The driver handle.
    pub dcmi: Dcmi,
    /// Keeps the copied library alive.
    pub dir: tempfile::TempDir,
}

/// The mixed 310P + 910B fixture topology.
pub fn mixed_fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mixed-310p-910b.toml")
}

/// Loads a private simulator copy with a topology: a file path, or the name of a dcmi-sim sample.
pub fn start(topology: &str) -> Simulator {
    let built = dcmi_sim::library_path().unwrap_or_else(|error| {
        panic!("the simulator is built with the tests (dcmi-sim is a dev-dependency): {error}")
    });
    let dir = tempfile::tempdir().expect("temporary directory");
    let library = dir.path().join("libdcmi.so");
    std::fs::copy(&built, &library).expect("copy libdcmi_sim.so");
    let config = if Path::new(topology).exists() { topology.to_owned() } else { format!("sample:{topology}") };
    let builder = Dcmi::builder().library_path(&library).verify_library_ownership(false);
    let dcmi = {
        let _environment = ENVIRONMENT.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        std::env::set_var(dcmi_sim::CONFIG_ENV, &config);
        std::env::remove_var(dcmi_sim::OVERLAY_ENV);
        builder.init()
    };
    let dcmi = dcmi.unwrap_or_else(|error| panic!("loading the simulator with {topology}: {error}"));
    Simulator { dcmi, dir }
}

/// The topology the simulator was started with, parsed by dcmi-sim itself.
pub fn topology(topology: &str) -> dcmi_sim::Topology {
    dcmi_sim::samples::load_file_or_sample(topology).unwrap_or_else(|error| panic!("topology {topology}: {error}"))
}

/// A chip as `identity()` reports it (phy id = logic id + 10); the chip type is classified from the name, as
/// ascend-dcmi does.
pub fn chip(logic: u32, chip_name: &str, product_type: Option<&str>, elabel_product: Option<&str>) -> ChipIdentity {
    ChipIdentity {
        ids: ChipIds {
            logic: LogicId(logic),
            phy: PhyId(logic + 10),
            locator: Some(ChipLocator {
                card: CardId(i32::try_from(logic).expect("small logic id")),
                device: DeviceId(0),
            }),
        },
        chip_type: ChipType::classify(chip_name, None),
        info: ChipInfo {
            chip_type: "Ascend".into(),
            chip_name: chip_name.into(),
            chip_version: "V1".into(),
            aicore_count: 8,
            npu_name: None,
        },
        product_type: product_type.map(str::to_owned),
        board: None,
        mainboard_id: None,
        pcie_address: None,
        numa_node: None,
        affinity_cpus: None,
        die_id: None,
        elabel: elabel_product.map(|name| Elabel { product_name: name.into(), ..Elabel::default() }),
    }
}

/// A mock driver with these chips and this version.
pub fn driver(chips: Vec<ChipIdentity>, version: &str) -> MockDeviceManager {
    shared_driver(Arc::new(Mutex::new(chips)), version)
}

/// A mock driver whose chips the test can change while it is in use (a card added or dropped).
pub fn shared_driver(chips: Arc<Mutex<Vec<ChipIdentity>>>, version: &str) -> MockDeviceManager {
    let mut mock = MockDeviceManager::new();
    let listed = Arc::clone(&chips);
    mock.expect_chips().returning(move || Ok(lock(&listed).iter().map(|chip| chip.ids).collect()));
    mock.expect_identity().returning(move |logic| {
        lock(&chips).iter().find(|chip| chip.ids.logic == logic).cloned().ok_or(Error::NoSuchChip(logic.to_string()))
    });
    let version = version.to_owned();
    mock.expect_driver_version().returning(move || Ok(version.clone()));
    // No vNPU resources and no HBM: Huawei's server-type and chip-memory labels are the simulator tests' concern.
    mock.expect_vnpus().returning(|logic| Err(Error::NoSuchChip(logic.to_string())));
    mock.expect_hbm_memory().returning(|logic| Err(Error::NoSuchChip(logic.to_string())));
    mock.expect_super_pod_info().returning(|logic| Err(Error::NoSuchChip(logic.to_string())));
    mock
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
