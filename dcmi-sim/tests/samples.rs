//! Each sample topology enumerates through the raw bindings with the ids of the product it models,
//! written out here independently of the TOML files.

#[macro_use]
mod common;

use std::os::raw::{c_int, c_uint};

/// (card id, device id, logic id, phy id) in enumeration order.
fn enumerate(session: &common::Session) -> Vec<(c_int, c_int, c_int, c_uint)> {
    let lib = session.lib;
    let mut count = 0;
    let mut cards = [0 as c_int; 64];
    assert_eq!(call!(lib, dcmi_get_card_list(&mut count, cards.as_mut_ptr(), 64)), 0);
    let mut chips = Vec::new();
    for &card in &cards[..count as usize] {
        let mut devices = 0;
        assert_eq!(call!(lib, dcmi_get_device_num_in_card(card, &mut devices)), 0);
        for device in 0..devices {
            let mut logic = -1;
            assert_eq!(call!(lib, dcmi_get_device_logic_id(&mut logic, card, device)), 0);
            let mut phy = 0;
            assert_eq!(call!(lib, dcmi_get_device_phyid_from_logicid(logic as c_uint, &mut phy)), 0);
            chips.push((card, device, logic, phy));
        }
    }
    chips
}

fn expect(sample: &str, expected: &[(c_int, c_int, c_int, c_uint)]) {
    let session = common::start(dcmi_sim::samples::by_name(sample).expect("sample").toml);
    assert_eq!(enumerate(&session), expected, "{sample}");
}

#[test]
fn atlas_300i_duo_has_four_cards_of_two_chips_and_distinct_phy_ids() {
    expect(
        "atlas-300i-duo",
        &[
            (2, 0, 0, 4),
            (2, 1, 1, 5),
            (3, 0, 2, 6),
            (3, 1, 3, 7),
            (6, 0, 4, 0),
            (6, 1, 5, 1),
            (7, 0, 6, 2),
            (7, 1, 7, 3),
        ],
    );
}

#[test]
fn atlas_300i_pro_has_one_chip_per_card() {
    expect("atlas-300i-pro", &[(0, 0, 0, 0), (1, 0, 1, 1)]);
}

#[test]
fn atlas_800t_a2_has_eight_910b_with_distinct_phy_ids() {
    let phys = [4, 5, 6, 7, 0, 1, 2, 3];
    let expected: Vec<_> = (0..8).map(|index| (index, 0, index, phys[index as usize])).collect();
    expect("atlas-800t-a2", &expected);
}

#[test]
fn atlas_800i_a3_has_two_dies_per_card() {
    let expected: Vec<_> = (0..16).map(|index: c_int| (index / 2, index % 2, index, index as c_uint)).collect();
    expect("atlas-800i-a3", &expected);
}

#[test]
fn edge_310_has_one_chip() {
    expect("edge-310", &[(0, 0, 0, 0)]);
}
