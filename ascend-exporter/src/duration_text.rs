//! Durations written as text in configuration files: `500ms`, `5s`, `2m`, `1h`.

use std::time::Duration;

/// A duration that is not `<integer><unit>` with unit `ms`, `s`, `m` or `h`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid duration {0:?}; expected an integer and a unit: ms, s, m or h (for example \"500ms\" or \"5s\")")]
pub struct DurationTextError(pub String);

/// Parses `<integer><unit>`.
///
/// # Errors
/// [`DurationTextError`] for anything else, including overflow.
pub fn parse_duration(text: &str) -> Result<Duration, DurationTextError> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit()).unwrap_or(trimmed.len());
    let (digits, unit) = trimmed.split_at(split);
    let bad = || DurationTextError(text.to_owned());
    let amount: u64 = digits.parse().map_err(|_| bad())?;
    let millis_per_unit: u64 = match unit {
        "ms" => 1,
        "s" => 1_000,
        "m" => 60_000,
        "h" => 3_600_000,
        _ => return Err(bad()),
    };
    amount.checked_mul(millis_per_unit).map(Duration::from_millis).ok_or_else(bad)
}

/// Formats a duration in the largest unit that represents it exactly (sub-millisecond parts are dropped).
pub fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    match millis {
        0 => "0ms".to_owned(),
        m if m % 3_600_000 == 0 => format!("{}h", m / 3_600_000),
        m if m % 60_000 == 0 => format!("{}m", m / 60_000),
        m if m % 1_000 == 0 => format!("{}s", m / 1_000),
        m => format!("{m}ms"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_every_unit() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration(" 5s "), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("1h"), Ok(Duration::from_secs(3600)));
    }

    #[test]
    fn rejects_malformed_text() {
        for text in ["", "5", "s", "1.5s", "-1s", "5 s", "5sec", "99999999999999999999h"] {
            assert!(parse_duration(text).is_err(), "{text}");
        }
    }

    #[test]
    fn formats_in_the_largest_exact_unit() {
        for text in ["500ms", "1500ms", "5s", "2m", "90s", "1h"] {
            assert_eq!(parse_duration(text).map(format_duration).as_deref(), Ok(text));
        }
    }
}
