//! The `kubectl-ascend` command line (feature `cli`): kubectl's flags, the five commands, tables with colours on a
//! terminal, `-o wide|json|yaml`, and the exit codes of [`exit`].
//!
//! [`run`] does one command on a client and returns what to print and the exit code, so tests call it with a client
//! of the fake API server; [`main`] is the whole program (the `kubectl-ascend` binary is one call to it).

mod args;
mod connect;
mod render;
mod style;
mod table;

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

pub use args::{Args, Command, Output};
pub use connect::client_for;
pub use style::Style;

use crate::error::{Error, Result};
use crate::objects::Scope;
use crate::{capacity_report, doctor_report, faults_report, nodes_report, pods_report, CapacityQuery};

/// The exit codes (docs/kubectl-ascend.md).
pub mod exit {
    /// The command ran; nothing it looks for was found (no current fault; a node fits; the doctor passed).
    pub const OK: u8 = 0;
    /// The command ran and found what it looks for: `faults` found a chip unhealthy now, `capacity` found no node
    /// that fits, `doctor`'s checks failed (its own code 1).
    pub const FOUND: u8 = 1;
    /// A bad command line (clap's code), or `doctor`'s own code 2.
    pub const USAGE: u8 = 2;
    /// The cluster could not be read: no kubeconfig or context, an API error, no answer in time.
    pub const CLUSTER: u8 = 3;
    /// `doctor` could not run: no daemon pod on the node, or the exec failed.
    pub const DOCTOR_UNAVAILABLE: u8 = 4;
}

/// What a command prints and how it exits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// For standard output.
    pub stdout: String,
    /// For standard error.
    pub stderr: String,
    /// The exit code ([`exit`]).
    pub exit_code: u8,
}

/// Runs the command of `args` on `client`. `default_namespace` is the context's namespace, used by `pods` without
/// `-n` or `-A` (as kubectl does).
///
/// # Errors
/// The library's errors: the cluster could not be read, or the doctor could not run.
pub async fn run(client: &kube::Client, args: &Args, default_namespace: &str, style: Style) -> Result<Outcome> {
    let output = args.output;
    let (stdout, exit_code) = match &args.command {
        Command::Nodes => (render::nodes(&nodes_report(client).await?, output, style)?, exit::OK),
        Command::Pods => {
            let scope = match (&args.namespace, args.all_namespaces) {
                (_, true) => Scope::AllNamespaces,
                (Some(namespace), false) => Scope::Namespace(namespace.clone()),
                (None, false) => Scope::Namespace(default_namespace.to_owned()),
            };
            let report = pods_report(client, &scope).await?;
            (render::pods(&report, output, style, scope == Scope::AllNamespaces)?, exit::OK)
        }
        Command::Faults => {
            let report = faults_report(client).await?;
            let code = if report.current.is_empty() { exit::OK } else { exit::FOUND };
            (render::faults(&report, output, style)?, code)
        }
        Command::Capacity { chips, same_hccs, chip_type } => {
            let query = CapacityQuery { chips: *chips, same_hccs: *same_hccs, chip_type: chip_type.clone() };
            let report = capacity_report(client, &query).await?;
            let code = if report.fits.is_empty() { exit::FOUND } else { exit::OK };
            (render::capacity(&report, output, style)?, code)
        }
        Command::Doctor { node, args: doctor_args } => {
            let run = doctor_report(client, node, doctor_args).await?;
            let code = run.exit_code.and_then(|code| u8::try_from(code).ok()).unwrap_or(exit::DOCTOR_UNAVAILABLE);
            let stderr = run.stderr.clone();
            let stdout = render::doctor(&run, output)?;
            return Ok(Outcome { stdout, stderr, exit_code: code });
        }
    };
    Ok(Outcome { stdout, stderr: String::new(), exit_code })
}

/// The exit code for an error of [`run`].
pub fn exit_code_of(error: &Error) -> u8 {
    match error {
        Error::NoDaemonPod { .. } | Error::Exec { .. } => exit::DOCTOR_UNAVAILABLE,
        _ => exit::CLUSTER,
    }
}

/// The error's message and those of its causes that it does not already hold (kube-rs nests the same words several
/// levels deep; the root cause, such as "Connection refused", is often only at the bottom).
pub fn message_with_causes(error: &Error) -> String {
    let mut message = error.to_string();
    let mut cause = std::error::Error::source(error);
    while let Some(current) = cause {
        let text = current.to_string();
        if !message.contains(&text) {
            message.push_str(": ");
            message.push_str(&text);
        }
        cause = current.source();
    }
    message
}

/// The whole program: parses the command line, connects as kubectl would, runs the command, prints, exits.
pub async fn main() -> ExitCode {
    let args = <Args as clap::Parser>::parse();
    let stdout = std::io::stdout();
    let colour = stdout.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty());
    let style = Style { colour, now: k8s_openapi::jiff::Timestamp::now() };
    let outcome = match client_for(&args).await {
        Ok((client, namespace)) => run(&client, &args, &namespace, style).await,
        Err(error) => Err(error),
    };
    match outcome {
        Ok(outcome) => {
            let _ = stdout.lock().write_all(outcome.stdout.as_bytes());
            let _ = std::io::stderr().lock().write_all(outcome.stderr.as_bytes());
            ExitCode::from(outcome.exit_code)
        }
        Err(error) => {
            eprintln!("error: {}", message_with_causes(&error));
            ExitCode::from(exit_code_of(&error))
        }
    }
}
