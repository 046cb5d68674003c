//! Durations on the command line: `500ms`, `5s`, `2m`, or a plain number of seconds.

use std::time::Duration;

/// Parses `500ms`, `1.5s`, `2m` or `5` (seconds).
///
/// # Errors
/// A message quoting the text when it is not a non-negative number with an optional `ms`, `s` or `m` unit.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    let (number, scale) = if let Some(ms) = text.strip_suffix("ms") {
        (ms, 0.001)
    } else if let Some(s) = text.strip_suffix('s') {
        (s, 1.0)
    } else if let Some(m) = text.strip_suffix('m') {
        (m, 60.0)
    } else {
        (text, 1.0)
    };
    let value: f64 = number.trim().parse().map_err(|_| format!("invalid duration {text:?}; use 500ms, 5s or 2m"))?;
    if !value.is_finite() || value < 0.0 {
        return Err(format!("invalid duration {text:?}; it must be a non-negative number"));
    }
    Duration::try_from_secs_f64(value * scale).map_err(|e| format!("invalid duration {text:?}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn units_and_plain_seconds() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("5"), Ok(Duration::from_secs(5)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("-1s").is_err());
    }
}
