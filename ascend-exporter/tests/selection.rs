//! Golden-file test of the metric-selection file: the fixture, resolved with every default filled in, must equal
//! the golden TOML. `UPDATE_GOLDEN=1` rewrites the golden file after an intended change.

use std::path::Path;

use ascend_dcmi::{Metric, MetricGroup, SamplerConfig};
use ascend_exporter::Selection;

fn fixtures() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures"))
}

#[test]
fn resolved_selection_matches_the_golden_file() {
    let selection = Selection::load(&fixtures().join("selection.toml")).expect("fixture is valid");
    let resolved = selection.to_resolved_toml();
    let golden_path = fixtures().join("selection.resolved.toml");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden_path, &resolved).expect("write golden file");
    }
    let golden = std::fs::read_to_string(&golden_path).expect("golden file exists (UPDATE_GOLDEN=1 creates it)");
    assert_eq!(resolved, golden, "resolved selection differs from {}", golden_path.display());
    // The resolved form is itself a valid selection that resolves to the same thing.
    let again = Selection::parse(&resolved, "golden").expect("golden file is a valid selection");
    assert_eq!(again, selection);
}

#[test]
fn fixture_drives_the_sampler_configuration() {
    let selection = Selection::load(&fixtures().join("selection.toml")).expect("fixture is valid");
    let config = selection.sampler_config(SamplerConfig::default());
    assert_eq!(config.interval(MetricGroup::Utilization).as_millis(), 500);
    assert_eq!(config.interval(MetricGroup::ChipState).as_secs(), 2);
    assert!(!config.metrics().contains(Metric::Identity), "identity group disabled");
    assert!(!config.metrics().contains(Metric::NetworkHealth));
    assert!(config.metrics().contains(Metric::Temperature));
}
