//! The `ascend-smi info` table: the layout of `npu-smi info`, narrowed to fit an 80-column terminal.
//!
//! Two rows per chip: the first with the physical id, name, health, power and temperature; the second with the
//! card/device pair, PCIe bus id, fault count, AI-core utilisation and memory. A second table
//! lists the processes. Every line is exactly [`WIDTH`] characters; cells that do not fit are cut with `~`.

use std::fmt::Write as _;

use ascend_cli::text::{fit, wrap_hanging, WIDTH};
use ascend_node::host_report::{ChipReport, ChipStatus, HostReport, MemoryReport};

/// Column widths (content only); with the borders and padding they add up to [`WIDTH`].
const COLUMNS: [usize; 4] = [8, 14, 11, 34];

const MIB: u64 = 1024 * 1024;

fn rule(fill: char) -> String {
    let mut line = String::from("+");
    for width in COLUMNS {
        line.extend(std::iter::repeat_n(fill, width + 2));
        line.push('+');
    }
    line
}

fn row(cells: [&str; 4]) -> String {
    let mut line = String::from("|");
    for (cell, width) in cells.iter().zip(COLUMNS) {
        let _ = write!(line, " {} |", fit(cell, width));
    }
    line
}

/// A full-width line with one cell.
fn banner(text: &str) -> String {
    format!("| {} |", fit(text, WIDTH - 4))
}

/// Two texts in one full-width cell, the second right-aligned.
fn banner_split(left: &str, right: &str) -> String {
    let inner = WIDTH - 4;
    let right = fit(right, inner.saturating_sub(left.chars().count() + 1).max(1)).trim_end().to_owned();
    let gap = inner.saturating_sub(left.chars().count() + right.chars().count()).max(1);
    format!("| {} |", fit(&format!("{left}{}{right}", " ".repeat(gap)), inner))
}

fn optional<T: ToString>(value: Option<T>) -> String {
    value.map_or_else(|| "-".to_owned(), |v| v.to_string())
}

fn memory_cell(memory: Option<&MemoryReport>) -> String {
    match memory {
        None => "-".to_owned(),
        Some(memory) => format!("{} {} / {}", memory.kind.label(), memory.used_bytes / MIB, memory.total_bytes / MIB),
    }
}

fn health_cell(chip: &ChipReport) -> String {
    match chip.status {
        ChipStatus::Timeout | ChipStatus::Error => chip.status.label().to_owned(),
        ChipStatus::Ok | ChipStatus::Unhealthy => match &chip.health {
            Some(health) if health.card_dropped => "Dropped".to_owned(),
            Some(health) => match health.dcmi.as_deref() {
                Some("ok") if chip.status == ChipStatus::Unhealthy => "Faulty".to_owned(),
                Some("ok") => "OK".to_owned(),
                Some(word) => capitalise(word),
                None => "Unknown".to_owned(),
            },
            None => chip.status.label().to_owned(),
        },
    }
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn fault_cell(chip: &ChipReport) -> String {
    match &chip.health {
        None => "-".to_owned(),
        Some(health) => match health.faults.len() {
            0 => "no faults".to_owned(),
            1 => "1 fault".to_owned(),
            n => format!("{n} faults"),
        },
    }
}

fn power_temperature_cell(chip: &ChipReport) -> String {
    let power = chip.power.map_or_else(|| "-".to_owned(), |p| format!("{:.1}", p.watts));
    format!("{power:<11}{}", optional(chip.temperature_celsius))
}

fn aicore_memory_cell(chip: &ChipReport) -> String {
    format!("{:<11}{}", optional(chip.aicore_percent), memory_cell(chip.memory.as_ref()))
}

fn chip_rows(chip: &ChipReport, lines: &mut Vec<String>) {
    let first_name = chip.name.clone().unwrap_or_else(|| "-".to_owned());
    let second_name = chip.pcie_address.clone().unwrap_or_else(|| "-".to_owned());
    let card_device = match (chip.ids.card_id, chip.ids.device_id) {
        (Some(card), Some(device)) => format!("{card}:{device}"),
        _ => "-".to_owned(),
    };
    lines.push(row([&chip.ids.phy_id.to_string(), &first_name, &health_cell(chip), &power_temperature_cell(chip)]));
    lines.push(row([&card_device, &second_name, &fault_cell(chip), &aicore_memory_cell(chip)]));
}

fn summary(report: &HostReport) -> String {
    let total = report.chips.len();
    let ok = report.chips.iter().filter(|chip| chip.status == ChipStatus::Ok).count();
    match total {
        0 => "no NPUs found".to_owned(),
        _ if ok == total => format!("{total} NPUs, all healthy"),
        _ => format!("{total} NPUs, {} not healthy", total - ok),
    }
}

fn process_rows(report: &HostReport, lines: &mut Vec<String>) {
    lines.push(row(["NPU", "Process id", "Name", "Process memory(MB)"]));
    lines.push(rule('='));
    let mut any = false;
    for chip in &report.chips {
        for process in chip.processes.iter().flatten() {
            any = true;
            let name = process.name.clone().unwrap_or_else(|| "-".to_owned());
            lines.push(row([
                &chip.ids.phy_id.to_string(),
                &process.pid.to_string(),
                &name,
                &(process.memory_bytes / MIB).to_string(),
            ]));
        }
    }
    if !any {
        lines.push(banner("No running processes found on the NPUs"));
    }
    lines.push(rule('-'));
}

/// The notes under the table: every field that could not be read, wrapped to [`WIDTH`].
fn notes(report: &HostReport, lines: &mut Vec<String>) {
    for error in &report.errors {
        wrap_into(&format!("host {}: {}", error.field, error.message), lines);
    }
    for chip in &report.chips {
        for error in &chip.errors {
            wrap_into(&format!("NPU {} {}: {}", chip.ids.phy_id, error.field, error.message), lines);
        }
    }
}

/// Wraps `text` at spaces to lines of at most [`WIDTH`] characters; continuation lines are indented four more than
/// the text's own indent. Text that fits is kept as it is, inner spacing included.
pub(crate) fn wrap_into(text: &str, lines: &mut Vec<String>) {
    let indent = text.chars().take_while(|c| *c == ' ').count();
    wrap_hanging(text, indent + 4, lines);
}

/// The table as lines (no line breaks), every table line [`WIDTH`] characters wide.
pub fn render_lines(report: &HostReport) -> Vec<String> {
    let mut lines = vec![rule('-')];
    let version = format!("ascend-smi {}", report.tool_version);
    let driver = format!("Driver: {}", report.driver_version.as_deref().unwrap_or("unknown"));
    lines.push(banner_split(&format!("{version}   {driver}"), &summary(report)));
    lines.push(rule('-'));
    lines.push(row(["NPU", "Name", "Health", "Power(W)   Temp(C)"]));
    lines.push(row(["Card:Dev", "Bus-Id", "Faults", "AICore(%)  Memory-Usage(MB)"]));
    lines.push(rule('='));
    for chip in &report.chips {
        chip_rows(chip, &mut lines);
        lines.push(rule('-'));
    }
    if report.chips.is_empty() {
        lines.push(banner("No NPUs found: check the driver with ascend-doctor"));
        lines.push(rule('-'));
    }
    process_rows(report, &mut lines);
    notes(report, &mut lines);
    lines
}

/// The table as text, one `\n` after every line.
pub fn render(report: &HostReport) -> String {
    let mut text = String::new();
    for line in render_lines(report) {
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rules_and_rows_are_exactly_the_width() {
        assert_eq!(rule('-').chars().count(), WIDTH);
        assert_eq!(row(["a", "b", "c", "d"]).chars().count(), WIDTH);
        assert_eq!(banner("x").chars().count(), WIDTH);
        assert_eq!(banner_split("left", "right").chars().count(), WIDTH);
        assert_eq!(banner_split(&"l".repeat(90), "right").chars().count(), WIDTH);
    }

    #[test]
    fn wrapping_keeps_lines_within_the_width() {
        let mut lines = Vec::new();
        wrap_into(&"word ".repeat(60), &mut lines);
        assert!(lines.len() > 1);
        assert!(lines.iter().all(|line| line.chars().count() <= WIDTH), "{lines:?}");
        assert!(lines[1].starts_with("    word"));
        let mut kept = Vec::new();
        wrap_into("a    b", &mut kept);
        assert_eq!(kept, ["a    b"]);
    }
}
