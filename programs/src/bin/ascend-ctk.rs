//! `ascend-ctk`: the Ascend container toolkit (hook, runtime, CDI specs, runtime configuration).
//! Invoked through a link named `ascend-runtime`, it acts as the OCI runtime in front of runc.
#![forbid(unsafe_code)]

fn main() -> std::process::ExitCode {
    ascend_oci::program::main()
}
