//! kubernetes.migration: a node half-way between Huawei's stack (its device plugin, docker runtime and npu-exporter)
//! and this one, in either direction (docs/migration.md). Both device plugins' sockets in the kubelet's plugin
//! directory, both runtimes registered with the engine, both exporters running: each pair is a step not finished,
//! and the fix says which.
//!
//! How the two are told apart, from what each leaves on the host: Huawei's plugin serves `<resource base>.sock`
//! (`Ascend910.sock`, mind-cluster `component/ascend-device-plugin/pkg/server/server.go`, `Register`), ours
//! `ascend-<base>.sock`; Huawei's runtime is `ascend-docker-runtime` (installed under
//! `/usr/local/Ascend/Ascend-Docker-Runtime/`, `component/ascend-docker-runtime/build/scripts/run_main.sh`), ours
//! `ascend-runtime` or `ascend-ctk`; both exporters are called `npu-exporter`, Huawei's with Go's one-dash flags
//! (`-port=8082`, `component/npu-exporter/build/npu-exporter.yaml`), ours with two dashes or none.

use std::collections::BTreeSet;

use super::advice::{Advice, Fix};
use super::check::{CheckResult, Section, Status};
use super::context::{DoctorOptions, Facts, RegisteredRuntime};
use super::host::HostRoot;
use super::runtime_checks;
use ascend_node::{DEFAULT_PLUGIN_DIR, KUBELET_SOCKET};

/// What one side has on the node.
#[derive(Debug, Default, PartialEq, Eq)]
struct Side {
    plugin_sockets: Vec<String>,
    runtimes: Vec<String>,
    exporters: Vec<String>,
}

impl Side {
    fn is_empty(&self) -> bool {
        self.plugin_sockets.is_empty() && self.runtimes.is_empty() && self.exporters.is_empty()
    }

    fn parts(&self) -> Vec<&'static str> {
        let mut parts = Vec::new();
        if !self.plugin_sockets.is_empty() {
            parts.push("device plugin");
        }
        if !self.runtimes.is_empty() {
            parts.push("runtime");
        }
        if !self.exporters.is_empty() {
            parts.push("npu-exporter");
        }
        parts
    }
}

fn listed(items: &[String]) -> String {
    if items.is_empty() {
        "none".to_owned()
    } else {
        items.join(", ")
    }
}

/// The device-plugin sockets of each side: ours `ascend-*.sock`, Huawei's the other `*.sock` named after a chip
/// resource (`Ascend910.sock`, `Ascend310P-2c.sock`, `npu.sock`).
fn plugin_sockets(host: &HostRoot) -> (Vec<String>, Vec<String>) {
    let mut names = host.list(DEFAULT_PLUGIN_DIR);
    names.sort();
    let sockets = names.into_iter().filter(|name| name.ends_with(".sock") && name != KUBELET_SOCKET);
    let (ours, others): (Vec<String>, Vec<String>) = sockets.partition(|name| name.starts_with("ascend-"));
    let huawei = others
        .into_iter()
        .filter(|name| {
            let stem = name.trim_end_matches(".sock");
            stem.starts_with("Ascend") || stem == "npu" || stem.starts_with("npu-")
        })
        .collect();
    (ours, huawei)
}

/// The same resource served by both: `Ascend910.sock` and `ascend-Ascend910.sock`.
fn shared_resources(ours: &[String], huawei: &[String]) -> Vec<String> {
    huawei
        .iter()
        .filter(|name| ours.contains(&format!("ascend-{name}")))
        .map(|name| name.replace(".sock", ""))
        .collect()
}

fn is_huaweis_runtime(runtime: &RegisteredRuntime) -> bool {
    runtime.binary.as_deref().is_some_and(|binary| binary.ends_with("ascend-docker-runtime"))
}

fn runtime_line(runtime: &RegisteredRuntime) -> String {
    format!("{} {:?} -> {}", runtime.engine, runtime.name, runtime.binary.as_deref().unwrap_or("(no binary named)"))
}

/// Every registered Ascend runtime, read again here so that the check needs no other section.
fn registered_runtimes(options: &DoctorOptions) -> Vec<RegisteredRuntime> {
    let mut scratch = Facts::default();
    let _ = runtime_checks::docker(options, &mut scratch);
    let _ = runtime_checks::containerd(options, &mut scratch);
    scratch.ascend_runtimes
}

/// The running `npu-exporter` processes by side, as `pid <n>`, from `/proc/<pid>/cmdline`; `None` when the host's
/// processes are not visible (no kubelet among them: a container without the host's PID namespace).
fn exporters(host: &HostRoot) -> Option<(Vec<String>, Vec<String>)> {
    let (mut ours, mut huawei) = (Vec::new(), Vec::new());
    let mut kubelet = false;
    let mut pids: Vec<u64> = host.list("/proc").iter().filter_map(|name| name.parse().ok()).collect();
    pids.sort_unstable();
    for pid in pids {
        let Ok(bytes) = host.read(format!("/proc/{pid}/cmdline")) else { continue };
        let text = String::from_utf8_lossy(&bytes);
        let mut args = text.split('\0').filter(|arg| !arg.is_empty());
        let program = args.next().and_then(|program| program.rsplit('/').next()).unwrap_or_default();
        kubelet |= program == "kubelet";
        if program != "npu-exporter" {
            continue;
        }
        let go_flags = args.any(|arg| arg.starts_with('-') && !arg.starts_with("--") && arg.len() > 1);
        if go_flags {
            huawei.push(format!("pid {pid}"));
        } else {
            ours.push(format!("pid {pid}"));
        }
    }
    kubelet.then_some((ours, huawei))
}

/// kubernetes.migration: whether parts of both stacks are on the node, and what is left to do.
pub fn migration(options: &DoctorOptions, _facts: &mut Facts) -> CheckResult {
    let check =
        CheckResult::new("kubernetes.migration", Section::Kubernetes, "No migration left half-done", Status::Ok);
    let host = &options.host;
    if !host.exists("/var/lib/kubelet") {
        return check.evidence("/var/lib/kubelet absent: not a Kubernetes node").with_status(Status::Skip);
    }
    let (mut ours, mut huawei) = (Side::default(), Side::default());
    (ours.plugin_sockets, huawei.plugin_sockets) = plugin_sockets(host);
    for runtime in registered_runtimes(options) {
        let side = if is_huaweis_runtime(&runtime) { &mut huawei } else { &mut ours };
        side.runtimes.push(runtime_line(&runtime));
    }
    let seen = exporters(host);
    let proc_note =
        if seen.is_none() { " (no kubelet in /proc: the host's processes are not visible here)" } else { "" };
    (ours.exporters, huawei.exporters) = seen.unwrap_or_default();
    let check = check.evidence_lines([
        format!(
            "device plugin sockets in {DEFAULT_PLUGIN_DIR}: Huawei's {}; this project's {}",
            listed(&huawei.plugin_sockets),
            listed(&ours.plugin_sockets)
        ),
        format!("Ascend runtimes: Huawei's {}; this project's {}", listed(&huawei.runtimes), listed(&ours.runtimes)),
        format!(
            "npu-exporter processes: Huawei's {}; this project's {}{proc_note}",
            listed(&huawei.exporters),
            listed(&ours.exporters)
        ),
    ]);
    if huawei.is_empty() || ours.is_empty() {
        let only = if huawei.is_empty() { "this project's" } else { "Huawei's" };
        return check.evidence(format!("only {only} components found: no migration under way"));
    }
    let mut fixes: Vec<Fix> = Vec::new();
    if !huawei.plugin_sockets.is_empty() && !ours.plugin_sockets.is_empty() {
        let shared = shared_resources(&ours.plugin_sockets, &huawei.plugin_sockets);
        let resources = if shared.is_empty() { "the node's NPUs".to_owned() } else { shared.join(", ") };
        fixes.push(Advice::MigrationTwoPlugins { resources }.into());
    }
    if !huawei.runtimes.is_empty() && !ours.runtimes.is_empty() {
        fixes.push(Advice::MigrationTwoRuntimes { huawei: huawei.runtimes.join(", ") }.into());
    }
    if !huawei.exporters.is_empty() && !ours.exporters.is_empty() {
        fixes.push(Advice::MigrationTwoExporters.into());
    }
    let paired: BTreeSet<&str> = fixes
        .iter()
        .flat_map(|fix| fix.ids.iter())
        .map(|id| match id.as_str() {
            "kubernetes.migration.two_device_plugins" => "device plugin",
            "kubernetes.migration.two_runtimes" => "runtime",
            _ => "npu-exporter",
        })
        .collect();
    let (huawei_parts, our_parts) = (huawei.parts(), ours.parts());
    let unpaired: Vec<&str> =
        huawei_parts.iter().chain(our_parts.iter()).copied().filter(|part| !paired.contains(part)).collect();
    if !unpaired.is_empty() || fixes.is_empty() {
        fixes.push(Advice::MigrationMixed { huawei: huawei_parts.join(", "), ours: our_parts.join(", ") }.into());
    }
    check.advise(Fix::join(fixes, "; ")).with_status(Status::Warn)
}

#[cfg(test)]
mod tests {
    use std::os::unix::net::UnixListener;
    use std::path::Path;
    use std::time::Duration;

    use super::*;

    fn write(root: &Path, path: &str, text: &str) {
        let file = root.join(path.trim_start_matches('/'));
        std::fs::create_dir_all(file.parent().expect("parent")).expect("directory");
        std::fs::write(file, text).expect("file");
    }

    /// A node with the kubelet's directory, the sockets named and the exporter processes (argv, NUL-separated).
    fn node(sockets: &[&str], daemon_json: Option<&str>, processes: &[(u32, &[&str])]) -> tempfile::TempDir {
        let dir = tempfile::tempdir().expect("temporary root");
        let plugins = dir.path().join(DEFAULT_PLUGIN_DIR.trim_start_matches('/'));
        std::fs::create_dir_all(&plugins).expect("plugin directory");
        for socket in sockets {
            // Bound and dropped: the socket file stays, as a plugin's does.
            drop(UnixListener::bind(plugins.join(socket)).expect("socket"));
        }
        if let Some(json) = daemon_json {
            write(dir.path(), "/etc/docker/daemon.json", json);
        }
        for (pid, argv) in processes {
            let mut cmdline = argv.join("\0");
            cmdline.push('\0');
            write(dir.path(), &format!("/proc/{pid}/cmdline"), &cmdline);
        }
        write(dir.path(), "/proc/1/cmdline", "/sbin/init\0");
        write(dir.path(), "/proc/900/cmdline", "/usr/bin/kubelet\0--config=/var/lib/kubelet/config.yaml\0");
        dir
    }

    fn checked(root: &Path) -> CheckResult {
        let options = DoctorOptions::for_root(root, Duration::from_secs(1)).expect("options");
        migration(&options, &mut Facts::default())
    }

    const BOTH_RUNTIMES: &str = r#"{"runtimes": {
        "ascend": {"path": "/usr/local/Ascend/Ascend-Docker-Runtime/ascend-docker-runtime"},
        "ascend-rs": {"path": "/usr/local/bin/ascend-runtime"}}}"#;

    #[test]
    fn a_node_mid_migration_names_every_pair_left() {
        let root = node(
            &["kubelet.sock", "Ascend910.sock", "ascend-Ascend910.sock"],
            Some(BOTH_RUNTIMES),
            &[
                (4100, &["npu-exporter", "-port=8082", "-ip=0.0.0.0"]),
                (4200, &["/usr/local/bin/npu-exporter", "--metrics.naming=huawei"]),
            ],
        );
        let result = checked(root.path());
        assert_eq!(result.status, Status::Warn, "{result:?}");
        let fix = result.advice().expect("a fix");
        assert_eq!(
            fix.ids,
            [
                "kubernetes.migration.two_device_plugins",
                "kubernetes.migration.two_runtimes",
                "kubernetes.migration.two_exporters"
            ]
        );
        assert!(fix.en.contains("huawei.com/Ascend910") || fix.en.contains("Ascend910"), "{}", fix.en);
        assert!(fix.zh_cn.contains("Ascend910"), "{}", fix.zh_cn);
        let evidence = result.evidence.join("\n");
        assert!(evidence.contains("Huawei's Ascend910.sock; this project's ascend-Ascend910.sock"), "{evidence}");
        assert!(evidence.contains("Huawei's pid 4100; this project's pid 4200"), "{evidence}");
    }

    #[test]
    fn parts_of_both_without_pairs_say_which_are_left() {
        // Our device plugin took over; Huawei's exporter still runs and ours does not yet.
        let root = node(&["kubelet.sock", "ascend-Ascend910.sock"], None, &[(4100, &["npu-exporter", "-port=8082"])]);
        let result = checked(root.path());
        assert_eq!(result.status, Status::Warn, "{result:?}");
        let fix = result.advice().expect("a fix");
        assert_eq!(fix.ids, ["kubernetes.migration.mixed"]);
        assert!(
            fix.en.contains("Huawei's npu-exporter") && fix.en.contains("this project's device plugin"),
            "{}",
            fix.en
        );
    }

    #[test]
    fn one_stack_alone_is_no_migration() {
        let ours = node(&["kubelet.sock", "ascend-Ascend910.sock"], None, &[(4200, &["npu-exporter"])]);
        assert_eq!(checked(ours.path()).status, Status::Ok);
        let huawei = node(&["kubelet.sock", "Ascend910.sock"], None, &[(4100, &["npu-exporter", "-port=8082"])]);
        let result = checked(huawei.path());
        assert_eq!(result.status, Status::Ok);
        assert!(result.evidence.iter().any(|line| line.contains("only Huawei's components")), "{result:?}");
        let empty = tempfile::tempdir().expect("temporary root");
        assert_eq!(checked(empty.path()).status, Status::Skip);
    }

    #[test]
    fn processes_of_a_container_are_not_taken_for_the_hosts() {
        let root = node(&["kubelet.sock", "ascend-Ascend910.sock"], None, &[]);
        std::fs::remove_file(root.path().join("proc/900/cmdline")).expect("no kubelet");
        let result = checked(root.path());
        let evidence = result.evidence.join("\n");
        assert!(evidence.contains("the host's processes are not visible here"), "{evidence}");
    }
}
