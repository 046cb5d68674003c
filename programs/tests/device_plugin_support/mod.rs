//! Shared helpers of the `device_plugin_*` integration tests (each also declares `mod daemon_support;`, which owns the
//! child-process type): the real `ascend-device-plugin` process on a dcmi-sim host, the fake kubelet's view of it, overlay writers, a tiny HTTP client.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ascend_deviceplugin::fake_kubelet::FakeKubelet;
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::topology::FaultSpec;
use dcmi_sim::{write_overlay, ChipOverlay, InjectionRule, Overlay, TimelineAction, TimelineEntry, Topology};

pub use crate::daemon_support::{Daemon, WAIT};

/// Starts the bundled `ascend-device-plugin` with `args` and `envs` (stderr captured).
pub fn spawn_plugin(args: &[String], envs: &[(&str, &Path)]) -> Daemon {
    Daemon::spawn(env!("CARGO_BIN_EXE_ascend-device-plugin"), args, envs)
}

pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("free port")
}

pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).ok()?;
    stream.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").ok()?;
    let mut response = String::new();
    stream.read_to_string(&mut response).ok()?;
    let status = response.split_whitespace().nth(1)?.parse().ok()?;
    let body = response.split_once("\r\n\r\n").map(|(_, body)| body.to_owned()).unwrap_or_default();
    Some((status, body))
}

pub fn wait_http(port: u16, path: &str, daemon: &Daemon) -> String {
    let started = Instant::now();
    loop {
        if let Some((200, body)) = http_get(port, path) {
            return body;
        }
        assert!(started.elapsed() < WAIT, "no 200 from {path}; log:\n{}", daemon.log());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fake host for a topology of `dcmi-sim/topologies`; injected hangs last `hang` instead of an hour.
pub fn sim_host(topology: &str, root: &Path, hang: Duration) -> FakeHost {
    scripted_sim_host(topology, root, hang, Vec::new())
}

/// [`sim_host`] with a scripted fault timeline (its times count from the daemon's `dcmi_init`).
pub fn scripted_sim_host(topology: &str, root: &Path, hang: Duration, timeline: Vec<TimelineEntry>) -> FakeHost {
    let topology_file = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../dcmi-sim/topologies").join(topology);
    let mut topology = Topology::load(&topology_file).expect("topology loads");
    topology.simulation.hang_ms = u64::try_from(hang.as_millis()).unwrap_or(u64::MAX);
    topology.timeline = timeline;
    FakeHost::build(&topology, root, &FakeHostOptions::default()).expect("fake host builds")
}

/// A timeline entry: `action` on chip `logic_id` at `at_s` seconds; `code` for faults (raised as major).
pub fn at(at_s: f64, logic_id: u32, action: TimelineAction, code: Option<u32>) -> TimelineEntry {
    let severity = code.map(|_| 2);
    TimelineEntry { at_s, logic_id, action, code, severity, health: None }
}

/// The daemon's flags for a fake host, a plugin directory and a metrics port, plus `extra`.
pub fn sim_args(plugins: &Path, host: &FakeHost, port: u16, extra: &[&str]) -> Vec<String> {
    let mut args = vec![
        format!("--plugin-dir={}", plugins.display()),
        format!("--host-root={}", host.root.display()),
        format!("--dcmi-library={}", host.library.display()),
        "--skip-library-ownership-check".into(),
        format!("--listen=127.0.0.1:{port}"),
    ];
    args.extend(extra.iter().map(|arg| (*arg).to_owned()));
    args
}

/// `(id, health)` of every device the kubelet last heard of for `resource`, sorted by id.
pub fn health_list_of(kubelet: &FakeKubelet, resource: &str) -> Vec<(String, String)> {
    let mut list: Vec<(String, String)> =
        kubelet.devices(resource).unwrap_or_default().into_iter().map(|d| (d.id, d.health)).collect();
    list.sort();
    list
}

/// Waits until the kubelet's list of `resource` satisfies `condition`; returns how long that took.
pub async fn wait_health_of(
    kubelet: &FakeKubelet,
    resource: &str,
    what: &str,
    condition: impl Fn(&[(String, String)]) -> bool,
) -> Duration {
    let started = Instant::now();
    kubelet.wait_until(what, WAIT, |k| condition(&health_list_of(k, resource))).await.unwrap_or_else(|e| panic!("{e}"));
    started.elapsed()
}

pub fn is(devices: &[(String, String)], id: &str, health: &str) -> bool {
    devices.iter().any(|(device, h)| device == id && h == health)
}

pub fn unhealthy_count(devices: &[(String, String)]) -> usize {
    devices.iter().filter(|(_, h)| h == "Unhealthy").count()
}

/// `count` devices, every one healthy.
pub fn all_healthy(devices: &[(String, String)], count: usize) -> bool {
    devices.len() == count && unhealthy_count(devices) == 0
}

/// A chip's overlay entry with its health and raised fault codes set.
pub fn chip_faults(logic_id: u32, faults: Vec<u32>, health: u32) -> ChipOverlay {
    ChipOverlay {
        logic_id,
        health: Some(health),
        faults: Some(faults.into_iter().map(FaultSpec::Code).collect()),
        ..ChipOverlay::default()
    }
}

/// A chip's overlay entry that drops it off the bus (`true`) or brings it back.
pub fn chip_dropped(logic_id: u32, dropped: bool) -> ChipOverlay {
    ChipOverlay { logic_id, dropped: Some(dropped), ..ChipOverlay::default() }
}

/// A rule that makes every call of `function` (`"*"`: all) on `logic_id` (`None`: every chip) hang.
pub fn hang_rule(function: &str, logic_id: Option<u32>) -> InjectionRule {
    InjectionRule {
        function: function.into(),
        logic_id,
        code: None,
        from_call: 1,
        until_call: None,
        window_s: None,
        latency_ms: None,
        hang: true,
    }
}

/// A rule that makes every call of `function` (`"*"`: all) return `code`.
pub fn failing_rule(function: &str, code: i32) -> InjectionRule {
    InjectionRule { code: Some(code), hang: false, ..hang_rule(function, None) }
}

/// Writes the overlay (replacing the previous one's injection rules).
pub fn overlay(path: &Path, chips: Vec<ChipOverlay>, injections: Vec<InjectionRule>) {
    write_overlay(path, &Overlay { chips, injections }).expect("overlay written");
}

pub fn overlay_fault(path: &Path, logic_id: u32, faults: Vec<u32>, health: u32) {
    overlay(path, vec![chip_faults(logic_id, faults, health)], Vec::new());
}

pub fn overlay_hang(path: &Path, logic_id: u32) {
    overlay(path, Vec::new(), vec![hang_rule("dcmi_get_device_health", Some(logic_id))]);
}
