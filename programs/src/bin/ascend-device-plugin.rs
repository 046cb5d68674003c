//! `ascend-device-plugin`: the Kubernetes device plugin daemon for Huawei Ascend NPUs. See
//! `ascend_deviceplugin::program`.
#![forbid(unsafe_code)]

use ascend_deviceplugin::program::{self, Args};
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(program::run(args))
}
