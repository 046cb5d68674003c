//! `ascend-node-labeller`: labels the node with its Ascend NPUs (chip type, count, driver version, product) and keeps
//! the labels current, so that node pools can be selected by label. The program (flags and modes) is
//! `ascend_programs::node_labeller`.
#![forbid(unsafe_code)]

use ascend_programs::node_labeller::{self, Args};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(node_labeller::run(args))
}
