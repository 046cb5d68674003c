//! Network readings through the driver's `hccn_tool`: Huawei's `network`, `roce` and `optical` metric groups.
//!
//! [`NetworkSampler`] runs one background task per group (default every 60 s, as Huawei's exporter) that reads each
//! chip with a network port through [`ascend_hccn::HccnTool`] and keeps the results in a [`NetworkStore`];
//! [`NetworkSource`] hands them to scrapes with the driver's snapshot (each chip's [`ChipNetwork`] in
//! [`ChipSnapshot::hccn`](crate::ChipSnapshot::hccn)), and the [`catalogue`](crate::catalogue::CATALOGUE) holds
//! the metrics they give, in both naming schemes.
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//!
//! use ascend_exporter::network::{NetworkGroup, NetworkSampler, NetworkSource};
//! use ascend_exporter::{NamingMode, SnapshotSource};
//!
//! /// `chips` is the driver's source (a `SamplerSource`); call on a tokio runtime.
//! fn with_network(chips: Arc<dyn SnapshotSource>) -> (NetworkSampler, NetworkSource) {
//!     let tool = ascend_hccn::HccnTool::builder().deadline(Duration::from_secs(5)).build();
//!     let groups = NetworkGroup::ALL.map(|group| (group, group.default_interval()));
//!     let sampler = NetworkSampler::spawn(tool, Arc::clone(&chips), &groups, NamingMode::Native);
//!     let source = NetworkSource::new(chips, sampler.store());
//!     (sampler, source)
//! }
//! ```

pub(crate) mod catalogue;
mod chip_read;
mod group;
mod readings;
mod sampler;
mod source;
mod store;
mod target;

pub use group::NetworkGroup;
pub use readings::{ChipNetwork, GroupReadings, LinkReadings, OpticalReadings, PortName, PortReadings};
pub use sampler::NetworkSampler;
pub use source::NetworkSource;
pub use store::NetworkStore;
