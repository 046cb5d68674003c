//! The stop signals the daemons honour: SIGTERM (what the kubelet and systemd send) and SIGINT (Ctrl-C).

/// Completes when the process receives SIGTERM or SIGINT, logging which one.
///
/// If the SIGTERM handler cannot be installed the error is logged and only SIGINT ends the wait. Must be polled
/// inside a tokio runtime with the signal driver enabled (`enable_all`).
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

#[cfg(test)]
mod tests {
    use std::time::Duration;

    #[tokio::test]
    async fn sigterm_ends_the_wait() {
        let waiting = tokio::spawn(super::termination());
        // The handler is installed on the first poll; give the spawned task that poll before signalling.
        tokio::time::sleep(Duration::from_millis(50)).await;
        rustix::process::kill_process(rustix::process::getpid(), rustix::process::Signal::TERM).unwrap();
        tokio::time::timeout(Duration::from_secs(5), waiting).await.expect("SIGTERM did not end the wait").unwrap();
    }
}
