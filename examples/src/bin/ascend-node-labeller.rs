//! `ascend-node-labeller`: labels the node with its Ascend NPUs (chip type, count, driver version, product) and keeps
//! the labels current, so that node pools can be selected by label. The work is `ascend_kube::labeller_tool`.
#![forbid(unsafe_code)]

use ascend_kube::labeller_tool;
use ascend_tools::node_labeller::cli::Args;
use clap::Parser;

fn main() -> anyhow::Result<()> {
    let args = Args::parse();
    args.log.init_logging()?;
    let runtime = tokio::runtime::Builder::new_multi_thread().enable_all().build()?;
    runtime.block_on(run(args))
}

/// `--dry-run` prints the merge patch on stdout; `--once` reconciles and returns; otherwise it reconciles every
/// `--interval` and on SIGHUP until SIGTERM or SIGINT.
async fn run(args: Args) -> anyhow::Result<()> {
    let driver = args.driver_options();
    if args.dry_run {
        let manager = std::sync::Arc::new(ascend_node::load_driver(&driver).await?);
        let preview = labeller_tool::preview(manager, args.labeller_config()).await?;
        if !preview.against_live_node {
            eprintln!("KUBERNETES_SERVICE_HOST is not set: showing the patch for a node without any of the labels");
        }
        println!("{}", serde_json::to_string_pretty(&preview.patch.to_merge_patch())?);
        eprintln!("dry run, nothing sent: {}", preview.patch);
        return Ok(());
    }
    if args.once {
        labeller_tool::reconcile_once(&driver, args.labeller_config()).await?;
        return Ok(());
    }
    labeller_tool::run_daemon(&driver, args.labeller_config(), ascend_tools::shutdown::termination()).await?;
    Ok(())
}
