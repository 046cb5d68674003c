//! `npu-exporter`: Prometheus exporter for Huawei Ascend NPUs. See `docs/npu-exporter.md`; the pipeline is the
//! `ascend-exporter` library.

use ascend_exporter::cli::{ExporterArgs, LogFormat};
use clap::Parser;
use tracing_subscriber::EnvFilter;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args = ExporterArgs::parse();
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info"));
    let subscriber = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr);
    match args.log_format {
        LogFormat::Text => subscriber.init(),
        LogFormat::Json => subscriber.json().init(),
    }
    ascend_exporter::app::run(args, ascend_tools::shutdown::termination()).await?;
    Ok(())
}
