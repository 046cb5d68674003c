//! `ascend-doctor` as a process on fake hosts whose `libdcmi.so` is the simulator: the real load, `dcmi_init` and
//! chip health path, exit codes, `--json`, the cluster from `KUBECONFIG` (or none), and the version floors of
//! docs/compatibility.md (the kubelet's version from the fake API server's Node object or from the host's files).

mod daemon_support;
mod smi_doctor_support;

use std::path::Path;
use std::process::{Command, Output};

use smi_doctor_support::doctor_host::DoctorHost;
use smi_doctor_support::snapshot::assert_snapshot;
use smi_doctor_support::topology::{frozen_sample, make_unhealthy, sample_names, write};

fn doctor(host: &DoctorHost, topology: &Path, path_variable: &Path, args: &[&str]) -> Output {
    doctor_with_kubeconfig(host, topology, path_variable, Path::new("/nonexistent/kubeconfig"), args)
}

/// The doctor with `KUBECONFIG` naming the cluster (a missing file: no cluster) and no in-cluster environment.
fn doctor_with_kubeconfig(
    host: &DoctorHost,
    topology: &Path,
    path_variable: &Path,
    kubeconfig: &Path,
    args: &[&str],
) -> Output {
    doctor_command(host, topology, path_variable, kubeconfig, args).output().expect("ascend-doctor runs")
}

/// The command of [`doctor_with_kubeconfig`], to add to.
fn doctor_command(
    host: &DoctorHost,
    topology: &Path,
    path_variable: &Path,
    kubeconfig: &Path,
    args: &[&str],
) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ascend-doctor"));
    command
        .arg("--root")
        .arg(&host.root)
        .args(args)
        .env("DCMI_SIM_CONFIG", topology)
        .env("PATH", path_variable)
        .env("KUBECONFIG", kubeconfig)
        .env_remove("KUBERNETES_SERVICE_HOST")
        .env_remove("KUBERNETES_SERVICE_PORT")
        .env_remove("NODE_NAME")
        // English whatever the machine's locale: the snapshots are the English report.
        .env_remove("LC_ALL")
        .env_remove("LC_MESSAGES")
        .env("LANG", "C");
    command
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
    text.replace(&host.root.display().to_string(), "<fake host>")
        .replace(&kernel_release(), "<kernel>")
        .replace(&format!("{}-linux", std::env::consts::ARCH), "<arch>-linux")
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
fn the_kubeconfigs_cluster_is_asked_and_without_one_the_cluster_checks_skip() {
    let host = healthy("atlas-800t-a2");
    // Nothing on PATH: the doctor runs no kubectl.
    let empty_path = host.dir.path().join("nothing-on-path");
    std::fs::create_dir_all(&empty_path).expect("dir");
    let kubeconfig = kubeconfig_for(&host.cluster(), host.dir.path());
    let args = ["--node", "node-1", "--json"];
    let output = doctor_with_kubeconfig(&host, &host.fake.topology, &empty_path, &kubeconfig, &args);
    assert_eq!(output.status.code(), Some(0), "{}", String::from_utf8_lossy(&output.stdout));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(check_of(&report, "kubernetes.node_resources")["status"], "ok");
    assert_eq!(check_of(&report, "kubernetes.stale_allocations")["status"], "ok");
    assert_eq!(check_of(&report, "container_runtime.runtime_class")["status"], "ok");
    let paths: Vec<String> = host.cluster().requests().into_iter().map(|request| request.path).collect();
    for wanted in ["/api/v1/nodes/node-1", "/api/v1/pods", "/apis/node.k8s.io/v1/runtimeclasses"] {
        assert!(paths.iter().any(|path| path == wanted), "{wanted} not asked: {paths:?}");
    }

    // In a pod the hostname is the pod's name: NODE_NAME (our DaemonSets set it from the downward API) names the node.
    let requests_before = host.cluster().requests().len();
    let mut in_a_pod = doctor_command(&host, &host.fake.topology, &empty_path, &kubeconfig, &["--json"]);
    let output = in_a_pod.env("NODE_NAME", "node-1").output().expect("ascend-doctor runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(check_of(&report, "kubernetes.node_resources")["status"], "ok", "the Node NODE_NAME names was read");
    let asked = host.cluster().requests().into_iter().skip(requests_before).any(|r| r.path == "/api/v1/nodes/node-1");
    assert!(asked, "NODE_NAME was not used as the node's name");
    // An empty NODE_NAME names no node: the hostname is looked for (this host has none), no Node "" is asked for.
    let mut empty = doctor_command(&host, &host.fake.topology, &empty_path, &kubeconfig, &["--json"]);
    let output = empty.env("NODE_NAME", "").output().expect("ascend-doctor runs");
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    let check = check_of(&report, "kubernetes.node_resources");
    assert_eq!(check["status"], "skip", "{check:#}");
    assert!(check["evidence"].to_string().contains("the node name is unknown"), "{check:#}");

    host.cluster_answers("ascend-runtime", 8, 8, &[]);
    let kubeconfig = kubeconfig_for(&host.cluster(), host.dir.path());
    let output = doctor_with_kubeconfig(&host, &host.fake.topology, &empty_path, &kubeconfig, &["--node", "node-1"]);
    assert_eq!(
        output.status.code(),
        Some(1),
        "a handler mismatch is a failure:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
    assert!(String::from_utf8_lossy(&output.stdout).contains("[FAIL] RuntimeClass handler matches"));

    // No kubeconfig and not in a pod: SKIP, naming what was looked for.
    let output = doctor(&host, &host.fake.topology, &empty_path, &["--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    for id in ["kubernetes.node_resources", "kubernetes.stale_allocations", "container_runtime.runtime_class"] {
        let check = check_of(&report, id);
        assert_eq!(check["status"], "skip", "{check:#}");
        let evidence = check["evidence"].to_string();
        assert!(evidence.contains("API server not asked: connecting to the Kubernetes API"), "{evidence}");
        assert!(evidence.contains("KUBECONFIG"), "{evidence}");
    }
}

#[test]
fn bad_usage_exits_2() {
    let status =
        Command::new(env!("CARGO_BIN_EXE_ascend-doctor")).args(["--root", "/nonexistent/root"]).status().expect("runs");
    assert_eq!(status.code(), Some(2));
    let status = Command::new(env!("CARGO_BIN_EXE_ascend-doctor")).args(["--section", "bogus"]).status().expect("runs");
    assert_eq!(status.code(), Some(2));
}

/// Locale variables as `(name, value)`.
type Locale<'a> = &'a [(&'a str, &'a str)];

/// The doctor on a host whose kernel headers are missing, with these locale variables and flags.
fn doctor_in_locale(host: &DoctorHost, locale: &[(&str, &str)], args: &[&str]) -> Output {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ascend-doctor"));
    command.arg("--root").arg(&host.root).args(["--section", "driver"]).args(args);
    for name in ["LC_ALL", "LC_MESSAGES", "LANG"] {
        command.env_remove(name);
    }
    command.envs(locale.iter().copied()).env("KUBECONFIG", "/nonexistent/kubeconfig");
    command.output().expect("ascend-doctor runs")
}

#[test]
fn the_locale_or_lang_flag_makes_the_doctor_speak_chinese() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let stdout = |output: &Output| String::from_utf8_lossy(&output.stdout).into_owned();
    let chinese = "] 内核头文件与 `uname -r` 一致 (driver.kernel_headers)";
    let english = "] Kernel headers match `uname -r` (driver.kernel_headers)";
    let cases: [(Locale<'_>, &[&str], &str); 6] = [
        (&[("LANG", "zh_CN.UTF-8")], &[], chinese),
        (&[("LANG", "en_US.UTF-8"), ("LC_MESSAGES", "zh_CN")], &[], chinese),
        (&[("LANG", "zh_CN.UTF-8"), ("LC_ALL", "C")], &[], english),
        (&[("LC_ALL", "zh_CN.UTF-8")], &["--lang", "en"], english),
        (&[], &["--lang", "zh-CN"], chinese),
        (&[], &[], english),
    ];
    for (locale, args, wanted) in cases {
        let output = doctor_in_locale(&host, locale, args);
        let text = stdout(&output);
        assert!(text.contains(wanted), "{locale:?} {args:?}: {wanted:?} missing from\n{text}");
    }
    let json = stdout(&doctor_in_locale(&host, &[("LANG", "zh_CN.UTF-8")], &["--json"]));
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["lang"], "zh-CN");
    let headers = value["checks"].as_array().expect("checks").iter().find(|c| c["id"] == "driver.kernel_headers");
    let headers = headers.expect("check");
    assert_eq!(headers["title"], "Kernel headers match `uname -r`");
    assert_eq!(headers["findings"], serde_json::json!(["driver.kernel_headers.missing"]));
    assert!(headers["fix_localized"].as_str().expect("fix").starts_with("安装当前运行内核的头文件"), "{headers}");

    let refused = doctor_in_locale(&host, &[], &["--lang", "fr"]);
    assert_eq!(refused.status.code(), Some(2));
    let message = String::from_utf8_lossy(&refused.stderr);
    assert!(message.contains("unknown language \"fr\": accepted values are en, zh-CN"), "{message}");
}

/// A Go binary as far as the doctor reads one: bytes, and the build settings `go version -m` prints.
fn go_binary(host: &DoctorHost, host_path: &str, setting: &str, version: &str) {
    let mut bytes = b"\x7fELF".to_vec();
    bytes.extend(std::iter::repeat_n(0x90u8, 200_000));
    bytes.extend(format!("build\t-ldflags=\"all=-X '{setting}={version}' -X 'x.y=z'\"\n").into_bytes());
    let path = host.path(host_path.trim_start_matches('/'));
    std::fs::create_dir_all(path.parent().expect("parent")).expect("directories");
    std::fs::write(&path, bytes).expect("binary");
}

fn kubeconfig_for(server: &fake_apiserver::FakeApiServer, dir: &Path) -> std::path::PathBuf {
    daemon_support::kubeconfig(dir, &server.url())
}

fn check_of(report: &serde_json::Value, id: &str) -> serde_json::Value {
    report["checks"]
        .as_array()
        .expect("checks")
        .iter()
        .find(|c| c["id"] == id)
        .cloned()
        .unwrap_or_else(|| panic!("{id}"))
}

fn assert_reported(report: &serde_json::Value, id: &str, fix_has: &[&str], evidence_has: &[&str]) {
    let check = check_of(report, id);
    assert_eq!(check["status"], "fail", "{check:#}");
    let fix = check["fix"].as_str().unwrap_or("");
    for wanted in fix_has {
        assert!(fix.contains(wanted), "{id}: fix lacks {wanted:?}: {fix}");
    }
    let evidence = check["evidence"].to_string();
    for wanted in evidence_has {
        assert!(evidence.contains(wanted), "{id}: evidence lacks {wanted:?}: {evidence}");
    }
}

#[test]
fn an_old_kubelet_an_engine_without_cdi_and_a_cann_needing_a_newer_driver_are_reported_with_fixes() {
    let host = healthy("atlas-800t-a2");
    // The kubelet's Node object says 1.25; the binary on the host says the same, and is read when no API answers.
    go_binary(&host, "/usr/bin/kubelet", "k8s.io/component-base/version.gitVersion", "v1.25.16");
    // containerd 1.7 with a version-2 config that registers the runtime but never switches CDI on.
    go_binary(&host, "/usr/bin/containerd", "github.com/containerd/containerd/version.Version", "v1.7.20");
    host.write(
        "etc/containerd/config.toml",
        "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.ascend]\n\
         runtime_type = \"io.containerd.runc.v2\"\n\
         [plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.ascend.options]\n\
         BinaryName = \"/usr/local/bin/ascend-runtime\"\n",
    );
    // The CANN's runtime needs a newer driver interface than the driver declares.
    host.write(
        "usr/local/Ascend/ascend-toolkit/latest/runtime/version.info",
        "Version=8.0.0.0.201\nversion_dir=8.0.RC3\nrequired_driver_ascendhal_version=7.40.0\n",
    );

    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(fake_apiserver::FakeApiServer::start()).expect("fake API server");
    server.seed(serde_json::json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-1"},
        "status": {"nodeInfo": {"kubeletVersion": "v1.25.16", "architecture": "amd64", "bootID": "",
            "containerRuntimeVersion": "containerd://1.7.20", "kernelVersion": "", "kubeProxyVersion": "",
            "machineID": "", "operatingSystem": "linux", "osImage": "", "systemUUID": ""}}}));
    let kubeconfig = kubeconfig_for(&server, host.dir.path());
    let empty_path = host.dir.path().join("empty-path");
    std::fs::create_dir_all(&empty_path).expect("empty PATH dir");

    let output =
        doctor_with_kubeconfig(&host, &host.fake.topology, &empty_path, &kubeconfig, &["--node", "node-1", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_reported(
        &report,
        "kubernetes.kubelet_version",
        &["upgrade the kubelet to 1.26 or newer"],
        &["kubelet v1.25.16 (from Node node-1 status.nodeInfo.kubeletVersion)", "kubernetes/kubernetes#112597"],
    );
    assert_reported(
        &report,
        "container_runtime.cdi_engine",
        &["enable_cdi = true", "ascend-ctk runtime configure --runtime containerd --cdi"],
        &["enable_cdi not set; CDI is off by default in containerd v1.7.20"],
    );
    assert_reported(
        &report,
        "versions.cann_host",
        &["upgrade the driver and firmware to an HDK release whose ascendhal_version is at least 7.40.0"],
        &[
            "required_driver_ascendhal_version=7.40.0 (/usr/local/Ascend/ascend-toolkit/8.0.RC3/runtime/version.info:3) \
             is newer than the driver's ascendhal_version=7.35.23 (/usr/local/Ascend/driver/version.info:2)",
        ],
    );
    let read_node = server.requests().into_iter().any(|r| r.method == "GET" && r.path == "/api/v1/nodes/node-1");
    assert!(read_node, "the doctor read the Node");

    // Without a cluster, the same verdict from the kubelet binary's build settings; the text shows all three.
    let output = doctor(&host, &host.fake.topology, &empty_path, &["--node", "node-1", "--json"]);
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_reported(
        &report,
        "kubernetes.kubelet_version",
        &["upgrade the kubelet to 1.26 or newer"],
        &["kubelet v1.25.16 (from /usr/bin/kubelet (build setting k8s.io/component-base/version.gitVersion))"],
    );
    let output = doctor(&host, &host.fake.topology, &empty_path, &["--node", "node-1"]);
    assert_eq!(output.status.code(), Some(1));
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    for wanted in [
        "[FAIL] kubelet version supported",
        "[FAIL] Container engine loads CDI devices",
        "[FAIL] Host CANN matches the driver",
    ] {
        assert!(text.contains(wanted), "{wanted:?} missing:\n{text}");
    }
}

#[test]
fn chips_a_partial_firmware_upgrade_left_behind_are_named_with_both_versions() {
    // The firmware package (7.5.0.1.129) fits the driver; NPU 3 still runs a firmware the driver refuses and NPU 6
    // one it accepts, both other than the package's.
    let chip_firmware = vec![(3, "6.9.0.1.100".to_owned()), (6, "7.1.0.5.220".to_owned())];
    let options = dcmi_sim::fake_host::FakeHostOptions { chip_firmware, ..Default::default() };
    let host = DoctorHost::with_fake_host_options("atlas-800t-a2", options);
    host.write(&format!("lib/modules/{}/build/Makefile", kernel_release()), "# headers\n");
    let empty_path = host.dir.path().join("empty-path");
    std::fs::create_dir_all(&empty_path).expect("empty PATH dir");
    let output = doctor(&host, &host.fake.topology, &empty_path, &["--section", "driver", "--json"]);
    assert_eq!(output.status.code(), Some(1), "{}", String::from_utf8_lossy(&output.stderr));
    let report: serde_json::Value = serde_json::from_slice(&output.stdout).expect("JSON report");
    assert_eq!(check_of(&report, "driver.firmware")["status"], "ok", "the package itself fits");
    assert_reported(
        &report,
        "driver.chip_firmware",
        &[
            "upgrade the firmware of NPU 3 to one in [7.0.0,7.7.99] (the firmware of HDK 24.1.rc2",
            "the firmware upgrade has not reached NPU 6: reboot the node",
        ],
        &[
            "firmware 6.9.0.1.100 (NPU 3, dcmi_get_version) is older than every range of the driver's \
             compatible_version_fw=[7.0.0,7.7.99] (/usr/local/Ascend/driver/version.info:11)",
            "NPU 3 runs firmware 6.9.0.1.100 (dcmi_get_version), not the installed firmware package's \
             Version=7.5.0.1.129 (/usr/local/Ascend/firmware/version.info:1)",
            "firmware 7.1.0.5.220 (NPU 6, dcmi_get_version) is inside [7.0.0,7.7.99]",
            "firmware 7.5.0.1.129 (NPU 0, 1, 2, 4, 5, 7, dcmi_get_version) is inside [7.0.0,7.7.99]",
        ],
    );
}

#[test]
fn the_driver_section_of_a_host_whose_firmware_the_driver_refuses_says_what_to_install() {
    let software = dcmi_sim::fake_host::FakeSoftware {
        firmware_version: Some("7.8.0.1.100".to_owned()),
        ..dcmi_sim::fake_host::FakeSoftware::default()
    };
    let host = DoctorHost::with_software("atlas-800t-a2", software);
    host.write(&format!("lib/modules/{}/build/Makefile", kernel_release()), "# headers\n");
    let empty_path = host.dir.path().join("empty-path");
    std::fs::create_dir_all(&empty_path).expect("empty PATH dir");
    let output = doctor(&host, &host.fake.topology, &empty_path, &["--section", "driver"]);
    let text = String::from_utf8(output.stdout).expect("UTF-8");
    assert_eq!(output.status.code(), Some(1), "{text}");
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    for wanted in [
        "[FAIL] Firmware matches the driver (driver.firmware)",
        "firmware Version=7.8.0.1.100 (/usr/local/Ascend/firmware/version.info:1) is newer than every range of the \
         driver's compatible_version_fw=[7.0.0,7.7.99] (/usr/local/Ascend/driver/version.info:11)",
        "fix: upgrade the driver to the HDK release of the firmware (25.1.rc1, the firmware's package_version)",
        "or install a firmware in [7.0.0,7.7.99] (the firmware of HDK 24.1.rc2",
    ] {
        let wanted = wanted.split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(flat.contains(&wanted), "{wanted:?} missing:\n{text}");
    }
    assert!(!text.contains("2. Versions"), "only the driver section:\n{text}");
}
