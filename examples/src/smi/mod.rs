//! `ascend-smi`: the NPUs of a host at a glance, like `npu-smi`, over any [`ascend_dcmi::DeviceManager`].
//!
//! [`collect::Collector`] reads every chip with a deadline into a [`schema::HostReport`]; [`table`], [`details`] and
//! [`health_view`] render it as text, `serde_json` as the JSON documented in `docs/ascend-smi-json.md`;
//! [`watch`] redraws it in place; [`events`] follows fault events; [`exit_code`] turns a report into the exit status.

pub mod cli;
pub mod collect;
pub mod details;
pub mod events;
pub mod exit_code;
pub mod fault_meaning;
pub mod health_view;
pub mod schema;
pub mod sim;
pub mod table;
pub mod time;
pub mod watch;
