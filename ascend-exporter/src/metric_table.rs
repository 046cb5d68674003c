//! The metric table of the docs, generated from the catalogue: a test of this module fails when
//! `docs/npu-exporter.md` and the catalogue drift apart, and with `UPDATE_GOLDEN=1` rewrites the table section
//! (`UPDATE_GOLDEN=1 cargo test -p ascend-exporter --lib metric_table`). Only the tests compile it.

use crate::catalogue::{Extract, MetricKind, Naming, CATALOGUE};
use crate::series_labels::HUAWEI_NPU_NAME;

/// Marker line before the generated table in the docs.
pub const TABLE_BEGIN: &str = "<!-- metric-table:begin (generated from ascend-exporter/src/catalogue.rs) -->";
/// Marker line after it.
pub const TABLE_END: &str = "<!-- metric-table:end -->";

/// A Markdown table of every metric of one naming scheme: exposed name, type, group, labels, meaning.
pub fn markdown_table(naming: Naming) -> String {
    let mut table = String::from("| metric | type | group | labels | meaning |\n|---|---|---|---|---|\n");
    for metric in CATALOGUE.iter().filter(|m| m.naming == naming) {
        let kind = match metric.kind {
            MetricKind::Gauge => "gauge",
            MetricKind::Counter => "counter",
            MetricKind::Info => "info",
        };
        let group = metric.group.map_or("exporter", |g| g.name());
        let series = match (metric.extract, naming) {
            (Extract::Chip(_) | Extract::ChipInfo(_), Naming::Native) => "chip, namespace, pod, container",
            (Extract::Chip(_), Naming::Huawei) if metric.name == HUAWEI_NPU_NAME => {
                "id, name, vdie_id, pcie_bus_info, namespace, pod_name, container_name"
            }
            (Extract::Chip(_) | Extract::ChipInfo(_), Naming::Huawei) => {
                "id, model_name, vdie_id, pcie_bus_info, namespace, pod_name, container_name"
            }
            (Extract::Vnpu(_), Naming::Native) => "chip, vnpu, namespace, pod, container",
            (Extract::Vnpu(_), Naming::Huawei) => {
                "id, model_name, v_dev_id, aicore_count, namespace, pod_name, container_name, is_virtual"
            }
            (Extract::Container(_), _) => "namespace, pod, container",
            (Extract::Machine(_), _) => "",
        };
        let labels = match (series.is_empty(), metric.own_labels.is_empty()) {
            (true, _) => metric.own_labels.to_owned(),
            (false, true) => series.to_owned(),
            (false, false) => format!("{series}; **{}**", metric.own_labels),
        };
        let help = metric.help.replace('|', "\\|");
        table.push_str(&format!("| `{}` | {kind} | {group} | {labels} | {help} |\n", metric.exposed_name()));
    }
    table
}

/// The docs text with the generated tables (native, then Huawei) between the markers, or `None` if the markers are
/// missing.
pub fn with_generated_tables(docs: &str) -> Option<String> {
    let start = docs.find(TABLE_BEGIN)? + TABLE_BEGIN.len();
    let end = docs[start..].find(TABLE_END)? + start;
    let generated = format!(
        "\n\n### Native names\n\n{}\n### Huawei-compatible names (`--metrics.naming=huawei` or `both`)\n\n{}\n",
        markdown_table(Naming::Native),
        markdown_table(Naming::Huawei)
    );
    Some(format!("{}{}{}", &docs[..start], generated, &docs[end..]))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;

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

    #[test]
    fn table_lists_every_metric_once() {
        let native = markdown_table(Naming::Native);
        let huawei = markdown_table(Naming::Huawei);
        let rows = native.lines().count() + huawei.lines().count() - 4;
        assert_eq!(rows, CATALOGUE.len());
        assert!(native.contains("| `ascend_npu_ecc_lifetime_errors_total` | counter | memory |"));
        assert!(native.contains("| `ascend_npu_chip_info` | info | identity |"));
        assert!(huawei.contains("| `npu_chip_info_temperature` | gauge | chip_state | id, model_name"));
    }

    #[test]
    fn tables_replace_only_the_marked_section() {
        let docs = format!("intro\n{TABLE_BEGIN}\nold\n{TABLE_END}\noutro\n");
        let updated = with_generated_tables(&docs).expect("markers present");
        assert!(updated.starts_with("intro\n") && updated.ends_with(&format!("{TABLE_END}\noutro\n")));
        assert!(!updated.contains("\nold\n"));
        assert_eq!(with_generated_tables("no markers"), None);
    }
}
