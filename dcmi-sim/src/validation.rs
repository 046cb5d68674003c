//! Semantic checks of a parsed topology: ranges, uniqueness, references, string lengths.

use std::collections::HashSet;
use std::path::Path;

use crate::error::Error;
use crate::function::Function;
use crate::generator::Signal;
use crate::injection::{InjectionRule, Latency};
use crate::timeline::TimelineAction;
use crate::topology::{Card, Chip, Topology};
use crate::vnpu::VnpuPool;

/// Checks everything serde cannot; the first problem wins.
pub(crate) fn validate(topology: &Topology, file: &Path) -> Result<(), Error> {
    let fail = |field: String, problem: String| Err(Error::config(file, field, problem));
    let simulation = &topology.simulation;
    if simulation.sample_period_ms == 0 {
        return fail("simulation.sample_period_ms".into(), "must be at least 1".into());
    }
    if simulation.driver_version.len() > 32 {
        return fail("simulation.driver_version".into(), "is longer than 32 bytes".into());
    }
    if simulation.multi_die_policy > 1 {
        return fail("simulation.multi_die_policy".into(), "must be 0 (union) or 1 (independent)".into());
    }
    if topology.cards.is_empty() {
        return fail("card".into(), "at least one [[card]] is required".into());
    }
    if topology.cards.len() > 64 {
        return fail("card".into(), format!("{} cards; at most 64 are allowed", topology.cards.len()));
    }
    let mut card_ids = HashSet::new();
    let mut logic_ids = HashSet::new();
    let mut phy_ids = HashSet::new();
    let mut bdfs = HashSet::new();
    for (card_index, card) in topology.cards.iter().enumerate() {
        let at = format!("card[{card_index}]");
        validate_card(card, &at, file)?;
        if !card_ids.insert(card.card_id) {
            return fail(format!("{at}.card_id"), format!("card id {} is used twice", card.card_id));
        }
        let mut device_ids = HashSet::new();
        for (chip_index, chip) in card.chips.iter().enumerate() {
            let at = format!("{at}.chip[{chip_index}]");
            validate_chip(chip, &at, file)?;
            if let Some(network) = &chip.network {
                crate::network_port::validate_network(network, chip.chip_type, &at, file)?;
            }
            if !device_ids.insert(chip.device_id) {
                return fail(
                    format!("{at}.device_id"),
                    format!("device id {} is used twice on this card", chip.device_id),
                );
            }
            if !logic_ids.insert(chip.logic_id) {
                return fail(format!("{at}.logic_id"), format!("logic id {} is used twice", chip.logic_id));
            }
            if !phy_ids.insert(chip.phy_id) {
                return fail(format!("{at}.phy_id"), format!("physical id {} is used twice", chip.phy_id));
            }
            if !bdfs.insert(chip.pcie.bdf.to_ascii_lowercase()) {
                return fail(format!("{at}.pcie.bdf"), format!("PCIe address {} is used twice", chip.pcie.bdf));
            }
        }
    }
    let api = topology.api();
    for (card_index, card) in topology.cards.iter().enumerate() {
        for (chip_index, chip) in card.chips.iter().enumerate() {
            if chip.chip_type.api() != api {
                return fail(
                    format!("card[{card_index}].chip[{chip_index}].chip_type"),
                    format!(
                        "{} serves {}, the topology's first chip {api}: one host runs one DCMI API family",
                        chip.chip_type,
                        chip.chip_type.api()
                    ),
                );
            }
        }
    }
    for (index, rule) in topology.injections.iter().enumerate() {
        let at = format!("inject[{index}]");
        validate_rule(rule, &at, file)?;
        if let Ok(Some(function)) = rule.target() {
            if function.api() != api {
                return fail(
                    format!("{at}.function"),
                    format!("{function} is a {} function, but this host's chips serve {api}", function.api()),
                );
            }
        }
        if let Some(logic_id) = rule.logic_id {
            if !logic_ids.contains(&logic_id) {
                return fail(format!("{at}.logic_id"), format!("no chip has logic id {logic_id}"));
            }
        }
    }
    for (index, entry) in topology.timeline.iter().enumerate() {
        let at = format!("timeline[{index}]");
        if !entry.at_s.is_finite() || entry.at_s < 0.0 {
            return fail(format!("{at}.at_s"), "must be a non-negative number of seconds".into());
        }
        if !logic_ids.contains(&entry.logic_id) {
            return fail(format!("{at}.logic_id"), format!("no chip has logic id {}", entry.logic_id));
        }
        if let Err(missing) = entry.change() {
            return fail(format!("{at}.{missing}"), format!("is required for action `{}`", entry.action.name()));
        }
        if entry.severity.is_some_and(|severity| severity > 3) {
            return fail(format!("{at}.severity"), "must be 0..3".into());
        }
        if entry.action == TimelineAction::SetHealth && entry.health.is_some_and(|health| health > 3) {
            return fail(format!("{at}.health"), "must be 0..3".into());
        }
    }
    Ok(())
}

fn validate_card(card: &Card, at: &str, file: &Path) -> Result<(), Error> {
    let fail = |field: &str, problem: String| Err(Error::config(file, format!("{at}.{field}"), problem));
    if card.card_id < 0 {
        return fail("card_id", format!("{} is negative", card.card_id));
    }
    if card.product_type.len() > 64 {
        return fail("product_type", "is longer than 64 bytes".into());
    }
    let elabel = &card.elabel;
    for (name, value) in [
        ("product_name", &elabel.product_name),
        ("model", &elabel.model),
        ("manufacturer", &elabel.manufacturer),
        ("manufacturer_date", &elabel.manufacturer_date),
        ("serial_number", &elabel.serial_number),
    ] {
        if value.len() > 255 {
            return fail(&format!("elabel.{name}"), "is longer than 255 bytes".into());
        }
    }
    check_signal(&card.mcu_power, &format!("{at}.mcu_power"), file)?;
    if card.chips.is_empty() || card.chips.len() > 4 {
        return fail("chip", format!("a card holds 1..4 chips, found {}", card.chips.len()));
    }
    Ok(())
}

fn validate_chip(chip: &Chip, at: &str, file: &Path) -> Result<(), Error> {
    let fail = |field: &str, problem: String| Err(Error::config(file, format!("{at}.{field}"), problem));
    if !(0..4).contains(&chip.device_id) {
        return fail("device_id", format!("{} is outside 0..3", chip.device_id));
    }
    if chip.logic_id > 255 {
        return fail("logic_id", format!("{} is outside 0..255", chip.logic_id));
    }
    if chip.phy_id > 255 {
        return fail("phy_id", format!("{} is outside 0..255", chip.phy_id));
    }
    if chip.chip_name.is_empty() {
        return fail("chip_name", "must not be empty".into());
    }
    for (name, value) in
        [("chip_name", &chip.chip_name), ("chip_version", &chip.chip_version), ("npu_name", &chip.npu_name)]
    {
        if value.len() > 32 {
            return fail(name, "is longer than 32 bytes".into());
        }
    }
    if chip.aicore_count == 0 || chip.aicore_count > 64 {
        return fail("aicore_count", format!("{} is outside 1..64", chip.aicore_count));
    }
    if let Err(problem) = chip.pcie.parsed_bdf() {
        return fail("pcie.bdf", problem);
    }
    if chip.firmware_version.as_ref().is_some_and(|version| version.is_empty() || version.len() > 63) {
        return fail("firmware_version", "is empty or longer than 63 bytes (callers pass a 64-byte buffer)".into());
    }
    if chip.affinity_cpus.len() > 32 {
        return fail("affinity_cpus", "is longer than 32 bytes (callers pass a 33-byte buffer)".into());
    }
    if !(1..=3).contains(&chip.ub.dies) || chip.ub.ports > 10 {
        return fail("ub", format!("{} dies x {} ports: 1..3 dies and 0..10 ports", chip.ub.dies, chip.ub.ports));
    }
    if chip.ub.ports > 0 && chip.chip_type != crate::chip_type::ChipType::Ascend950 {
        return fail("ub.ports", format!("{} has no unified bus (Ascend950 only)", chip.chip_type));
    }
    if chip.health > 3 {
        return fail("health", format!("{} is outside 0..3", chip.health));
    }
    if chip.faults.len() > 128 {
        return fail("faults", "more than 128 raised faults".into());
    }
    if let Some(index) = chip.faults.iter().position(|fault| fault.severity() > 3) {
        return fail(&format!("faults[{index}].severity"), "must be 0..3".into());
    }
    if chip.network_health > 0xFF {
        return fail("network_health", "must be 0..255".into());
    }
    if let Some(ip) = &chip.roce_ip {
        if ip.parse::<std::net::Ipv4Addr>().is_err() {
            return fail("roce_ip", format!("`{ip}` is not an IPv4 address"));
        }
    }
    if chip.roce_netmask.parse::<std::net::Ipv4Addr>().is_err() {
        return fail("roce_netmask", format!("`{}` is not an IPv4 netmask", chip.roce_netmask));
    }
    for (field, names) in [("supported", &chip.supported), ("unsupported", &chip.unsupported)] {
        if let Some((index, name)) = names.iter().enumerate().find(|(_, name)| Function::from_name(name).is_none()) {
            return fail(&format!("{field}[{index}]"), format!("`{name}` is not an exported DCMI function"));
        }
    }
    if chip.processes.len() > 32 {
        return fail("process", format!("{} processes; at most 32", chip.processes.len()));
    }
    if chip.ddr.hugepages_free > chip.ddr.hugepages_total {
        return fail("ddr.hugepages_free", "exceeds ddr.hugepages_total".into());
    }
    let telemetry = &chip.telemetry;
    let frequency = &telemetry.frequency;
    let utilization = &telemetry.utilization;
    for (name, signal) in [
        ("telemetry.temperature", &telemetry.temperature),
        ("telemetry.power", &telemetry.power),
        ("telemetry.voltage", &telemetry.voltage),
        ("telemetry.vnpu_aicore_utilization", &telemetry.vnpu_aicore_utilization),
        ("telemetry.frequency.ddr", &frequency.ddr),
        ("telemetry.frequency.ctrlcpu", &frequency.ctrlcpu),
        ("telemetry.frequency.hbm", &frequency.hbm),
        ("telemetry.frequency.aicore_current", &frequency.aicore_current),
        ("telemetry.frequency.aicore_max", &frequency.aicore_max),
        ("telemetry.frequency.vectorcore_current", &frequency.vectorcore_current),
        ("telemetry.utilization.memory", &utilization.memory),
        ("telemetry.utilization.aicore", &utilization.aicore),
        ("telemetry.utilization.aicpu", &utilization.aicpu),
        ("telemetry.utilization.ctrlcpu", &utilization.ctrlcpu),
        ("telemetry.utilization.memory_bandwidth", &utilization.memory_bandwidth),
        ("telemetry.utilization.hbm", &utilization.hbm),
        ("telemetry.utilization.ddr", &utilization.ddr),
        ("telemetry.utilization.hbm_bandwidth", &utilization.hbm_bandwidth),
        ("telemetry.utilization.vectorcore", &utilization.vectorcore),
        ("telemetry.utilization.npu", &utilization.npu),
        ("telemetry.utilization.aicube", &utilization.aicube),
        ("ddr.used_mb", &chip.ddr.used_mb),
        ("hbm.used_mb", &chip.hbm.used_mb),
        ("hbm.temperature", &chip.hbm.temperature),
        ("hbm.bandwidth_util", &chip.hbm.bandwidth_util),
    ] {
        check_signal(signal, &format!("{at}.{name}"), file)?;
    }
    let mut pool = VnpuPool::new(chip.chip_type, chip.aicore_count, vnpu_memory_mb(chip));
    for (index, preset) in chip.vnpus.iter().enumerate() {
        let taken: Vec<u32> = pool.vnpus().iter().map(|vnpu| vnpu.vdev_id).collect();
        if let Err(error) = pool.create(&preset.template, preset.vdev_id, None, |id| taken.contains(&id)) {
            return fail(&format!("vnpu[{index}]"), error.to_string());
        }
    }
    Ok(())
}

/// Memory the vNPUs of a chip share: HBM on the 910 family, DDR otherwise.
pub(crate) fn vnpu_memory_mb(chip: &Chip) -> u64 {
    if chip.chip_type.has_hbm() {
        chip.hbm.size_mb
    } else {
        chip.ddr.size_mb
    }
}

fn check_signal(signal: &Signal, at: &str, file: &Path) -> Result<(), Error> {
    let Signal::Wave(wave) = signal else { return Ok(()) };
    let fail = |field: &str, problem: &str| Err(Error::config(file, format!("{at}.{field}"), problem));
    if wave.min > wave.max {
        return fail("min", "is greater than max");
    }
    if !wave.period_s.is_finite() || wave.period_s <= 0.0 {
        return fail("period_s", "must be a positive number of seconds");
    }
    if wave.noise < 0 {
        return fail("noise", "must not be negative");
    }
    Ok(())
}

/// Checks one `[[inject]]` rule (shared with the overlay file).
pub(crate) fn validate_rule(rule: &InjectionRule, at: &str, file: &Path) -> Result<(), Error> {
    let fail = |field: &str, problem: String| Err(Error::config(file, format!("{at}.{field}"), problem));
    if let Err(problem) = rule.target() {
        return fail("function", problem);
    }
    if rule.code == Some(0) {
        return fail("code", "0 is success; inject a DCMI error code such as -8012".into());
    }
    if rule.from_call == 0 {
        return fail("from_call", "calls count from 1".into());
    }
    if rule.until_call.is_some_and(|until| until < rule.from_call) {
        return fail("until_call", "is before from_call".into());
    }
    if let Some([start, end]) = rule.window_s {
        if !(start.is_finite() && end.is_finite() && start >= 0.0 && start < end) {
            return fail("window_s", format!("[{start}, {end}] is not a window [start, end) with 0 <= start < end"));
        }
    }
    if let Some(Latency::Range([min, max])) = rule.latency_ms {
        if min > max {
            return fail("latency_ms", format!("[{min}, {max}]: min is greater than max"));
        }
    }
    if rule.code.is_none() && rule.latency_ms.is_none() && !rule.hang {
        return fail("code", "the rule injects nothing: give code, latency_ms or hang".into());
    }
    Ok(())
}
