//! What the cluster looked like when a test failed, printed right after the panic message: the node's pods, the
//! recent log lines of our daemons (and of a container's previous run when it restarted), and the latest warning
//! events. A failed wait otherwise says only that a state was not reached ("8 devices published: not reached within
//! 60s"), and by the time anyone can look, the test bed of a CI run is gone.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Once;

/// The namespaces whose pods are ours (the deploy/kubernetes profiles, the Helm release, the DRA driver and the
/// test pods): their logs are printed.
const OUR_NAMESPACE_PREFIX: &str = "ascend-";
/// Log lines printed per container: enough for a start-up error and the retries after it.
const LOG_LINES: &str = "25";
/// Warning events printed: the newest.
const EVENT_LINES: usize = 15;
/// The names of a pod's containers that restarted, as `kubectl get -o` prints them.
const RESTARTED_CONTAINERS: &str = "jsonpath={range .status.containerStatuses[?(@.restartCount>0)]}{.name}{' '}{end}";

static INSTALLED: Once = Once::new();

/// Makes every panic of this test process print the report after its message (once per process; the kubectl
/// wrapper at `kubectl` runs as the cluster's admin).
pub(crate) fn install(kubectl: PathBuf) {
    INSTALLED.call_once(|| {
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            previous(info);
            print_report(&kubectl);
        }));
    });
}

fn print_report(kubectl: &Path) {
    let run = |args: &[&str]| -> String {
        match Command::new(kubectl).args(args).output() {
            Ok(output) => {
                let mut text = String::from_utf8_lossy(&output.stdout).into_owned();
                text.push_str(&String::from_utf8_lossy(&output.stderr));
                text
            }
            Err(error) => format!("kubectl {}: {error}\n", args.join(" ")),
        }
    };
    eprintln!("---- the cluster at the failure ----");
    let pods = run(&["get", "pods", "-A", "-o", "wide", "--no-headers"]);
    eprint!("{pods}");
    for pod in our_pods(&pods) {
        let (namespace, name) = (pod.namespace.as_str(), pod.name.as_str());
        eprint!(
            "{}",
            indent(&run(&["logs", "-n", namespace, name, "--all-containers", "--prefix", "--tail", LOG_LINES]))
        );
        if !pod.restarted {
            continue;
        }
        // Only the containers that restarted have a previous run (an init container that ran once has none).
        let restarted = run(&["get", "pod", "-n", namespace, name, "-o", RESTARTED_CONTAINERS]);
        for container in restarted.split_whitespace() {
            eprintln!("  [{container}, previous run]");
            let previous = run(&["logs", "-n", namespace, name, "-c", container, "--previous", "--tail", LOG_LINES]);
            eprint!("{}", indent(&previous));
        }
    }
    let events = run(&["get", "events", "-A", "--field-selector", "type=Warning", "--sort-by", ".lastTimestamp"]);
    let lines: Vec<&str> = events.lines().collect();
    eprintln!("warning events (newest {EVENT_LINES}):");
    for line in &lines[lines.len().saturating_sub(EVENT_LINES)..] {
        eprintln!("  {line}");
    }
    eprintln!("---- end of the report ----");
}

/// A pod of ours in `kubectl get pods -A -o wide --no-headers` output.
#[derive(Debug, PartialEq, Eq)]
struct OurPod {
    namespace: String,
    name: String,
    restarted: bool,
}

/// Our pods in a `kubectl get pods -A --no-headers` listing (NAMESPACE NAME READY STATUS RESTARTS ...; RESTARTS may
/// read "2 (5s ago)").
fn our_pods(listing: &str) -> Vec<OurPod> {
    listing
        .lines()
        .filter_map(|line| {
            let columns: Vec<&str> = line.split_whitespace().collect();
            let (namespace, name, restarts) = (columns.first()?, columns.get(1)?, columns.get(4)?);
            namespace.starts_with(OUR_NAMESPACE_PREFIX).then(|| OurPod {
                namespace: (*namespace).to_owned(),
                name: (*name).to_owned(),
                restarted: restarts.parse::<u32>().is_ok_and(|count| count > 0),
            })
        })
        .collect()
}

fn indent(text: &str) -> String {
    text.lines().map(|line| format!("  {line}\n")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn our_pods_are_those_of_the_ascend_namespaces_with_their_restarts() {
        let listing = "\
kube-system   coredns-1                 1/1   Running   0             5m    10.88.0.2   127.0.0.1   <none>   <none>
ascend-dra    ascend-dra-driver-x7k2p   1/1   Running   3 (12s ago)   2m    10.88.0.9   127.0.0.1   <none>   <none>
ascend-e2e    one-npu                   0/1   Pending   0             20s   <none>      <none>      <none>   <none>
";
        assert_eq!(
            our_pods(listing),
            vec![
                OurPod { namespace: "ascend-dra".into(), name: "ascend-dra-driver-x7k2p".into(), restarted: true },
                OurPod { namespace: "ascend-e2e".into(), name: "one-npu".into(), restarted: false },
            ]
        );
        assert!(our_pods("No resources found\n").is_empty());
    }
}
