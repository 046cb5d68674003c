//! Sample topologies made deterministic, and scripted changes to them (unhealthy chips, hung calls).

use std::path::{Path, PathBuf};

/// Every sample topology of the simulator, on both DCMI API families.
pub fn sample_names() -> Vec<&'static str> {
    dcmi_sim::SAMPLES.iter().map(|sample| sample.name).collect()
}

/// Replaces every time-varying signal (`{ base = .., amplitude = .. }`) by its base value, so readings are constant.
fn freeze(value: &mut toml::Value) {
    match value {
        toml::Value::Table(table) => {
            if let Some(base) =
                table.get("base").cloned().filter(|_| table.contains_key("amplitude") || table.contains_key("noise"))
            {
                *value = base;
                return;
            }
            for (_, child) in table.iter_mut() {
                freeze(child);
            }
        }
        toml::Value::Array(items) => items.iter_mut().for_each(freeze),
        _ => {}
    }
}

/// A sample topology with constant readings, as a TOML table to edit.
pub fn frozen_sample(name: &str) -> toml::Table {
    let sample = dcmi_sim::samples::by_name(name).unwrap_or_else(|| panic!("no sample {name}"));
    let mut value: toml::Value = toml::from_str(sample.toml).unwrap_or_else(|error| panic!("{name}: {error}"));
    freeze(&mut value);
    match value {
        toml::Value::Table(table) => table,
        _ => panic!("{name}: not a table"),
    }
}

/// The `[[card.chip]]` table of a logic id.
pub fn chip_mut(topology: &mut toml::Table, logic_id: i64) -> &mut toml::Table {
    let cards = topology.get_mut("card").and_then(|c| c.as_array_mut()).expect("cards");
    for card in cards {
        let chips = card.get_mut("chip").and_then(|c| c.as_array_mut()).expect("chips");
        for chip in chips {
            if chip.get("logic_id").and_then(toml::Value::as_integer) == Some(logic_id) {
                return chip.as_table_mut().expect("chip table");
            }
        }
    }
    panic!("no chip with logic id {logic_id}")
}

/// Makes a chip report a major alarm with fault codes.
pub fn make_unhealthy(topology: &mut toml::Table, logic_id: i64, codes: &[i64]) {
    let chip = chip_mut(topology, logic_id);
    chip.insert("health".into(), toml::Value::Integer(2));
    chip.insert("faults".into(), toml::Value::Array(codes.iter().map(|c| toml::Value::Integer(*c)).collect()));
}

/// Adds an injection rule (`[[inject]]`).
pub fn inject(topology: &mut toml::Table, rule: toml::Table) {
    let rules = topology.entry("inject").or_insert_with(|| toml::Value::Array(Vec::new()));
    rules.as_array_mut().expect("inject is a list").push(toml::Value::Table(rule));
}

/// Writes the topology to `<dir>/<name>.toml`.
pub fn write(topology: &toml::Table, dir: &Path, name: &str) -> PathBuf {
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, toml::to_string(topology).expect("serialise topology")).expect("write topology");
    path
}
