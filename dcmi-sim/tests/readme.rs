//! The TOML examples in README.md parse: the topology example as a topology, the overlay example
//! as an overlay.

use std::path::Path;

fn toml_blocks() -> Vec<String> {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md");
    readme.split("```toml\n").skip(1).filter_map(|rest| rest.split("```").next()).map(str::to_owned).collect()
}

#[test]
fn readme_examples_parse() {
    let blocks = toml_blocks();
    let overlay = blocks.iter().find(|block| block.contains("reset_generation")).expect("overlay example");
    let parsed = dcmi_sim::Overlay::from_toml_str(overlay, Path::new("README overlay"));
    assert!(parsed.is_ok(), "{:?}", parsed.err());
    let topology = blocks.iter().find(|block| block.contains("[[card.chip]]")).expect("topology example");
    let parsed = dcmi_sim::Topology::from_toml_str(topology, Path::new("README topology"));
    let parsed = parsed.unwrap_or_else(|error| panic!("{error}"));
    assert_eq!((parsed.cards.len(), parsed.timeline.len(), parsed.injections.len()), (1, 1, 1));
}
