//! Choosing the exposition format from the scraper's `Accept` header.

use ascend_cli::OPENMETRICS_CONTENT_TYPE;

use crate::quality_values::weighted_elements;

/// `Content-Type` of the classic Prometheus text format 0.0.4.
const CLASSIC_TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// The two text formats a scrape can get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExpositionFormat {
    /// OpenMetrics text (ends with `# EOF`); what Prometheus asks for first.
    OpenMetrics,
    /// Prometheus text format 0.0.4; the default for clients that do not ask for OpenMetrics (curl, older tools).
    ClassicText,
}

impl ExpositionFormat {
    /// The response `Content-Type`.
    pub const fn content_type(self) -> &'static str {
        match self {
            ExpositionFormat::OpenMetrics => OPENMETRICS_CONTENT_TYPE,
            ExpositionFormat::ClassicText => CLASSIC_TEXT_CONTENT_TYPE,
        }
    }

    /// Picks the format by the quality values of an `Accept` header: OpenMetrics if it is acceptable (q > 0) and
    /// preferred at least as much as `text/plain`; the classic format otherwise, also without a header or for a
    /// malformed one (as client_golang's promhttp does).
    pub fn negotiate(accept: Option<&str>) -> Self {
        let Some(accept) = accept else { return ExpositionFormat::ClassicText };
        let mut openmetrics_q: Option<f32> = None;
        let mut text_q: f32 = 0.0;
        for (media_type, quality) in weighted_elements(accept) {
            if media_type.eq_ignore_ascii_case("application/openmetrics-text") {
                openmetrics_q = Some(openmetrics_q.map_or(quality, |q: f32| q.max(quality)));
            } else if ["text/plain", "text/*", "*/*"].iter().any(|text| media_type.eq_ignore_ascii_case(text)) {
                text_q = text_q.max(quality);
            }
        }
        match openmetrics_q {
            Some(q) if q > 0.0 && q >= text_q => ExpositionFormat::OpenMetrics,
            _ => ExpositionFormat::ClassicText,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prometheus_gets_openmetrics() {
        let prometheus_2_42 = "application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert_eq!(ExpositionFormat::negotiate(Some(prometheus_2_42)), ExpositionFormat::OpenMetrics);
    }

    #[test]
    fn plain_clients_get_the_classic_format() {
        assert_eq!(ExpositionFormat::negotiate(None), ExpositionFormat::ClassicText);
        assert_eq!(ExpositionFormat::negotiate(Some("*/*")), ExpositionFormat::ClassicText);
        assert_eq!(ExpositionFormat::negotiate(Some("text/plain;version=0.0.4")), ExpositionFormat::ClassicText);
    }

    #[test]
    fn quality_values_decide() {
        let prefers_text = "application/openmetrics-text;q=0.3, text/plain;q=0.9";
        assert_eq!(ExpositionFormat::negotiate(Some(prefers_text)), ExpositionFormat::ClassicText);
        let refuses = "application/openmetrics-text;q=0";
        assert_eq!(ExpositionFormat::negotiate(Some(refuses)), ExpositionFormat::ClassicText);
        let garbage_q = "application/openmetrics-text;q=abc";
        assert_eq!(ExpositionFormat::negotiate(Some(garbage_q)), ExpositionFormat::ClassicText);
    }
}
