//! Support for the criterion benches of the DCMI polling hot path (`benches/`): the in-process fake manager, the
//! simulator set-up (sample and replicated topologies), the serial loop the sampler is compared with, and the direct
//! timing of polls too slow for criterion.
//!
//! Run them with `cargo bench -p ascend-benches` (short: `-- --warm-up-time 1 --measurement-time 3`):
//!
//! * `safe_vs_raw`: one temperature read on dcmi-sim (zero latency) through the raw `dcmi-sys` function pointer,
//!   through [`ascend_dcmi::Chip::temperature`], and through the [`ascend_dcmi::DeviceManager`] trait, on each DCMI
//!   API family (`dcmi_get_device_temperature` on an Atlas 800T A2, `dcmiv2_get_device_temperature` on an Atlas
//!   950).
//! * `full_poll`: a full-node poll (every metric of the fast groups, the exporter's default) through the real
//!   [`ascend_dcmi::Dcmi`] on dcmi-sim hosts of 8, 64 and 256 chips: [`ascend_dcmi::Sampler::poll_groups`] with the
//!   exporter's default configuration against [`serial::SerialPoller`] making the same calls, under criterion with
//!   the driver answering at once, and timed directly ([`poll_timing`]) at 2 ms per call against the ideal, one
//!   chip's chain times the number of concurrency waves.
//! * `fixed_cost`: the sampler's own cost per chip per poll (hand-offs, deadline bookkeeping, commit) with a driver
//!   that answers instantly, and the readers' cost (`visit`, `snapshot`).
//!
//! * `simulated_fleet`: the objects of a simulated fleet of NPU nodes for the fake API server, which
//!   `perf-kubectl-ascend` (the `kubectl ascend` section of `benches/run.sh`) seeds.
//!
//! * `audit_log`: our daemons' requests counted from the test bed's API server audit log (`perf-api-requests`,
//!   `perf-fleet`).
//!
//! `benches/run.sh` runs the first two and writes their figures into `docs/performance.md`.

#![forbid(unsafe_code)]

/// The in-process fake [`ascend_dcmi::DeviceManager`] of the sampler tests (ascend-dcmi's feature `fake`), so that
/// tests and benches measure the same thing.
pub use ascend_dcmi::fake;
pub mod audit_log;
pub mod daemon;
pub mod figures_file;
pub mod pod_start;
pub mod poll_timing;
pub mod replicated_topology;
pub mod serial;
pub mod sim;
pub mod simulated_fleet;
