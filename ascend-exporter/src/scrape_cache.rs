//! Serving scrapes from a body rendered once per sampler round.
//!
//! Encoding ~270 KB of label sets for 64 chips costs milliseconds, yet the data only changes when a sampler round
//! ends or the pod attribution changes. [`ScrapeCache`] keeps one rendered body per exposition format as shared
//! immutable [`Bytes`] and hands out clones (a reference count, no copy) until its inputs change:
//!
//! * the snapshot's [`SnapshotRevision`] (for the sampler: the end of its latest round),
//! * the pod attribution (the same `Arc` and the same reachability), and
//! * the body's own age, at most `--metrics.cache-max-age` ([`DEFAULT_MAX_BODY_AGE`] by default).
//!
//! The body is rendered lazily, by the first scrape that finds it out of date; formats nobody asks for are never
//! rendered. A scrape renders while holding its format's slot lock, so concurrent scrapes of an out-of-date body
//! wait for that one render and serve its result (single-flight) instead of rendering it again.
//!
//! **gzip.** A scrape that negotiates gzip ([`ContentCoding`]) gets the cached body's gzip copy. Once a format has
//! been asked for gzip, every render of that format compresses its body right away, beside the plain one and in the
//! same critical section, so each sampler round's body is compressed once and later scrapes of the round get the same
//! shared bytes: a warm cache never compresses on the request path. Only the first gzip scrape of a format, which
//! finds a body rendered before anyone asked for gzip, compresses it then. Formats nobody asked gzip for are never
//! compressed, so plain-only scrapers never pay for it. With a zero maximum age every scrape renders, and a gzip
//! scrape compresses what it rendered. Both copies come from one render, so the gzip body decodes to exactly the
//! plain body of the same round.
//!
//! **Sample ages.** `ascend_npu_sample_age_seconds` is the age at the time the body was rendered, not at the time it
//! is served. Splicing per-scrape age lines into the cached body would keep them exact but needs a second encoding
//! path; instead the age bound re-renders a body older than one second, so a served age is at most one second
//! short, also when the sampler stops ending rounds (a hung sampler still shows ages that grow).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use parking_lot::Mutex;

use crate::content_coding::{gzip, ContentCoding};
use crate::exposition_format::ExpositionFormat;
use crate::pod_attribution::{PodAttribution, SharedAttribution};
use crate::render::Exposition;
use crate::snapshot::{SnapshotRevision, SnapshotSource};

/// The default of `--metrics.cache-max-age`: how long a rendered body may be served while its inputs stay the same,
/// which bounds how much the sample-age gauge under-reports.
pub const DEFAULT_MAX_BODY_AGE: Duration = Duration::from_secs(1);

/// Capacity of the first render of a format; later renders start from the previous body's length.
const FIRST_BODY_CAPACITY: usize = 64 * 1024;

/// Rendered bodies per exposition format, re-rendered when the data changes.
pub struct ScrapeCache {
    exposition: Exposition,
    source: Arc<dyn SnapshotSource>,
    attribution: Arc<SharedAttribution>,
    max_body_age: Duration,
    /// One slot per [`ExpositionFormat`], indexed by [`slot_index`].
    slots: [Mutex<Option<CachedBody>>; 2],
    /// Per slot: a scrape has asked for this format with gzip, so every render of it is compressed too.
    gzip_wanted: [AtomicBool; 2],
    renders: AtomicU64,
    compressions: AtomicU64,
}

impl std::fmt::Debug for ScrapeCache {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScrapeCache")
            .field("max_body_age", &self.max_body_age)
            .field("renders", &self.render_count())
            .field("compressions", &self.compression_count())
            .finish_non_exhaustive()
    }
}

/// What a body was rendered from.
struct RenderInputs {
    snapshot: Option<SnapshotRevision>,
    /// Held, not just compared by address, so that the allocation cannot be reused by a later attribution.
    attribution: Arc<PodAttribution>,
    pod_resources_reachable: bool,
}

impl RenderInputs {
    fn same_as(&self, other: &RenderInputs) -> bool {
        self.snapshot == other.snapshot
            && Arc::ptr_eq(&self.attribution, &other.attribution)
            && self.pod_resources_reachable == other.pod_resources_reachable
    }
}

struct CachedBody {
    inputs: RenderInputs,
    rendered_at: Instant,
    body: Bytes,
    /// `body` compressed with gzip: made with the body once its format has been asked for gzip.
    gzip: Option<Bytes>,
}

impl CachedBody {
    fn serves(&self, inputs: &RenderInputs, max_body_age: Duration) -> bool {
        self.inputs.same_as(inputs) && self.rendered_at.elapsed() < max_body_age
    }
}

impl ScrapeCache {
    /// A cache over `exposition`, whose collector reads `source` and `attribution` (the same ones, which tell the
    /// cache when the data changed); bodies live at most `max_body_age` (`--metrics.cache-max-age`; zero renders every scrape).
    pub fn new(
        exposition: Exposition,
        source: Arc<dyn SnapshotSource>,
        attribution: Arc<SharedAttribution>,
        max_body_age: Duration,
    ) -> Self {
        Self {
            exposition,
            source,
            attribution,
            max_body_age,
            slots: [Mutex::new(None), Mutex::new(None)],
            gzip_wanted: [AtomicBool::new(false), AtomicBool::new(false)],
            renders: AtomicU64::new(0),
            compressions: AtomicU64::new(0),
        }
    }

    /// The body for `format` in `coding`: the cached one if its inputs are unchanged and it is young enough, else a
    /// new render (compressed at once if this format was ever asked for gzip); for gzip, the body's compressed copy.
    pub fn body(&self, format: ExpositionFormat, coding: ContentCoding) -> Bytes {
        let index = slot_index(format);
        if coding == ContentCoding::Gzip {
            self.gzip_wanted[index].store(true, Ordering::Relaxed);
        }
        let mut slot = self.slots[index].lock();
        // Read before rendering: data that changes during the render gets a new revision and a render of its own.
        let inputs = self.current_inputs();
        let cached = match slot.take() {
            Some(cached) if cached.serves(&inputs, self.max_body_age) => slot.insert(cached),
            previous => {
                let capacity = previous.map_or(FIRST_BODY_CAPACITY, |cached| cached.body.len() + cached.body.len() / 8);
                let rendered_at = Instant::now();
                let body = Bytes::from(self.exposition.render_with_capacity(format, capacity));
                self.renders.fetch_add(1, Ordering::Relaxed);
                let gzip = self.gzip_wanted[index].load(Ordering::Relaxed).then(|| self.compress(&body));
                slot.insert(CachedBody { inputs, rendered_at, body, gzip })
            }
        };
        match coding {
            ContentCoding::Identity => cached.body.clone(),
            ContentCoding::Gzip => match &cached.gzip {
                Some(compressed) => compressed.clone(),
                // The body was rendered before this format was first asked for gzip.
                None => cached.gzip.insert(self.compress(&cached.body)).clone(),
            },
        }
    }

    fn compress(&self, body: &Bytes) -> Bytes {
        self.compressions.fetch_add(1, Ordering::Relaxed);
        Bytes::from(gzip(body))
    }

    /// How many bodies were rendered so far, over all formats.
    pub fn render_count(&self) -> u64 {
        self.renders.load(Ordering::Relaxed)
    }

    /// How many bodies were compressed with gzip so far, over all formats.
    pub fn compression_count(&self) -> u64 {
        self.compressions.load(Ordering::Relaxed)
    }

    fn current_inputs(&self) -> RenderInputs {
        let (attribution, pod_resources_reachable) = self.attribution.latest_with_reachability();
        RenderInputs { snapshot: self.source.revision(), attribution, pod_resources_reachable }
    }
}

const fn slot_index(format: ExpositionFormat) -> usize {
    match format {
        ExpositionFormat::OpenMetrics => 0,
        ExpositionFormat::ClassicText => 1,
    }
}

#[cfg(test)]
mod tests {
    use ascend_dcmi::{CardId, Celsius, ChipIds, ChipLocator, DeviceId, LogicId, PhyId};

    use super::*;
    use crate::metric_group::MetricGroup;
    use crate::pod_attribution::{AssignedDevices, ContainerAssignment, ContainerRef};
    use crate::render::{NamingMode, RenderPlan, SnapshotCollector};
    use crate::selection::Selection;
    use crate::snapshot::{ChipSnapshot, GroupFreshness, SharedSnapshot, Snapshot};
    use ascend_node::naming::ResourceNaming;

    const LONG_ENOUGH: Duration = Duration::from_secs(3600);

    fn snapshot(temperature: i32) -> Snapshot {
        let ids = ChipIds {
            logic: LogicId(0),
            phy: PhyId(0),
            locator: Some(ChipLocator { card: CardId(0), device: DeviceId(0) }),
        };
        let mut chip = ChipSnapshot::new(ids);
        chip.temperature = Some(Celsius(temperature));
        let now = Instant::now();
        for group in MetricGroup::ALL {
            chip.freshness[group.index()] = GroupFreshness { last_success: Some(now), stale: false };
        }
        Snapshot { published_at: now, driver_version: None, cards: None, chips: vec![chip] }
    }

    fn cache(max_body_age: Duration) -> (ScrapeCache, Arc<SharedSnapshot>, Arc<SharedAttribution>) {
        let shared = Arc::new(SharedSnapshot::new());
        shared.publish(snapshot(40));
        let attribution = Arc::new(SharedAttribution::new());
        let plan = RenderPlan::new(NamingMode::Both, &Selection::default());
        let source: Arc<dyn SnapshotSource> = shared.clone();
        let collector = SnapshotCollector::new(Arc::clone(&source), Arc::clone(&attribution), plan, "0.1.0");
        let cache = ScrapeCache::new(Exposition::new(collector), source, Arc::clone(&attribution), max_body_age);
        (cache, shared, attribution)
    }

    fn text(body: &Bytes) -> &str {
        std::str::from_utf8(body).expect("UTF-8 body")
    }

    #[test]
    fn scrapes_without_a_new_round_get_the_identical_body() {
        let (cache, _, _) = cache(LONG_ENOUGH);
        let first = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        std::thread::sleep(Duration::from_millis(20));
        let second = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_eq!(first, second);
        assert_eq!(first.as_ptr(), second.as_ptr(), "the same shared bytes, not a copy");
        assert_eq!(cache.render_count(), 1);
        assert!(text(&first)
            .contains("ascend_npu_temperature_celsius{chip=\"0\",namespace=\"\",pod=\"\",container=\"\"} 40"));
    }

    #[test]
    fn a_new_round_changes_the_body() {
        let (cache, shared, _) = cache(LONG_ENOUGH);
        let before = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        shared.publish(snapshot(77));
        let after = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_ne!(before, after);
        assert!(text(&after)
            .contains("ascend_npu_temperature_celsius{chip=\"0\",namespace=\"\",pod=\"\",container=\"\"} 77"));
        assert_eq!(cache.render_count(), 2);
    }

    #[test]
    fn new_pod_attribution_or_lost_kubelet_changes_the_body() {
        let (cache, _, attribution) = cache(LONG_ENOUGH);
        let before = cache.body(ExpositionFormat::ClassicText, ContentCoding::Identity);
        attribution.publish(PodAttribution::from_assignments(
            &[ContainerAssignment {
                container: ContainerRef { namespace: "ml".into(), pod: "train-0".into(), container: "worker".into() },
                devices: vec![AssignedDevices {
                    resource_name: "huawei.com/Ascend910".into(),
                    device_ids: vec!["Ascend910-0".into()],
                }],
            }],
            &ResourceNaming::default(),
        ));
        let attributed = cache.body(ExpositionFormat::ClassicText, ContentCoding::Identity);
        assert_ne!(before, attributed);
        assert!(text(&attributed).contains("pod=\"train-0\""));
        assert!(text(&attributed).contains("ascend_npu_pod_resources_up 1"));
        attribution.mark_unreachable();
        let unreachable = cache.body(ExpositionFormat::ClassicText, ContentCoding::Identity);
        assert!(text(&unreachable).contains("ascend_npu_pod_resources_up 0"));
    }

    #[test]
    fn each_format_has_its_own_body() {
        let (cache, _, _) = cache(LONG_ENOUGH);
        let openmetrics = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        let classic = cache.body(ExpositionFormat::ClassicText, ContentCoding::Identity);
        assert!(text(&openmetrics).ends_with("# EOF\n"));
        assert!(!text(&classic).contains("# EOF"));
        assert_eq!(cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity), openmetrics);
        assert_eq!(cache.render_count(), 2);
    }

    #[test]
    fn an_old_body_is_rendered_again_so_sample_ages_grow() {
        let (cache, _, _) = cache(Duration::from_millis(50));
        let age = |body: &Bytes| -> f64 {
            let line = text(body)
                .lines()
                .find(|l| l.starts_with("ascend_npu_sample_age_seconds{") && l.contains("group=\"memory\""))
                .expect("an age line")
                .to_owned();
            line.rsplit(' ').next().and_then(|v| v.parse().ok()).expect("numeric age")
        };
        let first = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        std::thread::sleep(Duration::from_millis(120));
        let later = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_eq!(cache.render_count(), 2);
        assert!(age(&later) >= age(&first) + 0.1, "{} then {}", age(&first), age(&later));
    }

    fn gunzip(bytes: &Bytes) -> Bytes {
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(bytes.as_ref()), &mut plain).expect("valid gzip");
        Bytes::from(plain)
    }

    #[test]
    fn gzip_is_made_once_per_body_and_decodes_to_it() {
        let (cache, shared, _) = cache(LONG_ENOUGH);
        for format in [ExpositionFormat::OpenMetrics, ExpositionFormat::ClassicText] {
            cache.body(format, ContentCoding::Identity);
        }
        assert_eq!(cache.compression_count(), 0, "plain scrapes never compress");
        let plain = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        let compressed = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Gzip);
        assert_eq!(gunzip(&compressed), plain, "the gzip body of the same round decodes to the plain one");
        let again = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Gzip);
        assert_eq!(again.as_ptr(), compressed.as_ptr(), "a warm cache serves the same compressed bytes");
        assert_eq!((cache.render_count(), cache.compression_count()), (2, 1));

        shared.publish(snapshot(77));
        let next_round = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Gzip);
        let next_plain = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_eq!(gunzip(&next_round), next_plain);
        assert_ne!(next_plain, plain);
        assert_eq!((cache.render_count(), cache.compression_count()), (3, 2));
    }

    #[test]
    fn once_gzip_was_asked_for_each_render_is_compressed_beside_it() {
        let (cache, shared, _) = cache(LONG_ENOUGH);
        cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Gzip);
        assert_eq!((cache.render_count(), cache.compression_count()), (1, 1));
        shared.publish(snapshot(77));
        // A plain scrape renders the new round: the gzip copy is made with it, not by the next gzip scrape.
        let plain = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_eq!((cache.render_count(), cache.compression_count()), (2, 2));
        let compressed = cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Gzip);
        assert_eq!(cache.compression_count(), 2, "the gzip scrape of a warm round never compresses");
        assert_eq!(gunzip(&compressed), plain);
        // The other format was never asked for gzip: its renders stay uncompressed.
        cache.body(ExpositionFormat::ClassicText, ContentCoding::Identity);
        assert_eq!((cache.render_count(), cache.compression_count()), (3, 2));
    }

    #[test]
    fn a_zero_max_age_compresses_every_gzip_scrape() {
        let (cache, _, _) = cache(Duration::ZERO);
        for _ in 0..3 {
            let compressed = cache.body(ExpositionFormat::ClassicText, ContentCoding::Gzip);
            assert!(std::str::from_utf8(&gunzip(&compressed)).expect("UTF-8").contains("ascend_npu_chips 1"));
        }
        assert_eq!((cache.render_count(), cache.compression_count()), (3, 3));
    }

    #[test]
    fn a_zero_max_age_renders_every_scrape() {
        let (cache, _, _) = cache(Duration::ZERO);
        cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity);
        assert_eq!(cache.render_count(), 2);
    }

    #[test]
    fn concurrent_scrapes_render_once() {
        let (cache, _, _) = cache(LONG_ENOUGH);
        let bodies: Vec<Bytes> = std::thread::scope(|scope| {
            let scrapes: Vec<_> = (0..8)
                .map(|_| scope.spawn(|| cache.body(ExpositionFormat::OpenMetrics, ContentCoding::Identity)))
                .collect();
            scrapes.into_iter().map(|scrape| scrape.join().expect("scrape thread")).collect()
        });
        assert_eq!(cache.render_count(), 1);
        assert!(bodies.iter().all(|body| body.as_ptr() == bodies[0].as_ptr()));
    }
}
