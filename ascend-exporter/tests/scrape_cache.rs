//! The scrape cache over a real sampler on the simulated driver: scrapes between two sampler rounds serve the same
//! bytes, and the end of a round makes the next scrape render again.

mod support;

use std::sync::Arc;
use std::time::Duration;

use ascend_dcmi::{Dcmi, DeviceManager, GroupSet, MetricGroup, Sampler, SamplerConfig};
use ascend_exporter::{
    ContentCoding, Exposition, ExpositionFormat, NamingMode, RenderPlan, SamplerSource, ScrapeCache, Selection,
    SharedAttribution, SnapshotCollector, SnapshotSource,
};
use support::{sim_library, write_topology};

/// Long enough that only a sampler round can make the cache render again during the test.
const MAX_BODY_AGE: Duration = Duration::from_secs(3600);

#[test]
fn one_render_per_sampler_round() {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), 8, "");
    // This test binary runs this one test, and the variable is set before the simulator is loaded.
    std::env::set_var("DCMI_SIM_CONFIG", &topology);
    let dcmi = Dcmi::builder().library_path(sim_library()).verify_library_ownership(false).init().expect("sim loads");
    let manager: Arc<dyn DeviceManager> = Arc::new(dcmi);
    let sampler = Sampler::new(manager, SamplerConfig::default()).expect("sampler over the simulator");
    sampler.poll_groups(GroupSet::ALL).expect("first round");
    let source = Arc::new(SamplerSource::new(sampler, Some("24.1.rc2".into())));
    let dyn_source: Arc<dyn SnapshotSource> = source.clone();
    let attribution = Arc::new(SharedAttribution::new());
    let plan = RenderPlan::new(NamingMode::Both, &Selection::default());
    let collector = SnapshotCollector::new(Arc::clone(&dyn_source), Arc::clone(&attribution), plan, "test");
    let cache = ScrapeCache::new(Exposition::new(collector), dyn_source, attribution, MAX_BODY_AGE);

    let first = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
    std::thread::sleep(Duration::from_millis(50));
    let second = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
    assert_eq!(first, second, "no round in between: the same body");
    assert_eq!(cache.render_count(), 1);
    let text = std::str::from_utf8(&first).expect("UTF-8");
    assert!(text.contains("ascend_npu_chips 8"), "{text}");

    let revision = source.revision();
    source.sampler().poll(MetricGroup::ChipState).expect("second round");
    assert_ne!(source.revision(), revision, "a round ends with a new revision");
    let third = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
    assert_eq!(cache.render_count(), 2);
    assert_ne!(first, third, "the new round's sample ages differ");
}
