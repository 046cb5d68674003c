//! Network readings of Huawei Ascend NPUs through the driver's `hccn_tool`: typed parsers of its outputs and an async
//! runner with a deadline per call.
//!
//! Huawei's npu-exporter takes its RoCE, link, bandwidth and optical metrics from
//! `/usr/local/Ascend/driver/tools/hccn_tool`, one process per chip (per UB port on Ascend950), and parses the text
//! it prints (Ascend/mind-cluster, component/ascend-common/devmanager/hccn/hccn_tool.go). This crate does the same
//! with:
//!
//! - one pure parser per command output (`parse_*`), each `&str -> Result<T, ParseError>`, whose error names the
//!   command and the offending line; bad input is an error, never a panic;
//! - [`HccnTool`], which runs the tool on tokio with a deadline that kills a hung child, a limit on concurrent
//!   children shared by every clone, a bound on the output, and one typed method per query.
//!
//! | query | training cards (910, 910B, A3) | Ascend950 |
//! |---|---|---|
//! | link state | [`HccnTool::link_state`] (`-i <phy> -link -g`) | [`HccnTool::ub_link_state`] (`-g -link -i <logic> -u <die> -p <port>`) |
//! | speed | [`HccnTool::link_speed_mbps`] (`-speed -g`) | [`HccnTool::ub_speed`] (`-g -speed`) |
//! | link-up count | [`HccnTool::link_up_count`] (`-link_stat -g`) | |
//! | counters | [`HccnTool::stat`] (`-stat -g`) | [`HccnTool::ub_stat`] (`-g -stat`) |
//! | optical | [`HccnTool::optical`] (`-optical -g`) | [`HccnTool::ub_optical`] (`-g -optical`) |
//! | bandwidth | [`HccnTool::bandwidth`] (`-bandwidth -g`) | [`HccnTool::ub_bandwidth`] (`-g -bandwidth ... -time 100`) |
//! | ports | | [`HccnTool::ub_ports`] (`-g -dev_info -i <logic>`) |
//!
//! `dcmi-sim` ships a simulated `hccn_tool` with the same arguments and formats, driven by its topology files.
//!
//! ```
//! let link = ascend_hccn::parse_link_state("link status: UP\n")?;
//! assert_eq!(link, ascend_hccn::LinkState::Up);
//! let counters = ascend_hccn::parse_stat("packet statistics:\nroce_rx_all_pkt_num:42\n")?;
//! assert_eq!(counters.get("roce_rx_all_pkt_num"), Some(42));
//! # Ok::<(), ascend_hccn::ParseError>(())
//! ```
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

mod bandwidth;
mod error;
mod lanes;
mod link;
mod optical;
mod runner;
mod speed;
mod stat;
mod table;
mod ub_optical;
mod ub_port;

pub use bandwidth::{parse_bandwidth, parse_ub_bandwidth, Bandwidth};
pub use error::{Error, ParseError};
pub use link::{parse_link_state, parse_link_up_count, parse_ub_link_state, LinkState};
pub use optical::{parse_optical, OpticalInfo};
pub use runner::{
    HccnTool, HccnToolBuilder, UbPort, DEFAULT_CONCURRENCY, DEFAULT_DEADLINE, DEFAULT_OUTPUT_LIMIT, DEFAULT_PATH,
};
pub use speed::{parse_speed_mbps, parse_ub_speed};
pub use stat::{parse_stat, parse_ub_stat, StatCounters};
pub use ub_optical::{parse_ub_optical, UbOpticalInfo};
pub use ub_port::{parse_ub_ports, PortType, UbPortInfo};
