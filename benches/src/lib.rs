//! Support for the criterion benches of the DCMI polling hot path (`benches/`): the in-process fake manager, the
//! simulator set-up, and the serial loop the sampler is compared with.
//!
//! Run them with `cargo bench -p ascend-benches` (short: `-- --warm-up-time 1 --measurement-time 3`):
//!
//! * `safe_vs_raw`: one temperature read on dcmi-sim (zero latency) through the raw `dcmi-sys` function pointer,
//!   through [`ascend_dcmi::Chip::temperature`], and through the [`ascend_dcmi::DeviceManager`] trait.
//! * `full_poll`: [`ascend_dcmi::Sampler::poll`] against [`serial::SerialPoller`] making the same calls, for 8, 64
//!   and 256 fake chips at 0 ms and at `ASCEND_BENCH_LATENCY_US` (default 1000 µs) per call, and on dcmi-sim's
//!   Atlas 800T A2 with 0 and 1 ms injected latency. After the criterion runs it prints how far each sampler poll
//!   is from the ideal, one chip's chain of calls times the number of concurrency waves.
//! * `fixed_cost`: the sampler's own cost per chip per poll (hand-offs, deadline bookkeeping, commit) with a driver
//!   that answers instantly, and the readers' cost (`visit`, `snapshot`).
//!
//! The figures measured on the team's 2-core VM are in the `ascend_dcmi::sampler` module documentation.

#![forbid(unsafe_code)]

/// The in-process fake [`ascend_dcmi::DeviceManager`] of the sampler tests, shared so that tests and benches
/// measure the same thing.
#[path = "../../ascend-dcmi/tests/sampler_fake/mod.rs"]
pub mod fake;
pub mod serial;
pub mod sim;
