//! Writing a scrape body in either text format: OpenMetrics 1.0 and the Prometheus text format 0.0.4.
//!
//! Hand-written where the exporter rendered through prometheus-client 0.26 before. That crate walks a registry of
//! collectors through a tree of encoders, one `fmt::Write` call per key, `="`, value, quote and separator, and wants
//! a metric's samples gathered before its first line; the exporter's rows are all alike (a name, one series text
//! made once per render, up to four labels of the sample's own, a number), so they are written here straight into
//! the body. The encoder was half of a render (`perf record` of the `exporter_render` bench); with this module a
//! render takes less than half the time (8 chips, both namings, OpenMetrics, 134 KB: 143 µs through prometheus-client,
//! 61 µs here; 64 chips native 0.73 to 0.28 ms; docs/npu-exporter.md). CPU per scrape rendered anew is a target
//! beside Huawei's exporter (docs/performance.md section 11). The other daemons' small self-metrics registries stay on
//! prometheus-client.
//!
//! The output is byte for byte what prometheus-client wrote for the same rows (`tests::as_prometheus_client_wrote`
//! renders the same families through both), except where prometheus-client departs from the formats' specifications:
//! an infinite value in OpenMetrics is `+Inf`/`-Inf` here (prometheus-client wrote dtoa's `inf`, which the
//! OpenMetrics ABNF does not allow), and an OpenMetrics HELP text has its backslashes, double quotes and line feeds
//! escaped, as the ABNF requires and client_golang's `expfmt.MetricFamilyToOpenMetrics` writes it (prometheus-client
//! wrote it as given: a line feed in a help text broke the body). Of the catalogue, the native HELP texts that quote a
//! label value (`ascend_npu_power_watts`, `ascend_npu_memory_*_bytes`) differ so; the classic format and every sample
//! line are as before. Numbers are formatted by the same crates prometheus-client uses: itoa and dtoa.

use crate::exposition_format::ExpositionFormat;
use crate::metric_def::MetricKind;
use crate::sample::LabelText;

/// A series' labels in exposition text, made once per render: every sample of the series then writes them as one
/// string instead of label by label (`k1="v1",…,kN="vN"`, the values escaped as both text formats escape them; empty
/// for a series without labels).
///
/// Writing each label of each sample anew was over a third of a scrape's CPU (`perf record` of a scrape rendered anew
/// on `atlas-800t-a2` in Huawei naming, 955 series of seven chip labels: docs/performance.md section 11).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SeriesText {
    text: String,
}

impl SeriesText {
    /// The text of `labels`.
    pub fn new(labels: &[(&'static str, String)]) -> Self {
        let mut text = String::with_capacity(labels.iter().map(|(key, value)| key.len() + value.len() + 4).sum());
        for (index, (key, value)) in labels.iter().enumerate() {
            if index > 0 {
                text.push(',');
            }
            text.push_str(key);
            text.push_str("=\"");
            push_label_value(&mut text, value);
            text.push('"');
        }
        Self { text }
    }

    /// The labels as written in a sample line, without the braces.
    pub fn as_str(&self) -> &str {
        &self.text
    }
}

/// A scrape body being written.
#[derive(Debug)]
pub struct TextEncoder {
    body: String,
    format: ExpositionFormat,
}

impl TextEncoder {
    /// An empty body of `format`, with room for `capacity` bytes.
    pub fn new(format: ExpositionFormat, capacity: usize) -> Self {
        Self { body: String::with_capacity(capacity), format }
    }

    /// Starts a metric family: its HELP and TYPE lines, which go away again if no sample follows.
    pub fn family<'e>(&'e mut self, name: &'e str, help: &str, kind: MetricKind) -> Family<'e> {
        let start = self.body.len();
        let suffix = kind.sample_suffix();
        // The classic format names a family by its samples' name; OpenMetrics by the name without the suffix.
        let family_suffix = match self.format {
            ExpositionFormat::OpenMetrics => "",
            ExpositionFormat::ClassicText => suffix,
        };
        let type_name = match (self.format, kind) {
            (_, MetricKind::Gauge) | (ExpositionFormat::ClassicText, MetricKind::Info) => "gauge",
            (_, MetricKind::Counter) => "counter",
            (ExpositionFormat::OpenMetrics, MetricKind::Info) => "info",
        };
        let body = &mut self.body;
        body.push_str("# HELP ");
        body.push_str(name);
        body.push_str(family_suffix);
        body.push(' ');
        let special: &[u8] = match self.format {
            ExpositionFormat::OpenMetrics => b"\\\"\n",
            ExpositionFormat::ClassicText => b"\\\n",
        };
        if needs_escape(help) {
            push_escaped(body, help, special);
        } else {
            body.push_str(help);
        }
        body.push_str("\n# TYPE ");
        body.push_str(name);
        body.push_str(family_suffix);
        body.push(' ');
        body.push_str(type_name);
        body.push('\n');
        Family { encoder: self, name, suffix, kind, start, samples: 0 }
    }

    /// The finished body (OpenMetrics' ends with `# EOF`).
    pub fn finish(mut self) -> String {
        if self.format == ExpositionFormat::OpenMetrics {
            self.body.push_str("# EOF\n");
        }
        self.body
    }
}

/// One metric family being written; dropped without a sample, it leaves no line behind.
#[derive(Debug)]
pub struct Family<'e> {
    encoder: &'e mut TextEncoder,
    name: &'e str,
    suffix: &'static str,
    kind: MetricKind,
    start: usize,
    samples: usize,
}

impl Family<'_> {
    /// A sample line: the series' labels, then the sample's own, then the value. An info metric's value is always 1.
    pub fn sample(&mut self, series: &SeriesText, own: &[(&'static str, LabelText)], value: f64) {
        self.samples += 1;
        let body = &mut self.encoder.body;
        body.push_str(self.name);
        body.push_str(self.suffix);
        let series = series.as_str();
        if !series.is_empty() || !own.is_empty() {
            body.push('{');
            body.push_str(series);
            for (index, (key, value)) in own.iter().enumerate() {
                if index > 0 || !series.is_empty() {
                    body.push(',');
                }
                body.push_str(key);
                body.push_str("=\"");
                match value {
                    LabelText::Static(text) => push_label_value(body, text),
                    LabelText::Owned(text) => push_label_value(body, text),
                    LabelText::Int(number) => body.push_str(itoa::Buffer::new().format(*number)),
                }
                body.push('"');
            }
            body.push('}');
        }
        body.push(' ');
        match self.kind {
            MetricKind::Info => body.push('1'),
            MetricKind::Gauge => match whole_number(value) {
                Some(whole) => body.push_str(itoa::Buffer::new().format(whole)),
                None => push_float(body, value),
            },
            MetricKind::Counter => match whole_number(value).and_then(|whole| u64::try_from(whole).ok()) {
                Some(count) => body.push_str(itoa::Buffer::new().format(count)),
                None => push_float(body, value),
            },
        }
        body.push('\n');
    }
}

impl Drop for Family<'_> {
    fn drop(&mut self) {
        if self.samples == 0 {
            self.encoder.body.truncate(self.start);
        }
    }
}

/// Whole numbers are written without a fraction (`52`, not `52.0`): shorter output, and what Huawei's dashboards
/// and most exporters show. Only values that an `f64` holds exactly qualify.
fn whole_number(value: f64) -> Option<i64> {
    const EXACT_LIMIT: f64 = 9_007_199_254_740_992.0; // 2^53
    (value.fract() == 0.0 && value.abs() <= EXACT_LIMIT).then_some(value as i64)
}

/// A value with a fraction, as both formats spell it: the shortest decimal that reads back the same (dtoa), or
/// `+Inf`, `-Inf`, `NaN`.
fn push_float(body: &mut String, value: f64) {
    if value.is_finite() {
        body.push_str(dtoa::Buffer::new().format_finite(value));
    } else if value.is_nan() {
        body.push_str("NaN");
    } else if value > 0.0 {
        body.push_str("+Inf");
    } else {
        body.push_str("-Inf");
    }
}

/// A label value, its backslashes, double quotes and line feeds escaped as both formats require.
fn push_label_value(body: &mut String, value: &str) {
    if needs_escape(value) {
        push_escaped(body, value, b"\\\"\n");
    } else {
        body.push_str(value);
    }
}

/// Whether `text` has a byte either format may escape. Without a branch per byte the check runs over whole words:
/// text to escape is rare (the plain loop of [`push_escaped`] for every value was a seventh of a render).
fn needs_escape(text: &str) -> bool {
    text.bytes().fold(false, |found, byte| found | matches!(byte, b'\\' | b'"' | b'\n'))
}

/// `text` with each of `special` (ASCII) written as its escape: `\\`, `\"`, `\n`.
#[cold]
fn push_escaped(body: &mut String, text: &str, special: &[u8]) {
    let mut clean = 0;
    for (index, byte) in text.bytes().enumerate() {
        if !special.contains(&byte) {
            continue;
        }
        body.push_str(&text[clean..index]);
        body.push_str(match byte {
            b'\\' => "\\\\",
            b'"' => "\\\"",
            _ => "\\n",
        });
        clean = index + 1;
    }
    body.push_str(&text[clean..]);
}

#[cfg(test)]
mod tests {
    use prometheus_client::collector::Collector;
    use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeLabelValue, NoLabelSet};
    use prometheus_client::metrics::exemplar::Exemplar;
    use prometheus_client::metrics::MetricType;

    use super::*;

    /// One family of test rows: name, help, kind, and rows of (series labels, own labels, value).
    type Rows = Vec<(Vec<(&'static str, String)>, Vec<(&'static str, LabelText)>, f64)>;

    fn families() -> Vec<(&'static str, &'static str, MetricKind, Rows)> {
        let odd = "a \"quoted\" back\\slash\nnew line, ünïcode".to_owned();
        let chip =
            |id: &str| vec![("id", id.to_owned()), ("model_name", "910B3".to_owned()), ("pod_name", String::new())];
        vec![
            (
                "npu_chip_info_temperature",
                "the NPU chip temperature (unit: C)",
                MetricKind::Gauge,
                vec![
                    (chip("0"), vec![], 52.0),
                    (chip("1"), vec![], -3.0),
                    (vec![("name", odd.clone())], vec![], 0.55),
                    (chip("2"), vec![], 1e-7),
                    (chip("3"), vec![], 1.5e300),
                    (chip("4"), vec![], 9_007_199_254_740_994.0),
                    (chip("5"), vec![], -0.0),
                    (chip("6"), vec![], f64::NAN),
                ],
            ),
            (
                "ascend_npu_ecc_errors",
                "ECC errors, by component and kind",
                MetricKind::Counter,
                vec![
                    (chip("0"), vec![("component", "hbm".into()), ("kind", LabelText::Int(-2))], 7.0),
                    (chip("0"), vec![("component", LabelText::Owned(odd.clone()))], 2.5),
                    (vec![], vec![("udie", LabelText::Int(1))], -1.0),
                    (vec![], vec![], 0.0),
                ],
            ),
            (
                "ascend_npu_exporter_build",
                "Exporter build",
                MetricKind::Info,
                vec![(vec![("version", odd)], vec![], 1.0)],
            ),
            (
                "machine_npu_nums",
                "Amount of NPU chips on the machine",
                MetricKind::Gauge,
                vec![(vec![], vec![("a", LabelText::Static("b"))], 8.0)],
            ),
            ("ascend_npu_empty", "A family without samples", MetricKind::Gauge, vec![]),
        ]
    }

    fn ours(format: ExpositionFormat) -> String {
        let mut encoder = TextEncoder::new(format, 0);
        for (name, help, kind, rows) in families() {
            let mut family = encoder.family(name, help, kind);
            for (series, own, value) in &rows {
                family.sample(&SeriesText::new(series), own, *value);
            }
        }
        encoder.finish()
    }

    /// The same families through prometheus-client, as the exporter rendered them before this module.
    #[derive(Debug)]
    struct Reference;

    #[derive(Debug)]
    struct Labels<'a>(&'a [(&'static str, String)], &'a [(&'static str, LabelText)]);

    #[derive(Debug)]
    struct Value<'a>(&'a LabelText);

    impl EncodeLabelValue for Value<'_> {
        fn encode(&self, encoder: &mut prometheus_client::encoding::LabelValueEncoder<'_>) -> std::fmt::Result {
            use std::fmt::Write;
            match self.0 {
                LabelText::Static(text) => encoder.write_str(text),
                LabelText::Int(number) => write!(encoder, "{number}"),
                LabelText::Owned(text) => encoder.write_str(text),
            }
        }
    }

    impl EncodeLabelSet for Labels<'_> {
        fn encode(&self, encoder: &mut prometheus_client::encoding::LabelSetEncoder<'_>) -> std::fmt::Result {
            use prometheus_client::encoding::EncodeLabel;
            for (key, value) in self.0 {
                (*key, value.as_str()).encode(encoder.encode_label())?;
            }
            for (key, value) in self.1 {
                (*key, Value(value)).encode(encoder.encode_label())?;
            }
            Ok(())
        }
    }

    impl Collector for Reference {
        fn encode(&self, mut encoder: DescriptorEncoder<'_>) -> std::fmt::Result {
            for (name, help, kind, rows) in families() {
                if rows.is_empty() {
                    continue;
                }
                let metric_type = match kind {
                    MetricKind::Gauge => MetricType::Gauge,
                    MetricKind::Counter => MetricType::Counter,
                    MetricKind::Info => MetricType::Info,
                };
                let mut metric = encoder.encode_descriptor(name, help, None, metric_type)?;
                for (series, own, value) in &rows {
                    let labels = Labels(series, own);
                    match kind {
                        MetricKind::Gauge => match whole_number(*value) {
                            Some(whole) => metric.encode_family(&labels)?.encode_gauge(&whole)?,
                            None => metric.encode_family(&labels)?.encode_gauge(value)?,
                        },
                        MetricKind::Counter => {
                            let mut family = metric.encode_family(&labels)?;
                            let no_exemplar = None::<&Exemplar<NoLabelSet, f64>>;
                            match whole_number(*value).and_then(|whole| u64::try_from(whole).ok()) {
                                Some(count) => family.encode_counter::<NoLabelSet, u64, f64>(&count, no_exemplar)?,
                                None => family.encode_counter::<NoLabelSet, f64, f64>(value, no_exemplar)?,
                            }
                        }
                        MetricKind::Info => metric.encode_info(&labels)?,
                    }
                }
            }
            Ok(())
        }
    }

    fn reference(format: ExpositionFormat) -> String {
        let mut registry = prometheus_client::registry::Registry::default();
        registry.register_collector(Box::new(Reference));
        let mut text = String::new();
        match format {
            ExpositionFormat::OpenMetrics => prometheus_client::encoding::text::encode(&mut text, &registry),
            ExpositionFormat::ClassicText => prometheus_client::encoding::prometheus_text::encode(&mut text, &registry),
        }
        .expect("renders");
        text
    }

    #[test]
    fn series_text_escapes_values_and_joins_labels() {
        let labels: Vec<(&'static str, String)> =
            vec![("id", "3".into()), ("name", "a \"q\" b\\s\nn".into()), ("pod", String::new())];
        assert_eq!(SeriesText::new(&labels).as_str(), r#"id="3",name="a \"q\" b\\s\nn",pod="""#);
        assert_eq!(SeriesText::new(&[]).as_str(), "");
    }

    #[test]
    fn as_prometheus_client_wrote() {
        for format in [ExpositionFormat::OpenMetrics, ExpositionFormat::ClassicText] {
            let ours = ours(format);
            let reference = reference(format);
            assert_eq!(ours.lines().count(), reference.lines().count(), "{format:?}:\n{ours}\n---\n{reference}");
            for (line, (ours, reference)) in ours.lines().zip(reference.lines()).enumerate() {
                assert_eq!(ours, reference, "{format:?} line {line}");
            }
        }
    }

    #[test]
    fn what_the_formats_require_where_prometheus_client_departs() {
        let mut encoder = TextEncoder::new(ExpositionFormat::OpenMetrics, 0);
        let mut family = encoder.family("m", "a \"quoted\" back\\slash\nhelp", MetricKind::Gauge);
        for value in [f64::INFINITY, f64::NEG_INFINITY, 0.25] {
            family.sample(&SeriesText::default(), &[], value);
        }
        drop(family);
        let text = encoder.finish();
        let help = r#"# HELP m a \"quoted\" back\\slash\nhelp"#;
        assert_eq!(text, format!("{help}\n# TYPE m gauge\nm +Inf\nm -Inf\nm 0.25\n# EOF\n"));
        // The classic format escapes backslashes and line feeds in a help text, not double quotes (as prometheus-client
        // and client_golang's expfmt write it).
        let mut classic = TextEncoder::new(ExpositionFormat::ClassicText, 0);
        let help = "a \"quoted\" back\\slash\nhelp";
        classic.family("m", help, MetricKind::Gauge).sample(&SeriesText::default(), &[], f64::INFINITY);
        assert_eq!(classic.finish(), "# HELP m a \"quoted\" back\\\\slash\\nhelp\n# TYPE m gauge\nm +Inf\n");
    }

    #[test]
    fn a_family_without_samples_leaves_nothing() {
        let mut encoder = TextEncoder::new(ExpositionFormat::ClassicText, 0);
        drop(encoder.family("empty", "nothing", MetricKind::Counter));
        encoder.family("kept", "one", MetricKind::Counter).sample(&SeriesText::default(), &[], 3.0);
        assert_eq!(encoder.finish(), "# HELP kept_total one\n# TYPE kept_total counter\nkept_total 3\n");
    }
}
