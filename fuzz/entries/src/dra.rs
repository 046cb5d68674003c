//! The DRA driver's inputs from the API server: the opaque configuration of a claim or DeviceClass, and the whole
//! `ResourceClaim` checked before a claim is prepared (both written by whoever may create claims).

use std::collections::BTreeMap;

use ascend_dcmi::{CardId, ChipIds, ChipLocator, ChipType, DeviceId, LogicId, PhyId, VnpuTemplate};
use ascend_dra::opaque_config::{self, API_VERSION, KIND};
use ascend_dra::plan_claim;
use ascend_dra::NpuChip;
use dra_kubelet_plugin::ClaimRef;
use k8s_openapi::api::resource::v1::ResourceClaim;

const DRIVER: &str = "npu.huawei.com";
const POOL: &str = "node-1";
const UID: &str = "uid-1";

/// The opaque `parameters` of an `NpuConfig`.
///
/// # Panics
/// When an accepted configuration has another apiVersion or kind, an invalid variable name, or sets a variable the
/// driver reserves.
pub fn dra_opaque_config(data: &[u8]) {
    let Ok(parameters) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    let Ok(config) = opaque_config::parse(&parameters) else { return };
    assert_eq!((config.api_version.as_str(), config.kind.as_str()), (API_VERSION, KIND));
    for name in config.env.keys() {
        let valid = name.bytes().next().is_some_and(|b| b.is_ascii_alphabetic() || b == b'_')
            && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_');
        assert!(valid, "accepted variable name {name:?}");
        assert!(!name.starts_with("ASCEND_") || !name.ends_with("VISIBLE_DEVICES"), "accepted reserved {name}");
    }
}

/// Two 310P chips (phy 0 and 1) on card 0: the node the claims are planned on.
fn chips() -> BTreeMap<u32, NpuChip> {
    (0..2u32)
        .map(|phy| {
            let ids = ChipIds {
                logic: LogicId(phy),
                phy: PhyId(phy),
                locator: Some(ChipLocator { card: CardId(0), device: DeviceId(phy as i32) }),
            };
            let chip = NpuChip {
                ids,
                chip_type: ChipType::Ascend310P,
                model: "310P3".into(),
                numa_node: None,
                pcie_address: None,
                aicore: 8,
                memory_bytes: None,
                driver_version: None,
                vnpu_templates: VnpuTemplate::for_chip_type(ChipType::Ascend310P).collect(),
            };
            (phy, chip)
        })
        .collect()
}

/// A `ResourceClaim` (JSON) planned as NodePrepareResources does.
///
/// # Panics
/// When a claim is planned whose UID is not the one asked for, or a planned device is not one of the node's chips or
/// names a template the chip does not accept.
pub fn dra_claim(data: &[u8]) {
    let Ok(claim) = serde_json::from_slice::<ResourceClaim>(data) else { return };
    let asked = ClaimRef { namespace: "default".into(), name: "claim".into(), uid: UID.into() };
    let chips = chips();
    let Ok(planned) = plan_claim(&claim, &asked, DRIVER, POOL, &chips) else { return };
    assert_eq!(claim.metadata.uid.as_deref(), Some(UID), "planned a replaced claim");
    for device in &planned.devices {
        let chip = chips.get(&device.phy).unwrap_or_else(|| panic!("planned {device:?} on a chip the node lacks"));
        if let Some(template) = &device.vnpu_template {
            assert!(chip.vnpu_templates.iter().any(|known| known.name == *template), "planned {device:?}");
        }
    }
}
