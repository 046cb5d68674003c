//! `ascend-doctor`: checks an Ascend NPU node in troubleshooting order. See the `ascend_doctor` crate.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_doctor::program::main_with_args(std::env::args_os())
}
