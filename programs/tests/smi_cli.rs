//! `ascend-smi` as a process on the simulator: snapshots of every sample topology, exit codes, a hung chip, driver
//! errors, `watch`.

mod smi_doctor_support;

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use smi_doctor_support::snapshot::assert_snapshot;
use smi_doctor_support::topology::{frozen_sample, inject, make_unhealthy, sample_names, write};

fn smi(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ascend-smi"))
        .args(args)
        .env_remove("ASCEND_RT_VISIBLE_DEVICES")
        .output()
        .expect("ascend-smi runs")
}

fn stdout(output: &Output) -> String {
    String::from_utf8(output.stdout.clone()).expect("UTF-8 output")
}

fn sim_arg(path: &Path) -> String {
    format!("--sim={}", path.display())
}

#[test]
fn info_of_every_sample_topology_matches_its_snapshots() {
    let dir = tempfile::tempdir().expect("temp dir");
    for name in sample_names() {
        let topology = write(&frozen_sample(name), dir.path(), name);
        let text = smi(&[&sim_arg(&topology), "info"]);
        assert_eq!(text.status.code(), Some(0), "{name}: {}", String::from_utf8_lossy(&text.stderr));
        let table = stdout(&text);
        assert!(table.lines().all(|line| line.chars().count() <= 80), "{name} exceeds 80 columns:\n{table}");
        assert_snapshot(&format!("smi_info_{name}.txt"), &table);

        let json = smi(&[&sim_arg(&topology), "--json", "info"]);
        assert_eq!(json.status.code(), Some(0), "{name}");
        let document: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
        assert_eq!(document["schema_version"], 1);
        assert_snapshot(&format!("smi_info_{name}.json"), &stdout(&json));
    }
}

#[test]
fn verbose_info_on_a_duo_card_shows_the_id_spaces() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write(&frozen_sample("atlas-300i-duo"), dir.path(), "duo");
    let output = smi(&[&sim_arg(&topology), "info", "-v"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    // Logic 0 is phy 4 on card 2 (the sample numbers them apart on purpose).
    assert!(text.contains("phy 4 | logic 0 | card 2 device 0 | visible 0"), "{text}");
    assert_snapshot("smi_info_verbose_atlas-300i-duo.txt", &text);
}

#[test]
fn the_default_sim_topology_runs_without_arguments() {
    let output = smi(&["--sim"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    assert!(stdout(&output).contains("910B3"));
}

#[test]
fn an_unhealthy_chip_exits_3_and_health_explains_its_codes() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut topology = frozen_sample("atlas-800t-a2");
    make_unhealthy(&mut topology, 2, &[0x80E3_A201, 0x80E0_1801]);
    let path = write(&topology, dir.path(), "sick");
    let info = smi(&[&sim_arg(&path), "info"]);
    assert_eq!(info.status.code(), Some(3));
    let health = smi(&[&sim_arg(&path), "health"]);
    assert_eq!(health.status.code(), Some(3));
    let text = stdout(&health);
    assert!(text.contains("80E3A201   SeparateNPU"), "{text}");
    assert!(text.contains("80E01801   RestartBusiness"), "{text}");
    assert!(text.contains("isolate the chip now"), "{text}");
    let json = smi(&[&sim_arg(&path), "--json", "health"]);
    let document: serde_json::Value = serde_json::from_slice(&json.stdout).expect("JSON");
    let sick = document["chips"].as_array().expect("chips").iter().find(|chip| chip["ids"]["logic_id"] == 2).cloned();
    let sick = sick.expect("logic 2");
    assert_eq!(sick["status"], "unhealthy");
    assert_eq!(sick["health"]["faults"][0]["level"], "SeparateNPU");
}

#[test]
fn a_hung_chip_is_shown_as_timed_out_and_the_tool_returns() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut topology = frozen_sample("atlas-800t-a2");
    let simulation = topology.get_mut("simulation").and_then(|s| s.as_table_mut()).expect("[simulation]");
    simulation.insert("hang_ms".into(), toml::Value::Integer(60_000));
    let mut rule = toml::Table::new();
    rule.insert("function".into(), "dcmi_get_device_health".into());
    rule.insert("logic_id".into(), toml::Value::Integer(1));
    rule.insert("hang".into(), toml::Value::Boolean(true));
    inject(&mut topology, rule);
    let path = write(&topology, dir.path(), "hung");

    let started = Instant::now();
    let output = smi(&[&sim_arg(&path), "--timeout", "2", "info"]);
    assert!(started.elapsed() < Duration::from_secs(20), "waited {:?}", started.elapsed());
    assert_eq!(output.status.code(), Some(4), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    assert!(text.contains("Timeout"), "{text}");
    assert!(!String::from_utf8_lossy(&output.stderr).contains("panicked"));
}

#[test]
fn driver_errors_exit_5_with_a_json_error_document() {
    let missing = smi(&["--library", "/nonexistent/libdcmi.so", "--json", "info"]);
    assert_eq!(missing.status.code(), Some(5));
    let document: serde_json::Value = serde_json::from_slice(&missing.stdout).expect("JSON error document");
    assert_eq!(document["error"]["kind"], "driver");
    assert!(document["error"]["message"].as_str().unwrap_or("").contains("/nonexistent/libdcmi.so"), "{document}");

    let dir = tempfile::tempdir().expect("temp dir");
    let mut topology = frozen_sample("atlas-300i-pro");
    let mut rule = toml::Table::new();
    rule.insert("function".into(), "dcmi_get_card_list".into());
    rule.insert("code".into(), toml::Value::Integer(-8005));
    inject(&mut topology, rule);
    let path = write(&topology, dir.path(), "broken");
    let output = smi(&[&sim_arg(&path), "info"]);
    assert_eq!(output.status.code(), Some(5));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("-8005"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

#[test]
fn a_failing_field_is_a_note_not_a_crash() {
    let dir = tempfile::tempdir().expect("temp dir");
    let mut topology = frozen_sample("atlas-300i-pro");
    let mut rule = toml::Table::new();
    rule.insert("function".into(), "dcmi_get_device_temperature".into());
    rule.insert("code".into(), toml::Value::Integer(-8009));
    inject(&mut topology, rule);
    let path = write(&topology, dir.path(), "temperature");
    let output = smi(&[&sim_arg(&path), "info"]);
    assert_eq!(output.status.code(), Some(0), "a missing temperature does not make a chip unhealthy");
    let text = stdout(&output);
    assert!(text.contains("temperature_celsius: dcmi_get_device_temperature"), "{text}");
}

#[test]
fn watch_refreshes_the_given_number_of_times() {
    let dir = tempfile::tempdir().expect("temp dir");
    let path = write(&frozen_sample("edge-310"), dir.path(), "edge");
    let output = smi(&[&sim_arg(&path), "watch", "-n", "2", "--interval", "0.2"]);
    assert_eq!(output.status.code(), Some(0));
    let text = stdout(&output);
    assert!(text.contains("(refresh 1)") && text.contains("(refresh 2)") && !text.contains("(refresh 3)"), "{text}");
    assert!(!text.contains('\x1b'), "no escape codes when stdout is not a terminal");

    let json = smi(&[&sim_arg(&path), "--json", "watch", "--once"]);
    let lines: Vec<&str> = std::str::from_utf8(&json.stdout).expect("UTF-8").lines().collect();
    assert_eq!(lines.len(), 1);
    let document: serde_json::Value = serde_json::from_str(lines[0]).expect("one JSON document per line");
    assert_eq!(document["chips"][0]["name"], "310");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(smi(&["--sim=no-such-topology", "info"]).status.code(), Some(2));
    assert_eq!(smi(&["info", "--bogus"]).status.code(), Some(2));
    assert_eq!(smi(&["watch", "--interval", "0"]).status.code(), Some(2));
}

#[test]
fn events_follows_a_fault_raised_while_it_runs() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write(&frozen_sample("atlas-800t-a2"), dir.path(), "events");
    let overlay_path = dir.path().join("overlay.toml");
    dcmi_sim::write_overlay(&overlay_path, &dcmi_sim::Overlay::default()).expect("empty overlay");
    let child = Command::new(env!("CARGO_BIN_EXE_ascend-smi"))
        .args([&sim_arg(&topology), "--json", "events", "-n", "1", "--duration", "30", "--poll-interval", "0.2"])
        .env(dcmi_sim::OVERLAY_ENV, &overlay_path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("ascend-smi events runs");
    // Give it time to subscribe, then raise a critical fault on logic 2.
    std::thread::sleep(Duration::from_secs(1));
    let fault = dcmi_sim::topology::FaultSpec::Detailed { code: 0x80E3_A201, severity: 3 };
    let chip = dcmi_sim::ChipOverlay { logic_id: 2, faults: Some(vec![fault]), ..dcmi_sim::ChipOverlay::default() };
    dcmi_sim::write_overlay(&overlay_path, &dcmi_sim::Overlay { chips: vec![chip], injections: Vec::new() })
        .expect("overlay");
    let output = child.wait_with_output().expect("ascend-smi events ends");
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let text = stdout(&output);
    let event: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON event");
    assert_eq!(event["code"], "80E3A201");
    assert_eq!(event["logic_id"], 2);
    assert_eq!(event["phy_id"], 6, "logic 2 of the sample is phy 6");
    assert_eq!(event["assertion"], "occur");
    assert_eq!(event["level"], "SeparateNPU");
}

#[test]
fn info_json_names_the_installed_driver_firmware_and_cann_with_their_files() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write(&frozen_sample("atlas-800t-a2"), dir.path(), "a2");
    let parsed = dcmi_sim::topology::Topology::load(&topology).expect("topology");
    let software = dcmi_sim::fake_host::FakeSoftware {
        other_cann_versions: vec!["7.0.0".to_owned()],
        ..dcmi_sim::fake_host::FakeSoftware::default()
    };
    let library = dcmi_sim::library_path().expect("libdcmi_sim.so is built");
    let options = dcmi_sim::fake_host::FakeHostOptions { library: Some(library), software, ..Default::default() };
    let host = dcmi_sim::fake_host::FakeHost::build(&parsed, &dir.path().join("host"), &options).expect("fake host");

    let output = smi(&[&sim_arg(&topology), "--host-root", &host.root.display().to_string(), "--json", "info"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stderr));
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    let software = &document["software"];
    assert_eq!(software["driver"]["version"], "24.1.rc2");
    assert_eq!(software["driver"]["source"], "/usr/local/Ascend/driver/version.info");
    assert_eq!(software["firmware"]["version"], "7.5.0.1.129");
    assert_eq!(document["firmware_version"], "7.5.0.1.129");
    let cann = software["cann"].as_array().expect("cann list");
    let versions: Vec<(&str, bool)> = cann
        .iter()
        .map(|c| (c["version"].as_str().expect("version"), c["latest"].as_bool().expect("latest")))
        .collect();
    assert_eq!(versions, [("7.0.0", false), ("8.0.RC3", true)]);
    let latest = &cann[1];
    assert_eq!(latest["package"], "ascend-toolkit");
    assert_eq!(latest["directory"], "/usr/local/Ascend/ascend-toolkit/8.0.RC3");
    assert_eq!(latest["inner_version"], "V100R001C19SPC001B231");
    assert_eq!(
        latest["install_info"]["source"],
        format!(
            "/usr/local/Ascend/ascend-toolkit/8.0.RC3/{}-linux/ascend_toolkit_install.info",
            std::env::consts::ARCH
        )
    );
    assert_eq!(latest["components"][1]["name"], "runtime");
    assert_eq!(latest["components"][1]["source"], "/usr/local/Ascend/ascend-toolkit/8.0.RC3/runtime/version.info");

    // On the simulator without a host root, this machine's files are not the simulated host's: none are read.
    let output = smi(&[&sim_arg(&topology), "--json", "info"]);
    let document: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON");
    assert!(document["software"].is_null(), "{document}");
}
