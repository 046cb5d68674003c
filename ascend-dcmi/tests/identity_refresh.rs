//! The steady-state identity refresh: `DeviceManager::identity_unchanged` on the real `Dcmi` (over dcmi-sim) says
//! "unchanged" for a chip's own identity and notices a change in any field, and the sampler keeps its identity
//! value (the same `Arc`) while the chip is unchanged.

mod support;

use std::sync::Arc;

use ascend_dcmi::{
    ChipIdentity, DeviceManager, DieId, GroupSet, LogicId, MetricGroup, MetricSet, PcieAddress, Sampler, SamplerConfig,
};

const CHIP: LogicId = LogicId(2);

/// The known identity with one field changed, named for the failure message.
fn variants(known: &ChipIdentity) -> Vec<(&'static str, ChipIdentity)> {
    let change = |what: &'static str, edit: &dyn Fn(&mut ChipIdentity)| {
        let mut changed = known.clone();
        edit(&mut changed);
        assert_ne!(&changed, known, "the {what} variant changes nothing");
        (what, changed)
    };
    vec![
        change("logic id", &|i| i.ids.logic = LogicId(i.ids.logic.0 + 1)),
        change("chip type string", &|i| i.info.chip_type.push('X')),
        change("chip name", &|i| i.info.chip_name = "310P3".to_owned()),
        change("chip version", &|i| i.info.chip_version.push('1')),
        change("AI-core count", &|i| i.info.aicore_count += 1),
        change("NPU name", &|i| i.info.npu_name = Some(format!("{}X", i.info.npu_name.clone().unwrap_or_default()))),
        change("product type", &|i| i.product_type = Some("Atlas 300I Duo".to_owned())),
        change("board id", &|i| {
            let mut board = i.board.unwrap_or_default();
            board.board_id = Some(board.board_id.map_or(1, |id| id ^ 1));
            i.board = Some(board);
        }),
        change("mainboard id", &|i| i.mainboard_id = Some(i.mainboard_id.map_or(1, |id| id ^ 1))),
        change("PCIe address", &|i| {
            let address = i.pcie_address.unwrap_or_default();
            i.pcie_address = Some(PcieAddress { bus: address.bus ^ 1, ..address });
        }),
        change("affinity CPUs", &|i| i.affinity_cpus = Some("0-1023".to_owned())),
        change("die id", &|i| {
            let DieId(mut words) = i.die_id.unwrap_or_default();
            words[0] ^= 1;
            i.die_id = Some(DieId(words));
        }),
        change("serial number", &|i| {
            let mut label = i.elabel.clone().unwrap_or_default();
            label.serial_number.push('9');
            i.elabel = Some(label);
        }),
    ]
}

#[test]
fn a_chip_matches_its_own_identity_and_not_one_with_any_field_changed() {
    let (dcmi, _sim) = support::start("atlas-800t-a2");
    let known = DeviceManager::identity(&dcmi, CHIP).expect("identity");
    assert!(known.elabel.is_some() && known.pcie_address.is_some() && known.die_id.is_some(), "{known:?}");
    assert!(dcmi.identity_unchanged(CHIP, &known).expect("compare"), "a chip differs from itself: {known:?}");
    for (what, changed) in variants(&known) {
        let unchanged = dcmi.identity_unchanged(CHIP, &changed).expect("compare");
        assert!(!unchanged, "a changed {what} went unnoticed");
    }
    let other = DeviceManager::identity(&dcmi, LogicId(CHIP.0 + 1)).expect("identity");
    assert!(!dcmi.identity_unchanged(CHIP, &other).expect("compare"), "chip {CHIP} matched its neighbour");
}

#[test]
fn the_sampler_keeps_an_unchanged_identity_without_rebuilding_it() {
    let (dcmi, _sim) = support::start("atlas-800t-a2");
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let identity_only = MetricSet::EMPTY.with(ascend_dcmi::Metric::Identity);
    let sampler = Sampler::new(manager, SamplerConfig::default().with_metrics(identity_only)).expect("sampler");
    sampler.poll(MetricGroup::Identity).expect("first poll");
    let first = sampler.read(CHIP, |chip| chip.identity().fresh().cloned()).flatten().expect("an identity");
    sampler.poll_groups(GroupSet::of(MetricGroup::Identity)).expect("second poll");
    let second = sampler.read(CHIP, |chip| chip.identity().fresh().cloned()).flatten().expect("an identity");
    assert!(Arc::ptr_eq(&first, &second), "the unchanged identity was rebuilt");
    assert_eq!(first.ids.logic, CHIP);
}
