//! `ascend-device-plugin`: the Kubernetes device plugin daemon for Huawei Ascend NPUs. See
//! `ascend_deviceplugin::program`.
#![forbid(unsafe_code)]

use ascend_deviceplugin::program::{self, Args};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    // One thread for every task: the daemon's tasks mostly wait (the kubelet's calls, timers, the API server) and the
    // driver calls run on the health monitor's threads. A timer or socket wakes only this thread, where the
    // multi-thread runtime woke a worker thread that then woke the main thread: an idle plugin's two runtime threads
    // woke about 280 times a minute, this one about 100 (issue 47, a simulated Atlas 800T A2).
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    runtime.block_on(program::run(args))
}
