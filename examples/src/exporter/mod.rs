//! `npu-exporter`: a Prometheus exporter for Ascend NPUs.
//!
//! A background sampler refreshes a [`snapshot::Snapshot`] on per-group intervals; the first scrape after a change
//! renders the latest snapshot through prometheus-client, later ones serve those bytes ([`scrape_cache`]), and no
//! scrape waits on the driver. Pod labels come from the kubelet's
//! PodResources API. See `docs/npu-exporter.md` for the metric table, flags and measured figures.
#![deny(missing_docs)]

pub mod app;
pub mod basic_auth;
pub mod catalogue;
pub mod cli;
pub mod device_id;
pub mod duration_text;
pub mod exposition_format;
pub mod http_server;
pub mod metric_group;
pub mod metric_table;
pub mod pod_attribution;
pub mod pod_resources_watch;
pub mod render;
pub mod sample;
pub mod sampler_source;
pub mod scrape_cache;
pub mod selection;
pub mod series_labels;
pub mod snapshot;
pub mod tls;
pub mod web_config;
