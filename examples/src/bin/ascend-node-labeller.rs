//! `ascend-node-labeller`: labels the node with its Ascend NPUs (chip type, count, driver version, product) and keeps
//! the labels current, so that node pools can be selected by label.
#![forbid(unsafe_code)]

use ascend_tools::node_labeller::{app, cli::Args};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    app::init_logging(args.log_format);
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(app::run(args))
}
