//! The doctor's driver checks from your own tooling (a node-problem agent, a pipeline that gates a node before it
//! joins a pool): run against a fake Atlas host laid out by dcmi-sim, printed as the binary prints them, and judged
//! from the typed results.
//!
//! ```text
//! cargo run -p ascend-doctor --example check_fake_host              # a fake Atlas 800T A2
//! cargo run -p ascend-doctor --example check_fake_host -- /         # this machine
//! ```
//!
//! Run as root, the example fails if a check of the driver section fails on the fake host (its driver files, device
//! nodes and the simulated `libdcmi.so` are all in place, root-owned); on a real host the report is the answer.

use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::time::Duration;

use ascend_doctor::DoctorOptions;
use ascend_doctor::{Section, Status};

use dcmi_sim::fake_host::{FakeHost, FakeHostOptions};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let scratch = tempfile::tempdir()?;
    let (root, fake) = match std::env::args().nth(1) {
        Some(root) => (PathBuf::from(root), false),
        None => {
            let topology = dcmi_sim::samples::by_name("atlas-800t-a2").ok_or("no sample atlas-800t-a2")?.topology()?;
            let host = FakeHost::build(&topology, scratch.path(), &FakeHostOptions::default())?;
            std::env::set_var(dcmi_sim::CONFIG_ENV, &host.topology);
            (host.root, true)
        }
    };
    let root_text = root.display().to_string();
    // What `ascend-doctor --root ROOT --section driver` runs.
    let mut options = DoctorOptions::for_root(&root, Duration::from_secs(10))?;
    options.sections = vec![Section::Driver];
    let found = ascend_doctor::run(&options);
    print!("{}", ascend_doctor::render_text(&found, &root_text));

    let failed: Vec<&str> = found
        .checks
        .iter()
        .filter(|check| check.section == Section::Driver && check.status == Status::Fail)
        .map(|check| check.id.as_str())
        .collect();
    // The fake host's files belong to whoever built it: only root's pass the library ownership rule (and get
    // character device nodes), as on a server.
    let built_by_root = std::fs::metadata(&root)?.uid() == 0;
    if fake && !built_by_root {
        println!("(not run as root: the fake host's library is yours, so the ownership check fails as it should)");
    } else if fake && !failed.is_empty() {
        return Err(format!("driver checks failed on the fake host: {}", failed.join(", ")).into());
    }
    Ok(())
}
