//! `perf-kubectl-ascend`: the "kubectl ascend at scale" section of `benches/run.sh` (issue 32's figures).
//!
//! Seeds the in-process fake API server with a simulated fleet (`ascend_benches::simulated_fleet`: 1,000 nodes by
//! default, mixed 910B / A3 / 310P / Atlas 950, every tenth with a faulty chip), writes a kubeconfig for it, checks
//! once that `kubectl-ascend nodes -o json` reports every node and every faulty chip, then times the real
//! `kubectl-ascend` binary end to end (process start to exit: connecting, the list calls, decoding, the table) for
//! `nodes` and `capacity --chips 8`, and counts the API requests each makes. Writes the figures as JSON to `--out`.

#![forbid(unsafe_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use ascend_benches::figures_file::{measure_into, summary};
use ascend_benches::simulated_fleet::{fleet, is_faulty};
use clap::Parser;
use fake_apiserver::FakeApiServer;
use serde_json::json;

/// `kubectl ascend nodes` and `capacity` against a simulated fleet.
#[derive(Debug, Parser)]
struct Args {
    /// The `kubectl-ascend` binary.
    #[arg(long)]
    binary: PathBuf,
    /// Nodes in the fleet.
    #[arg(long, default_value_t = 1000)]
    nodes: usize,
    /// Timed runs per command (after one warm-up run).
    #[arg(long, default_value_t = 15)]
    runs: usize,
    /// Where the figures go.
    #[arg(long)]
    out: PathBuf,
}

fn main() -> Result<()> {
    let args = Args::parse();
    // The fake API server gets its own threads, so that it answers while this thread waits on the plugin.
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(measure_into(&args.out.clone(), measure(args)))
}

async fn measure(args: Args) -> Result<serde_json::Value> {
    let server = FakeApiServer::start().await?;
    let objects = fleet(args.nodes);
    let seeded = objects.len();
    for object in objects {
        server.seed(object);
    }
    let directory = tempfile::tempdir()?;
    let kubeconfig = directory.path().join("kubeconfig");
    std::fs::write(&kubeconfig, kubeconfig_text(&server.url()))?;
    check_truth(&args, &kubeconfig).await?;
    let mut figures = json!({"fleet_nodes": args.nodes, "objects": seeded, "runs": args.runs});
    for (key, command) in [("nodes", vec!["nodes"]), ("capacity", vec!["capacity", "--chips", "8"])] {
        server.clear_requests();
        run(&args.binary, &kubeconfig, &command).await?;
        let requests = server.requests().len();
        let mut samples = Vec::with_capacity(args.runs);
        for _ in 0..args.runs {
            samples.push(run(&args.binary, &kubeconfig, &command).await?);
        }
        let mut figure = summary(samples, key)?;
        figure["requests"] = json!(requests);
        figure["command"] = json!(command.join(" "));
        figures[key] = figure;
    }
    Ok(figures)
}

fn kubeconfig_text(url: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: fake\n  cluster:\n    server: {url}\ncontexts:\n- name: fake\n  \
         context:\n    cluster: fake\n    user: nobody\n    namespace: default\ncurrent-context: fake\nusers:\n- name: \
         nobody\n  user: {{}}\n"
    )
}

/// Runs the plugin once; its wall time. Exit codes 0 and 1 (`capacity` found no node) both mean it answered.
async fn run(binary: &Path, kubeconfig: &Path, command: &[&str]) -> Result<Duration> {
    let binary = binary.to_owned();
    let kubeconfig = kubeconfig.to_owned();
    let command: Vec<String> = command.iter().map(|word| (*word).to_owned()).collect();
    tokio::task::spawn_blocking(move || {
        let started = Instant::now();
        let output = Command::new(&binary)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(&command)
            .env("NO_COLOR", "1")
            .output()
            .with_context(|| format!("cannot run {}", binary.display()))?;
        let elapsed = started.elapsed();
        if !matches!(output.status.code(), Some(0 | 1)) {
            bail!(
                "{} {} failed ({}): {}",
                binary.display(),
                command.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(elapsed)
    })
    .await?
}

/// The plugin must report every node and every faulty chip of the fleet before its speed means anything.
async fn check_truth(args: &Args, kubeconfig: &Path) -> Result<()> {
    let binary = args.binary.clone();
    let kubeconfig = kubeconfig.to_owned();
    let output = tokio::task::spawn_blocking(move || {
        Command::new(&binary).arg("--kubeconfig").arg(&kubeconfig).args(["nodes", "-o", "json"]).output()
    })
    .await??;
    let report: serde_json::Value = serde_json::from_slice(&output.stdout)
        .with_context(|| format!("nodes -o json: {}", String::from_utf8_lossy(&output.stderr)))?;
    let nodes = report["nodes"].as_array().map_or(0, Vec::len);
    let unhealthy: u64 = report["nodes"].as_array().into_iter().flatten().filter_map(|n| n["unhealthy"].as_u64()).sum();
    let faulty = (0..args.nodes).filter(|index| is_faulty(*index)).count() as u64;
    if nodes != args.nodes || unhealthy != faulty {
        bail!(
            "nodes reported {nodes} nodes and {unhealthy} unhealthy chips; the fleet has {} and {faulty}",
            args.nodes
        );
    }
    Ok(())
}
