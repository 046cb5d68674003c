//! Reading the weighted lists of the `Accept` and `Accept-Encoding` request headers (RFC 9110 §12.4.2): elements
//! separated by commas, each a token with optional `;`-parameters, one of them the weight `q`.
//!
//! Both negotiations ([`crate::exposition_format`], [`crate::content_coding`]) read the list the same way, so a scraper
//! that writes its weights oddly gets the same treatment from both.

/// The elements of `header` with their weights: the token as written (trimmed), and `q`, 1 when absent. An element
/// whose `q` is not a number from 0 to 1 is left out, as if it were not written (rather than failing the scrape).
pub(crate) fn weighted_elements(header: &str) -> impl Iterator<Item = (&str, f32)> {
    header.split(',').filter_map(|element| {
        let mut parts = element.split(';').map(str::trim);
        let token = parts.next().unwrap_or_default();
        let weight = parts
            .filter_map(|parameter| parameter.split_once('='))
            .find(|(key, _)| key.trim().eq_ignore_ascii_case("q"))
            .map_or(Some(1.0), |(_, value)| value.trim().parse::<f32>().ok())?;
        (0.0..=1.0).contains(&weight).then_some((token, weight))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_with_their_weights() {
        let elements: Vec<_> =
            weighted_elements("gzip, br;q=0.5 , identity; q=0, text/plain;version=0.0.4;q=0.25").collect();
        assert_eq!(elements, [("gzip", 1.0), ("br", 0.5), ("identity", 0.0), ("text/plain", 0.25)]);
    }

    #[test]
    fn malformed_weights_drop_their_element() {
        let elements: Vec<_> = weighted_elements("gzip;q=abc, br;q=2, deflate;q=-1, zstd;q=NaN, x;q=1").collect();
        assert_eq!(elements, [("x", 1.0)]);
    }
}
