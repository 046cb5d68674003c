//! `ascend-smi`: Ascend NPUs at a glance. See the `ascend_smi` crate.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_smi::program::main_with_args(std::env::args_os()).into()
}
