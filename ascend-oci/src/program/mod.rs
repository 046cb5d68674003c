//! `ascend-ctk` (feature `cli`): the command-line face of this crate; the bundled binary's main is [`main`].
//!
//! Its modules are the program's top level, so they report with `anyhow`: what they return goes to a human on
//! stderr as a chain of contexts, and no caller matches on it; the library they call keeps the typed
//! [`crate::Error`].
//!
//! ```text
//! ascend-ctk hook                       OCI createRuntime/prestart hook (state JSON on stdin)
//! ascend-ctk runtime exec -- <runc args>  edit config.json on create, then exec runc
//! ascend-ctk runtime configure --runtime docker|containerd|crio
//! ascend-ctk cdi generate | cdi list
//! ascend-ctk spec inject --bundle DIR   edit a bundle's config.json without running anything
//! ascend-ctk request parse VALUE        show how ASCEND_VISIBLE_DEVICES is understood
//! ascend-ctk node-setup [--runtime E]   from a container with the host's / at /host: install.sh's work
//! ```
//! A link named `ascend-runtime` pointing at this binary behaves as `ascend-ctk runtime exec --`.
//!
//! The chips come from `--chip-type` (with the `/dev` scan), else DCMI (`libdcmi.so` under the host
//! root, or `ASCEND_DCMI_LIBRARY`), else the `/dev` scan with a warning on stderr saying why DCMI
//! was not used (see `crate::chip_discovery`).

mod cdi;
mod hook;
mod node_setup;
mod request;
mod runtime;
mod settings;
mod spec;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::hook::HookConfig;
use crate::runtime_exec;
pub use runtime::RUNTIME_LINK_NAME;

/// Ascend container toolkit.
#[derive(Debug, Parser)]
#[command(name = "ascend-ctk", version, about)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// OCI hook (createRuntime or prestart): mount driver files inside the container.
    Hook(hook::HookArgs),
    /// The runtime role: exec runc after editing config.json; configure container engines.
    #[command(subcommand)]
    Runtime(runtime::RuntimeCommand),
    /// CDI specs.
    #[command(subcommand)]
    Cdi(cdi::CdiCommand),
    /// OCI spec edits.
    #[command(subcommand)]
    Spec(spec::SpecCommand),
    /// Device requests.
    #[command(subcommand)]
    Request(request::RequestCommand),
    /// Set up the node from a privileged container with the host's root mounted: install this binary on the host,
    /// write the host's CDI spec, register the runtime with the engine (the Helm chart's init step).
    NodeSetup(node_setup::NodeSetupArgs),
}

/// Entry point: dispatches on the program name, then on the subcommand. Errors are printed with
/// their causes and give exit status 1.
///
/// The two roles on the path of every container start skip clap: the `ascend-runtime` link (settings from the
/// environment, every argument runc's) and `hook` with the flags its spec entry carries go straight to
/// [`crate::runtime_main`] and [`crate::hook_main`]; a hook command line that needs more (`--help`, an unknown
/// flag) gets clap's answer.
pub fn main() -> ExitCode {
    let mut args = std::env::args_os();
    let program = args.next().unwrap_or_default();
    if std::path::Path::new(&program).file_name().is_some_and(|name| name == RUNTIME_LINK_NAME) {
        let runc_args: Vec<String> = args.map(|a| a.to_string_lossy().into_owned()).collect();
        return runtime_exec::runtime_main(&runc_args);
    }
    let rest: Vec<std::ffi::OsString> = args.collect();
    if rest.first().is_some_and(|first| first == "hook") {
        if let Ok(config) = HookConfig::from_args(&rest[1..]) {
            return runtime_exec::hook_main(&config);
        }
    }
    match run(Args::parse()) {
        Ok(code) => code,
        Err(error) => {
            eprintln!("ascend-ctk: error: {error:#}");
            ExitCode::FAILURE
        }
    }
}

fn run(cli: Args) -> anyhow::Result<ExitCode> {
    match cli.command {
        Command::Hook(args) => hook::run(&args),
        Command::Runtime(command) => runtime::run(command),
        Command::Cdi(command) => cdi::run(command),
        Command::Spec(command) => spec::run(command),
        Command::Request(command) => request::run(command),
        Command::NodeSetup(args) => node_setup::run(&args),
    }
}
