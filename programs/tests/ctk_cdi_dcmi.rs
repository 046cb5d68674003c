//! `ascend-ctk` asks the driver: `cdi generate` (and the runtime's `spec inject`) on a `dcmi_sim`
//! fake host take the chips, chip type and product type from the simulated `libdcmi.so`, refuse a
//! chip whose device node is missing, fall back to the `/dev` scan with a warning when DCMI cannot
//! be used, and leave DCMI alone when the operator gives `--chip-type`. Needs root; CI runs as root.

mod ctk_support;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use ctk_support::sim_host::SimHost;
use ctk_support::{ctk, describe, run};

/// `cdi generate --stdout` for the host, with `prepare` choosing the driver environment.
fn generate(host: &SimHost, prepare: impl FnOnce(&mut Command) -> &mut Command, extra: &[&str]) -> Output {
    let mut command = ctk();
    prepare(&mut command).args(["cdi", "generate", "--stdout", "--host-root"]).arg(host.root()).args(extra);
    run(&mut command)
}

fn spec_of(output: &Output) -> serde_json::Value {
    assert!(output.status.success(), "cdi generate failed\n{}", describe(output));
    serde_json::from_slice(&output.stdout).unwrap_or_else(|e| panic!("stdout is not JSON: {e}\n{}", describe(output)))
}

fn device_names(spec: &serde_json::Value) -> Vec<String> {
    let devices = spec["devices"].as_array().expect("devices array");
    devices.iter().map(|device| device["name"].as_str().expect("device name").to_owned()).collect()
}

/// Container paths of the nodes every device shares.
fn shared_nodes(spec: &serde_json::Value) -> Vec<String> {
    let nodes = spec["containerEdits"]["deviceNodes"].as_array().cloned().unwrap_or_default();
    nodes.iter().map(|node| node["path"].as_str().expect("node path").to_owned()).collect()
}

fn stderr(output: &Output) -> String {
    String::from_utf8_lossy(&output.stderr).into_owned()
}

#[test]
fn duo_sample_gives_one_device_per_physical_id_with_the_chip_type_from_the_simulator() {
    let host = SimHost::sample("atlas-300i-duo");
    let output = generate(&host, |command| host.with_driver(command), &[]);
    let spec = spec_of(&output);
    let log = stderr(&output);

    let mut expected: Vec<String> = host.topology.chips().map(|found| found.chip.phy_id.to_string()).collect();
    expected.sort_by_key(|id| id.parse::<u32>().expect("numeric id"));
    expected.push("all".to_owned());
    assert_eq!(device_names(&spec), expected, "{log}");
    for device in spec["devices"].as_array().expect("devices").iter().filter(|d| d["name"] != "all") {
        let name = device["name"].as_str().expect("name");
        let node = &device["containerEdits"]["deviceNodes"][0];
        assert_eq!(node["path"], format!("/dev/davinci{name}"));
        assert_eq!(node["hostPath"], host.path(&format!("/dev/davinci{name}")).to_string_lossy().as_ref());
    }
    let all = &spec["devices"].as_array().expect("devices").last().expect("all")["containerEdits"]["deviceNodes"];
    assert_eq!(all.as_array().map(Vec::len), Some(host.phy_ids().len()));

    let first = host.topology.chips().next().expect("a chip");
    assert!(log.contains(&format!("chip type {}", first.chip.chip_type.as_str())), "{log}");
    assert!(log.contains(&format!("product {}", first.card.product_type)), "{log}");
    assert!(log.contains(&format!("DCMI ({}", host.fake.library.display())), "{log}");
    assert!(!log.contains("warning"), "{log}");
}

#[test]
fn product_without_svm_and_hdc_gets_neither_node() {
    let mut topology = dcmi_sim::samples::by_name("atlas-300i-pro").expect("sample").topology().expect("valid");
    for card in &mut topology.cards {
        card.product_type = "Atlas 200 Model 3000".to_owned();
    }
    let host = SimHost::with_topology(topology);
    let output = generate(&host, |command| host.with_driver(command), &[]);
    let spec = spec_of(&output);
    assert_eq!(shared_nodes(&spec), ["/dev/dvpp_cmdlist", "/dev/davinci_manager"], "{}", stderr(&output));
}

#[test]
fn chip_reported_by_dcmi_without_its_node_is_an_error_naming_the_node() {
    let host = SimHost::sample("atlas-300i-duo");
    let missing = host.phy_ids()[3];
    let node = host.path(&format!("/dev/davinci{missing}"));
    std::fs::remove_file(&node).expect("remove the node");

    let output_dir = tempfile::tempdir().expect("output dir");
    let mut command = ctk();
    host.with_driver(&mut command)
        .args(["cdi", "generate", "--host-root"])
        .arg(host.root())
        .arg("--output-dir")
        .arg(output_dir.path());
    let output = run(&mut command);
    let log = stderr(&output);
    assert!(!output.status.success(), "a shorter spec must not be written\n{}", describe(&output));
    assert!(
        log.contains(&format!("DCMI reports chip {missing}")) && log.contains(&node.display().to_string()),
        "{log}"
    );
    assert_eq!(std::fs::read_dir(output_dir.path()).expect("list output").count(), 0, "no spec may be written");

    // The runtime cross-checks too, even for a request that does not name the chip.
    let bundle = bundle_requesting(host.phy_ids()[0]);
    let mut inject = ctk();
    host.with_driver(&mut inject)
        .args(["spec", "inject", "--bundle"])
        .arg(bundle.path())
        .arg("--host-root")
        .arg(host.root());
    let injected = run(&mut inject);
    let inject_log = stderr(&injected);
    assert!(!injected.status.success(), "{}", describe(&injected));
    assert!(inject_log.contains(&node.display().to_string()), "{inject_log}");
}

#[test]
fn without_a_usable_driver_the_dev_scan_is_used_and_the_reason_shown() {
    let host = SimHost::sample("atlas-300i-pro");
    // The library is found under the host root but dcmi_init fails: the simulator has no topology.
    let output = generate(&host, |command| host.without_driver(command), &[]);
    let spec = spec_of(&output);
    let log = stderr(&output);
    let mut expected: Vec<String> = host.phy_ids().iter().map(u32::to_string).collect();
    expected.push("all".to_owned());
    assert_eq!(device_names(&spec), expected, "{log}");
    assert!(log.contains("warning") && log.contains("DCMI was not used"), "{log}");
    assert!(log.contains("dcmi_init") || log.contains("-8005"), "the reason must be named: {log}");
}

#[test]
fn chip_type_flag_wins_over_dcmi() {
    let host = SimHost::sample("atlas-300i-pro");
    let output = generate(&host, |command| host.with_driver(command), &["--chip-type", "950"]);
    let spec = spec_of(&output);
    let log = stderr(&output);
    // The Ascend950 layout, not the 310P one DCMI would give.
    assert_eq!(shared_nodes(&spec), ["/dev/davinci_manager", "/dev/hisi_hdc"], "{log}");
    assert!(log.contains("chip type given by the operator") && !log.contains("warning"), "{log}");
}

/// A bundle whose config.json (runc's default spec) requests one chip.
fn bundle_requesting(phy_id: u32) -> tempfile::TempDir {
    let fixture: PathBuf =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../ascend-oci/tests/fixtures/runc-1.1.5-spec.json");
    let text = std::fs::read_to_string(&fixture).expect("runc spec fixture");
    let mut spec: serde_json::Value = serde_json::from_str(&text).expect("fixture JSON");
    let env = spec["process"]["env"].as_array_mut().expect("env array");
    env.push(serde_json::Value::String(format!("ASCEND_VISIBLE_DEVICES={phy_id}")));
    let bundle = tempfile::tempdir().expect("bundle dir");
    std::fs::write(bundle.path().join("config.json"), spec.to_string()).expect("write config.json");
    bundle
}
