//! The exporter's metrics inside your own process: start the sampler, then answer a scrape from the scrape cache,
//! as an agent with its own HTTP server (or none) would, without the `npu-exporter` program.
//!
//! ```text
//! cargo run -p ascend-exporter --example serve_metrics                 # on dcmi-sim (an Atlas 800T A2)
//! cargo run -p ascend-exporter --example serve_metrics -- --driver     # on this machine's driver
//! ```
//!
//! It prints the scrape's chip count and each chip's temperature and health series in the native naming, and fails
//! when a chip has neither. Pod labels stay empty here: an agent on a Kubernetes node runs a `PodResourcesWatch` on
//! its tokio runtime, publishing into the same `SharedAttribution`.

use std::error::Error;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ascend_dcmi::{Dcmi, DeviceManager, MetricGroup, Sampler, SamplerConfig};
use ascend_exporter::{
    ContentCoding, Exposition, ExpositionFormat, NamingMode, RenderPlan, SamplerSource, ScrapeCache, Selection,
    SharedAttribution, SnapshotCollector, SnapshotSource, DEFAULT_MAX_BODY_AGE,
};

/// The `Accept` header Prometheus sends (2.42): it gets OpenMetrics.
const PROMETHEUS_ACCEPT: &str = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

/// How long the sampler's first round may take.
const FIRST_ROUND: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    match serve_one_scrape() {
        Ok(()) => ExitCode::SUCCESS,
        Err(error) => {
            eprintln!("serve_metrics: {error}");
            ExitCode::FAILURE
        }
    }
}

fn serve_one_scrape() -> Result<(), Box<dyn Error>> {
    let on_driver = std::env::args().skip(1).any(|arg| arg == "--driver");
    let mut builder = Dcmi::builder();
    if !on_driver {
        std::env::set_var(dcmi_sim::CONFIG_ENV, "sample:atlas-800t-a2");
        // The simulator is built into this checkout's target directory, which is not root's to guard: the ownership
        // rule is for the driver's libdcmi.so.
        builder = builder.library_path(dcmi_sim::library_path()?).verify_library_ownership(false);
    }
    let dcmi = builder.init()?;
    let driver_version = dcmi.driver_version().ok();
    let cards = dcmi.cards().map(|cards| cards.len()).ok();
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    // Reads every chip in the background, each group on its interval, every driver call under a deadline.
    let sampler = Sampler::spawn(manager, SamplerConfig::default())?;
    let chips = sampler.chips().to_vec();
    let source: Arc<dyn SnapshotSource> = Arc::new(SamplerSource::new(sampler, driver_version).with_cards(cards));
    wait_for_first_round(source.as_ref())?;

    let attribution = Arc::new(SharedAttribution::new());
    let plan = RenderPlan::new(NamingMode::Native, &Selection::default());
    let collector =
        SnapshotCollector::new(Arc::clone(&source), Arc::clone(&attribution), plan, env!("CARGO_PKG_VERSION"));
    let cache = ScrapeCache::new(Exposition::new(collector), source, attribution, DEFAULT_MAX_BODY_AGE);

    // One scrape, as an HTTP handler would answer it from the request's `Accept` and `Accept-Encoding` headers.
    let format = ExpositionFormat::negotiate(Some(PROMETHEUS_ACCEPT));
    let body = cache.body(format, ContentCoding::negotiate(None));
    let body = std::str::from_utf8(&body)?;
    println!("Content-Type: {} ({} bytes)", format.content_type(), body.len());

    let mut missing = Vec::new();
    let chip_count = format!("ascend_npu_chips {}", chips.len());
    show(body, &chip_count, &mut missing);
    for ids in &chips {
        for metric in ["ascend_npu_temperature_celsius", "ascend_npu_healthy"] {
            show(body, &format!("{metric}{{chip=\"{}\",", ids.phy), &mut missing);
        }
    }
    if !missing.is_empty() {
        return Err(format!("the scrape has no line starting with {}", missing.join(" or ")).into());
    }
    Ok(())
}

/// Waits until the sampler has read the chip-state group (temperature, health) of every chip.
fn wait_for_first_round(source: &dyn SnapshotSource) -> Result<(), Box<dyn Error>> {
    let started = Instant::now();
    loop {
        let snapshot = source.latest();
        let chips = snapshot.as_deref().map_or(&[][..], |snapshot| snapshot.chips.as_slice());
        if !chips.is_empty() && chips.iter().all(|chip| chip.freshness(MetricGroup::ChipState).last_success.is_some()) {
            return Ok(());
        }
        if started.elapsed() > FIRST_ROUND {
            return Err(format!("the sampler read no chip state within {FIRST_ROUND:?}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Prints the body's first line that starts with `prefix`, or records it as missing.
fn show(body: &str, prefix: &str, missing: &mut Vec<String>) {
    match body.lines().find(|line| line.starts_with(prefix)) {
        Some(line) => println!("{line}"),
        None => missing.push(prefix.to_owned()),
    }
}
