//! `ascend-ctk-hook`: the OCI createRuntime hook of `ascend-ctk` on its own, which runc starts on every container
//! start in hook mode. The runtime writes its path into the spec when it is installed beside `ascend-ctk`; it links
//! only the hook's code (`ascend_oci::hook_program_main`).
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_oci::hook_program_main()
}
