//! kubernetes.held_out_chips: the chips recovery (`--recovery-mode` of the device plugin or the DRA driver, chips that
//! heal) holds out of service after its resets did not help, each with the reason and what the operator does next.
//!
//! The source is the daemons' Node Events (`ascend_kube::RecoveryEvents`): `NpuHeldOut` says which chip recovery gave
//! up on and why (`ascend_kube::held_out_note`), and a later `NpuReset`, `NpuRecovered` or `NpuFaultRecovered` of the
//! same chip (its action) ends the hold. Why the Events: the hold lives in the daemon's memory, and of the places the
//! daemon reports it the Events are the one a doctor on the node reliably reaches. The metrics count held-out chips
//! without naming them and, like the health endpoint, are served on the pod network (the daemons have no host port),
//! which a doctor run on the host does not look up; the device plugin's Node condition `AscendNPUUnhealthy` names the
//! unhealthy chips but not that recovery gave up on them; the driver tells the fault, not the resets tried. The doctor already asks the API server about this node
//! (kubernetes.node_resources). The Events last as long as the API server keeps them (`--event-ttl`, one hour by
//! default): a chip held out longer ago shows only as allocatable below capacity, which the evidence says.

use std::collections::BTreeMap;

use super::advice::Advice;
use super::check::{CheckResult, Section, Status};
use super::cluster_api::NodeEventRecord;
use super::context::{DoctorOptions, Facts};
use super::kubernetes_checks::node_in_cluster;

/// The Event that holds a chip out.
const HELD_OUT: &str = "NpuHeldOut";
/// The Events read: the hold, and those that end it (a reset that booted, the chip healthy again).
const REASONS: [&str; 4] = [HELD_OUT, "NpuReset", "NpuRecovered", "NpuFaultRecovered"];

/// Why recovery gave up on a chip, from the words of the `NpuHeldOut` note (`ascend_kube::held_out_note`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Why {
    /// The reset, or the boot after it, failed.
    ResetFailed,
    /// The chip has used its resets for now.
    BudgetUsed,
    /// The fault came back soon after a reset cleared it.
    FaultReturned,
    /// A note in other words (another version of the daemon): the evidence quotes it.
    Other,
}

impl Why {
    fn of(note: &str) -> Why {
        if note.contains("reset failed") {
            Why::ResetFailed
        } else if note.contains("used its resets") {
            Why::BudgetUsed
        } else if note.contains("faulted again") {
            Why::FaultReturned
        } else {
            Why::Other
        }
    }

    fn words(self) -> &'static str {
        match self {
            Why::ResetFailed => "reset failed",
            Why::BudgetUsed => "reset budget used",
            Why::FaultReturned => "fault returned after its reset",
            Why::Other => "held out",
        }
    }
}

/// A chip held out now: its name, since when, why, and the plugin's own words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct HeldChip {
    pub chip: String,
    pub since: String,
    pub why: Why,
    pub note: String,
}

/// An RFC 3339 time as a key that sorts in time order whatever its fraction of a second (`…:05Z`,
/// `…:05.123456Z`); all the API server's times are UTC.
fn time_key(time: &str) -> String {
    let (seconds, rest) = time.split_at(time.len().min(19));
    let fraction: String = rest.trim_start_matches('.').chars().take_while(char::is_ascii_digit).collect();
    format!("{seconds}.{fraction:0<9}")
}

/// The chips whose latest Event among [`REASONS`] is [`HELD_OUT`], by chip name.
pub(crate) fn held_out(events: &[NodeEventRecord]) -> Vec<HeldChip> {
    let mut latest: BTreeMap<&str, &NodeEventRecord> = BTreeMap::new();
    for event in events.iter().filter(|event| REASONS.contains(&event.reason.as_str())) {
        let newer = latest.get(event.action.as_str()).is_none_or(|seen| time_key(&event.time) >= time_key(&seen.time));
        if newer {
            latest.insert(&event.action, event);
        }
    }
    latest
        .into_values()
        .filter(|event| event.reason == HELD_OUT)
        .map(|event| HeldChip {
            chip: event.action.clone(),
            since: event.time.clone(),
            why: Why::of(&event.note),
            note: event.note.clone(),
        })
        .collect()
}

/// kubernetes.held_out_chips: no chip held out of service by recovery.
pub fn held_out_chips(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check = CheckResult::new(
        "kubernetes.held_out_chips",
        Section::Kubernetes,
        "No NPU held out after failed resets",
        Status::Ok,
    );
    let (api, node, check) = match node_in_cluster(options, check) {
        Ok(found) => found,
        Err(skipped) => return *skipped,
    };
    let events = match api.node_events(&node, &REASONS) {
        Ok(events) => events,
        Err(error) => return check.evidence(error.to_string()).advise(Advice::EventsAccess).with_status(Status::Warn),
    };
    let held = held_out(&events);
    let check = check.evidence(format!(
        "node {node}: {} recovery Event(s) ({}) kept by the API server (--event-ttl, 1 h by default)",
        events.len(),
        REASONS.join(", ")
    ));
    if held.is_empty() {
        return check.evidence("no chip held out");
    }
    let lines =
        held.iter().map(|chip| format!("{}: {} (since {}): {}", chip.chip, chip.why.words(), chip.since, chip.note));
    let mut by_why: BTreeMap<Why, Vec<&str>> = BTreeMap::new();
    for chip in &held {
        by_why.entry(chip.why).or_default().push(&chip.chip);
    }
    let fixes = by_why.into_iter().map(|(why, chips)| {
        let chips = chips.join(", ");
        match why {
            Why::ResetFailed => Advice::HeldOutResetFailed { chips },
            Why::BudgetUsed => Advice::HeldOutBudgetUsed { chips },
            Why::FaultReturned => Advice::HeldOutFaultReturned { chips },
            Why::Other => Advice::HeldOut { chips },
        }
        .into()
    });
    check
        .evidence_lines(lines.collect::<Vec<_>>())
        .advise(super::advice::Fix::join(fixes, "; "))
        .with_status(Status::Warn)
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::time::Duration;

    use ascend_oci::runtime_config::RuntimeClassRef;

    use super::*;
    use crate::cluster_api::{ClusterApi, ClusterPod, NodeResources};
    use crate::error::{Error, Result};

    fn event(reason: &str, chip: &str, note: &str, time: &str) -> NodeEventRecord {
        NodeEventRecord { reason: reason.into(), action: chip.into(), note: note.into(), time: time.into() }
    }

    /// The notes the daemons write (`ascend_kube::held_out_note`; tests/held_out_chips.rs builds them with it).
    const FAILED: &str =
        "NPU Ascend910-3 (logic 3, phy 3): stays out of service until an operator acts: its reset failed (boot timed out)";
    const BUDGET: &str = "NPU Ascend910-5 (logic 5, phy 5): stays out of service until an operator acts: it has used \
                          its resets for now";
    const RETURNED: &str = "NPU Ascend910-6 (logic 6, phy 6): stays out of service until an operator acts: it faulted \
                            again 42 s after its reset";

    /// A cluster whose API answers the node's Events with `events`, or fails to.
    struct EventsApi(std::result::Result<Vec<NodeEventRecord>, String>);

    fn not_served(request: &str) -> Error {
        Error::ApiRequest { request: request.to_owned(), reason: "not served by this test's API".to_owned() }
    }

    impl ClusterApi for EventsApi {
        fn kubelet_version(&self, _node: &str) -> Result<Option<String>> {
            Err(not_served("get nodes"))
        }
        fn served_versions(&self, _group: &str) -> Result<Option<Vec<String>>> {
            Err(not_served("get /apis"))
        }
        fn node_resources(&self, _node: &str) -> Result<NodeResources> {
            Err(not_served("get nodes"))
        }
        fn pods(&self, _node: Option<&str>) -> Result<Vec<ClusterPod>> {
            Err(not_served("list pods"))
        }
        fn runtime_classes(&self) -> Result<Vec<RuntimeClassRef>> {
            Err(not_served("list runtimeclasses"))
        }
        fn node_events(&self, node: &str, reasons: &[&str]) -> Result<Vec<NodeEventRecord>> {
            assert_eq!(node, "atlas-1");
            assert!(reasons.contains(&HELD_OUT) && reasons.contains(&"NpuRecovered"), "{reasons:?}");
            self.0.clone().map_err(|reason| Error::ApiRequest { request: "list events".into(), reason })
        }
    }

    fn checked(root: &Path, api: EventsApi) -> CheckResult {
        let mut options = DoctorOptions::for_root(root, Duration::from_secs(1)).expect("options");
        options.node_name = Some("atlas-1".to_owned());
        options.cluster_api = Some(Box::new(api));
        held_out_chips(&options, &mut Facts::default())
    }

    fn node() -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temporary root");
        std::fs::create_dir_all(dir.path().join("var/lib/kubelet")).expect("kubelet directory");
        dir
    }

    #[test]
    fn names_each_held_out_chip_with_its_reason_and_the_next_step() {
        let root = node();
        let events = vec![
            event("NpuReset", "Ascend910-3", "reset and booted in 1.2 s", "2026-12-05T04:00:00Z"),
            event(HELD_OUT, "Ascend910-3", FAILED, "2026-12-05T04:10:00.250000Z"),
            event(HELD_OUT, "Ascend910-5", BUDGET, "2026-12-05T04:20:00Z"),
            event(HELD_OUT, "Ascend910-6", RETURNED, "2026-12-05T04:30:00Z"),
        ];
        let result = checked(root.path(), EventsApi(Ok(events)));
        assert_eq!(result.status, Status::Warn, "{result:?}");
        let evidence = result.evidence.join("\n");
        assert!(evidence.contains("Ascend910-3: reset failed (since 2026-12-05T04:10:00.250000Z)"), "{evidence}");
        assert!(evidence.contains("Ascend910-5: reset budget used"), "{evidence}");
        assert!(evidence.contains("Ascend910-6: fault returned after its reset"), "{evidence}");
        assert_eq!(
            result.findings,
            [
                "kubernetes.held_out_chips.reset_failed",
                "kubernetes.held_out_chips.budget_used",
                "kubernetes.held_out_chips.fault_returned"
            ]
        );
        let fix = result.fix.unwrap_or_default();
        assert!(fix.contains("Ascend910-3: ") && fix.contains("npu-smi set -t reset"), "{fix}");
        assert!(fix.contains("Ascend910-6: ") && fix.contains("replace"), "{fix}");
    }

    #[test]
    fn a_later_reset_or_recovery_ends_the_hold() {
        let root = node();
        let events = vec![
            event(HELD_OUT, "Ascend910-3", FAILED, "2026-12-05T04:10:00Z"),
            // A second later, written with a fraction: still after the hold.
            event("NpuRecovered", "Ascend910-3", "healthy again", "2026-12-05T04:10:01.000001Z"),
            event(HELD_OUT, "Ascend910-5", BUDGET, "2026-12-05T04:20:00.5Z"),
            event("NpuReset", "Ascend910-5", "reset and booted in 1.0 s", "2026-12-05T05:20:00Z"),
            // The hold of another chip is not ended by these.
            event("NpuRecovered", "Ascend910-7", "healthy again", "2026-12-05T04:40:00Z"),
        ];
        let result = checked(root.path(), EventsApi(Ok(events)));
        assert_eq!(result.status, Status::Ok, "{result:?}");
        assert!(result.evidence.iter().any(|line| line == "no chip held out"), "{:?}", result.evidence);
        // A hold after the recovery counts again.
        let events = vec![
            event("NpuRecovered", "Ascend910-3", "healthy again", "2026-12-05T04:10:01Z"),
            event(
                HELD_OUT,
                "Ascend910-3",
                "NPU Ascend910-3: stays out: a reason of a newer plugin",
                "2026-12-05T04:11:00Z",
            ),
        ];
        let result = checked(root.path(), EventsApi(Ok(events)));
        assert_eq!(result.status, Status::Warn, "{result:?}");
        assert_eq!(result.findings, ["kubernetes.held_out_chips.held_out"]);
        assert!(
            result.evidence.iter().any(|line| line.contains("a reason of a newer plugin")),
            "{:?}",
            result.evidence
        );
    }

    #[test]
    fn without_events_access_it_warns_and_without_a_kubelet_it_skips() {
        let root = node();
        let result = checked(root.path(), EventsApi(Err("HTTP 403".to_owned())));
        assert_eq!(result.status, Status::Warn, "{result:?}");
        assert_eq!(result.findings, ["kubernetes.held_out_chips.events_not_listed"]);
        let bare = tempfile::tempdir().expect("temporary root");
        assert_eq!(checked(bare.path(), EventsApi(Ok(Vec::new()))).status, Status::Skip);
    }

    #[test]
    fn times_sort_whatever_their_fraction() {
        assert!(time_key("2026-12-05T04:10:00.5Z") > time_key("2026-12-05T04:10:00Z"));
        assert!(time_key("2026-12-05T04:10:01Z") > time_key("2026-12-05T04:10:00.999999Z"));
        assert_eq!(time_key("2026-12-05T04:10:00Z"), time_key("2026-12-05T04:10:00.000Z"));
    }
}
