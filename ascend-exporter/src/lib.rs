//! The Prometheus exporter pipeline for Huawei Ascend NPUs, as a library: what the `npu-exporter` binary runs, for
//! agents that want the same metrics inside their own process.
//!
//! The pipeline, one module per stage:
//!
//! | stage | module |
//! |---|---|
//! | a background sampler (from `ascend-dcmi`) that reads every chip on per-group intervals, with deadlines | [`sampler_source`] |
//! | its state at one moment, which scrapes read without waiting on the driver | [`snapshot`] |
//! | the metric catalogue: native `ascend_npu_*` names and Huawei's npu-exporter names | [`catalogue`], [`render::NamingMode`] |
//! | rendering through prometheus-client, OpenMetrics or text 0.0.4 | [`render`], [`exposition_format`] |
//! | one rendered body per sampler round, plain and (when asked for) gzip, served as shared bytes | [`scrape_cache`], [`content_coding`] |
//! | which containers hold which chip, from the kubelet's PodResources API | [`pod_attribution`], [`pod_resources_watch`] |
//! | the exporter-toolkit web config: TLS, basic auth, headers | [`web_config`], [`tls`], [`basic_auth`] |
//! | the metric-selection file: groups, intervals, skipped reads, served metrics | [`selection`] |
//! | HTTP serving of `/metrics`, `/healthz` and `/` | [`http_server`] |
//! | the command-line flags and the wiring of all of the above | [`cli::ExporterArgs`], [`app::run`] |
//!
//! Device ids in PodResources answers are read back to chips with the device plugin's own naming
//! ([`ascend_node::ResourceNaming::parse_device_id`]), configured by the same prefix and renames as the plugin
//! (`--device-plugin.resource-prefix`, `--device-plugin.rename`, or the plugin's `ASCEND_DP_*` variables).
//!
//! # Example
//!
//! Rendering a snapshot needs no driver: any [`snapshot::SnapshotSource`] will do. This one is filled by hand.
//!
//! ```
//! use std::sync::Arc;
//! use std::time::Instant;
//!
//! use ascend_dcmi::{Celsius, ChipIds, LogicId, PhyId};
//! use ascend_exporter::exposition_format::ExpositionFormat;
//! use ascend_exporter::pod_attribution::SharedAttribution;
//! use ascend_exporter::render::{Exposition, NamingMode, RenderPlan, SnapshotCollector};
//! use ascend_exporter::selection::Selection;
//! use ascend_exporter::snapshot::{ChipSnapshot, SharedSnapshot, Snapshot};
//!
//! let ids = ChipIds { logic: LogicId(0), phy: PhyId(0), locator: None };
//! let mut chip = ChipSnapshot::new(ids);
//! chip.temperature = Some(Celsius(47));
//! let snapshot = Arc::new(SharedSnapshot::new());
//! snapshot.publish(Snapshot { published_at: Instant::now(), driver_version: None, cards: None, chips: vec![chip] });
//!
//! let plan = RenderPlan::new(NamingMode::Native, &Selection::default());
//! let collector = SnapshotCollector::new(snapshot, Arc::new(SharedAttribution::new()), plan, "0.1.0");
//! let body = Exposition::new(collector).render(ExpositionFormat::OpenMetrics)?;
//! assert!(body.lines().any(|line| line.starts_with("ascend_npu_temperature_celsius{") && line.ends_with(" 47")));
//! assert!(body.ends_with("# EOF\n"));
//! # Ok::<(), std::fmt::Error>(())
//! ```
//!
//! The whole exporter, as the binary runs it (needs `libdcmi.so`, or `dcmi-sim` pointed at by `--dcmi.library`):
//!
//! ```no_run
//! use clap::Parser;
//!
//! # async fn example() -> ascend_exporter::Result<()> {
//! let args = ascend_exporter::cli::ExporterArgs::parse_from(["npu-exporter", "--web.listen-address=127.0.0.1:9400"]);
//! ascend_exporter::app::run(args, async { let _ = tokio::signal::ctrl_c().await; }).await
//! # }
//! ```
//!
//! See `docs/npu-exporter.md` for the metric table, the flags, the deployment and the measured figures.
#![cfg_attr(docsrs, feature(doc_cfg))]
#![forbid(unsafe_code)]

pub mod app;
pub mod basic_auth;
pub mod catalogue;
pub mod cli;
pub mod content_coding;
pub mod error;
pub mod exposition_format;
pub mod http_server;
mod metric_def;
pub mod metric_group;
pub mod metric_table;
pub mod network;
pub mod pod_attribution;
pub mod pod_resources_watch;
mod quality_values;
pub mod render;
pub mod sample;
pub mod sampler_source;
pub mod scrape_cache;
pub mod scrape_negotiation;
pub mod selection;
pub mod series_labels;
pub mod snapshot;
pub mod tls;
pub mod web_config;

pub use error::{ConfigFile, Error, Result};
