//! Each report as a table (`-o wide` adds columns), JSON or YAML.

use k8s_openapi::jiff::Timestamp;
use serde::Serialize;

use super::args::Output;
use super::style::Style;
use super::table::{Cell, Colour, Table};
use crate::error::{Error, Result};
use crate::{CapacityReport, DoctorRun, FaultsReport, NodesReport, PodsReport};

/// JSON or YAML of a report, when `output` asks for one.
fn structured<T: Serialize>(report: &T, output: Option<Output>) -> Option<Result<String>> {
    match output {
        Some(Output::Json) => Some(
            serde_json::to_string_pretty(report)
                .map(|text| text + "\n")
                .map_err(|error| Error::Encode { format: "JSON", reason: error.to_string() }),
        ),
        Some(Output::Yaml) => Some(
            serde_yaml_ng::to_string(report)
                .map_err(|error| Error::Encode { format: "YAML", reason: error.to_string() }),
        ),
        _ => None,
    }
}

/// `5s`, `3m`, `2h`, `4d` as kubectl shows ages; `<unknown>` without a time.
pub(crate) fn age(now: Timestamp, then: Option<Timestamp>) -> String {
    let Some(then) = then else { return "<unknown>".into() };
    let seconds = now.as_second().saturating_sub(then.as_second()).max(0);
    match seconds {
        0..120 => format!("{seconds}s"),
        120..7_200 => format!("{}m", seconds / 60),
        7_200..172_800 => format!("{}h", seconds / 3_600),
        _ => format!("{}d", seconds / 86_400),
    }
}

fn or_dash(value: Option<&str>) -> String {
    value.filter(|value| !value.is_empty()).unwrap_or("-").to_owned()
}

fn count_cell(count: u32, colour: Colour) -> Cell {
    Cell::coloured(count.to_string(), (count > 0).then_some(colour))
}

pub(crate) fn nodes(report: &NodesReport, output: Option<Output>, style: Style) -> Result<String> {
    if let Some(text) = structured(report, output) {
        return text;
    }
    if report.nodes.is_empty() {
        return Ok("No NPU nodes found.\n".into());
    }
    let wide = output == Some(Output::Wide);
    let mut headers =
        vec!["NAME", "TYPE", "CHIPS", "HEALTHY", "UNHEALTHY", "ALLOCATED", "FREE", "DRIVER", "CANN", "MODE", "UPDATED"];
    if wide {
        headers.extend(["READY", "SCHEDULABLE"]);
    }
    headers.push("REASON");
    let mut table = Table::new(headers);
    for node in &report.nodes {
        let modes: Vec<&str> = node.modes.iter().map(|mode| mode.as_str()).collect();
        let reason = match (node.unhealthy_reasons.len(), wide) {
            (0, _) => String::new(),
            (_, true) | (1, false) => node.unhealthy_reasons.join("; "),
            (more, false) => format!("{} (+{} more)", node.unhealthy_reasons[0], more - 1),
        };
        let mut row: Vec<Cell> = vec![
            node.node.clone().into(),
            or_dash(node.chip_type.as_deref()).into(),
            node.total.to_string().into(),
            node.healthy.to_string().into(),
            count_cell(node.unhealthy, Colour::Red),
            node.allocated.to_string().into(),
            Cell::coloured(node.free.to_string(), Some(if node.free > 0 { Colour::Green } else { Colour::Yellow })),
            or_dash(node.driver_version.as_deref()).into(),
            or_dash(node.cann_version.as_deref()).into(),
            (if modes.is_empty() { "-".to_owned() } else { modes.join(",") }).into(),
            age(style.now, node.last_update).into(),
        ];
        if wide {
            row.push(Cell::coloured(if node.ready { "True" } else { "False" }, (!node.ready).then_some(Colour::Red)));
            row.push(if node.schedulable { "True" } else { "False" }.into());
        }
        row.push(Cell::coloured(reason, Some(Colour::Red)));
        table.row(row);
    }
    Ok(table.render(style.colour))
}

pub(crate) fn pods(report: &PodsReport, output: Option<Output>, style: Style, all_namespaces: bool) -> Result<String> {
    if let Some(text) = structured(report, output) {
        return text;
    }
    if report.pods.is_empty() {
        return Ok("No pods hold NPUs.\n".into());
    }
    let wide = output == Some(Output::Wide);
    let mut headers = Vec::new();
    if all_namespaces {
        headers.push("NAMESPACE");
    }
    headers.extend(["NAME", "NODE", "MODE", "CHIPS"]);
    if wide {
        headers.extend(["COUNT", "PHASE", "CLAIM"]);
    }
    let mut table = Table::new(headers);
    for pod in &report.pods {
        let mut row: Vec<Cell> = Vec::new();
        if all_namespaces {
            row.push(pod.namespace.clone().into());
        }
        let chips = if pod.chips.is_empty() { format!("{} (unnamed)", pod.count) } else { pod.chips.join(",") };
        row.extend([
            pod.pod.clone().into(),
            or_dash(pod.node.as_deref()).into(),
            pod.mode.as_str().into(),
            chips.into(),
        ]);
        if wide {
            row.extend([
                pod.count.to_string().into(),
                or_dash(Some(&pod.phase)).into(),
                or_dash(pod.claim.as_deref()).into(),
            ]);
        }
        table.row(row);
    }
    Ok(table.render(style.colour))
}

pub(crate) fn faults(report: &FaultsReport, output: Option<Output>, style: Style) -> Result<String> {
    if let Some(text) = structured(report, output) {
        return text;
    }
    let mut text = String::new();
    if report.current.is_empty() {
        text.push_str("No chip is unhealthy now.\n");
    } else {
        let mut table = Table::new(vec!["NODE", "CHIP", "SINCE", "REASON"]);
        for fault in &report.current {
            table.row(vec![
                fault.node.clone().into(),
                fault.chip.clone().into(),
                age(style.now, fault.since).into(),
                Cell::coloured(fault.reason.clone(), Some(Colour::Red)),
            ]);
        }
        text.push_str(&table.render(style.colour));
    }
    text.push('\n');
    if report.events.is_empty() {
        text.push_str("No fault Events.\n");
        return Ok(text);
    }
    let wide = output == Some(Output::Wide);
    let mut table = Table::new(vec!["LAST SEEN", "TYPE", "REASON", "NODE", "CHIP", "COUNT", "MESSAGE"]);
    for event in &report.events {
        let warning = event.kind == "Warning";
        let note = if wide || event.note.chars().count() <= 80 {
            event.note.clone()
        } else {
            event.note.chars().take(77).collect::<String>() + "..."
        };
        table.row(vec![
            age(style.now, event.time).into(),
            Cell::coloured(event.kind.clone(), Some(if warning { Colour::Yellow } else { Colour::Green })),
            event.reason.clone().into(),
            event.node.clone().into(),
            or_dash(Some(&event.chip)).into(),
            event.count.to_string().into(),
            note.into(),
        ]);
    }
    text.push_str(&table.render(style.colour));
    Ok(text)
}

pub(crate) fn capacity(report: &CapacityReport, output: Option<Output>, style: Style) -> Result<String> {
    if let Some(text) = structured(report, output) {
        return text;
    }
    let what = format!("{} chips{}", report.chips, if report.same_hccs { " in one HCCS group" } else { "" });
    if report.fits.is_empty() {
        return Ok(format!("No node has {what} free now ({} NPU nodes considered).\n", report.nodes_considered));
    }
    let mut table = Table::new(vec!["NODE", "TYPE", "FREE", "HCCS GROUPS (FREE)", "LEFT OVER"]);
    for fit in &report.fits {
        let groups: Vec<String> =
            fit.hccs_groups.iter().map(|group| format!("{}:{}", group.group, group.free)).collect();
        table.row(vec![
            fit.node.clone().into(),
            or_dash(fit.chip_type.as_deref()).into(),
            Cell::coloured(fit.free.to_string(), Some(Colour::Green)),
            (if groups.is_empty() { "-".to_owned() } else { groups.join(" ") }).into(),
            fit.left_over.to_string().into(),
        ]);
    }
    let mut text = table.render(style.colour);
    text.push_str(&format!("\n{} of {} NPU nodes have {what} free now.\n", report.fits.len(), report.nodes_considered));
    Ok(text)
}

pub(crate) fn doctor(run: &DoctorRun, output: Option<Output>) -> Result<String> {
    if let Some(text) = structured(run, output) {
        return text;
    }
    Ok(format!(
        "# ascend-doctor on node {} (pod {}/{}, container {})\n{}",
        run.node, run.daemon.namespace, run.daemon.pod, run.daemon.container, run.stdout
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ages_read_as_kubectl_shows_them() {
        let now = Timestamp::from_second(1_000_000).unwrap();
        let before = |seconds: i64| Some(Timestamp::from_second(1_000_000 - seconds).unwrap());
        assert_eq!(age(now, before(5)), "5s");
        assert_eq!(age(now, before(600)), "10m");
        assert_eq!(age(now, before(3 * 3600)), "3h");
        assert_eq!(age(now, before(5 * 86_400)), "5d");
        assert_eq!(age(now, None), "<unknown>");
    }
}
