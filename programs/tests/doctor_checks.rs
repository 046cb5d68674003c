//! `ascend-doctor` on fake hosts: a healthy host passes (snapshots), and every scripted breakage is found with the
//! right fix.

mod smi_doctor_support;

use std::os::unix::fs::PermissionsExt;

use ascend_doctor::Status;
use ascend_doctor::{render_json, render_text, run, DoctorReport};
use smi_doctor_support::doctor_host::{DoctorHost, FailingConnector};
use smi_doctor_support::mock_host::{faulty_310p, healthy_910b};
use smi_doctor_support::snapshot::assert_snapshot;

fn status_of<'a>(report: &'a DoctorReport, id: &str) -> &'a ascend_doctor::CheckResult {
    report
        .check(id)
        .unwrap_or_else(|| panic!("no check {id} in {:?}", report.checks.iter().map(|c| &c.id).collect::<Vec<_>>()))
}

fn assert_check(report: &DoctorReport, id: &str, status: Status, fix_contains: &[&str]) {
    let check = status_of(report, id);
    assert_eq!(check.status, status, "{id}: {check:#?}");
    let fix = check.fix.as_deref().unwrap_or("");
    for wanted in fix_contains {
        assert!(fix.contains(wanted), "{id}: fix {fix:?} lacks {wanted:?}");
    }
}

#[test]
fn a_healthy_host_passes_and_matches_the_snapshots() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    let mut report = run(&host.default_options());
    let problems: Vec<_> = report.checks.iter().filter(|c| matches!(c.status, Status::Fail | Status::Warn)).collect();
    assert!(problems.is_empty(), "{problems:#?}");
    assert!(!report.has_failures());
    report.host_root = "<fake host>".to_owned();
    // The CANN's install info sits in a directory named after the machine's architecture.
    let arch = |text: String| text.replace(&format!("{}-linux", std::env::consts::ARCH), "<arch>-linux");
    assert_snapshot("doctor_healthy_atlas-800t-a2.txt", &arch(render_text(&report, "<fake host>")));
    assert_snapshot("doctor_healthy_atlas-800t-a2.json", &arch(render_json(&report).expect("JSON")));
}

#[test]
fn mismatched_kernel_headers_are_found() {
    let host = DoctorHost::healthy("atlas-300i-duo");
    std::fs::remove_dir_all(host.path(&format!("lib/modules/{}", smi_doctor_support::doctor_host::KERNEL)))
        .expect("remove headers");
    host.write("lib/modules/6.1.0-old/build/Makefile", "# old headers\n");
    let report = run(&host.default_options());
    assert_check(
        &report,
        "driver.kernel_headers",
        Status::Warn,
        &["linux-headers-6.1.0-test", "kernel-devel-6.1.0-test"],
    );
    let evidence = status_of(&report, "driver.kernel_headers").evidence.join("\n");
    assert!(
        evidence.contains("headers installed for: 6.1.0-old\n")
            || evidence.ends_with("headers installed for: 6.1.0-old"),
        "{evidence}"
    );

    // Without a loaded driver the module build is what fails now.
    std::fs::remove_dir_all(host.path("sys/module")).expect("unload the driver");
    let report = run(&host.default_options());
    assert_check(&report, "driver.kernel_headers", Status::Fail, &["linux-headers-6.1.0-test"]);
    assert_check(&report, "driver.loaded", Status::Fail, &["reboot"]);
}

#[test]
fn a_group_writable_driver_directory_is_refused() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    std::fs::set_permissions(host.path("usr/local/Ascend/driver"), std::fs::Permissions::from_mode(0o775))
        .expect("chmod");
    let report = run(&host.default_options());
    assert_check(&report, "driver.libdcmi", Status::Fail, &["chmod go-w /usr/local/Ascend/driver"]);
    let evidence = status_of(&report, "driver.libdcmi").evidence.join("\n");
    assert!(
        evidence.contains("/usr/local/Ascend/driver: writable by group or others (uid 0, mode 0775)"),
        "{evidence}"
    );
    assert_eq!(status_of(&report, "driver.dcmi_init").status, Status::Skip, "an unsafe library is not loaded");
    assert!(report.has_failures());
}

#[test]
fn a_runtime_class_handler_that_differs_from_the_runtime_name_is_found() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    host.cluster_answers("ascend-runtime", 8, 8, &[("uid-live", "default", "train-0", "Running")]);
    let report = run(&host.default_options());
    assert_check(
        &report,
        "container_runtime.runtime_class",
        Status::Fail,
        &["handler: ascend", "kubectl delete runtimeclass ascend"],
    );
    let evidence = status_of(&report, "container_runtime.runtime_class").evidence.join("\n");
    assert!(evidence.contains("names handler \"ascend-runtime\", which is not registered"), "{evidence}");
}

#[test]
fn a_missing_runtime_class_is_found_from_a_manifest_or_the_api_server() {
    let host = DoctorHost::healthy("atlas-300i-pro");
    host.cluster_answers("", 2, 2, &[]);
    let report = run(&host.default_options());
    assert_check(
        &report,
        "container_runtime.runtime_class",
        Status::Fail,
        &["kind: RuntimeClass", "handler: ascend", "runtimeClassName: ascend"],
    );
    let evidence = status_of(&report, "container_runtime.runtime_class").evidence.join("\n");
    assert!(evidence.contains("RuntimeClasses from the API server: no RuntimeClass"), "{evidence}");
    let listed =
        host.cluster().requests().into_iter().any(|r| r.method == "GET" && r.path.ends_with("/runtimeclasses"));
    assert!(listed, "the doctor listed node.k8s.io/v1 RuntimeClasses");

    let manifest = host.dir.path().join("classes.yaml");
    std::fs::write(
        &manifest,
        "apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: gvisor\nhandler: runsc\n",
    )
    .expect("manifest");
    let mut options = host.default_options();
    options.runtime_class_manifest = Some(manifest);
    options.cluster_api = None;
    let report = run(&options);
    assert_check(&report, "container_runtime.runtime_class", Status::Fail, &["kind: RuntimeClass"]);
}

#[test]
fn an_unhealthy_chip_is_found_with_the_reset_command() {
    let host = DoctorHost::healthy("atlas-300i-duo");
    let report = run(&host.options(vec![healthy_910b(), faulty_310p()]));
    assert_check(&report, "driver.chips_healthy", Status::Fail, &["npu-smi set -t reset -i 3 -c 1", "/var/log/ascend"]);
    let evidence = status_of(&report, "driver.chips_healthy").evidence.join("\n");
    assert!(
        evidence.contains("NPU 0 (310P3, card 3 device 1): Unhealthy, level SeparateNPU, faults 80E01801 80E3A201"),
        "{evidence}"
    );
}

#[test]
fn a_failing_dcmi_init_is_reported_with_its_error() {
    let host = DoctorHost::healthy("edge-310");
    let mut options = host.default_options();
    options.connector = Box::new(FailingConnector);
    let report = run(&options);
    assert_check(&report, "driver.dcmi_init", Status::Fail, &["reboot"]);
    assert_eq!(status_of(&report, "driver.chips_healthy").status, Status::Skip);
}

#[test]
fn a_stale_cdi_spec_and_an_unregistered_runtime_are_found() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    host.write_cdi_spec(&[0, 1, 2, 9]);
    host.write("etc/docker/daemon.json", "{ \"runtimes\": {} }\n");
    let report = run(&host.default_options());
    assert_check(&report, "container_runtime.cdi", Status::Fail, &["ascend-ctk cdi generate"]);
    let evidence = status_of(&report, "container_runtime.cdi").evidence.join("\n");
    assert!(evidence.contains("chips missing from the spec: 3,4,5,6,7"), "{evidence}");
    assert!(evidence.contains("devices in the spec without a chip: 9"), "{evidence}");
    assert_check(
        &report,
        "container_runtime.docker",
        Status::Fail,
        &["ascend-ctk runtime configure --runtime docker", "in batches"],
    );
}

#[test]
fn cluster_checks_skip_without_an_api_client_and_warn_when_the_api_server_does_not_answer() {
    const CLUSTER_CHECKS: [&str; 3] =
        ["kubernetes.node_resources", "kubernetes.stale_allocations", "container_runtime.runtime_class"];
    let host = DoctorHost::healthy("atlas-800t-a2");
    let mut options = host.default_options();
    options.cluster_api = None;
    let report = run(&options);
    for id in CLUSTER_CHECKS {
        let check = status_of(&report, id);
        assert_eq!(check.status, Status::Skip, "{id}");
        let evidence = check.evidence.join(" ");
        assert!(evidence.contains("API server not asked: no API client (cargo feature `kube`"), "{id}: {evidence}");
        assert!(check.fix.as_deref().unwrap_or("").contains("KUBECONFIG"), "{id}: {check:#?}");
    }
    assert_eq!(status_of(&report, "kubernetes.device_plugin").status, Status::Ok, "file-based checks still run");

    // A configured cluster that does not answer is a finding, as a failing kubectl was.
    host.cluster().stop_listening();
    let report = run(&host.default_options());
    for (id, request, access) in [
        ("kubernetes.node_resources", "get nodes/node-1", "get on nodes"),
        ("kubernetes.stale_allocations", "list pods?fieldSelector=spec.nodeName=node-1", "list on pods"),
        ("container_runtime.runtime_class", "list runtimeclasses", "list on runtimeclasses"),
    ] {
        let check = status_of(&report, id);
        assert_eq!(check.status, Status::Warn, "{id}: {check:#?}");
        assert!(check.evidence.join(" ").contains(request), "{id}: {check:#?}");
        assert!(check.fix.as_deref().unwrap_or("").contains(access), "{id}: {check:#?}");
    }
}

#[test]
fn a_node_without_the_npu_resource_and_stale_allocations_are_found() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    host.cluster_answers(
        "ascend",
        0,
        0,
        &[("uid-other", "default", "web-0", "Running"), ("uid-live", "default", "train-0", "Succeeded")],
    );
    let report = run(&host.default_options());
    assert_check(&report, "kubernetes.node_resources", Status::Fail, &["Registered device plugin with kubelet"]);
    assert_check(
        &report,
        "kubernetes.stale_allocations",
        Status::Fail,
        &["restart the device plugin", "restart the kubelet"],
    );
    let evidence = status_of(&report, "kubernetes.stale_allocations").evidence.join("\n");
    assert!(
        evidence.contains("stale: pod uid uid-live container main holds huawei.com/Ascend910 Ascend910-0"),
        "{evidence}"
    );

    host.cluster_answers("ascend", 8, 6, &[("uid-live", "default", "train-0", "Running")]);
    let report = run(&host.default_options());
    assert_check(&report, "kubernetes.node_resources", Status::Warn, &["unhealthy"]);
    let evidence = status_of(&report, "kubernetes.node_resources").evidence.join("\n");
    assert!(evidence.contains("node node-1: huawei.com/Ascend910 capacity 8, allocatable 6"), "{evidence}");
    assert!(evidence.contains("huawei.com/Ascend910: 2 of 8 unhealthy"), "{evidence}");
    assert_eq!(status_of(&report, "kubernetes.stale_allocations").status, Status::Ok);
}

#[test]
fn a_missing_device_plugin_socket_is_found() {
    let host = DoctorHost::healthy("atlas-800t-a2");
    std::fs::remove_file(host.path("var/lib/kubelet/device-plugins/ascend-Ascend910.sock")).expect("remove socket");
    let report = run(&host.default_options());
    assert_check(&report, "kubernetes.device_plugin", Status::Fail, &["Registered device plugin with kubelet"]);
    let evidence = status_of(&report, "kubernetes.device_plugin").evidence.join("\n");
    assert!(evidence.contains("expected ascend-Ascend910.sock"), "{evidence}");
}
