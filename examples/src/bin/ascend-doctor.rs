//! `ascend-doctor`: checks an Ascend NPU node in troubleshooting order. See `ascend_tools::doctor`.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_tools::doctor::cli::main_with_args(std::env::args_os())
}
