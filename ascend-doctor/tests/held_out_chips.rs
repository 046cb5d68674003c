//! `kubernetes.held_out_chips` through kube-rs against the fake API server: the recovery Events of this node
//! (events.k8s.io, namespace `default`; the device plugin's and the DRA driver's, their notes written by
//! `ascend_kube::held_out_note`) read with their times, another node's left out, and each chip whose last word is
//! `NpuHeldOut` named with its reason.
#![cfg(feature = "kube")]

use std::time::Duration;

use ascend_doctor::{run, ClusterApi, DoctorOptions, KubeClusterApi, NodeEventRecord, Section, Status};
use ascend_node::recovery::HeldOut;
use fake_apiserver::FakeApiServer;
use serde_json::{json, Value};

const NODE: &str = "atlas-1";

/// An events.k8s.io Event about `node` as the device plugin's recorder writes it; `series` folds repeats.
fn event(name: &str, node: &str, reason: &str, chip: &str, note: &str, time: &str, series: Option<&str>) -> Value {
    let mut event = json!({
        "apiVersion": "events.k8s.io/v1", "kind": "Event",
        "metadata": {"name": name, "namespace": "default"},
        "regarding": {"kind": "Node", "name": node, "apiVersion": "v1"},
        "reason": reason, "action": chip, "note": note, "type": "Warning",
        "eventTime": time, "reportingController": "ascend-device-plugin", "reportingInstance": node,
    });
    if let Some(last) = series {
        event["series"] = json!({"count": 2, "lastObservedTime": last});
    }
    event
}

#[test]
fn held_out_chips_come_from_this_nodes_recovery_events() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime.block_on(FakeApiServer::start()).expect("fake API server");
    // The notes as the daemons write them.
    let note = |chip: &str, why: HeldOut| format!("NPU {chip} (logic 3, phy 3): {}", ascend_kube::held_out_note(&why));
    let held = note("Ascend910-3", HeldOut::FaultedAgain { after: Duration::from_secs(40) });
    let failed = note("Ascend910-5", HeldOut::ResetFailed("boot timed out".to_owned()));
    let budget = note("npu-6", HeldOut::BudgetUsed);
    for seeded in [
        event("a", NODE, "NpuReset", "Ascend910-3", "reset and booted in 1.1 s", "2026-12-05T04:00:00.000000Z", None),
        // Held out, and the same Event repeated later (a series): the hold's time is the last one.
        event(
            "b",
            NODE,
            "NpuHeldOut",
            "Ascend910-3",
            &held,
            "2026-12-05T04:01:00.000000Z",
            Some("2026-12-05T04:30:00.000000Z"),
        ),
        // Held out, then healthy again: not held.
        event("c", NODE, "NpuHeldOut", "Ascend910-5", &failed, "2026-12-05T04:02:00.000000Z", None),
        event("d", NODE, "NpuRecovered", "Ascend910-5", "healthy again", "2026-12-05T04:03:00.000000Z", None),
        // Another node's chip, and an Event of another reason.
        event("e", "atlas-2", "NpuHeldOut", "Ascend910-1", &failed, "2026-12-05T04:02:00.000000Z", None),
        // The DRA driver's name for a chip, held out with the budget used.
        event("g", NODE, "NpuHeldOut", "npu-6", &budget, "2026-12-05T04:05:00.000000Z", None),
        event("f", NODE, "NpuFaultRaised", "Ascend910-3", "fault 0x80E24E00", "2026-12-05T04:31:00.000000Z", None),
    ] {
        server.seed(seeded);
    }
    let api = KubeClusterApi::with_config(server.config(), Duration::from_secs(5));
    let mut read = api.node_events(NODE, &["NpuHeldOut", "NpuReset", "NpuRecovered"]).expect("events");
    read.sort_by(|a, b| a.time.cmp(&b.time));
    let summary: Vec<(&str, &str, &str)> =
        read.iter().map(|e: &NodeEventRecord| (e.reason.as_str(), e.action.as_str(), e.time.as_str())).collect();
    assert_eq!(
        summary,
        [
            ("NpuReset", "Ascend910-3", "2026-12-05T04:00:00.000000Z"),
            ("NpuHeldOut", "Ascend910-5", "2026-12-05T04:02:00.000000Z"),
            ("NpuRecovered", "Ascend910-5", "2026-12-05T04:03:00.000000Z"),
            ("NpuHeldOut", "npu-6", "2026-12-05T04:05:00.000000Z"),
            ("NpuHeldOut", "Ascend910-3", "2026-12-05T04:30:00.000000Z"),
        ]
    );

    let host = tempfile::tempdir().expect("host root");
    std::fs::create_dir_all(host.path().join("var/lib/kubelet")).expect("kubelet directory");
    let mut options = DoctorOptions::for_root(host.path(), Duration::from_secs(5)).expect("options");
    options.sections = vec![Section::Kubernetes];
    options.node_name = Some(NODE.to_owned());
    options.cluster_api = Some(Box::new(KubeClusterApi::with_config(server.config(), Duration::from_secs(5))));
    let report = run(&options);
    let check = report.checks.iter().find(|check| check.id == "kubernetes.held_out_chips").expect("the check ran");
    assert_eq!(check.status, Status::Warn, "{check:?}");
    let evidence = check.evidence.join("\n");
    assert!(
        evidence.contains("Ascend910-3: fault returned after its reset (since 2026-12-05T04:30:00.000000Z)"),
        "{evidence}"
    );
    assert!(evidence.contains("npu-6: reset budget used"), "{evidence}");
    assert!(!evidence.contains("Ascend910-5:") && !evidence.contains("Ascend910-1:"), "{evidence}");
    assert_eq!(check.findings, ["kubernetes.held_out_chips.budget_used", "kubernetes.held_out_chips.fault_returned"]);
    // Each reason's words, as the daemons write them, are told apart.
    let failed_only = FakeApiServer::start();
    let failed_only = runtime.block_on(failed_only).expect("fake API server");
    failed_only.seed(event("a", NODE, "NpuHeldOut", "Ascend910-5", &failed, "2026-12-05T04:02:00.000000Z", None));
    options.cluster_api = Some(Box::new(KubeClusterApi::with_config(failed_only.config(), Duration::from_secs(5))));
    let report = run(&options);
    let check = report.checks.iter().find(|check| check.id == "kubernetes.held_out_chips").expect("the check ran");
    assert_eq!(check.findings, ["kubernetes.held_out_chips.reset_failed"], "{check:?}");
}
