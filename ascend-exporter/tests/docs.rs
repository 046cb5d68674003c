//! docs/npu-exporter.md carries the metric table generated from the catalogue; this test fails when they drift.
//! `UPDATE_GOLDEN=1` rewrites the table section.

use std::path::Path;

use ascend_exporter::metric_table::with_generated_tables;

#[test]
fn docs_metric_table_matches_the_catalogue() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/npu-exporter.md");
    let docs = std::fs::read_to_string(&path).expect("docs/npu-exporter.md exists");
    let generated = with_generated_tables(&docs).expect("docs contain the metric-table markers");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, &generated).expect("rewrite docs");
        return;
    }
    assert!(generated == docs, "docs/npu-exporter.md metric table is out of date: run with UPDATE_GOLDEN=1");
}
