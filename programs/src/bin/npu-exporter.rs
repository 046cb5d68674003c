//! `npu-exporter`: Prometheus exporter for Huawei Ascend NPUs. See `docs/npu-exporter.md`; the pipeline is the
//! `ascend-exporter` library, the program its `cli` feature.
#![forbid(unsafe_code)]

use ascend_exporter::program::{self, Args};
use clap::Parser;

#[tokio::main(flavor = "current_thread")]
async fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    program::run(args, ascend_programs::shutdown::termination()).await?;
    Ok(())
}
