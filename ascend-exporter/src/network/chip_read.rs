//! One group's round on one chip: the `hccn_tool` calls, each under the runner's deadline, and what they gave.
//!
//! Every call is independent: a failed call leaves only its own readings out (Huawei's exporter does the same per
//! call in collectNetworkInfo and collectNetworkNpuInfo, Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_network.go). A call that timed out is the exception: the
//! tool hangs on this chip, and the chip's queries take turns (`ascend_hccn::HccnTool`), so each further call would
//! hold the chip for another deadline; the round's remaining calls are not made and the round ends after one deadline.

use std::future::Future;

use ascend_hccn::{Error, HccnTool, LinkState, UbPort};

use super::group::NetworkGroup;
use super::readings::{LinkReadings, OpticalReadings, PortName, PortReadings};
use super::target::NetworkTarget;

const BITS_PER_MEGABIT: f64 = 1e6;
const BITS_PER_GIGABIT: f64 = 1e9;

/// What one round of one group gave on one chip.
#[derive(Debug, Clone, PartialEq)]
pub enum ChipRead {
    /// The `network` group.
    Network(Vec<PortReadings<LinkReadings>>),
    /// The `roce` group.
    Roce(Vec<PortReadings<Option<ascend_hccn::StatCounters>>>),
    /// The `optical` group.
    Optical(Vec<PortReadings<Option<OpticalReadings>>>),
}

/// A round's readings and the first failure among its calls, if any.
#[derive(Debug)]
pub struct ChipRound {
    /// The readings.
    pub read: ChipRead,
    /// The first call that failed, `None` when every call answered.
    pub failure: Option<Error>,
}

/// Collects the first failure of a round's calls, and whether one timed out.
#[derive(Default)]
struct Failures {
    first: Option<Error>,
    timed_out: bool,
}

impl Failures {
    fn keep<T>(&mut self, result: Result<T, Error>) -> Option<T> {
        match result {
            Ok(value) => Some(value),
            Err(error) => {
                self.timed_out |= matches!(error, Error::TimedOut { .. } | Error::DeviceTimedOut { .. });
                self.first.get_or_insert(error);
                None
            }
        }
    }

    /// Makes the call unless an earlier one of the round timed out.
    async fn call<T>(&mut self, query: impl Future<Output = Result<T, Error>>) -> Option<T> {
        if self.timed_out {
            return None;
        }
        let result = query.await;
        self.keep(result)
    }
}

/// Reads `group` on `target` (the caller checks [`NetworkTarget::reads`]). `known_ports` are an Ascend950 chip's
/// ports from earlier rounds (empty before its first listing, and on a training card).
///
/// An Ascend950 chip's `network` round lists its ports with `-g -dev_info`, whose table also gives each port's link
/// state: that one call stands for the `-g -link` per port that Huawei's exporter makes (18 on an Atlas 950 chip),
/// and its state is the same one `-g -link` prints (Huawei's exporter itself counts the ports down from this table,
/// mind-cluster `component/ascend-common/devmanager/hccn/hccn_tool.go`, `GetUBPortsDownSnapshot`). The `optical`
/// round takes the ports known from earlier rounds and lists them only while none is known, as Huawei's exporter
/// lists the ports once at its start (`component/npu-exporter/collector/common/common.go`,
/// `InitNpuDevNetPortInfos`). When the listing fails, the known ports are reported without readings (the link as
/// unknown, as Huawei's exporter shows a port whose calls fail) and not called.
pub async fn read_chip(
    tool: &HccnTool,
    group: NetworkGroup,
    target: NetworkTarget,
    known_ports: &[PortName],
) -> ChipRound {
    let mut failures = Failures::default();
    let read = match target {
        NetworkTarget::Training { phy } => read_training(tool, group, phy.0, &mut failures).await,
        NetworkTarget::Ub { logic, .. } => {
            let listed = if group == NetworkGroup::Network || known_ports.is_empty() {
                failures.keep(tool.ub_ports(logic.0).await).map(|ports| {
                    ports.iter().map(|info| (PortName { udie: info.udie, port: info.port }, Some(info.link))).collect()
                })
            } else {
                Some(known_ports.iter().map(|port| (*port, None)).collect())
            };
            match listed {
                Some(ports) => read_ub(tool, group, logic.0, ports, &mut failures).await,
                None => unread_ports(group, known_ports),
            }
        }
    };
    ChipRound { read, failure: failures.first }
}

/// Ports whose calls were not made, each without readings.
fn unread_ports(group: NetworkGroup, ports: &[PortName]) -> ChipRead {
    fn each<T: Default>(ports: &[PortName]) -> Vec<PortReadings<T>> {
        ports.iter().map(|port| PortReadings { port: Some(*port), readings: T::default() }).collect()
    }
    match group {
        NetworkGroup::Network => ChipRead::Network(each(ports)),
        NetworkGroup::Roce => ChipRead::Roce(each(ports)),
        NetworkGroup::Optical => ChipRead::Optical(each(ports)),
    }
}

async fn read_training(tool: &HccnTool, group: NetworkGroup, phy: u32, failures: &mut Failures) -> ChipRead {
    match group {
        NetworkGroup::Network => {
            // One after another: the tool answers one query of a chip at a time (`HccnTool`'s turns).
            let link = failures.call(tool.link_state(phy)).await;
            let speed = failures.call(tool.link_speed_mbps(phy)).await;
            let link_ups = failures.call(tool.link_up_count(phy)).await;
            let bandwidth = failures.call(tool.bandwidth(phy)).await;
            ChipRead::Network(single_port(LinkReadings {
                link,
                speed_bits_per_second: speed.flatten().map(|mbps| mbps as f64 * BITS_PER_MEGABIT),
                link_ups,
                bandwidth,
            }))
        }
        NetworkGroup::Roce => ChipRead::Roce(single_port(failures.call(tool.stat(phy)).await)),
        NetworkGroup::Optical => {
            ChipRead::Optical(single_port(failures.call(tool.optical(phy)).await.map(OpticalReadings::Training)))
        }
    }
}

/// A training card's one port.
fn single_port<T>(readings: T) -> Vec<PortReadings<T>> {
    vec![PortReadings { port: None, readings }]
}

/// Reads `group` on an Ascend950 chip's `ports`, each with its link state when the round listed it.
async fn read_ub(
    tool: &HccnTool,
    group: NetworkGroup,
    logic_id: u32,
    ports: Vec<(PortName, Option<LinkState>)>,
    failures: &mut Failures,
) -> ChipRead {
    let at = |name: PortName| UbPort { logic_id, udie: name.udie, port: name.port };
    match group {
        NetworkGroup::Network => {
            let mut read = Vec::with_capacity(ports.len());
            for (name, link) in ports {
                let speed = failures.call(tool.ub_speed(at(name))).await;
                let bandwidth = failures.call(tool.ub_bandwidth(at(name))).await;
                let readings = LinkReadings {
                    link,
                    speed_bits_per_second: speed.flatten().map(|gbps| gbps as f64 * BITS_PER_GIGABIT),
                    link_ups: None,
                    bandwidth,
                };
                read.push(PortReadings { port: Some(name), readings });
            }
            ChipRead::Network(read)
        }
        // Huawei's exporter reads no RoCE counters on Ascend950; `NetworkTarget::reads` keeps this arm unused.
        NetworkGroup::Roce => ChipRead::Roce(Vec::new()),
        NetworkGroup::Optical => {
            let mut read = Vec::with_capacity(ports.len());
            for (name, _) in ports {
                let optical = failures.call(tool.ub_optical(at(name))).await.map(OpticalReadings::Ub);
                read.push(PortReadings { port: Some(name), readings: optical });
            }
            ChipRead::Optical(read)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::path::Path;
    use std::time::Instant;

    use super::*;
    use crate::network::readings::{ChipNetwork, GroupReadings};

    /// A stand-in `hccn_tool` in `dir` that appends each call's arguments to `dir/calls` and answers as an
    /// Ascend950 chip with the ports (0, 4) up and (1, 8) down; optical readings fail to parse.
    fn logging_tool(dir: &Path) -> HccnTool {
        let script = dir.join("hccn_tool");
        let bar = "+--------+--------+--------+----------+-------------+------------+";
        let text = format!(
            "#!/bin/sh\necho \"$*\" >> {calls}\ncase \"$2\" in\n\
             -dev_info) printf '%s\\n' '{bar}' '| UdieID | PortID | Speed | PortType | Link Status | Media Type |' \
             '{bar}' '| 0 | 4 | 200 | UB | UP | Optical |' '| 1 | 8 | 200 | UB | DOWN | Optical |' '{bar}' ;;\n\
             -speed) printf '%s\\n' '{bar}' '| UdieID | PortID | PortType | Speed |' '{bar}' \
             \"| $6 | $8 | UB | 200 G |\" '{bar}' ;;\n\
             -bandwidth) printf 'Bandwidth TX: 1.50 MB/sec\\nBandwidth RX: 2.50 MB/sec\\n' ;;\n\
             *) echo unexpected ;;\nesac\n",
            calls = dir.join("calls").display(),
        );
        std::fs::write(&script, text).expect("write the stand-in tool");
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).expect("make it executable");
        HccnTool::builder().path(script).build()
    }

    fn calls(dir: &Path) -> Vec<String> {
        std::fs::read_to_string(dir.join("calls")).unwrap_or_default().lines().map(str::to_owned).collect()
    }

    const UB_CHIP: NetworkTarget =
        NetworkTarget::Ub { phy: ascend_dcmi::PhyId(4), logic: ascend_dcmi::LogicId(0), huawei_optical: true };

    #[tokio::test]
    async fn a_ub_chip_s_links_come_from_one_listing_not_one_call_per_port() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let round = read_chip(&logging_tool(dir.path()), NetworkGroup::Network, UB_CHIP, &[]).await;
        assert!(round.failure.is_none(), "{:?}", round.failure);
        assert_eq!(
            calls(dir.path()),
            [
                "-g -dev_info -i 0",
                "-g -speed -i 0 -u 0 -p 4",
                "-g -bandwidth -i 0 -u 0 -p 4 -time 100",
                "-g -speed -i 0 -u 1 -p 8",
                "-g -bandwidth -i 0 -u 1 -p 8 -time 100",
            ],
            "no -g -link per port"
        );
        let ChipRead::Network(ports) = round.read else { panic!("the network group's readings") };
        let links: Vec<_> = ports.iter().map(|p| (p.port, p.readings.link)).collect();
        let port = |udie, port| Some(PortName { udie, port });
        assert_eq!(links, [(port(0, 4), Some(LinkState::Up)), (port(1, 8), Some(LinkState::Down))]);
        assert_eq!(ports[0].readings.speed_bits_per_second, Some(200e9));
        assert_eq!(ports[1].readings.bandwidth.map(|b| b.rx_megabytes_per_second), Some(2.5));
    }

    #[tokio::test]
    async fn a_ub_chip_s_optical_round_lists_its_ports_only_while_none_is_known() {
        let dir = tempfile::tempdir().expect("temporary directory");
        let tool = logging_tool(dir.path());
        let known = [PortName { udie: 0, port: 4 }, PortName { udie: 1, port: 8 }];
        let round = read_chip(&tool, NetworkGroup::Optical, UB_CHIP, &known).await;
        assert_eq!(calls(dir.path()), ["-g -optical -i 0 -u 0 -p 4", "-g -optical -i 0 -u 1 -p 8"]);
        let ChipRead::Optical(ports) = round.read else { panic!("the optical group's readings") };
        assert_eq!(ports.iter().map(|p| p.port).collect::<Vec<_>>(), known.map(Some));
        std::fs::remove_file(dir.path().join("calls")).expect("clear the log");
        read_chip(&tool, NetworkGroup::Optical, UB_CHIP, &[]).await;
        assert_eq!(calls(dir.path())[0], "-g -dev_info -i 0", "no port known yet: listed first");
        assert_eq!(calls(dir.path()).len(), 3);
    }

    #[test]
    fn ports_known_from_earlier_rounds_are_reported_unread() {
        let port = |udie, port| PortName { udie, port };
        let earlier = |ports: &[PortName]| GroupReadings {
            ports: ports.iter().map(|p| PortReadings { port: Some(*p), readings: LinkReadings::default() }).collect(),
            read_at: Instant::now(),
            last_success: None,
        };
        let chip = ChipNetwork { network: Some(earlier(&[port(0, 4), port(1, 8)])), ..ChipNetwork::default() };
        assert_eq!(chip.known_ports(), [port(0, 4), port(1, 8)]);
        let ChipRead::Network(ports) = unread_ports(NetworkGroup::Network, &chip.known_ports()) else {
            panic!("the network group's readings");
        };
        assert_eq!(ports.len(), 2);
        assert!(ports.iter().all(|p| p.readings == LinkReadings::default()), "no link state: shown as -1");
        assert_eq!(ChipNetwork::default().known_ports(), []);
    }
}
