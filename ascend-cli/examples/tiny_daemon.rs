//! The conventions every bundled daemon shares, in a daemon of a few lines: `--log-format text|json`, durations in
//! the tools' one grammar (`500ms`, `1.5s`, `2m`), `/healthz` and `/metrics` on one address, and a clean stop on
//! SIGTERM or SIGINT.
//!
//! ```text
//! cargo run -p ascend-cli --all-features --example tiny_daemon                          # serves 2 s, asks itself
//! cargo run -p ascend-cli --all-features --example tiny_daemon -- --for 1m --log-format json
//! ```
//!
//! The example asks its own endpoint for both paths and fails unless each answers as a daemon's must.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use ascend_cli::duration::parse_positive_duration;
use ascend_cli::health_endpoint::HealthEndpoint;
use ascend_cli::{LogArgs, OPENMETRICS_CONTENT_TYPE};
use clap::Parser;

/// A daemon that counts its scrapes.
#[derive(Debug, Parser)]
struct Args {
    /// How long to serve before stopping on its own.
    #[arg(long = "for", default_value = "2s", value_parser = parse_positive_duration)]
    serve_for: Duration,
    /// Where to serve.
    #[arg(long, default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Logging.
    #[command(flatten)]
    log: LogArgs,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args = Args::parse();
    args.log.init_logging()?;
    let scrapes = Arc::new(AtomicU64::new(0));
    let counted = Arc::clone(&scrapes);
    let endpoint = HealthEndpoint::bind(args.listen).await?;
    let address = endpoint.address();
    let stop = async move {
        tokio::select! {
            () = ascend_cli::signal::termination() => {}
            () = tokio::time::sleep(args.serve_for) => {}
        }
    };
    let metrics = move || {
        let seen = counted.fetch_add(1, Ordering::Relaxed) + 1;
        format!("# TYPE tiny_scrapes counter\ntiny_scrapes_total {seen}\n# EOF\n")
    };
    let serving = tokio::spawn(endpoint.serve(|| "ok\n".to_owned(), metrics, stop));

    let (healthz, metrics) =
        tokio::task::spawn_blocking(move || (get(address, "/healthz"), get(address, "/metrics"))).await?;
    let (healthz, metrics) = (healthz?, metrics?);
    println!("GET /healthz on {address}:\n{healthz}\nGET /metrics:\n{metrics}");
    if !healthz.starts_with("HTTP/1.1 200") || !healthz.ends_with("ok\n") {
        return Err("/healthz did not answer 200 ok".into());
    }
    if !metrics.contains(OPENMETRICS_CONTENT_TYPE) || !metrics.contains("tiny_scrapes_total 1") {
        return Err("/metrics did not answer OpenMetrics with the first scrape counted".into());
    }
    serving.await??;
    println!("stopped after {} scrape(s)", scrapes.load(Ordering::Relaxed));
    Ok(())
}

/// One HTTP/1.1 request on its own connection, the whole answer as text.
fn get(address: SocketAddr, path: &str) -> std::io::Result<String> {
    let mut stream = TcpStream::connect(address)?;
    stream.set_read_timeout(Some(Duration::from_secs(5)))?;
    write!(stream, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer)?;
    Ok(answer)
}
