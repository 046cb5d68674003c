//! The `ascend-smi info -v` text: one block per chip with every id and identifying detail.

use super::table::wrap_into;
use ascend_cli::text::wrap_hanging;
use ascend_node::host_report::{ChipReport, HostReport, PowerScope};

const MIB: u64 = 1024 * 1024;

/// Where values start: two spaces, the label column, `": "`.
const VALUE_COLUMN: usize = 2 + 17 + 2;

fn line(label: &str, value: &str, lines: &mut Vec<String>) {
    wrap_hanging(&format!("  {label:<17}: {value}"), VALUE_COLUMN, lines);
}

fn or_dash(value: Option<String>) -> String {
    value.unwrap_or_else(|| "-".to_owned())
}

fn ids_line(chip: &ChipReport) -> String {
    let ids = &chip.ids;
    let visible = ids.visible_id.map_or_else(|| "hidden".to_owned(), |id| id.to_string());
    let card_device = match (ids.card_id, ids.device_id) {
        (Some(card), Some(device)) => format!("card {card} device {device}"),
        _ => "no card (DCMI V2)".to_owned(),
    };
    format!("phy {} | logic {} | {card_device} | visible {}", ids.phy_id, ids.logic_id, visible)
}

fn health_line(chip: &ChipReport) -> String {
    match &chip.health {
        None => chip.status.label().to_owned(),
        Some(health) => {
            let word = health.dcmi.as_deref().unwrap_or("no answer");
            let dropped = if health.card_dropped { ", card dropped" } else { "" };
            format!("{} (dcmi {word}{dropped}; {}: {})", chip.status.label(), health.level, health.level_meaning)
        }
    }
}

fn chip_block(report: &HostReport, chip: &ChipReport, lines: &mut Vec<String>) {
    let name = chip.name.as_deref().unwrap_or("unknown chip");
    let chip_type = chip.chip_type.as_deref().unwrap_or("unknown type");
    lines.push(format!("NPU {} ({name}, {chip_type})", chip.ids.phy_id));
    let details = chip.details.clone().unwrap_or_default();
    line("Ids", &ids_line(chip), lines);
    line("Health", &health_line(chip), lines);
    for fault in chip.health.iter().flat_map(|health| health.faults.iter()) {
        line("Fault", &format!("{} {}: {}", fault.code, fault.level, fault.meaning), lines);
    }
    line("Model", &or_dash(details.model_name), lines);
    line("Product", &or_dash(details.product_type), lines);
    line("Board id", &or_dash(details.board_id.map(|id| format!("0x{id:x}"))), lines);
    line("AI cores", &or_dash(details.aicore_count.map(|n| n.to_string())), lines);
    line("PCIe address", &or_dash(chip.pcie_address.clone()), lines);
    let numa = match (details.numa_node, details.affinity_cpus) {
        (Some(node), Some(cpus)) => format!("{node} (CPUs {cpus})"),
        (Some(node), None) => node.to_string(),
        (None, Some(cpus)) => format!("- (CPUs {cpus})"),
        (None, None) => "-".to_owned(),
    };
    line("NUMA node", &numa, lines);
    line("Die id", &or_dash(details.die_id), lines);
    line("Serial number", &or_dash(details.serial_number), lines);
    line("Driver version", report.driver_version.as_deref().unwrap_or("-"), lines);
    // What the chip runs, else what the firmware package installed.
    let firmware = details.firmware_version.as_deref().or(report.firmware_version.as_deref());
    line("Firmware version", firmware.unwrap_or("-"), lines);
    line("Voltage", &or_dash(details.voltage_volts.map(|v| format!("{v:.2} V"))), lines);
    line("AI-core clock", &or_dash(details.aicore_frequency_mhz.map(|f| format!("{f} MHz"))), lines);
    let power = chip.power.map(|p| {
        let scope = match p.scope {
            PowerScope::Chip => "chip",
            PowerScope::Card => "card, shared by its chips",
        };
        format!("{:.1} W ({scope})", p.watts)
    });
    line("Power", &or_dash(power), lines);
    line("Temperature", &or_dash(chip.temperature_celsius.map(|t| format!("{t} C"))), lines);
    line("AI-core usage", &or_dash(chip.aicore_percent.map(|p| format!("{p} %"))), lines);
    let memory = chip.memory.map(|m| format!("{} {} / {} MB", m.kind.label(), m.used_bytes / MIB, m.total_bytes / MIB));
    line("Memory", &or_dash(memory), lines);
    let processes = chip.processes.as_ref().map(|list| {
        if list.is_empty() {
            "none".to_owned()
        } else {
            list.iter()
                .map(|p| format!("{} ({}, {} MB)", p.pid, p.name.as_deref().unwrap_or("-"), p.memory_bytes / MIB))
                .collect::<Vec<_>>()
                .join(", ")
        }
    });
    line("Processes", &or_dash(processes), lines);
    for error in &chip.errors {
        wrap_into(&format!("  error {}: {}", error.field, error.message), lines);
    }
}

/// The verbose text as lines, none longer than [`ascend_cli::text::WIDTH`].
pub fn render_lines(report: &HostReport) -> Vec<String> {
    let mut lines = Vec::new();
    lines.push(format!(
        "ascend-smi {}   Driver: {}   Firmware: {}",
        report.tool_version,
        report.driver_version.as_deref().unwrap_or("unknown"),
        report.firmware_version.as_deref().unwrap_or("unknown")
    ));
    for error in &report.errors {
        wrap_into(&format!("host {}: {}", error.field, error.message), &mut lines);
    }
    if report.chips.is_empty() {
        lines.push("No NPUs found: check the driver with ascend-doctor".to_owned());
    }
    for chip in &report.chips {
        lines.push(String::new());
        chip_block(report, chip, &mut lines);
    }
    lines
}

/// The verbose text, one `\n` after every line.
pub fn render(report: &HostReport) -> String {
    render_lines(report).into_iter().map(|line| line + "\n").collect()
}
