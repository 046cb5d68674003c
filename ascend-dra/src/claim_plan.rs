//! What preparing a claim means, decided from the `ResourceClaim` alone: which of its allocation results are this
//! driver's, on which chips, with which configuration. A pure function, so every bad input has a unit test.

use std::collections::BTreeMap;

use dra_kubelet_plugin::ClaimRef;
use k8s_openapi::api::resource::v1::ResourceClaim;

use crate::devices::{parse_device_name, template_label, DeviceRef, NpuChip};
use crate::opaque_config;

/// One allocated device of ours.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlannedDevice {
    /// The request it serves, with a subrequest suffix removed (`gpu/small` → `gpu`), as the kubelet expects.
    pub request: String,
    /// The device name in our pool.
    pub device: String,
    /// The chip.
    pub phy: u32,
    /// The vNPU template to create, for a partition device.
    pub vnpu_template: Option<String>,
}

/// The whole plan of a claim.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClaimPlan {
    /// Our devices, in allocation order.
    pub devices: Vec<PlannedDevice>,
    /// Extra environment from opaque configuration (claim entries after class entries, later ones winning).
    pub env: BTreeMap<String, String>,
}

/// Checks the claim against what the kubelet asked for and this node's chips, and plans it.
///
/// # Errors
/// A message for the kubelet naming the claim and what is wrong: replaced claim (UID mismatch), not allocated,
/// nothing allocated to this driver, a device of another pool or one this node does not have, a malformed opaque
/// configuration.
pub fn plan_claim(
    claim: &ResourceClaim,
    asked: &ClaimRef,
    driver: &str,
    pool: &str,
    chips: &BTreeMap<u32, NpuChip>,
) -> Result<ClaimPlan, String> {
    let name = format!("ResourceClaim {}/{}", asked.namespace, asked.name);
    let uid = claim.metadata.uid.as_deref().unwrap_or_default();
    if uid != asked.uid {
        return Err(format!(
            "{name} has UID {uid:?}, the kubelet asked for {:?}: the claim was deleted and created again",
            asked.uid
        ));
    }
    let allocation = claim
        .status
        .as_ref()
        .and_then(|status| status.allocation.as_ref())
        .and_then(|allocation| allocation.devices.as_ref())
        .ok_or_else(|| format!("{name} is not allocated"))?;
    let results = allocation.results.as_deref().unwrap_or_default();
    let ours: Vec<_> = results.iter().filter(|result| result.driver == driver).collect();
    if ours.is_empty() {
        let drivers: Vec<&str> = results.iter().map(|result| result.driver.as_str()).collect();
        return Err(format!("{name} has no device allocated to driver {driver} (allocated to: {drivers:?})"));
    }
    let mut plan = ClaimPlan::default();
    for result in ours {
        if result.pool != pool {
            return Err(format!(
                "{name}: device {} is in pool {:?}, but this node's pool is {pool:?}",
                result.device, result.pool
            ));
        }
        let (phy, template) = match parse_device_name(&result.device) {
            Some(DeviceRef::Chip(phy)) => (phy, None),
            Some(DeviceRef::Partition(phy, template)) => (phy, Some(template)),
            None => return Err(format!("{name}: device {:?} is not a device this driver publishes", result.device)),
        };
        let chip = chips.get(&phy).ok_or_else(|| {
            format!("{name}: device {} names chip {phy}, which this node does not have", result.device)
        })?;
        let template = match template {
            Some(label) => match chip.vnpu_templates.iter().find(|t| template_label(t.name) == label) {
                Some(template) => Some(template.name),
                None => {
                    return Err(format!(
                        "{name}: device {} asks for vNPU template {label:?}, which a {} does not take",
                        result.device, chip.chip_type
                    ))
                }
            },
            None => None,
        };
        let request = result.request.split('/').next().unwrap_or_default().to_owned();
        plan.devices.push(PlannedDevice {
            request,
            device: result.device.clone(),
            phy,
            vnpu_template: template.map(str::to_owned),
        });
    }
    let requests: Vec<&str> = plan.devices.iter().map(|d| d.request.as_str()).collect();
    let mut configs: Vec<_> = allocation.config.as_deref().unwrap_or_default().iter().collect();
    // Class configuration first, then the claim's own, so that the claim's wins.
    configs.sort_by_key(|config| config.source != "FromClass");
    for config in configs {
        let Some(opaque) = config.opaque.as_ref().filter(|opaque| opaque.driver == driver) else { continue };
        let applies = config.requests.as_ref().is_none_or(|named| {
            named.iter().any(|request| requests.contains(&request.split('/').next().unwrap_or_default()))
        });
        if !applies {
            continue;
        }
        let parsed = opaque_config::parse(&opaque.parameters.0)
            .map_err(|error| format!("{name}: opaque configuration ({}): {error}", config.source))?;
        plan.env.extend(parsed.env);
    }
    Ok(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use ascend_dcmi::{CardId, ChipIds, ChipLocator, ChipType, DeviceId, LogicId, PhyId, VnpuTemplate};
    use k8s_openapi::api::resource::v1::{
        AllocationResult, DeviceAllocationConfiguration, DeviceAllocationResult, DeviceRequestAllocationResult,
        OpaqueDeviceConfiguration, ResourceClaimStatus,
    };
    use k8s_openapi::apimachinery::pkg::runtime::RawExtension;
    use serde_json::json;

    const DRIVER: &str = "npu.huawei.com";

    fn chips() -> BTreeMap<u32, NpuChip> {
        (0..2)
            .map(|phy| {
                let chip = NpuChip {
                    ids: ChipIds {
                        logic: LogicId(phy),
                        phy: PhyId(phy),
                        locator: Some(ChipLocator { card: CardId(0), device: DeviceId(phy as i32) }),
                    },
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

    fn asked() -> ClaimRef {
        ClaimRef { namespace: "default".into(), name: "c".into(), uid: "uid-1".into() }
    }

    fn claim(results: Vec<(&str, &str, &str)>, config: Vec<(&str, serde_json::Value)>) -> ResourceClaim {
        let mut claim = ResourceClaim::default();
        claim.metadata.uid = Some("uid-1".into());
        let results = results
            .into_iter()
            .map(|(driver, pool, device)| DeviceRequestAllocationResult {
                request: "npu/first".into(),
                driver: driver.into(),
                pool: pool.into(),
                device: device.into(),
                ..DeviceRequestAllocationResult::default()
            })
            .collect();
        let config = config
            .into_iter()
            .map(|(source, parameters)| DeviceAllocationConfiguration {
                source: source.into(),
                requests: None,
                opaque: Some(OpaqueDeviceConfiguration { driver: DRIVER.into(), parameters: RawExtension(parameters) }),
            })
            .collect();
        claim.status = Some(ResourceClaimStatus {
            allocation: Some(AllocationResult {
                devices: Some(DeviceAllocationResult { results: Some(results), config: Some(config) }),
                ..AllocationResult::default()
            }),
            ..ResourceClaimStatus::default()
        });
        claim
    }

    fn env(value: &str) -> serde_json::Value {
        json!({"apiVersion": "npu.huawei.com/v1alpha1", "kind": "NpuConfig", "env": {"MODE": value}})
    }

    #[test]
    fn only_our_results_are_planned_and_the_claims_configuration_wins() {
        let claim = claim(
            vec![(DRIVER, "node", "npu-1"), ("gpu.example.com", "node", "gpu-0"), (DRIVER, "node", "npu-0-vir02")],
            vec![("FromClaim", env("claim")), ("FromClass", env("class"))],
        );
        let plan = plan_claim(&claim, &asked(), DRIVER, "node", &chips()).unwrap();
        let devices: Vec<_> =
            plan.devices.iter().map(|d| (d.request.as_str(), d.phy, d.vnpu_template.as_deref())).collect();
        assert_eq!(devices, [("npu", 1, None), ("npu", 0, Some("vir02"))]);
        assert_eq!(plan.env["MODE"], "claim");
    }

    #[test]
    fn each_bad_claim_gets_an_error_naming_its_problem() {
        let ok = vec![(DRIVER, "node", "npu-1")];
        let mut replaced = claim(ok.clone(), Vec::new());
        replaced.metadata.uid = Some("uid-2".into());
        let mut unallocated = claim(ok.clone(), Vec::new());
        unallocated.status = None;
        let cases = [
            (replaced, "deleted and created again"),
            (unallocated, "is not allocated"),
            (
                claim(vec![("gpu.example.com", "node", "gpu-0")], Vec::new()),
                "no device allocated to driver npu.huawei.com",
            ),
            (claim(vec![(DRIVER, "other-node", "npu-1")], Vec::new()), "this node's pool is \"node\""),
            (claim(vec![(DRIVER, "node", "npu-7")], Vec::new()), "chip 7, which this node does not have"),
            (claim(vec![(DRIVER, "node", "gpu-1")], Vec::new()), "not a device this driver publishes"),
            (claim(vec![(DRIVER, "node", "npu-1-vir99")], Vec::new()), "template \"vir99\""),
            (claim(ok.clone(), vec![("FromClaim", json!({"apiVersion": 1}))]), "not a valid NpuConfig"),
        ];
        for (claim, expected) in cases {
            let error = plan_claim(&claim, &asked(), DRIVER, "node", &chips()).unwrap_err();
            assert!(error.contains(expected) && error.contains("default/c"), "{expected}: {error}");
        }
    }
}
