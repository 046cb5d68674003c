//! How a downstream crate tests its own logic without NPUs: it takes an `Arc<dyn DeviceManager>` and, in tests,
//! hands it a `MockDeviceManager` (feature `mock`). The "downstream" code here is a tiny health summary such as a
//! device plugin would compute.
#![cfg(feature = "mock")]

use std::sync::Arc;

use ascend_dcmi::{
    ApiFamily, CallContext, CardId, ChipIds, ChipLocator, DeviceId, DeviceManager, Error, FaultCode, FaultCodes,
    FaultLevel, HealthReport, LogicId, MockDeviceManager, PhyId,
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

/// The ids a driver of `family` reports: V2 chips have no `(card, device)` locator.
fn ids(family: ApiFamily, logic: u32, phy: u32) -> ChipIds {
    let locator = match family {
        ApiFamily::V1 => Some(ChipLocator { card: CardId(logic as i32), device: DeviceId(0) }),
        _ => None,
    };
    ChipIds { logic: LogicId(logic), phy: PhyId(phy), locator }
}

#[test]
fn unhealthy_and_dropped_chips_are_not_offered_on_both_api_families() {
    for family in [ApiFamily::V1, ApiFamily::V2] {
        let manager: Arc<dyn DeviceManager> = Arc::new(three_chips(family));
        assert_eq!(manager.api_family(), family);
        assert_eq!(schedulable_devices(manager.as_ref()).expect("summary"), ["Ascend910-4"], "{family}");
    }
}

/// Downstream code that uses a call one family lacks degrades on the typed error, whatever the family.
#[test]
fn a_call_the_family_lacks_is_a_typed_unsupported_error() {
    let mut mock = three_chips(ApiFamily::V2);
    mock.expect_vnpus()
        .returning(|_| Err(Error::UnavailableOnApi { call: "dcmi_get_device_info", family: ApiFamily::V2 }));
    let error = mock.vnpus(LogicId(0)).expect_err("no vNPU on V2");
    assert!(error.is_unsupported(), "{error}");
    assert_eq!(error.to_string(), "dcmi_get_device_info is not available on the DCMI V2 API");
}

fn three_chips(family: ApiFamily) -> MockDeviceManager {
    let mut mock = MockDeviceManager::new();
    mock.expect_api_family().return_const(family);
    mock.expect_chips().returning(move || Ok(vec![ids(family, 0, 4), ids(family, 1, 5), ids(family, 2, 6)]));
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
    mock
}

#[test]
fn driver_errors_reach_the_caller() {
    let mut mock = MockDeviceManager::new();
    mock.expect_chips().times(1).returning(|| Err(Error::FunctionMissing("dcmi_get_card_list")));
    let error = schedulable_devices(&mock).expect_err("enumeration fails");
    assert!(error.is_unsupported());
}
