//! The stop signals the daemons honour: SIGTERM (what the kubelet and systemd send) and SIGINT (Ctrl-C).

/// Completes when the process receives SIGTERM or SIGINT, logging which one.
///
/// If the SIGTERM handler cannot be installed the error is logged and only SIGINT ends the wait.
pub async fn termination() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(error) => {
                tracing::error!(%error, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        () = terminate => tracing::info!("SIGTERM received"),
        _ = tokio::signal::ctrl_c() => tracing::info!("SIGINT received"),
    }
}
