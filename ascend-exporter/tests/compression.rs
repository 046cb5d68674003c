//! gzip on /metrics as scrapers negotiate it: which requests get a compressed body, that it decodes to exactly the
//! plain body of the same sampler round, and that the headers tell caches and clients what they got.

mod support;

use std::io::Read;

use support::{get, write_topology, Exporter, Response, PROMETHEUS_ACCEPT};

support::child_entry!();

/// Request headers of one case.
type Headers<'a> = &'a [(&'a str, &'a str)];

fn running_exporter(extra_args: &[&str]) -> (tempfile::TempDir, Exporter) {
    let dir = tempfile::tempdir().expect("temp dir");
    let topology = write_topology(dir.path(), 8, "");
    let mut args = vec!["--pod-resources.disable"];
    args.extend_from_slice(extra_args);
    let exporter = Exporter::start(&topology, &args, &[]);
    exporter.wait_healthy();
    (dir, exporter)
}

fn gunzip(bytes: &[u8]) -> Vec<u8> {
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(bytes).read_to_end(&mut plain).expect("a valid gzip stream");
    plain
}

fn scrape(exporter: &Exporter, headers: &[(&str, &str)]) -> Response {
    let response = get(exporter.address, "/metrics", headers).expect("scrape");
    assert_eq!(response.status, 200);
    let vary = response.header("vary").unwrap_or_default().to_ascii_lowercase();
    assert!(vary.split(',').any(|name| name.trim() == "accept-encoding"), "Vary: {vary}");
    assert_eq!(response.header("content-length"), Some(response.bytes.len().to_string().as_str()));
    response
}

#[test]
fn accept_encoding_decides_the_coding() {
    let (_dir, exporter) = running_exporter(&[]);
    let cases: [(Headers<'_>, Option<&str>); 8] = [
        (&[("Accept-Encoding", "gzip")], Some("gzip")),
        (&[("Accept-Encoding", "gzip;q=0")], None),
        (&[("Accept-Encoding", "identity")], None),
        (&[("Accept-Encoding", "*")], Some("gzip")),
        (&[], None),
        (&[("Accept-Encoding", "br, deflate")], None),
        (&[("Accept-Encoding", "gzip;q=0.4, identity;q=0.9")], None),
        (&[("Accept", PROMETHEUS_ACCEPT), ("Accept-Encoding", "gzip")], Some("gzip")),
    ];
    for (headers, expected) in cases {
        let response = scrape(&exporter, headers);
        assert_eq!(response.header("content-encoding"), expected, "{headers:?}");
        let plain = if expected.is_some() { gunzip(&response.bytes) } else { response.bytes.clone() };
        let text = String::from_utf8(plain).expect("UTF-8 exposition");
        assert!(text.contains("ascend_npu_chips 8"), "{headers:?}");
        let openmetrics = headers.iter().any(|(_, value)| *value == PROMETHEUS_ACCEPT);
        assert_eq!(text.ends_with("# EOF\n"), openmetrics, "{headers:?}");
        let content_type = response.header("content-type").unwrap_or_default();
        assert_eq!(content_type.starts_with("application/openmetrics-text"), openmetrics, "{content_type}");
    }
}

#[test]
fn gzip_decodes_to_the_plain_body_of_the_same_round() {
    // One body per render: a plain and a gzip scrape that carry the same sample timestamps and ages (ages are taken at
    // render time) saw the same render. Timestamps alone no longer tell: the slow bandwidth group's chains commit
    // before its round ends, and the round's end renders again with the same timestamps.
    let (_dir, exporter) = running_exporter(&["--metrics.cache-max-age=1h"]);
    let round_marker = |text: &[u8]| -> String {
        let text = String::from_utf8_lossy(text);
        text.lines()
            .filter(|line| {
                line.starts_with("ascend_npu_sample_timestamp_seconds{")
                    || line.starts_with("ascend_npu_sample_age_seconds{")
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    for accept in [PROMETHEUS_ACCEPT, "text/plain"] {
        let same_round = (0..20).find_map(|_| {
            let plain = scrape(&exporter, &[("Accept", accept)]);
            let compressed = scrape(&exporter, &[("Accept", accept), ("Accept-Encoding", "gzip")]);
            let decoded = gunzip(&compressed.bytes);
            (round_marker(&plain.bytes) == round_marker(&decoded)).then_some((plain, compressed, decoded))
        });
        let (plain, compressed, decoded) = same_round.expect("two scrapes of the same sampler round in 20 tries");
        assert!(!round_marker(&plain.bytes).is_empty(), "sample timestamps are served");
        assert_eq!(decoded, plain.bytes, "{accept}: gzip of the same round decodes to the plain body");
        assert!(
            compressed.bytes.len() * 100 <= plain.bytes.len() * 15,
            "{accept}: {} gzip bytes for {} plain bytes",
            compressed.bytes.len(),
            plain.bytes.len()
        );
    }
}
