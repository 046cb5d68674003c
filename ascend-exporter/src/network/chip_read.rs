//! One group's round on one chip: the `hccn_tool` calls, each under the runner's deadline, and what they gave.
//!
//! Every call is independent: a failed call leaves only its own readings out (Huawei's exporter does the same per
//! call in collectNetworkInfo and collectNetworkNpuInfo, Ascend/mind-cluster
//! component/npu-exporter/collector/metrics/collector_for_network.go). A call that timed out is the exception: the
//! tool hangs on this chip, and the chip's queries take turns (`ascend_hccn::HccnTool`), so each further call would
//! hold the chip for another deadline; the round's remaining calls are not made and the round ends after one deadline.

use std::future::Future;

use ascend_hccn::{Error, HccnTool, UbPort};

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
/// ports from earlier rounds: when its port list cannot be read, they are reported without readings (the link as
/// unknown, as Huawei's exporter, which lists the ports once, shows a port whose calls fail) and not called.
pub async fn read_chip(
    tool: &HccnTool,
    group: NetworkGroup,
    target: NetworkTarget,
    known_ports: &[PortName],
) -> ChipRound {
    let mut failures = Failures::default();
    let read = match target {
        NetworkTarget::Training { phy } => read_training(tool, group, phy.0, &mut failures).await,
        NetworkTarget::Ub { logic, .. } => match failures.keep(tool.ub_ports(logic.0).await) {
            Some(ports) => {
                let ports = ports.iter().map(|info| UbPort { logic_id: logic.0, udie: info.udie, port: info.port });
                read_ub(tool, group, ports.collect(), &mut failures).await
            }
            None => unread_ports(group, known_ports),
        },
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

async fn read_ub(tool: &HccnTool, group: NetworkGroup, ports: Vec<UbPort>, failures: &mut Failures) -> ChipRead {
    let name = |port: UbPort| Some(PortName { udie: port.udie, port: port.port });
    match group {
        NetworkGroup::Network => {
            let mut read = Vec::with_capacity(ports.len());
            for port in ports {
                let link = failures.call(tool.ub_link_state(port)).await;
                let speed = failures.call(tool.ub_speed(port)).await;
                let bandwidth = failures.call(tool.ub_bandwidth(port)).await;
                let readings = LinkReadings {
                    link,
                    speed_bits_per_second: speed.flatten().map(|gbps| gbps as f64 * BITS_PER_GIGABIT),
                    link_ups: None,
                    bandwidth,
                };
                read.push(PortReadings { port: name(port), readings });
            }
            ChipRead::Network(read)
        }
        // Huawei's exporter reads no RoCE counters on Ascend950; `NetworkTarget::reads` keeps this arm unused.
        NetworkGroup::Roce => ChipRead::Roce(Vec::new()),
        NetworkGroup::Optical => {
            let mut read = Vec::with_capacity(ports.len());
            for port in ports {
                let optical = failures.call(tool.ub_optical(port)).await.map(OpticalReadings::Ub);
                read.push(PortReadings { port: name(port), readings: optical });
            }
            ChipRead::Optical(read)
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;
    use crate::network::readings::{ChipNetwork, GroupReadings};

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
