//! The sampler, as an exporter or a health loop uses it: every chip's temperature, power and utilisation read on
//! worker threads with a deadline, then read back without waiting on the driver.
//!
//! ```text
//! cargo run -p ascend-dcmi --example sample_chips                 # on dcmi-sim (an Atlas 800I A3, 16 chips)
//! cargo run -p ascend-dcmi --example sample_chips -- --driver     # on this machine's driver
//! ```
//!
//! Two rounds of the chip-state and utilisation groups are polled on demand (`Sampler::poll_groups`; `Sampler::spawn`
//! polls every group on its own interval instead), each round's summary printed, then each chip's values. The example
//! fails if a round leaves a chip out or a chip has no fresh temperature.

use std::sync::Arc;
use std::time::Instant;

use ascend_dcmi::sampler::{GroupSet, MetricGroup, Sampler, SamplerConfig};
use ascend_dcmi::{Dcmi, DeviceManager, UtilizationKind};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let on_driver = std::env::args().nth(1).is_some_and(|arg| arg == "--driver");
    let mut builder = Dcmi::builder();
    if !on_driver {
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800i-a3");
        // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership
        // rule is for the driver's libdcmi.so.
        builder = builder.library_path(dcmi_sim::library_path()?).verify_library_ownership(false);
    }
    let manager: Arc<dyn DeviceManager> = Arc::new(builder.init()?);
    let sampler = Sampler::new(manager, SamplerConfig::default())?;
    let groups = GroupSet::of(MetricGroup::ChipState).with(MetricGroup::Utilization);
    for round in 1..=2 {
        let summary = sampler.poll_groups(groups)?;
        println!(
            "round {round}: {} chips, {} completed, {} timed out, in {:?}",
            summary.chips, summary.completed, summary.timed_out, summary.elapsed
        );
        if summary.completed != summary.chips {
            return Err(format!("round {round} left {} chips out", summary.chips - summary.completed).into());
        }
    }

    let now = Instant::now();
    let mut missing = Vec::new();
    sampler.visit(|chip| {
        let state = chip.state();
        let temperature = state.temperature.fresh().map(|celsius| celsius.0);
        let power = state.power.fresh().map(|power| power.watts().0);
        let aicore = chip.utilization().get(UtilizationKind::AiCore).fresh().map(|percent| percent.get());
        let age = chip.group(MetricGroup::ChipState).age(now);
        println!("{}: {temperature:?} °C, {power:?} W, AI core {aicore:?} %, read {age:?} ago", chip.ids());
        if temperature.is_none() {
            missing.push(chip.ids().to_string());
        }
    });
    if !missing.is_empty() {
        return Err(format!("no fresh temperature for {}", missing.join(", ")).into());
    }
    Ok(())
}
