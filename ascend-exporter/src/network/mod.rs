//! Network readings through the driver's `hccn_tool`: Huawei's `network`, `roce` and `optical` metric groups.
//!
//! [`NetworkSampler`] runs one background task per group (default every 60 s, as Huawei's exporter) that reads each
//! chip with a network port through [`ascend_hccn::HccnTool`] and keeps the results in a [`NetworkStore`];
//! [`NetworkSource`] hands them to scrapes with the driver's snapshot, and [`catalogue`] describes the metrics they
//! give, in both naming schemes.

pub mod catalogue;
mod chip_read;
mod group;
mod readings;
mod sampler;
mod source;
mod store;
mod target;

pub use chip_read::{read_chip, ChipRead, ChipRound};
pub use group::NetworkGroup;
pub use readings::{ChipNetwork, GroupReadings, LinkReadings, OpticalReadings, PortName, PortReadings};
pub use sampler::NetworkSampler;
pub use source::NetworkSource;
pub use store::NetworkStore;
pub use target::{network_target, NetworkTarget};
