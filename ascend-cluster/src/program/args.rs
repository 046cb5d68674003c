//! The command line, with kubectl's flags (`--kubeconfig`, `--context`, `-n`, `-A`, `-o`) on every command.

use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};

/// `kubectl ascend`: the whole cluster's Ascend NPUs at a glance.
#[derive(Debug, Clone, Parser)]
#[command(name = "kubectl-ascend", bin_name = "kubectl ascend", version)]
pub struct Args {
    /// The kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else the pod's service account).
    #[arg(long, global = true, value_name = "PATH")]
    pub kubeconfig: Option<PathBuf>,
    /// The kubeconfig context to use (default: its current context).
    #[arg(long, global = true, value_name = "NAME")]
    pub context: Option<String>,
    /// The namespace of `pods` (default: the context's namespace).
    #[arg(short = 'n', long, global = true, value_name = "NAMESPACE")]
    pub namespace: Option<String>,
    /// `pods` of every namespace.
    #[arg(short = 'A', long, global = true)]
    pub all_namespaces: bool,
    /// The output format (default: a table).
    #[arg(short = 'o', long, global = true, value_enum)]
    pub output: Option<Output>,
    /// The language of error messages: en or zh-CN (default: LC_ALL, LC_MESSAGES or LANG; zh_CN.* is Chinese).
    /// Column headers stay English, as kubectl's do.
    #[arg(long, global = true, value_name = "LANG", value_parser = ascend_cli::lang::parse_lang)]
    pub lang: Option<ascend_cli::Lang>,
    /// What to show.
    #[command(subcommand)]
    pub command: Command,
}

/// The commands.
#[derive(Debug, Clone, Subcommand)]
pub enum Command {
    /// Per node: chip type and count, healthy / unhealthy / allocated / free, versions, mode, last update, why a
    /// chip is unhealthy.
    Nodes,
    /// Which pod holds which chips on which node.
    Pods,
    /// The chips unhealthy now and the recent fault Events, newest first (exit 1 when a chip is unhealthy).
    Faults,
    /// The nodes where a job of N chips fits now, best fit first (exit 1 when none does).
    Capacity {
        /// Chips the job needs.
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        chips: u32,
        /// All of them in one HCCS group (Ascend 910B and A3 servers: chips 0-3 or 4-7).
        #[arg(long)]
        same_hccs: bool,
        /// Only nodes of this chip type (`910B`, `910A3`, `310P`, `950`).
        #[arg(long, value_name = "TYPE")]
        chip_type: Option<String>,
    },
    /// Runs ascend-doctor in the node's Ascend daemon pod and prints its report (exits with the doctor's code).
    Doctor {
        /// The node.
        node: String,
        /// Arguments for ascend-doctor, after `--` (for example `-- --json`).
        #[arg(last = true)]
        args: Vec<String>,
    },
}

/// `-o`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Output {
    /// The table with more columns.
    Wide,
    /// The report as JSON.
    Json,
    /// The report as YAML.
    Yaml,
}
