//! Choosing the response's content coding from the scraper's `Accept-Encoding` header (RFC 9110 §12.5.3), and gzip.
//!
//! Prometheus sends `Accept-Encoding: gzip` on every scrape, and exposition text is so repetitive that gzip leaves
//! about a tenth of it. Only gzip is offered: every Prometheus-compatible scraper accepts it, and one compressed copy
//! per cached body keeps the cache small.

use std::io::Write;

use flate2::write::GzEncoder;
use flate2::Compression;

use crate::quality_values::weighted_elements;

/// The gzip level of every compressed body, chosen by measurement (docs/npu-exporter.md, "Why level 1": every level
/// on the exporter's 8-, 64- and 256-chip bodies, `benches/exporter_render.rs`, group `gzip_level`): level 1 leaves
/// 5 to 10 % of the plain bytes, within the 15 % target, while level 6 saves 0.6 % more of the plain for three times
/// the CPU and level 9 under 1 % more for ten times, CPU paid once per sampler round, or per scrape with
/// `--metrics.cache-max-age=0s`. tests/compression.rs holds it to at most 15 % on an 8-chip node.
const GZIP_LEVEL: u32 = 1;

/// A response body's content coding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentCoding {
    /// The plain body.
    Identity,
    /// The body compressed with gzip (`Content-Encoding: gzip`).
    Gzip,
}

impl ContentCoding {
    /// The `Content-Encoding` header value, `None` for the plain body (which carries no such header).
    pub const fn header_value(self) -> Option<&'static str> {
        match self {
            ContentCoding::Identity => None,
            ContentCoding::Gzip => Some("gzip"),
        }
    }

    /// Picks the coding from an `Accept-Encoding` header by its weights: gzip when it (or `x-gzip`, or `*` when gzip
    /// is not named) is acceptable (q > 0) and weighted at least as much as identity; the plain body otherwise, also
    /// without a header, for an empty one, or when nothing offered is acceptable (RFC 9110 lets a server answer
    /// without a coding rather than fail the scrape). Identity is acceptable unless `identity` or `*` (when identity
    /// is not named) says q=0. An element with a malformed weight counts as absent.
    pub fn negotiate(accept_encoding: Option<&str>) -> Self {
        let Some(header) = accept_encoding else { return ContentCoding::Identity };
        let (mut gzip, mut identity, mut any) = (None, None, None);
        for (coding, weight) in weighted_elements(header) {
            let slot: &mut Option<f32> = if coding.eq_ignore_ascii_case("gzip") || coding.eq_ignore_ascii_case("x-gzip")
            {
                &mut gzip
            } else if coding.eq_ignore_ascii_case("identity") {
                &mut identity
            } else if coding == "*" {
                &mut any
            } else {
                continue;
            };
            *slot = Some(slot.map_or(weight, |previous| previous.max(weight)));
        }
        let gzip = gzip.or(any).unwrap_or(0.0);
        // Not named (and no `*`), identity stays acceptable but states no preference: any acceptable gzip wins.
        let identity = identity.or(any).unwrap_or(0.0);
        if gzip > 0.0 && gzip >= identity {
            ContentCoding::Gzip
        } else {
            ContentCoding::Identity
        }
    }
}

/// `plain` compressed with gzip at [`GZIP_LEVEL`].
pub(crate) fn gzip(plain: &[u8]) -> Vec<u8> {
    // Exposition text shrinks about tenfold: start there so that the buffer grows at most once or twice.
    let mut encoder = GzEncoder::new(Vec::with_capacity(plain.len() / 8 + 64), Compression::new(GZIP_LEVEL));
    // Writing into a Vec cannot fail; an error here would be a bug in flate2, not bad input.
    encoder.write_all(plain).expect("gzip into memory");
    encoder.finish().expect("gzip into memory")
}

#[cfg(test)]
mod tests {
    use std::io::Read;

    use super::*;

    fn negotiated(header: &str) -> ContentCoding {
        ContentCoding::negotiate(Some(header))
    }

    #[test]
    fn gzip_when_asked_for() {
        // Prometheus 2.42 sends exactly the first.
        assert_eq!(negotiated("gzip"), ContentCoding::Gzip);
        assert_eq!(negotiated("GZIP"), ContentCoding::Gzip);
        assert_eq!(negotiated("x-gzip"), ContentCoding::Gzip);
        assert_eq!(negotiated("deflate, gzip;q=0.5, br"), ContentCoding::Gzip);
        assert_eq!(negotiated("gzip, deflate, br, zstd"), ContentCoding::Gzip);
    }

    #[test]
    fn plain_without_a_header_or_for_identity() {
        assert_eq!(ContentCoding::negotiate(None), ContentCoding::Identity);
        assert_eq!(negotiated(""), ContentCoding::Identity);
        assert_eq!(negotiated("identity"), ContentCoding::Identity);
        assert_eq!(negotiated("br, deflate"), ContentCoding::Identity);
    }

    #[test]
    fn weights_decide() {
        assert_eq!(negotiated("gzip;q=0"), ContentCoding::Identity);
        assert_eq!(negotiated("gzip; q=0.000"), ContentCoding::Identity);
        assert_eq!(negotiated("gzip;q=0.5, identity;q=0.8"), ContentCoding::Identity);
        assert_eq!(negotiated("gzip;q=0.8, identity;q=0.5"), ContentCoding::Gzip);
        assert_eq!(negotiated("gzip;q=0.5, identity;q=0"), ContentCoding::Gzip);
        assert_eq!(negotiated("gzip;q=0.2, gzip;q=0.9, identity;q=0.5"), ContentCoding::Gzip);
        assert_eq!(negotiated("gzip;q=abc"), ContentCoding::Identity, "a malformed q counts as absent");
        assert_eq!(negotiated("gzip;q=2"), ContentCoding::Identity, "q above 1 is malformed");
    }

    #[test]
    fn the_wildcard_stands_for_unnamed_codings() {
        assert_eq!(negotiated("*"), ContentCoding::Gzip);
        assert_eq!(negotiated("*;q=0.5"), ContentCoding::Gzip, "identity is covered by * too");
        assert_eq!(negotiated("*;q=0"), ContentCoding::Identity, "nothing acceptable: plain rather than an error");
        assert_eq!(negotiated("gzip;q=0, *"), ContentCoding::Identity, "named gzip wins over *");
        assert_eq!(negotiated("identity;q=0.1, *"), ContentCoding::Gzip);
    }

    #[test]
    fn gzip_round_trips() {
        let plain = "ascend_npu_temperature_celsius{chip=\"0\"} 47\n".repeat(200);
        let compressed = gzip(plain.as_bytes());
        assert!(compressed.len() * 10 < plain.len(), "{} of {} bytes", compressed.len(), plain.len());
        let mut decoded = String::new();
        flate2::read::GzDecoder::new(compressed.as_slice()).read_to_string(&mut decoded).expect("valid gzip");
        assert_eq!(decoded, plain);
    }
}
