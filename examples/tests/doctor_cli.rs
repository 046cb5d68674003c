//! `ascend-doctor` as a process on fake hosts whose `libdcmi.so` is the simulator: the real load, `dcmi_init` and
//! chip health path, exit codes, `--json`, and kubectl found (or not) on `PATH`.

mod smi_doctor_support;

use std::path::Path;
use std::process::{Command, Output};

use smi_doctor_support::doctor_host::DoctorHost;
use smi_doctor_support::snapshot::assert_snapshot;
use smi_doctor_support::topology::{frozen_sample, make_unhealthy, sample_names, write};

fn doctor(host: &DoctorHost, topology: &Path, path_variable: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ascend-doctor"))
        .arg("--root")
        .arg(&host.root)
        .args(args)
        .env("DCMI_SIM_CONFIG", topology)
        .env("PATH", path_variable)
        .output()
        .expect("ascend-doctor runs")
}

fn kernel_release() -> String {
    std::fs::read_to_string("/proc/sys/kernel/osrelease").expect("osrelease").trim().to_owned()
}

/// A healthy fake host with headers for the kernel this process really runs (the binary reads it from /proc).
fn healthy(sample: &str) -> DoctorHost {
    let host = DoctorHost::healthy(sample);
    host.write(&format!("lib/modules/{}/build/Makefile", kernel_release()), "# headers\n");
    host
}

/// The text with the machine-specific parts replaced.
fn normalised(text: &str, host: &DoctorHost) -> String {
    text.replace(&host.root.display().to_string(), "<fake host>").replace(&kernel_release(), "<kernel>")
}

#[test]
fn the_driver_chain_passes_on_every_sample_topology_through_the_simulator() {
    for name in sample_names() {
        let host = healthy(name);
        let empty_path = host.dir.path().join("empty-path");
        std::fs::create_dir_all(&empty_path).expect("empty PATH dir");
        let output = doctor(&host, &host.fake.topology, &empty_path, &["--section", "driver", "--section", "versions"]);
        let text = String::from_utf8(output.stdout.clone()).expect("UTF-8");
        assert_eq!(output.status.code(), Some(0), "{name}:\n{text}\n{}", String::from_utf8_lossy(&output.stderr));
        assert!(text.contains("[OK]   DCMI initialises"), "{name}:\n{text}");
        assert!(text.contains("[OK]   Every chip healthy"), "{name}:\n{text}");
        // The JSON is the snapshot: text wraps differently with another kernel release's length.
        let json = doctor(
            &host,
            &host.fake.topology,
            &empty_path,
            &["--section", "driver", "--section", "versions", "--json"],
        );
        let json = String::from_utf8(json.stdout).expect("UTF-8");
        assert_snapshot(&format!("doctor_driver_{name}.json"), &normalised(&json, &host));
    }
}

#[test]
fn an_unhealthy_simulated_chip_fails_the_run_with_the_reset_fix() {
    let host = healthy("atlas-300i-duo");
    let mut topology = frozen_sample("atlas-300i-duo");
    make_unhealthy(&mut topology, 3, &[0x80E3_A201]);
    let path = write(&topology, host.dir.path(), "sick");
    let output = doctor(&host, &path, host.dir.path(), &["--section", "driver", "--json"]);
    assert_eq!(output.status.code(), Some(1));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let check =
        report["checks"].as_array().expect("checks").iter().find(|c| c["id"] == "driver.chips_healthy").cloned();
    let check = check.expect("chips check");
    assert_eq!(check["status"], "fail");
    // Logic 3 of the Duo sample is phy 7 on card 3, device 1.
    assert!(check["fix"].as_str().unwrap_or("").contains("npu-smi set -t reset -i 3 -c 1"), "{check}");
    assert!(check["evidence"].to_string().contains("80E3A201"), "{check}");
    assert_eq!(report["summary"]["fail"], 1);
}

#[test]
fn kubectl_from_path_is_used_and_its_absence_skips() {
    let host = healthy("atlas-800t-a2");
    let output = doctor(&host, &host.fake.topology, &host.kubectl_dir, &["--node", "node-1", "--json"]);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let find = |report: &serde_json::Value, id: &str| {
        report["checks"].as_array().expect("checks").iter().find(|c| c["id"] == id).cloned().expect(id)
    };
    assert_eq!(find(&report, "kubernetes.node_resources")["status"], "ok");
    assert_eq!(find(&report, "container_runtime.runtime_class")["status"], "ok");

    host.kubectl_answers("ascend-runtime", 8, 8, &[]);
    let output = doctor(&host, &host.fake.topology, &host.kubectl_dir, &["--node", "node-1"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a handler mismatch is a failure:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("[FAIL] RuntimeClass handler matches"));

    let empty = host.dir.path().join("nothing-on-path");
    std::fs::create_dir_all(&empty).expect("dir");
    let output = doctor(&host, &host.fake.topology, &empty, &["--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let node = find(&report, "kubernetes.node_resources");
    assert_eq!(node["status"], "skip");
    assert!(node["evidence"].to_string().contains("kubectl is not on PATH"), "{node}");
}

#[test]
fn bad_usage_exits_2() {
    let status =
        Command::new(env!("CARGO_BIN_EXE_ascend-doctor")).args(["--root", "/nonexistent/root"]).status().expect("runs");
    assert_eq!(status.code(), Some(2));
    let status = Command::new(env!("CARGO_BIN_EXE_ascend-doctor")).args(["--section", "bogus"]).status().expect("runs");
    assert_eq!(status.code(), Some(2));
}
