//! One temperature read on dcmi-sim answering instantly, on each DCMI API family: through the raw `dcmi-sys`
//! function pointer, through the safe [`ascend_dcmi::Chip::temperature`], and through the
//! [`ascend_dcmi::DeviceManager`] trait (which looks the chip up by logic id on every call). The safe path should
//! cost within 10% of the raw one on both families: V1 (`dcmi_get_device_temperature(card, device)` on an Atlas
//! 800T A2) and V2 (`dcmiv2_get_device_temperature(logic id)` on an Atlas 950).
//!
//! With `--bench`, the ratios follow: criterion measures the three paths one after the other, so a machine that
//! speeds up or slows down between them (these are shared VMs) moves the ratio by as much as the difference being
//! measured. The interleaved figure times a batch of each path in turn, round after round (the order rotating), and
//! takes the median of the per-round ratios; it goes to stdout and, as JSON, to the file named by
//! `ASCEND_BENCH_SAFE_VS_RAW_JSON`.
// The raw side of the comparison calls the bindings directly.
#![allow(unsafe_code)]

use std::hint::black_box;
use std::os::raw::c_int;
use std::time::{Duration, Instant};

use ascend_benches::poll_timing::median;
use ascend_benches::sim::SimHost;
use ascend_dcmi::{ApiFamily, Chip, Dcmi, DeviceManager, LogicId};
use criterion::Criterion;
use dcmi_sys::DcmiLib;

/// The sample topology measured for each family. Both run in this one process, one after the other: the
/// simulator is one per process and the second host's initialisation replaces the first one's topology.
const FAMILIES: [(ApiFamily, &str); 2] = [(ApiFamily::V1, "atlas-800t-a2"), (ApiFamily::V2, "atlas-950-8")];
const RESULTS_ENV: &str = "ASCEND_BENCH_SAFE_VS_RAW_JSON";
/// Rounds of the interleaved measurement, and reads per path per round.
const ROUNDS: usize = 301;
const BATCH: usize = 2000;
const CHIP: LogicId = LogicId(0);

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

/// What the measurement of one family needs besides its three reads.
struct Run<'a> {
    criterion: &'a mut Criterion,
    family: ApiFamily,
    sample: &'static str,
    raw_call: &'static str,
    interleave: bool,
}

fn main() {
    let mut criterion = Criterion::default().configure_from_args();
    let interleave = std::env::args().any(|argument| argument == "--bench");
    let mut families = Vec::new();
    for (family, sample) in FAMILIES {
        let host = SimHost::start(sample).unwrap_or_else(|error| panic!("dcmi-sim is needed: {error}"));
        let dcmi = host.dcmi().unwrap_or_else(|error| panic!("dcmi-sim loads {sample}: {error}"));
        assert_eq!(dcmi.api_family(), family, "{sample}");
        let chip = dcmi.chip(CHIP).expect("chip 0 exists");
        // SAFETY: the simulator exports every function of the header the bindings were generated from, with the
        // same signatures; opening it again only adds a reference to the mapping `dcmi` already loaded.
        let raw = unsafe { DcmiLib::new(host.library()) }.expect("dcmi-sim opens");
        let run = Run { criterion: &mut criterion, family, sample, raw_call: "", interleave };
        families.extend(match family {
            ApiFamily::V1 => measure_v1(run, &raw, &dcmi, &chip),
            ApiFamily::V2 => measure_v2(run, &raw, &dcmi, &chip),
        });
    }
    criterion.final_summary();
    if let (true, Ok(path)) = (interleave, std::env::var(RESULTS_ENV)) {
        let record = serde_json::json!({ "rounds": ROUNDS, "batch": BATCH, "families": families });
        let text = serde_json::to_string_pretty(&record).expect("JSON of numbers and strings serialises");
        std::fs::write(&path, text + "\n").unwrap_or_else(|error| panic!("{RESULTS_ENV}={path}: {error}"));
    }
}

/// The V1 pair: `dcmi_get_device_temperature(card, device)` after the raw `dcmi_init`.
fn measure_v1(run: Run<'_>, raw: &DcmiLib, dcmi: &Dcmi, chip: &Chip) -> Option<serde_json::Value> {
    let locator = chip.ids().locator.expect("a V1 sample: chips have (card, device)");
    let init = *raw.dcmi_init.as_ref().expect("dcmi_init is exported");
    // SAFETY: dcmi_init takes no arguments and may be called again after the safe handle's initialisation.
    assert_eq!(unsafe { init() }, 0, "dcmi_init");
    let temperature = *raw.dcmi_get_device_temperature.as_ref().expect("dcmi_get_device_temperature is exported");
    let raw_read = || {
        let mut celsius: c_int = 0;
        // SAFETY: card and device come from the simulator's own enumeration; the out pointer is valid.
        let code = unsafe { temperature(locator.card.0, locator.device.0, &mut celsius) };
        assert_eq!(code, 0, "dcmi_get_device_temperature");
        black_box(celsius);
    };
    compare(Run { raw_call: "dcmi_get_device_temperature", ..run }, raw_read, dcmi, chip)
}

/// The V2 pair: `dcmiv2_get_device_temperature(logic id)` after the raw `dcmiv2_init`, the calls Huawei's tools
/// make on an Ascend950 (there is no card/device pair on V2).
fn measure_v2(run: Run<'_>, raw: &DcmiLib, dcmi: &Dcmi, chip: &Chip) -> Option<serde_json::Value> {
    assert_eq!(chip.ids().locator, None, "a V2 sample: chips have no (card, device)");
    let logic = c_int::try_from(chip.ids().logic.0).expect("a small logic id");
    let init = *raw.dcmiv2_init.as_ref().expect("dcmiv2_init is exported");
    // SAFETY: dcmiv2_init takes no arguments and may be called again after the safe handle's initialisation.
    assert_eq!(unsafe { init() }, 0, "dcmiv2_init");
    let temperature = *raw.dcmiv2_get_device_temperature.as_ref().expect("dcmiv2_get_device_temperature is exported");
    let raw_read = || {
        let mut celsius: c_int = 0;
        // SAFETY: the logic id comes from the simulator's own enumeration; the out pointer is valid.
        let code = unsafe { temperature(logic, &mut celsius) };
        assert_eq!(code, 0, "dcmiv2_get_device_temperature");
        black_box(celsius);
    };
    compare(Run { raw_call: "dcmiv2_get_device_temperature", ..run }, raw_read, dcmi, chip)
}

/// Criterion's medians of the three paths, then (with `--bench`) the interleaved ratios, printed and returned as
/// the family's JSON record. Generic over the raw read so that it is called directly, as the safe reads are.
fn compare(run: Run<'_>, raw_read: impl Fn(), dcmi: &Dcmi, chip: &Chip) -> Option<serde_json::Value> {
    let chip_read = || {
        black_box(chip.temperature().expect("temperature"));
    };
    let manager_read = || {
        black_box(DeviceManager::temperature(dcmi, CHIP).expect("temperature"));
    };
    let label = match run.family {
        ApiFamily::V1 => "v1",
        ApiFamily::V2 => "v2",
    };
    let mut group = run.criterion.benchmark_group(format!("safe_vs_raw/temperature/{label}"));
    group.bench_function("raw_fn_pointer", |bench| bench.iter(&raw_read));
    group.bench_function("safe_chip", |bench| bench.iter(chip_read));
    group.bench_function("safe_device_manager", |bench| bench.iter(manager_read));
    group.finish();
    if !run.interleave {
        return None;
    }

    let mut paths = [
        TimedPath::new("raw_fn_pointer", raw_read),
        TimedPath::new("safe_chip", chip_read),
        TimedPath::new("safe_device_manager", manager_read),
    ];
    for round in 0..ROUNDS {
        for offset in 0..paths.len() {
            let path = &mut paths[(round + offset) % 3];
            path.times.push(batch(path.read.as_mut()));
        }
    }
    let raw_times = paths[0].times.clone();
    println!(
        "\n{} ({}, {}): {ROUNDS} rounds of {BATCH} reads per path, median of per-round ratios to raw",
        run.family, run.sample, run.raw_call
    );
    let mut ratios = serde_json::Map::new();
    for TimedPath { name, times, .. } in &paths {
        let ratio = median_ratio(times, &raw_times);
        let per_batch = median(times).expect("ROUNDS batches were timed");
        let per_read_ns = per_batch.as_secs_f64() * 1e9 / BATCH as f64;
        println!("{name:<20} {per_read_ns:>8.1} ns per read (median batch)  ratio {ratio:.3}");
        ratios.insert((*name).to_owned(), serde_json::json!({ "ratio_to_raw": ratio, "median_ns": per_read_ns }));
    }
    Some(serde_json::json!({
        "family": run.family.as_str(),
        "sample": run.sample,
        "raw_call": run.raw_call,
        "paths": ratios,
    }))
}
