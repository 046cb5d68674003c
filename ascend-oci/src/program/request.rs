//! `ascend-ctk request`.

use std::process::ExitCode;

use crate::request::DeviceSelection;
use clap::Subcommand;

/// Request subcommands.
#[derive(Debug, Subcommand)]
pub enum RequestCommand {
    /// Parse an ASCEND_VISIBLE_DEVICES value and print its canonical form.
    Parse {
        /// The value (quote it; an empty string means nothing).
        value: String,
    },
}

/// Runs a request subcommand.
pub fn run(command: RequestCommand) -> anyhow::Result<ExitCode> {
    match command {
        RequestCommand::Parse { value } => {
            let selection: DeviceSelection = value.parse()?;
            println!("{selection}");
        }
    }
    Ok(ExitCode::SUCCESS)
}
