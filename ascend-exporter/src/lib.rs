//! The Prometheus exporter pipeline for Huawei Ascend NPUs, as a library: what the `npu-exporter` program runs, for
//! agents that want the same metrics inside their own process.
//!
//! The pipeline, stage by stage:
//!
//! | stage | items |
//! |---|---|
//! | a background sampler (from `ascend-dcmi`) that reads every chip on per-group intervals, with deadlines | [`SamplerSource`] over [`ascend_dcmi::Sampler`] |
//! | its state at one moment, which scrapes read without waiting on the driver | [`Snapshot`], [`ChipSnapshot`], [`SnapshotSource`], [`SharedSnapshot`] |
//! | the metric catalogue: native `ascend_npu_*` names and Huawei's npu-exporter names | [`catalogue`] ([`catalogue::CATALOGUE`]), [`NamingMode`] |
//! | the metric-selection file: groups, intervals, skipped reads, served metrics | [`Selection`] |
//! | rendering, OpenMetrics or text 0.0.4 | [`RenderPlan`], [`SnapshotCollector`], [`Exposition`], [`ExpositionFormat`] |
//! | one rendered body per sampler round, plain and (when asked for) gzip, served as shared bytes | [`ScrapeCache`], [`ContentCoding`] |
//! | which containers hold which chip, from the kubelet's PodResources API | [`PodResourcesWatch`], [`SharedAttribution`], [`PodAttribution`] |
//! | network readings through the driver's `hccn_tool` | [`network`] |
//! | the program: its flags, the HTTP server (TLS, basic auth, headers from the exporter-toolkit web config) and the wiring of all of the above | feature `cli`: [`program`] ([`program::Args`], [`program::run`], [`program::Exporter`]), [`web_config`] |
//!
//! Every error is an [`Error`], naming the file, key, address or driver step at fault.
//!
//! Device ids in PodResources answers are read back to chips with the device plugin's own naming
//! ([`ascend_node::naming::ResourceNaming::parse_device_id`]), configured by the same prefix and renames as the plugin
//! (`--device-plugin.resource-prefix`, `--device-plugin.rename`, or the plugin's `ASCEND_DP_*` variables).
//!
//! # Example
//!
//! Rendering a snapshot needs no driver: any [`SnapshotSource`] will do. This one is filled by hand. On a host with
//! NPUs, [`SamplerSource`] is the source (`examples/serve_metrics.rs` runs it on the simulated driver).
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//!
//! use ascend_dcmi::{Celsius, ChipIds, LogicId, PhyId};
//! use ascend_exporter::{
//!     ChipSnapshot, Exposition, ExpositionFormat, NamingMode, RenderPlan, Selection, SharedAttribution, SharedSnapshot,
//!     Snapshot, SnapshotCollector,
//! };
//!
//! let ids = ChipIds { logic: LogicId(0), phy: PhyId(0), locator: None };
//! let mut chip = ChipSnapshot::new(ids);
//! chip.temperature = Some(Celsius(47));
//! let snapshot = Arc::new(SharedSnapshot::new());
//! snapshot.publish(Snapshot { published_at: Instant::now(), driver_version: None, cards: None, chips: vec![chip] });
//!
//! let plan = RenderPlan::new(NamingMode::Native, &Selection::default());
//! let collector = SnapshotCollector::new(snapshot, Arc::new(SharedAttribution::new()), plan, "0.1.0");
//! let body = Exposition::new(collector).render(ExpositionFormat::OpenMetrics);
//! assert!(body.lines().any(|line| line.starts_with("ascend_npu_temperature_celsius{") && line.ends_with(" 47")));
//! assert!(body.ends_with("# EOF\n"));
//! ```
//!
//! The whole exporter, as the program runs it (feature `cli`; needs `libdcmi.so`, or `dcmi-sim` pointed at by
//! `--dcmi.library`):
//!
//! ```no_run
//! # #[cfg(feature = "cli")]
//! # async fn example() -> ascend_exporter::Result<()> {
//! use clap::Parser;
//!
//! let args = ascend_exporter::program::Args::parse_from(["npu-exporter", "--web.listen-address=127.0.0.1:9400"]);
//! ascend_exporter::program::run(args, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! # Features
//!
//! - `cli`: the `npu-exporter` program ([`program`]: `Args`, `run`, `Exporter`; [`web_config`]) with its HTTP
//!   server (hyper, rustls, bcrypt). Without it the crate samples, attributes and renders, and leaves serving the
//!   bytes to the caller's own HTTP stack.
//!
//! See `docs/npu-exporter.md` for the metric table, the flags, the deployment and the measured figures.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

#[cfg(feature = "cli")]
mod basic_auth;
#[cfg(feature = "cli")]
mod body_files;
pub mod catalogue;
mod content_coding;
mod error;
mod exposition_format;
#[cfg(feature = "cli")]
mod http_server;
mod metric_def;
mod metric_group;
#[cfg(test)]
mod metric_table;
pub mod network;
mod pod_attribution;
mod pod_resources_watch;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod program;
mod quality_values;
mod render;
mod sample;
mod sampler_source;
mod scrape_cache;
#[cfg(feature = "cli")]
mod scrape_negotiation;
mod selection;
#[cfg(feature = "cli")]
mod sendfile_stream;
mod series_labels;
mod snapshot;
mod text_encoder;
#[cfg(feature = "cli")]
mod tls;
#[cfg(feature = "cli")]
#[cfg_attr(docsrs, doc(cfg(feature = "cli")))]
pub mod web_config;

pub use content_coding::ContentCoding;
pub use error::{ConfigFile, Error, Result};
pub use exposition_format::ExpositionFormat;
pub use pod_attribution::{AssignedDevices, ContainerAssignment, ContainerRef, PodAttribution, SharedAttribution};
pub use pod_resources_watch::PodResourcesWatch;
pub use render::{Exposition, NamingMode, RenderPlan, SnapshotCollector};
pub use sampler_source::SamplerSource;
pub use scrape_cache::{ScrapeCache, DEFAULT_MAX_BODY_AGE};
pub use selection::{GroupChoice, Selection};
pub use snapshot::{ChipSnapshot, GroupFreshness, Reading, SharedSnapshot, Snapshot, SnapshotRevision, SnapshotSource};
