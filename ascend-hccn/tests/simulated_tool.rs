//! `HccnTool` end to end against dcmi-sim's simulated `hccn_tool`, installed in a fake host as the driver's tool.
//!
//! Cargo builds no binary of a dev-dependency, so this test executable is the tool too: installed in the fake host
//! under the name `hccn_tool`, it runs `dcmi_sim::hccn_tool::run`, the body of dcmi-sim's `hccn_tool` binary, which
//! finds the topology and overlay beside the fake host's library as on a host with no simulator variable. Started
//! under any other name it runs the tests below (`harness = false`; a name given on the command line filters them).

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use ascend_hccn::{Error, HccnTool, LinkState, PortType, UbPort};
use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};
use dcmi_sim::hccn_tool::{Link, NetworkOverlay};
use dcmi_sim::{Overlay, Topology};

fn main() -> ExitCode {
    let mut arguments = std::env::args_os();
    let program = PathBuf::from(arguments.next().unwrap_or_default());
    if program.file_name().is_some_and(|name| name == "hccn_tool") {
        let args: Vec<String> = arguments.map(|arg| arg.to_string_lossy().into_owned()).collect();
        let code = dcmi_sim::hccn_tool::run(&program, &args, &mut std::io::stdout(), &mut std::io::stderr());
        return ExitCode::from(code);
    }
    let filters: Vec<String> =
        arguments.map(|arg| arg.to_string_lossy().into_owned()).filter(|arg| !arg.starts_with('-')).collect();
    let tests: [(&str, fn()); 8] = [
        ("parsed_values_match_the_topology_of_a_training_host", parsed_values_match_the_topology_of_a_training_host),
        (
            "parsed_values_match_the_topology_of_an_ascend950_host",
            parsed_values_match_the_topology_of_an_ascend950_host,
        ),
        ("an_overlay_takes_the_link_down", an_overlay_takes_the_link_down),
        ("a_flapping_link_and_falling_receive_power", a_flapping_link_and_falling_receive_power),
        (
            "a_hung_tool_is_killed_at_the_deadline_while_another_chip_answers",
            a_hung_tool_is_killed_at_the_deadline_while_another_chip_answers,
        ),
        ("the_concurrency_limit_holds", the_concurrency_limit_holds),
        (
            "a_failing_tool_is_reported_with_its_first_stderr_line",
            a_failing_tool_is_reported_with_its_first_stderr_line,
        ),
        ("oversized_output_and_a_missing_tool_are_errors", oversized_output_and_a_missing_tool_are_errors),
    ];
    let chosen: Vec<_> = tests
        .iter()
        .filter(|(name, _)| filters.is_empty() || filters.iter().any(|f| name.contains(f.as_str())))
        .collect();
    println!("\nrunning {} tests", chosen.len());
    let mut failed = Vec::new();
    for (name, test) in &chosen {
        let outcome = std::panic::catch_unwind(test);
        println!("test {name} ... {}", if outcome.is_ok() { "ok" } else { "FAILED" });
        if outcome.is_err() {
            failed.push(*name);
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed\n",
        if failed.is_empty() { "ok" } else { "FAILED" },
        chosen.len() - failed.len(),
        failed.len()
    );
    if failed.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// A fake host of `sample` with this executable installed as its `hccn_tool`; `edit` changes the topology first.
struct Host {
    _root: tempfile::TempDir,
    host: FakeHost,
    topology: Topology,
}

impl Host {
    fn new(sample: &str, edit: impl FnOnce(&mut Topology)) -> Host {
        let root = tempfile::tempdir().expect("temporary directory");
        let mut topology = dcmi_sim::samples::by_name(sample).expect("sample").topology().expect("valid sample");
        edit(&mut topology);
        let program = std::env::current_exe().expect("this test executable");
        let options = FakeHostOptions::with_built_library(program).unwrap_or_else(|error| panic!("{error}"));
        let host = FakeHost::build(&topology, root.path(), &options).unwrap_or_else(|error| panic!("{error}"));
        Host { _root: root, host, topology }
    }

    fn tool(&self) -> PathBuf {
        self.host.hccn_tool.clone().expect("the tool is installed")
    }

    fn runner(&self, deadline: Duration, concurrency: usize) -> HccnTool {
        HccnTool::builder().path(self.tool()).deadline(deadline).concurrency(concurrency).build()
    }

    /// Writes the overlay the installed tool reads, one network entry per (logic id, faults).
    fn overlay(&self, entries: &[(u32, NetworkOverlay)]) {
        self.host.write_overlay(&Overlay::network_faults(entries)).expect("overlay written");
    }

    /// The (logic id, physical id) of the chips, in topology order.
    fn chips(&self) -> Vec<(u32, u32)> {
        self.topology.chips().map(|found| (found.chip.logic_id, found.chip.phy_id)).collect()
    }
}

fn block_on<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
        .block_on(future)
}

fn unix_seconds() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).expect("after 1970").as_secs()
}

fn parsed_values_match_the_topology_of_a_training_host() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let tool = host.runner(Duration::from_secs(10), 4);
    let (_, phy) = host.chips()[0];
    block_on(async {
        assert_eq!(tool.link_state(phy).await.expect("link"), LinkState::Up);
        assert_eq!(tool.link_speed_mbps(phy).await.expect("speed"), Some(200_000), "the 910B's default");
        assert_eq!(tool.link_up_count(phy).await.expect("link_stat"), 1);
        let before = unix_seconds();
        let counters = tool.stat(phy).await.expect("stat");
        let received = counters.get("roce_rx_all_pkt_num").expect("roce_rx_all_pkt_num");
        assert_eq!(received % 200_000, 0, "200 000 packets per second since the epoch");
        assert!((before - 1..=unix_seconds()).contains(&(received / 200_000)), "{received}");
        assert_eq!(counters.get("roce_rx_err_pkt_num"), Some(0));
        assert!(counters.get("mac_rx_mac_pause_num").is_some() && counters.get("roce_ecn_db_num").is_some());
        tokio::time::sleep(Duration::from_millis(1100)).await;
        let later = tool.stat(phy).await.expect("stat").get("roce_rx_all_pkt_num").expect("counter");
        assert!(later > received, "counters advance with time: {received} then {later}");
        let optical = tool.optical(phy).await.expect("optical");
        assert!(optical.present);
        assert_eq!((optical.temperature_celsius, optical.vcc_millivolts), (Some(45.0), Some(3300.0)));
        assert_eq!((optical.tx_power_milliwatts, optical.rx_power_milliwatts), ([Some(1.5); 4], [Some(1.2); 4]));
        let bandwidth = tool.bandwidth(phy).await.expect("bandwidth");
        assert_eq!((bandwidth.tx_megabytes_per_second, bandwidth.rx_megabytes_per_second), (204.8, 204.8));
    });
}

fn parsed_values_match_the_topology_of_an_ascend950_host() {
    let host = Host::new("atlas-950-8", |_| {});
    let tool = host.runner(Duration::from_secs(10), 4);
    let (logic_id, _) = host.chips()[0];
    let ub = host.topology.chip_by_logic_id(logic_id).expect("chip").chip.ub;
    block_on(async {
        let ports = tool.ub_ports(logic_id).await.expect("dev_info");
        assert_eq!(ports.len(), (ub.dies * ub.ports) as usize);
        assert!(ports.iter().all(|port| port.link == LinkState::Up && port.port_type == PortType::Ub));
        let last = ports.last().expect("a port");
        assert_eq!((last.udie, last.port), (ub.dies - 1, ub.ports - 1));
        let port = UbPort { logic_id, udie: last.udie, port: last.port };
        assert_eq!(tool.ub_link_state(port).await.expect("link"), LinkState::Up);
        assert_eq!(tool.ub_speed(port).await.expect("speed"), Some(400));
        let bandwidth = tool.ub_bandwidth(port).await.expect("bandwidth");
        assert_eq!(bandwidth.rx_megabytes_per_second, (ub.rx_packets_per_s * 1024) as f64 / 1e6);
        let optical = tool.ub_optical(port).await.expect("optical");
        assert_eq!(optical.modules, 1);
        let rounded = |dbm: Option<f64>| dbm.map(|dbm| (dbm * 100.0).round() / 100.0);
        assert_eq!((rounded(optical.tx_power_dbm[3]), rounded(optical.rx_power_dbm[0])), (Some(1.76), Some(0.79)));
        let counters = tool.ub_stat(port).await.expect("stat");
        let ipv4 = counters.get("ub_ipv4_pkt_cnt_rx").expect("ub_ipv4_pkt_cnt_rx");
        assert!(ipv4 > 0 && counters.get("route_err_cnt_rx") == Some(0), "{counters:?}");
    });
}

fn an_overlay_takes_the_link_down() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let tool = host.runner(Duration::from_secs(10), 4);
    let chips = host.chips();
    let ((down_logic, down_phy), (_, other_phy)) = (chips[0], chips[1]);
    host.overlay(&[(down_logic, NetworkOverlay { link: Some(Link::Down), ..Default::default() })]);
    block_on(async {
        assert_eq!(tool.link_state(down_phy).await.expect("link"), LinkState::Down);
        assert_eq!(tool.link_speed_mbps(down_phy).await.expect("speed"), None, "`Unknown!` while down");
        assert_eq!(tool.bandwidth(down_phy).await.expect("bandwidth").rx_megabytes_per_second, 0.0);
        assert_eq!(tool.link_state(other_phy).await.expect("link"), LinkState::Up, "only that chip");
    });
}

fn a_flapping_link_and_falling_receive_power() {
    // Ticks of 20 ms, so the tool's clock moves within the test.
    let host = Host::new("atlas-800t-a2", |topology| topology.simulation.sample_period_ms = 20);
    let tool = host.runner(Duration::from_secs(10), 4);
    let (logic_id, phy) = host.chips()[0];
    let faults = NetworkOverlay { flap_period_ms: Some(300), rx_power_fall_mw_per_s: Some(0.5), ..Default::default() };
    host.overlay(&[(logic_id, faults)]);
    block_on(async {
        let mut seen = Vec::new();
        let started = Instant::now();
        while started.elapsed() < Duration::from_millis(1500) {
            seen.push(tool.link_state(phy).await.expect("link"));
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(seen.contains(&LinkState::Up) && seen.contains(&LinkState::Down), "{seen:?}");
        assert!(tool.link_up_count(phy).await.expect("link_stat") >= 3, "each return to up counts");
        let rx = tool.optical(phy).await.expect("optical").rx_power_milliwatts[0].expect("a reading");
        assert!(rx < 1.2 - 0.5, "1.5 s at 0.5 mW/s from 1.2 mW: {rx}");
    });
}

/// The processes whose executable is `path`.
fn processes_running(path: &Path) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .filter_map(|entry| entry.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| std::fs::read_link(format!("/proc/{pid}/exe")).is_ok_and(|exe| exe == path))
        .collect()
}

fn a_hung_tool_is_killed_at_the_deadline_while_another_chip_answers() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let deadline = Duration::from_millis(1500);
    let tool = host.runner(deadline, 4);
    let chips = host.chips();
    let ((hung_logic, hung_phy), (_, healthy_phy)) = (chips[0], chips[1]);
    host.overlay(&[(hung_logic, NetworkOverlay { tool_hangs: Some(true), ..Default::default() })]);
    block_on(async {
        let started = Instant::now();
        // Every query of the hung chip at once, more than the four places of the concurrency limit: they take turns
        // on their device, so the other chip finds a place (without turns they took all four until the deadline).
        let more_of_the_hung = async {
            tokio::join!(
                tool.link_up_count(hung_phy),
                tool.link_speed_mbps(hung_phy),
                tool.bandwidth(hung_phy),
                tool.stat(hung_phy),
                tool.optical(hung_phy)
            )
        };
        let hung = async { (tool.link_state(hung_phy).await, started.elapsed()) };
        let healthy = async { (tool.link_state(healthy_phy).await, started.elapsed()) };
        // Polled in this order: the other chip asks last.
        let ((hung, hung_after), more, (healthy, healthy_after)) = tokio::join!(hung, more_of_the_hung, healthy);
        // They waited behind the first, which timed out: they end with it, not a deadline each later.
        let more = [more.0.err(), more.1.err(), more.2.err(), more.3.err(), more.4.err()];
        assert!(
            more.iter().all(|error| matches!(error, Some(Error::DeviceTimedOut { .. }))),
            "the queries waiting behind the hung one: {more:?}"
        );
        assert!(started.elapsed() < deadline * 2, "they ended with the first: {:?}", started.elapsed());
        assert_eq!(healthy.expect("the other chip answers"), LinkState::Up);
        assert!(healthy_after < deadline, "the other chip waited for the hung one: {healthy_after:?}");
        match hung {
            Err(Error::TimedOut { command, deadline: reported }) => {
                assert_eq!(reported, deadline);
                assert!(command.contains(&format!("-i {hung_phy} -link -g")), "{command}");
            }
            other => panic!("expected TimedOut, got {other:?}"),
        }
        assert!(hung_after >= deadline && hung_after < deadline + Duration::from_secs(2), "{hung_after:?}");
    });
    let installed = std::fs::canonicalize(host.tool()).expect("installed tool");
    let gone = (0..50).any(|_| {
        std::thread::sleep(Duration::from_millis(40));
        processes_running(&installed).is_empty()
    });
    assert!(gone, "the hung tool still runs: {:?}", processes_running(&installed));
}

fn the_concurrency_limit_holds() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let delay = Duration::from_millis(400);
    let delay_ms = u64::try_from(delay.as_millis()).expect("small");
    let slow: Vec<(u32, NetworkOverlay)> = host
        .chips()
        .iter()
        .map(|(logic_id, _)| (*logic_id, NetworkOverlay { tool_delay_ms: Some(delay_ms), ..Default::default() }))
        .collect();
    host.overlay(&slow);
    let phys: Vec<u32> = host.chips().iter().map(|(_, phy)| *phy).take(6).collect();
    let elapsed_with = |concurrency: usize| {
        let tool = host.runner(Duration::from_secs(20), concurrency);
        block_on(async {
            let started = Instant::now();
            let calls = phys.iter().map(|phy| {
                let tool = tool.clone();
                let phy = *phy;
                tokio::spawn(async move { tool.link_state(phy).await })
            });
            for call in calls.collect::<Vec<_>>() {
                assert_eq!(call.await.expect("task").expect("link"), LinkState::Up);
            }
            started.elapsed()
        })
    };
    // Six calls of 400 ms, two at a time: three rounds; six at a time: one.
    let limited = elapsed_with(2);
    assert!(limited >= delay * 3, "six 400 ms calls, two at a time, took {limited:?}");
    let unlimited = elapsed_with(6);
    assert!(unlimited < delay * 3, "six at a time took {unlimited:?}");
}

fn a_failing_tool_is_reported_with_its_first_stderr_line() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let tool = host.runner(Duration::from_secs(10), 4);
    match block_on(tool.link_state(99)) {
        Err(Error::Failed { command, status, stderr }) => {
            assert_eq!(status.code(), Some(i32::from(dcmi_sim::hccn_tool::EXIT_FAILED)));
            assert_eq!(stderr, "hccn_tool: device 99 not found");
            assert!(command.ends_with("hccn_tool -i 99 -link -g"), "{command}");
        }
        other => panic!("expected Failed, got {other:?}"),
    }
    let inference = Host::new("atlas-300i-pro", |_| {});
    let (_, phy) = inference.chips()[0];
    let error = block_on(inference.runner(Duration::from_secs(10), 1).stat(phy)).expect_err("a 310P has no port");
    assert!(error.to_string().contains("does not support this command"), "{error}");
}

fn oversized_output_and_a_missing_tool_are_errors() {
    let host = Host::new("atlas-800t-a2", |_| {});
    let (_, phy) = host.chips()[0];
    let small = HccnTool::builder().path(host.tool()).output_limit(64).build();
    match block_on(small.stat(phy)) {
        Err(Error::OutputTooLarge { limit, .. }) => assert_eq!(limit, 64),
        other => panic!("expected OutputTooLarge, got {other:?}"),
    }
    let missing = HccnTool::builder().path(host.host.path("usr/local/Ascend/driver/tools/absent")).build();
    assert!(matches!(block_on(missing.link_state(phy)), Err(Error::Spawn { .. })));
}
