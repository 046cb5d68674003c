//! `ascend-smi`: Ascend NPUs at a glance. See `ascend_tools::smi`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_tools::smi::cli::main_with_args(std::env::args_os()).into()
}
