//! `npu-smi info` from your own program: every chip read with a deadline into a report, printed as the table and
//! summarised from the JSON document (`docs/ascend-smi-json.md`).
//!
//! ```text
//! cargo run -p ascend-smi --example host_table                # on dcmi-sim (an Atlas 300I Duo: two chips a card)
//! cargo run -p ascend-smi --example host_table -- --driver    # on this machine's driver
//! ```
//!
//! The example fails if a chip of the simulated host is missing from the report or was not read.

use std::sync::Arc;

use ascend_dcmi::{Dcmi, DeviceManager};
use ascend_node::{CollectOptions, Collector};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let on_driver = std::env::args().nth(1).is_some_and(|arg| arg == "--driver");
    let mut builder = Dcmi::builder();
    if !on_driver {
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-300i-duo");
        // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership
        // rule is for the driver's libdcmi.so.
        builder = builder.library_path(dcmi_sim::library_path()?).verify_library_ownership(false);
    }
    let dcmi = builder.init()?;
    let expected = dcmi.chips()?.len();
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let report = Collector::new(manager, CollectOptions::default()).collect()?;
    print!("{}", ascend_smi::table::render(&report));

    let json = serde_json::to_value(&report)?;
    println!("JSON schema {}, {} chips, driver {}", json["schema_version"], report.chips.len(), json["driver_version"]);
    if report.chips.len() != expected {
        return Err(format!("the driver lists {expected} chips, the report has {}", report.chips.len()).into());
    }
    if let Some(error) = report.errors.first() {
        return Err(format!("the report has errors, the first: {error:?}").into());
    }
    Ok(())
}
