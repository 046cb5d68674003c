//! The simulated `hccn_tool` binary: its command-line errors, the chips it refuses, topology and overlay keys and
//! their checks, and its installation in a fake host, where it finds the topology without any variable.

use std::path::Path;
use std::process::{Command, Output};

use dcmi_sim::fake_host::{FakeHost, FakeHostOptions, HCCN_TOOL_PATH};
use dcmi_sim::hccn_tool::{EXIT_FAILED, EXIT_USAGE};
use dcmi_sim::{Overlay, Topology};

const TOOL: &str = env!("CARGO_BIN_EXE_hccn_tool");

/// Runs `tool` with `line`, the topology `config` and no overlay.
fn run_tool(tool: &Path, config: Option<&str>, line: &str) -> Output {
    let mut command = Command::new(tool);
    command.args(line.split_whitespace()).env_remove("DCMI_SIM_OVERLAY").env_remove("DCMI_SIM_CONFIG");
    if let Some(config) = config {
        command.env("DCMI_SIM_CONFIG", config);
    }
    command.output().expect("the tool runs")
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn command_lines_it_does_not_accept_exit_2_with_the_reason() {
    for (line, reason) in [
        ("", "only queries"),
        ("-i 0 -link", "only queries (-g)"),
        ("-i 0 -g", "no query"),
        ("-i zero -link -g", "`zero` is not a number"),
        ("-i 0 -link -stat -g", "more than one query"),
        ("-i 0 -link -g --verbose", "unknown option `--verbose`"),
        ("-g -link -i 0 -u 0", "-u and -p go together"),
        ("-g -link -i 0 -u 0 -p 0 -time 100", "-time goes with -bandwidth only"),
    ] {
        let output = run_tool(Path::new(TOOL), Some("sample:atlas-800t-a2"), line);
        assert_eq!(output.status.code(), Some(i32::from(EXIT_USAGE)), "{line}: {}", stderr(&output));
        assert!(stderr(&output).contains(reason), "{line}: {}", stderr(&output));
        assert!(output.stdout.is_empty(), "{line}");
    }
}

#[test]
fn devices_it_cannot_answer_about_exit_1() {
    for (config, line, reason) in [
        ("sample:atlas-800t-a2", "-i 99 -link -g", "device 99 not found"),
        ("sample:atlas-300i-pro", "-i 0 -link -g", "(Ascend310P) does not support this command"),
        ("sample:atlas-800t-a2", "-g -link -i 0 -u 0 -p 0", "has no UB port"),
        ("sample:atlas-950-8", "-i 0 -link -g", "is an Ascend950"),
        ("sample:atlas-950-8", "-g -link -i 0 -u 7 -p 0", "no port 0 on die 7"),
        ("sample:atlas-950-8", "-g -link_stat -i 0 -u 0 -p 0", "is an Ascend950"),
    ] {
        let output = run_tool(Path::new(TOOL), Some(config), line);
        assert_eq!(output.status.code(), Some(i32::from(EXIT_FAILED)), "{line}: {}", stderr(&output));
        assert!(stderr(&output).contains(reason), "{line}: {}", stderr(&output));
    }
}

#[test]
fn network_keys_override_the_family_defaults() {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies/atlas-800t-a2.toml"))
        .expect("sample");
    let text =
        text.replacen("[[card.chip]]\n", "[[card.chip]]\nnetwork = { link = \"down\", speed_mbps = 100000 }\n", 1);
    let directory = tempfile::tempdir().expect("temporary directory");
    let file = directory.path().join("topology.toml");
    std::fs::write(&file, &text).expect("topology written");
    let topology = Topology::load(&file).expect("valid");
    let first = topology.chips().next().expect("a chip").chip.phy_id;
    let config = file.to_string_lossy().into_owned();
    let link = run_tool(Path::new(TOOL), Some(&config), &format!("-i {first} -link -g"));
    assert_eq!(String::from_utf8_lossy(&link.stdout), "link status: DOWN\n");
    let speed = run_tool(Path::new(TOOL), Some(&config), &format!("-i {first} -speed -g"));
    assert_eq!(String::from_utf8_lossy(&speed.stdout), "Speed: Unknown!\n", "a down link has no speed");
}

#[test]
fn bad_network_keys_are_refused_naming_the_field() {
    let sample = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies/atlas-800t-a2.toml"))
        .expect("sample");
    for (keys, field) in [
        ("network = { speed_mbps = 0 }", "card[0].chip[0].network.speed_mbps"),
        ("network = { rx_power_mw = -1.0 }", "card[0].chip[0].network.rx_power_mw"),
        ("network = { optical_temperature_c = nan }", "card[0].chip[0].network.optical_temperature_c"),
        ("network = { lnk = \"up\" }", "lnk"),
    ] {
        let text = sample.replacen("[[card.chip]]\n", &format!("[[card.chip]]\n{keys}\n"), 1);
        let error = Topology::from_toml_str(&text, Path::new("t.toml")).expect_err(keys).to_string();
        assert!(error.contains(field), "{keys}: {error}");
    }
    let inference =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies/atlas-300i-pro.toml"))
            .expect("sample")
            .replacen("[[card.chip]]\n", "[[card.chip]]\nnetwork = { link = \"up\" }\n", 1);
    let error = Topology::from_toml_str(&inference, Path::new("t.toml")).expect_err("310P").to_string();
    assert!(error.contains("no network port"), "{error}");
    for (entry, field) in [
        ("network = { flap_period_ms = 0 }", "chip[0].network.flap_period_ms"),
        ("network = { rx_power_fall_mw_per_s = -2.0 }", "chip[0].network.rx_power_fall_mw_per_s"),
    ] {
        let text = format!("[[chip]]\nlogic_id = 0\n{entry}\n");
        let error = Overlay::from_toml_str(&text, Path::new("o.toml")).expect_err(entry).to_string();
        assert!(error.contains(field), "{entry}: {error}");
    }
}

#[test]
fn readme_network_examples_parse() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).expect("README.md");
    let blocks: Vec<&str> = readme.split("```toml\n").skip(1).filter_map(|rest| rest.split("```").next()).collect();
    let overlay = blocks.iter().find(|block| block.contains("tool_hangs")).expect("network overlay example");
    let parsed = Overlay::from_toml_str(overlay, Path::new("README")).expect("parses");
    assert!(parsed.chips[0].network.is_some());
    let keys = blocks.iter().find(|block| block.starts_with("[card.chip.network]")).expect("network keys example");
    let sample = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("topologies/atlas-800t-a2.toml"))
        .expect("sample");
    let table = keys.replace("[card.chip.network]\n", "");
    let inline = table.lines().map(|line| line.split('#').next().unwrap_or("").trim()).filter(|line| !line.is_empty());
    let text = sample.replacen(
        "[[card.chip]]\n",
        &format!("[[card.chip]]\nnetwork = {{ {} }}\n", inline.collect::<Vec<_>>().join(", ")),
        1,
    );
    Topology::from_toml_str(&text, Path::new("README")).unwrap_or_else(|error| panic!("{error}"));
}

#[test]
fn a_fake_host_has_the_tool_which_reads_the_topology_beside_the_library() {
    let root = tempfile::tempdir().expect("temporary directory");
    let topology = dcmi_sim::samples::by_name("atlas-800t-a2").expect("sample").topology().expect("valid");
    let library = dcmi_sim::library_path().expect("built library");
    let options = FakeHostOptions { library: Some(library), hccn_tool: Some(TOOL.into()), ..Default::default() };
    let host = FakeHost::build(&topology, root.path(), &options).expect("fake host");
    let installed = host.hccn_tool.clone().expect("installed");
    assert_eq!(installed, host.path(HCCN_TOOL_PATH));
    let phy = topology.chips().next().expect("a chip").chip.phy_id;
    let output = run_tool(&installed, None, &format!("-i {phy} -link -g"));
    assert!(output.status.success(), "{}", stderr(&output));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "link status: UP\n");

    // The overlay beside the library takes the link down.
    let overlay_path = host.path(&dcmi_sim::fake_host::beside_library(dcmi_sim::OVERLAY_FILE_NAME));
    let logic_id = topology.chip_by_phy_id(phy).expect("chip").chip.logic_id;
    let network =
        dcmi_sim::hccn_tool::NetworkOverlay { link: Some(dcmi_sim::hccn_tool::Link::Down), ..Default::default() };
    let chip = dcmi_sim::ChipOverlay { logic_id, network: Some(network), ..Default::default() };
    dcmi_sim::write_overlay(&overlay_path, &Overlay { chips: vec![chip], ..Default::default() }).expect("overlay");
    let output = run_tool(&installed, None, &format!("-i {phy} -link -g"));
    assert_eq!(String::from_utf8_lossy(&output.stdout), "link status: DOWN\n");
}
