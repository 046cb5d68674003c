//! `ascend-dra-driver`: the Kubernetes DRA driver for Huawei Ascend NPUs.
#![forbid(unsafe_code)]

use ascend_tools::dra_driver::{cli::Args, daemon};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(daemon::run(args))
}
