//! One temperature read on dcmi-sim answering instantly: through the raw `dcmi-sys` function pointer, through the
//! safe [`ascend_dcmi::Chip::temperature`], and through the [`ascend_dcmi::DeviceManager`] trait (which looks the
//! chip up by logic id on every call). The safe path should cost within 10% of the raw one.

use std::hint::black_box;
use std::os::raw::c_int;

use ascend_benches::sim::SimHost;
use ascend_dcmi::{DeviceManager, LogicId};
use criterion::Criterion;
use dcmi_sys::DcmiLib;

const SIM_SAMPLE: &str = "atlas-800t-a2";

fn main() {
    let host = SimHost::start(SIM_SAMPLE).unwrap_or_else(|error| panic!("dcmi-sim is needed: {error}"));
    let dcmi = host.dcmi().expect("dcmi-sim loads");
    let chip = dcmi.chip(LogicId(0)).expect("chip 0 exists");
    let locator = chip.ids().locator;

    // SAFETY: the simulator exports every function of the header the bindings were generated from, with the same
    // signatures; opening it again only adds a reference to the mapping `dcmi` already loaded.
    let raw = unsafe { DcmiLib::new(host.library()) }.expect("dcmi-sim opens");
    let init = *raw.dcmi_init.as_ref().expect("dcmi_init is exported");
    // SAFETY: dcmi_init takes no arguments and may be called again after the safe handle's initialisation.
    assert_eq!(unsafe { init() }, 0, "dcmi_init");
    let temperature = *raw.dcmi_get_device_temperature.as_ref().expect("dcmi_get_device_temperature is exported");

    let mut criterion = Criterion::default().configure_from_args();
    let mut group = criterion.benchmark_group("safe_vs_raw/temperature");
    group.bench_function("raw_fn_pointer", |bench| {
        bench.iter(|| {
            let mut celsius: c_int = 0;
            // SAFETY: card and device come from the simulator's own enumeration; the out pointer is valid.
            let code = unsafe { temperature(locator.card.0, locator.device.0, &mut celsius) };
            assert_eq!(code, 0, "dcmi_get_device_temperature");
            black_box(celsius)
        });
    });
    group.bench_function("safe_chip", |bench| {
        bench.iter(|| black_box(chip.temperature().expect("temperature")));
    });
    group.bench_function("safe_device_manager", |bench| {
        bench.iter(|| black_box(DeviceManager::temperature(&dcmi, LogicId(0)).expect("temperature")));
    });
    group.finish();
    criterion.final_summary();
}
