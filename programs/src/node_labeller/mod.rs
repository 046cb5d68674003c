//! The `ascend-node-labeller` program: its flags ([`Args`]), its modes ([`modes`]: preview, one reconcile,
//! daemon) and [`run`], which picks the mode the flags ask for. The labels and the reconcile loop are
//! `ascend_kube`'s (`NodeLabeller`); the binary is `main` alone.

mod cli;
pub mod modes;

pub use cli::Args;

/// `--dry-run` prints the merge patch on stdout; `--once` reconciles and returns; otherwise it reconciles every
/// `--interval` and on SIGHUP until SIGTERM or SIGINT.
///
/// # Errors
/// The driver's or the API server's error of a preview or a single reconcile; the daemon's start-up errors.
pub async fn run(args: Args) -> anyhow::Result<()> {
    let driver = args.driver_options();
    if args.dry_run {
        let manager = std::sync::Arc::new(ascend_node::load_driver(&driver).await?);
        let preview = modes::preview(manager, args.labeller_config()).await?;
        if !preview.against_live_node {
            eprintln!("KUBERNETES_SERVICE_HOST is not set: showing the patch for a node without any of the labels");
        }
        println!("{}", serde_json::to_string_pretty(&preview.patch.to_merge_patch())?);
        eprintln!("dry run, nothing sent: {}", preview.patch);
        return Ok(());
    }
    if args.once {
        modes::reconcile_once(&driver, args.labeller_config()).await?;
        return Ok(());
    }
    modes::run_daemon(&driver, args.labeller_config(), crate::shutdown::termination()).await?;
    Ok(())
}
