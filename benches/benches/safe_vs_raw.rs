//! One temperature read on dcmi-sim answering instantly: through the raw `dcmi-sys` function pointer, through the
//! safe [`ascend_dcmi::Chip::temperature`], and through the [`ascend_dcmi::DeviceManager`] trait (which looks the
//! chip up by logic id on every call). The safe path should cost within 10% of the raw one.
//!
//! With `--bench`, the ratios follow: criterion measures the three paths one after the other, so a machine that
//! speeds up or slows down between them (these are shared VMs) moves the ratio by as much as the difference being
//! measured. The interleaved figure times a batch of each path in turn, round after round (the order rotating), and
//! takes the median of the per-round ratios; it goes to stdout and, as JSON, to the file named by
//! `ASCEND_BENCH_SAFE_VS_RAW_JSON`.

use std::hint::black_box;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use ascend_benches::poll_timing::median;
use ascend_benches::sim::SimHost;
use ascend_dcmi::{DeviceManager, LogicId};
use criterion::Criterion;
use dcmi_sys::DcmiLib;

const SIM_SAMPLE: &str = "atlas-800t-a2";
const RESULTS_ENV: &str = "ASCEND_BENCH_SAFE_VS_RAW_JSON";
/// Rounds of the interleaved measurement, and reads per path per round.
const ROUNDS: usize = 301;
const BATCH: usize = 2000;

/// The median of per-round ratios `path / raw`.
fn median_ratio(path: &[Duration], raw: &[Duration]) -> f64 {
    let mut ratios: Vec<f64> = path.iter().zip(raw).map(|(p, r)| p.as_secs_f64() / r.as_secs_f64()).collect();
    ratios.sort_by(f64::total_cmp);
    ratios[ratios.len() / 2]
}

/// One path of the interleaved measurement: its reads and the batch times.
struct TimedPath<'a> {
    name: &'static str,
    read: Box<dyn FnMut() + 'a>,
    times: Vec<Duration>,
}

impl<'a> TimedPath<'a> {
    fn new(name: &'static str, read: impl FnMut() + 'a) -> Self {
        TimedPath { name, read: Box::new(read), times: Vec::with_capacity(ROUNDS) }
    }
}

/// Times `BATCH` calls of `read`.
fn batch(read: &mut dyn FnMut()) -> Duration {
    let started = Instant::now();
    for _ in 0..BATCH {
        read();
    }
    started.elapsed()
}

fn main() {
    let host = SimHost::start(SIM_SAMPLE).unwrap_or_else(|error| panic!("dcmi-sim is needed: {error}"));
    let dcmi = host.dcmi().expect("dcmi-sim loads");
    let chip = dcmi.chip(LogicId(0)).expect("chip 0 exists");
    let locator = chip.ids().locator.expect("a V1 sample: chips have (card, device)");

    // SAFETY: the simulator exports every function of the header the bindings were generated from, with the same
    // signatures; opening it again only adds a reference to the mapping `dcmi` already loaded.
    let raw = unsafe { DcmiLib::new(host.library()) }.expect("dcmi-sim opens");
    let init = *raw.dcmi_init.as_ref().expect("dcmi_init is exported");
    // SAFETY: dcmi_init takes no arguments and may be called again after the safe handle's initialisation.
    assert_eq!(unsafe { init() }, 0, "dcmi_init");
    let temperature = *raw.dcmi_get_device_temperature.as_ref().expect("dcmi_get_device_temperature is exported");

    let raw_read = || {
        let mut celsius: c_int = 0;
        // SAFETY: card and device come from the simulator's own enumeration; the out pointer is valid.
        let code = unsafe { temperature(locator.card.0, locator.device.0, &mut celsius) };
        assert_eq!(code, 0, "dcmi_get_device_temperature");
        black_box(celsius)
    };
    let chip_read = || black_box(chip.temperature().expect("temperature"));
    let manager_read = || black_box(DeviceManager::temperature(&dcmi, LogicId(0)).expect("temperature"));

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("safe_vs_raw/temperature");
    group.bench_function("raw_fn_pointer", |bench| bench.iter(raw_read));
    group.bench_function("safe_chip", |bench| bench.iter(chip_read));
    group.bench_function("safe_device_manager", |bench| bench.iter(manager_read));
    group.finish();
    criterion.final_summary();

    if !std::env::args().any(|argument| argument == "--bench") {
        return;
    }
    let mut paths = [
        TimedPath::new("raw_fn_pointer", || {
            let _ = raw_read();
        }),
        TimedPath::new("safe_chip", || {
            let _ = chip_read();
        }),
        TimedPath::new("safe_device_manager", || {
            let _ = manager_read();
        }),
    ];
    for round in 0..ROUNDS {
        for offset in 0..paths.len() {
            let path = &mut paths[(round + offset) % 3];
            path.times.push(batch(path.read.as_mut()));
        }
    }
    let raw_times = paths[0].times.clone();
    println!("\ninterleaved: {ROUNDS} rounds of {BATCH} reads per path, median of per-round ratios to raw");
    let mut ratios = serde_json::Map::new();
    for TimedPath { name, times, .. } in &paths {
        let ratio = median_ratio(times, &raw_times);
        let per_batch = median(times).expect("ROUNDS batches were timed");
        let per_read_ns = per_batch.as_secs_f64() * 1e9 / BATCH as f64;
        println!("{name:<20} {per_read_ns:>8.1} ns per read (median batch)  ratio {ratio:.3}");
        ratios.insert((*name).to_owned(), serde_json::json!({ "ratio_to_raw": ratio, "median_ns": per_read_ns }));
    }
    if let Ok(path) = std::env::var(RESULTS_ENV) {
        let record = serde_json::json!({ "rounds": ROUNDS, "batch": BATCH, "paths": ratios });
        let text = serde_json::to_string_pretty(&record).expect("JSON of numbers and strings serialises");
        std::fs::write(&path, text + "\n").unwrap_or_else(|error| panic!("{RESULTS_ENV}={path}: {error}"));
    }
}
