//! What a scrape gets, exposition format and content coding, from its `Accept` and `Accept-Encoding` headers.
//!
//! A scraper sends the same two headers on every scrape, so each serving thread remembers the last pair it read and
//! its outcome, and answers a repeat by comparing bytes instead of reading the weighted lists again. Measured on a
//! 2-CPU machine serving gzip scrapes of 64 chips from the cache (`perf` over wrk, Prometheus's `Accept` header):
//! reading both lists took about 5 % of the exporter's CPU per scrape served from the cache.

use std::cell::RefCell;

use hyper::header::HeaderValue;

use crate::content_coding::ContentCoding;
use crate::exposition_format::ExpositionFormat;

/// Headers longer than this are negotiated every time rather than remembered (real scrapers send under 200 bytes).
const LONGEST_REMEMBERED: usize = 512;

/// The format and coding of one scrape's response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Negotiated {
    /// From `Accept`.
    pub format: ExpositionFormat,
    /// From `Accept-Encoding`.
    pub coding: ContentCoding,
}

impl Negotiated {
    /// Negotiates both from the header values (`None` when a header is absent). A value that is not visible ASCII
    /// ([`HeaderValue::to_str`] fails) counts as absent, as a header that cannot be read.
    pub fn from_headers(accept: Option<&HeaderValue>, accept_encoding: Option<&HeaderValue>) -> Self {
        LAST_SEEN.with(|last| {
            let mut last = last.borrow_mut();
            if let Some(remembered) = last.as_ref().filter(|seen| seen.matches(accept, accept_encoding)) {
                return remembered.outcome;
            }
            let outcome = Self::read(accept, accept_encoding);
            let short = |value: Option<&HeaderValue>| value.is_none_or(|value| value.len() <= LONGEST_REMEMBERED);
            if short(accept) && short(accept_encoding) {
                let seen = last.get_or_insert_with(Seen::default);
                seen.accept.set(accept);
                seen.accept_encoding.set(accept_encoding);
                seen.outcome = outcome;
            }
            outcome
        })
    }

    /// Reads both headers, without the memory of earlier scrapes.
    pub fn read(accept: Option<&HeaderValue>, accept_encoding: Option<&HeaderValue>) -> Self {
        Self {
            format: ExpositionFormat::negotiate(accept.and_then(|value| value.to_str().ok())),
            coding: ContentCoding::negotiate(accept_encoding.and_then(|value| value.to_str().ok())),
        }
    }
}

thread_local! {
    /// The last pair of headers this thread negotiated, and what they gave.
    static LAST_SEEN: RefCell<Option<Seen>> = const { RefCell::new(None) };
}

#[derive(Default)]
struct Seen {
    accept: RememberedHeader,
    accept_encoding: RememberedHeader,
    outcome: Negotiated,
}

impl Seen {
    fn matches(&self, accept: Option<&HeaderValue>, accept_encoding: Option<&HeaderValue>) -> bool {
        self.accept.is(accept) && self.accept_encoding.is(accept_encoding)
    }
}

/// One header value as last seen; its buffer is reused, so remembering a new value allocates only when it is longer
/// than every earlier one.
#[derive(Default)]
struct RememberedHeader {
    present: bool,
    bytes: Vec<u8>,
}

impl RememberedHeader {
    fn is(&self, value: Option<&HeaderValue>) -> bool {
        match value {
            None => !self.present,
            Some(value) => self.present && self.bytes == value.as_bytes(),
        }
    }

    fn set(&mut self, value: Option<&HeaderValue>) {
        self.present = value.is_some();
        self.bytes.clear();
        self.bytes.extend_from_slice(value.map_or(&[], HeaderValue::as_bytes));
    }
}

impl Default for Negotiated {
    fn default() -> Self {
        Self::read(None, None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PROMETHEUS_ACCEPT: &[u8] = b"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";

    /// `Accept`, `Accept-Encoding`, and what they negotiate.
    type Case = (Option<&'static [u8]>, Option<&'static [u8]>, Negotiated);

    /// [`Negotiated::from_headers`] over header values made from bytes.
    fn negotiated(accept: Option<&[u8]>, accept_encoding: Option<&[u8]>) -> Negotiated {
        let value = |bytes: &[u8]| HeaderValue::from_bytes(bytes).expect("a valid header value");
        Negotiated::from_headers(accept.map(value).as_ref(), accept_encoding.map(value).as_ref())
    }

    fn both(format: ExpositionFormat, coding: ContentCoding) -> Negotiated {
        Negotiated { format, coding }
    }

    #[test]
    fn remembered_answers_equal_fresh_ones_whatever_the_order() {
        let cases: [Case; 6] = [
            (Some(PROMETHEUS_ACCEPT), Some(b"gzip"), both(ExpositionFormat::OpenMetrics, ContentCoding::Gzip)),
            (Some(PROMETHEUS_ACCEPT), None, both(ExpositionFormat::OpenMetrics, ContentCoding::Identity)),
            (None, Some(b"gzip"), both(ExpositionFormat::ClassicText, ContentCoding::Gzip)),
            (None, None, both(ExpositionFormat::ClassicText, ContentCoding::Identity)),
            (Some(b""), Some(b""), both(ExpositionFormat::ClassicText, ContentCoding::Identity)),
            (Some(PROMETHEUS_ACCEPT), Some(b"gzip;q=0"), both(ExpositionFormat::OpenMetrics, ContentCoding::Identity)),
        ];
        // Every case after every other, twice, so each answer is given both fresh and remembered.
        for _ in 0..2 {
            for (first_accept, first_encoding, first_expected) in cases {
                for (accept, encoding, expected) in cases {
                    assert_eq!(negotiated(first_accept, first_encoding), first_expected);
                    assert_eq!(negotiated(accept, encoding), expected, "{accept:?} {encoding:?}");
                    assert_eq!(negotiated(accept, encoding), expected, "{accept:?} {encoding:?}");
                }
            }
        }
    }

    #[test]
    fn a_header_that_changes_is_read_again() {
        assert_eq!(negotiated(None, Some(b"gzip")).coding, ContentCoding::Gzip);
        assert_eq!(negotiated(None, Some(b"gzip;q=0")).coding, ContentCoding::Identity);
        assert_eq!(negotiated(None, None).coding, ContentCoding::Identity);
        assert_eq!(negotiated(None, Some(b"identity;q=0, gzip")).coding, ContentCoding::Gzip);
        assert_eq!(negotiated(Some(b"application/openmetrics-text"), None).format, ExpositionFormat::OpenMetrics);
        assert_eq!(negotiated(Some(b"application/openmetrics-text;q=0"), None).format, ExpositionFormat::ClassicText);
    }

    #[test]
    fn long_headers_are_negotiated_but_not_remembered() {
        let long = format!("{}, gzip", "x-unknown".repeat(LONGEST_REMEMBERED / 8));
        assert_eq!(negotiated(None, Some(long.as_bytes())).coding, ContentCoding::Gzip);
        LAST_SEEN.with(|last| {
            let last = last.borrow();
            let long = HeaderValue::from_str(&long).expect("a valid header value");
            assert!(last.as_ref().is_none_or(|seen| !seen.matches(None, Some(&long))));
        });
    }

    #[test]
    fn unreadable_values_count_as_absent() {
        assert_eq!(negotiated(None, Some(b"gz\xffip")).coding, ContentCoding::Identity);
        assert_eq!(negotiated(Some(b"application/openmetrics-text\xe9"), None).format, ExpositionFormat::ClassicText);
    }
}
