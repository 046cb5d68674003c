//! Property tests of the request parser: it never panics, and the formatted value parses back
//! to the same selection.

use ascend_oci::{DeviceRequest, DeviceSelection, RuntimeOptions, MAX_PHY_ID};
use proptest::prelude::*;

fn token() -> impl Strategy<Value = String> {
    prop_oneof![
        (0..=MAX_PHY_ID).prop_map(|id| id.to_string()),
        (0..=MAX_PHY_ID, 0..=MAX_PHY_ID).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (0..=MAX_PHY_ID).prop_map(|id| format!("npu-{id}")),
        (0..=MAX_PHY_ID, prop::sample::select(vec!["910", "910B", "310P", "310B", "310"]))
            .prop_map(|(id, model)| format!("Ascend{model}-{id}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn never_panics_on_any_input(value in ".{0,64}") {
        let _ = value.parse::<DeviceSelection>();
        let _ = value.parse::<RuntimeOptions>();
        let _ = DeviceRequest::from_env([format!("ASCEND_VISIBLE_DEVICES={value}").as_str()]);
    }

    #[test]
    fn never_panics_on_near_miss_input(value in "[0-9a-zA-Z, \\-]{0,40}") {
        let _ = value.parse::<DeviceSelection>();
    }

    #[test]
    fn formatted_value_round_trips(tokens in prop::collection::vec(token(), 1..8)) {
        let parsed: DeviceSelection = tokens.join(",").parse().expect("generated tokens are valid");
        let formatted = parsed.to_string();
        prop_assert_eq!(formatted.parse::<DeviceSelection>().ok(), Some(parsed.clone()));
        // The canonical form is a fixed point.
        prop_assert_eq!(formatted.parse::<DeviceSelection>().map(|s| s.to_string()).ok(), Some(formatted));
    }

    #[test]
    fn parsed_ids_are_exactly_the_union_of_the_tokens(tokens in prop::collection::vec(token(), 1..8)) {
        let mut expected = std::collections::BTreeSet::new();
        for token in &tokens {
            let id_part = token.rsplit_once('-').filter(|_| !token.starts_with(|c: char| c.is_ascii_digit()));
            match (id_part, token.split_once('-')) {
                (Some((_, id)), _) => { expected.insert(id.parse::<u32>().expect("id")); }
                (None, Some((a, b))) => expected.extend(a.parse::<u32>().expect("a")..=b.parse::<u32>().expect("b")),
                (None, None) => { expected.insert(token.parse::<u32>().expect("id")); }
            }
        }
        let parsed: DeviceSelection = tokens.join(" , ").parse().expect("valid");
        prop_assert_eq!(parsed, DeviceSelection::Chips(expected));
    }
}
