//! Runs against the packaged crates: a mock-driven test (feature `mock`) and the simulator loaded through the path a
//! real `libdcmi.so` takes.

use ascend_dcmi::{
    CallContext, CardId, Celsius, ChipIds, ChipLocator, Dcmi, DeviceId, Error, LogicId, MockDeviceManager, PhyId,
};
use package_consumer::hottest_chip;

fn ids(logic: u32, phy: u32) -> ChipIds {
    ChipIds {
        logic: LogicId(logic),
        phy: PhyId(phy),
        locator: Some(ChipLocator { card: CardId(i32::try_from(logic).expect("small id")), device: DeviceId(0) }),
    }
}

#[test]
fn the_mock_drives_downstream_code() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Ok(vec![ids(0, 4), ids(1, 5), ids(2, 6)]));
    mock.expect_temperature().returning(|logic| match logic.0 {
        0 => Ok(Celsius(51)),
        1 => Err(Error::from_code(-8012, CallContext::global("dcmi_get_device_temperature"))),
        _ => Ok(Celsius(63)),
    });
    assert_eq!(hottest_chip(&mock).expect("temperatures"), Some((PhyId(6), Celsius(63))));
}

#[test]
fn the_packaged_simulator_loads_through_the_real_loader() {
    let library = dcmi_sim::library_path().expect("libdcmi_sim.so is built with dcmi-sim, a dev-dependency");
    std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
    // The build directory of this check may sit below a directory others can write; the loader's ownership rule is
    // tested in ascend-dcmi itself.
    let dcmi = Dcmi::builder().library_path(&library).verify_library_ownership(false).init().expect("load dcmi-sim");
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("valid sample");
    let chips = ascend_dcmi::DeviceManager::chips(&dcmi).expect("chips");
    assert_eq!(chips.len(), topology.chips().count());
    let (phy, temperature) = hottest_chip(&dcmi).expect("temperatures").expect("a host with chips");
    assert!(chips.iter().any(|chip| chip.phy == phy), "{phy} is one of the host's chips");
    assert!((0..=125).contains(&temperature.0), "{temperature:?} is a plausible chip temperature");
    dcmi.shutdown().expect("unload");
}
