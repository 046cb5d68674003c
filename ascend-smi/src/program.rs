//! The `ascend-smi` command line and its dispatch (feature `cli`); the bundled binary's main only calls
//! [`main_with_args`].

use std::ffi::OsString;
use std::io::{self, IsTerminal, Write};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ascend_cli::Lang;
use ascend_dcmi::{DeviceManager, FaultPolicy};
use ascend_node::DriverArgs;
use clap::{Parser, Subcommand};

use super::events::{follow, FollowLimits};
use super::exit_code::SmiExit;
use super::sim::{self, DEFAULT_SIM_TOPOLOGY};
use super::watch::{self, FrameStyle, WatchOptions};
use super::{details, health_view, table};
use ascend_node::host_report::{HostReport, SCHEMA_VERSION};
use ascend_node::InstalledSoftware;
use ascend_node::{
    parse_visible_devices, policy_grader, CollectOptions, Collector, FaultGrader, ProcessNames, RT_VISIBLE_DEVICES_ENV,
};

/// `ascend-smi`: Ascend NPUs at a glance.
#[derive(Debug, Parser)]
#[command(name = "ascend-smi", version, about = "Ascend NPUs at a glance: chips, health, telemetry, fault events")]
#[command(after_help = "Exit codes: 0 all chips healthy, 1 tool failure, 2 bad usage, 3 a chip is unhealthy, \
                        4 a chip did not answer, 5 driver error (library, dcmi_init, chip list).")]
#[command(mut_arg("dcmi_library", |arg| arg.global(true)))]
#[command(mut_arg("skip_library_ownership_check", |arg| arg.global(true)))]
pub struct Args {
    /// What to show (default: info).
    #[command(subcommand)]
    pub command: Option<Command>,
    /// Print JSON (schema: docs/ascend-smi-json.md) instead of text.
    #[arg(long, global = true)]
    pub json: bool,
    /// Use the simulated libdcmi.so with this topology file or sample name (default: atlas-800t-a2).
    #[arg(long, global = true, value_name = "TOPOLOGY", num_args = 0..=1, require_equals = true,
          default_missing_value = DEFAULT_SIM_TOPOLOGY)]
    pub sim: Option<String>,
    /// The driver library.
    #[command(flatten)]
    pub driver: DriverArgs,
    /// Where the host's / is mounted (for example /host in a container).
    #[arg(long, global = true, value_name = "DIR")]
    pub host_root: Option<PathBuf>,
    /// How long every chip may take to answer before it is shown as timed out (`5`, `5s`, `500ms`).
    #[arg(long, global = true, value_name = "DURATION", default_value = "5", value_parser = cli_duration())]
    pub timeout: Duration,
    /// A faultCode.json that grades fault codes (default: the built-in policy).
    #[arg(long, global = true, value_name = "FILE")]
    pub fault_policy: Option<PathBuf>,
    /// The language of error messages: en or zh-CN (default: LC_ALL, LC_MESSAGES or LANG; zh_CN.* is Chinese).
    /// Column headers stay English, as npu-smi's do.
    #[arg(long, global = true, value_name = "LANG", value_parser = ascend_cli::lang::parse_lang)]
    pub lang: Option<Lang>,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// A table of every chip, like `npu-smi info`.
    Info(InfoArgs),
    /// Refresh the table in place at an interval.
    Watch(WatchArgs),
    /// Health words, fault levels and active fault codes with their meaning.
    Health,
    /// Follow fault events live.
    Events(EventsArgs),
}

/// `info` options.
#[derive(Debug, clap::Args, Default)]
pub struct InfoArgs {
    /// Per-chip details: every id, PCIe address, NUMA node, die id, serial number, versions.
    #[arg(short, long)]
    pub verbose: bool,
}

/// `watch` options.
#[derive(Debug, clap::Args)]
pub struct WatchArgs {
    /// Time between refreshes (`2`, `500ms`; plain numbers are seconds).
    #[arg(short, long, value_name = "DURATION", default_value = "2", value_parser = cli_duration())]
    pub interval: Duration,
    /// Stop after this many refreshes.
    #[arg(short = 'n', long, value_name = "COUNT", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
    /// One refresh, then exit (the same as -n 1).
    #[arg(long, conflicts_with = "count")]
    pub once: bool,
}

/// `events` options.
#[derive(Debug, clap::Args)]
pub struct EventsArgs {
    /// Stop after this many events.
    #[arg(short = 'n', long, value_name = "COUNT")]
    pub count: Option<u64>,
    /// Stop after this long (`30`, `30s`, `5m`; plain numbers are seconds).
    #[arg(long, value_name = "DURATION", value_parser = cli_duration())]
    pub duration: Option<Duration>,
    /// Time between fault-code polls on chips without event subscription (`1`, `500ms`; plain numbers are seconds).
    #[arg(long, value_name = "DURATION", default_value = "1", value_parser = cli_duration())]
    pub poll_interval: Duration,
}

/// The CLI's durations (`--timeout`, `watch -i`, `events --duration/--poll-interval`): more than zero, at most a day (a longer
/// follow is a job for a daemon, not a terminal).
fn cli_duration() -> impl Fn(&str) -> Result<Duration, ascend_cli::DurationError> + Clone + Send + Sync + 'static {
    ascend_cli::duration::duration_between(Duration::from_nanos(1), Duration::from_secs(86_400))
}

/// Parses `args` (program name first) and runs; the exit status to return from `main`.
pub fn main_with_args(args: impl IntoIterator<Item = OsString>) -> SmiExit {
    let cli = match Args::try_parse_from(args) {
        Ok(cli) => cli,
        Err(error) => {
            let _ = error.print();
            return if error.use_stderr() { SmiExit::Usage } else { SmiExit::Healthy };
        }
    };
    let stdout = io::stdout();
    let mut out = stdout.lock();
    run(&cli, &mut out)
}

/// The sentences of `ascend-smi`'s errors in each language; what follows them (the driver's, the file's reason) is
/// the error's own and stays as it is.
#[derive(Debug, Clone, Copy)]
enum Said {
    /// The driver or the chips failed.
    DriverError,
    /// The fault policy file did not load.
    FaultPolicy,
    /// Writing the output failed.
    Output,
}

impl Said {
    #[cfg(test)]
    const ALL: [Said; 3] = [Said::DriverError, Said::FaultPolicy, Said::Output];

    fn prefix(self, lang: Lang) -> &'static str {
        match self {
            Said::DriverError => lang.pick("ascend-smi: driver error: ", "ascend-smi：驱动错误："),
            Said::FaultPolicy => lang.pick("ascend-smi: --fault-policy: ", "ascend-smi：--fault-policy 无法加载："),
            Said::Output => lang.pick("ascend-smi: ", "ascend-smi：输出失败："),
        }
    }
}

/// The language of the command line's messages: `--lang`, else the locale.
fn lang_of(cli: &Args) -> Lang {
    cli.lang.unwrap_or_else(Lang::from_env)
}

fn print_driver_error(cli: &Args, message: &str, out: &mut dyn Write) {
    let json = cli.json;
    if json {
        let document = serde_json::json!({
            "schema_version": SCHEMA_VERSION,
            "error": { "kind": "driver", "message": message },
        });
        let _ = writeln!(out, "{document:#}");
    }
    eprintln!("{}{message}", Said::DriverError.prefix(lang_of(cli)));
}

/// Runs a parsed command line, writing to `out`.
pub fn run(cli: &Args, out: &mut dyn Write) -> SmiExit {
    let policy = match &cli.fault_policy {
        Some(path) => match FaultPolicy::from_file(path) {
            Ok(policy) => policy,
            Err(error) => {
                eprintln!("{}{error}", Said::FaultPolicy.prefix(lang_of(cli)));
                return SmiExit::Usage;
            }
        },
        None => FaultPolicy::default(),
    };
    let manager = match open_manager(cli, policy.clone()) {
        Ok(manager) => manager,
        Err(OpenError::Usage(message)) => {
            eprintln!("ascend-smi: {message}");
            return SmiExit::Usage;
        }
        Err(OpenError::Driver(message)) => {
            print_driver_error(cli, &message, out);
            return SmiExit::DriverError;
        }
    };
    let grader = policy_grader(policy);
    let result = dispatch(cli, manager, grader, out);
    result.unwrap_or_else(|error| {
        eprintln!("{}{error}", Said::Output.prefix(lang_of(cli)));
        SmiExit::ToolFailure
    })
}

enum OpenError {
    Usage(String),
    Driver(String),
}

fn open_manager(cli: &Args, policy: FaultPolicy) -> Result<Arc<dyn DeviceManager>, OpenError> {
    let root = cli.host_root.clone().unwrap_or_else(|| PathBuf::from("/"));
    let mut builder = cli.driver.options(root).builder().fault_policy(policy).call_deadline(cli.timeout);
    if let Some(topology) = &cli.sim {
        let setup = sim::prepare(topology).map_err(|error| OpenError::Usage(error.to_string()))?;
        // The simulator is the build's own artefact, owned by whoever ran cargo: the root-ownership rule for the
        // vendor's library does not apply to it.
        builder = builder.library_path(setup.library).verify_library_ownership(false);
    }
    let dcmi = builder.init().map_err(|error| OpenError::Driver(error.to_string()))?;
    Ok(Arc::new(dcmi))
}

fn collect_options(cli: &Args, verbose: bool, grader: FaultGrader) -> CollectOptions {
    let root = cli.host_root.clone().unwrap_or_else(|| PathBuf::from("/"));
    // The simulator's chips are not this machine's: its files are read only when a host root is named.
    let software = (cli.sim.is_none() || cli.host_root.is_some()).then(|| InstalledSoftware::read(&root));
    let firmware = software.as_ref().and_then(|found| found.firmware.as_ref()).and_then(|file| file.version.clone());
    CollectOptions {
        deadline: cli.timeout,
        verbose,
        visible_devices: std::env::var(RT_VISIBLE_DEVICES_ENV).ok().map(|value| parse_visible_devices(&value)),
        process_names: if cli.sim.is_some() { ProcessNames::None } else { ProcessNames::Proc { root } },
        firmware_version: firmware,
        software,
        grader,
        tool_version: env!("CARGO_PKG_VERSION").to_owned(),
    }
}

fn dispatch(
    cli: &Args,
    manager: Arc<dyn DeviceManager>,
    grader: FaultGrader,
    out: &mut dyn Write,
) -> io::Result<SmiExit> {
    match &cli.command {
        None => show(cli, manager, grader, Shown::Table { verbose: false }, out),
        Some(Command::Info(args)) => show(cli, manager, grader, Shown::Table { verbose: args.verbose }, out),
        Some(Command::Health) => show(cli, manager, grader, Shown::Health, out),
        Some(Command::Watch(args)) => {
            let style = if cli.json {
                FrameStyle::JsonLines
            } else if io::stdout().is_terminal() {
                FrameStyle::InPlace
            } else {
                FrameStyle::Plain
            };
            let count = if args.once { Some(1) } else { args.count };
            let options = WatchOptions { interval: args.interval, count, style };
            let collector = Collector::new(manager, collect_options(cli, false, grader));
            watch::run(&collector, &options, out)
        }
        Some(Command::Events(args)) => {
            let limits = FollowLimits { count: args.count, duration: args.duration };
            match follow(manager.as_ref(), args.poll_interval, limits, cli.json, &grader, out) {
                Ok(_) => Ok(SmiExit::Healthy),
                Err(super::events::FollowError::Driver(message)) => {
                    print_driver_error(cli, &message, out);
                    Ok(SmiExit::DriverError)
                }
                Err(super::events::FollowError::Output(error)) => Err(error),
            }
        }
    }
}

enum Shown {
    Table { verbose: bool },
    Health,
}

fn show(
    cli: &Args,
    manager: Arc<dyn DeviceManager>,
    grader: FaultGrader,
    shown: Shown,
    out: &mut dyn Write,
) -> io::Result<SmiExit> {
    let verbose = matches!(shown, Shown::Table { verbose: true });
    let collector = Collector::new(manager, collect_options(cli, verbose, grader));
    let report: HostReport = match collector.collect() {
        Ok(report) => report,
        Err(error) => {
            print_driver_error(cli, &error.to_string(), out);
            return Ok(SmiExit::DriverError);
        }
    };
    let text = if cli.json {
        let mut json = serde_json::to_string_pretty(&report)?;
        json.push('\n');
        json
    } else {
        match shown {
            Shown::Table { verbose: false } => table::render(&report),
            Shown::Table { verbose: true } => details::render(&report),
            Shown::Health => health_view::render(&report),
        }
    };
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(SmiExit::for_report(&report))
}

#[cfg(test)]
mod lang_tests {
    use super::*;

    #[test]
    fn every_error_sentence_reads_in_chinese() {
        for said in Said::ALL {
            let (english, chinese) = (said.prefix(Lang::En), said.prefix(Lang::ZhCn));
            assert!(english.starts_with("ascend-smi: ") && english.is_ascii(), "{said:?}: {english:?}");
            assert!(chinese.starts_with("ascend-smi："), "{said:?}: {chinese:?}");
            assert!(chinese.chars().any(|c| ('\u{4e00}'..='\u{9fff}').contains(&c)), "{said:?}: {chinese:?}");
        }
    }

    #[test]
    fn the_lang_flag_wins_and_unknown_values_are_refused() {
        let cli = Args::try_parse_from(["ascend-smi", "--lang", "zh-CN", "info"]).expect("parses");
        assert_eq!(lang_of(&cli), Lang::ZhCn);
        let refused = Args::try_parse_from(["ascend-smi", "--lang", "ja"]).expect_err("refused").to_string();
        assert!(refused.contains("accepted values are en, zh-CN"), "{refused}");
    }
}
