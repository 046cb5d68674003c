//! The `ascend-smi health` text: every chip's health word and fault level, then each active fault code with its
//! level and meaning.

use super::table::wrap_into;
use ascend_cli::text::wrap_hanging;
use ascend_node::host_report::{ChipReport, HostReport};

fn chip_line(chip: &ChipReport) -> String {
    let name = chip.name.as_deref().unwrap_or("-");
    let summary = match &chip.health {
        None => "health unknown".to_owned(),
        Some(health) => {
            let word = health.dcmi.as_deref().unwrap_or("no answer");
            let dropped = if health.card_dropped { ", card dropped" } else { "" };
            format!("dcmi {word}{dropped}, {}: {}", health.level, health.level_meaning)
        }
    };
    format!("NPU {:<3} {:<8} {:<10} {summary}", chip.ids.phy_id, name, chip.status.label())
}

/// The health text as lines, none longer than [`ascend_cli::text::WIDTH`].
pub fn render_lines(report: &HostReport) -> Vec<String> {
    let mut lines = Vec::new();
    if report.chips.is_empty() {
        lines.push("No NPUs found: check the driver with ascend-doctor".to_owned());
    }
    for chip in &report.chips {
        wrap_hanging(&chip_line(chip), 4, &mut lines);
        for fault in chip.health.iter().flat_map(|health| health.faults.iter()) {
            let text = format!("    {:<10} {:<15} {}", fault.code, fault.level, fault.meaning);
            wrap_hanging(&text, 31, &mut lines);
        }
        for error in &chip.errors {
            wrap_into(&format!("    error {}: {}", error.field, error.message), &mut lines);
        }
    }
    lines
}

/// The health text, one `\n` after every line.
pub fn render(report: &HostReport) -> String {
    render_lines(report).into_iter().map(|line| line + "\n").collect()
}
