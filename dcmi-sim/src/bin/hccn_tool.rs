//! A simulated `hccn_tool` (the Ascend driver's network tool), answering from a dcmi-sim topology: see
//! `dcmi_sim::hccn_tool`. A fake host built by `dcmi-sim fake-host` has it at
//! `/usr/local/Ascend/driver/tools/hccn_tool`.

use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let mut arguments = std::env::args_os();
    // The path it was started as, not the resolved executable: a fake host's tool may be a link to the build.
    let program = arguments.next().map(PathBuf::from).filter(|path| path.components().count() > 1);
    let program = program.or_else(|| std::env::current_exe().ok()).unwrap_or_default();
    let args: Vec<String> = arguments.map(|arg| arg.to_string_lossy().into_owned()).collect();
    let code = dcmi_sim::hccn_tool::run(&program, &args, &mut std::io::stdout().lock(), &mut std::io::stderr().lock());
    ExitCode::from(code)
}
