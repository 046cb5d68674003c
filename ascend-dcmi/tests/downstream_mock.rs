//! How a downstream crate tests its own logic without NPUs: it takes an `Arc<dyn DeviceManager>` and, in tests,
//! hands it a `MockDeviceManager` (feature `mock`). The "downstream" code here is a tiny health summary such as a
//! device plugin would compute.
#![cfg(feature = "mock")]

use std::sync::Arc;

use ascend_dcmi::{
    CallContext, CardId, ChipIds, ChipLocator, DeviceId, DeviceManager, Error, FaultCode, FaultCodes, FaultLevel,
    HealthReport, LogicId, MockDeviceManager, PhyId,
};

/// Downstream code under test: the Kubernetes device names of the chips that may take new work.
fn schedulable_devices(manager: &dyn DeviceManager) -> Result<Vec<String>, Error> {
    let mut names = Vec::new();
    for ids in manager.chips()? {
        match manager.health(ids.logic) {
            Ok(report) if report.is_healthy() => names.push(format!("Ascend910-{}", ids.phy)),
            Ok(_) => {}
            Err(error) if error.is_card_drop() => {}
            Err(error) => return Err(error),
        }
    }
    Ok(names)
}

fn ids(logic: u32, phy: u32) -> ChipIds {
    ChipIds {
        logic: LogicId(logic),
        phy: PhyId(phy),
        locator: ChipLocator { card: CardId(logic as i32), device: DeviceId(0) },
    }
}

#[test]
fn unhealthy_and_dropped_chips_are_not_offered() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().returning(|| Ok(vec![ids(0, 4), ids(1, 5), ids(2, 6)]));
    mock.expect_health().returning(|logic| match logic.0 {
        0 => Ok(HealthReport::healthy()),
        1 => Ok(HealthReport {
            dcmi: Some(ascend_dcmi::DcmiHealth::Major),
            faults: FaultCodes::from_codes([FaultCode(0x80E3_A201)]),
            level: FaultLevel::SeparateNpu,
            card_dropped: false,
        }),
        _ => Err(Error::from_code(-8012, CallContext::global("dcmi_get_device_health"))),
    });
    let manager: Arc<dyn DeviceManager> = Arc::new(mock);
    assert_eq!(schedulable_devices(manager.as_ref()).expect("summary"), ["Ascend910-4"]);
}

#[test]
fn driver_errors_reach_the_caller() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().times(1).returning(|| Err(Error::FunctionMissing("dcmi_get_card_list")));
    let error = schedulable_devices(&mock).expect_err("enumeration fails");
    assert!(error.is_unsupported());
}
