//! One duration grammar for every flag, environment variable and configuration file of the tools.
//!
//! The grammar is [`humantime`]'s (`500ms`, `5s`, `1.5s`, `2m`, `1h30m`, `1h 30m`, `2min`, `1d`), plus a plain
//! non-negative number, which means seconds. Before this crate the tools had four parsers; every text one of them
//! accepted is still accepted with the same meaning:
//!
//! | former parser | accepted | now also accepted |
//! |---|---|---|
//! | device plugin and node labeller flags | `500ms`, `1.5s`, `2m`, `5` (seconds) | `h`, `d`, long unit names (`5sec`, `2min`), compound values |
//! | exporter flags and `[groups.*] interval` | `<integer>ms/s/m/h` | fractions, plain seconds, compound values |
//! | `ascend-smi events --duration/--poll-interval` | seconds (`0.5`, `10`) | units (`500ms`, `1m`) |
//! | `ascend-doctor --timeout` | whole seconds | units and fractions |
//!
//! Negative values, `inf`, `NaN`, exponents and unknown units are errors that quote the text.

use std::time::Duration;

/// A duration that could not be read, or one outside the range a flag allows.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DurationError {
    /// Not a duration at all.
    #[error("invalid duration {text:?}: {reason}; write for example 500ms, 5s, 1.5s, 2m, 1h30m, or plain seconds")]
    Invalid {
        /// The text as given.
        text: String,
        /// What is wrong with it.
        reason: String,
    },
    /// A duration, but outside the allowed range.
    #[error("duration {text:?} is out of range: it must be at least {} and at most {}", format_duration(*min), format_duration(*max))]
    OutOfRange {
        /// The text as given.
        text: String,
        /// The shortest duration allowed.
        min: Duration,
        /// The longest duration allowed.
        max: Duration,
    },
}

/// Parses a duration: humantime's grammar, or a plain non-negative number of seconds.
///
/// # Errors
/// [`DurationError::Invalid`] quoting the text.
pub fn parse_duration(text: &str) -> Result<Duration, DurationError> {
    let trimmed = text.trim();
    let invalid = |reason: String| DurationError::Invalid { text: text.to_owned(), reason };
    if is_plain_number(trimmed) {
        let seconds: f64 = trimmed.parse().map_err(|error| invalid(format!("{error}")))?;
        return Duration::try_from_secs_f64(seconds).map_err(|error| invalid(error.to_string()));
    }
    humantime::parse_duration(trimmed).map_err(|error| invalid(error.to_string()))
}

/// [`parse_duration`], refusing zero: for periods and deadlines, where zero would mean a busy loop or no time at all.
///
/// # Errors
/// [`DurationError::Invalid`] for bad text, [`DurationError::OutOfRange`] for zero.
pub fn parse_positive_duration(text: &str) -> Result<Duration, DurationError> {
    check_range(text, parse_duration(text)?, Duration::from_nanos(1), Duration::MAX)
}

/// A clap value parser (or plain function) accepting durations from `min` to `max`, both included.
///
/// ```
/// use std::time::Duration;
/// let poll = ascend_cli::duration::duration_between(Duration::from_millis(100), Duration::from_secs(60));
/// assert_eq!(poll("250ms"), Ok(Duration::from_millis(250)));
/// assert!(poll("2m").is_err());
/// ```
pub fn duration_between(
    min: Duration,
    max: Duration,
) -> impl Fn(&str) -> Result<Duration, DurationError> + Clone + Send + Sync + 'static {
    move |text| check_range(text, parse_duration(text)?, min, max)
}

/// Formats a duration in the largest unit that represents it exactly (`90s`, `1500ms`, `2m`, `1h`), so that it reads
/// back through [`parse_duration`] to the same value. Parts below a millisecond are dropped: no flag needs them.
pub fn format_duration(duration: Duration) -> String {
    const UNITS: [(u128, &str); 4] = [(3_600_000, "h"), (60_000, "m"), (1_000, "s"), (1, "ms")];
    let millis = duration.as_millis();
    if millis == 0 {
        return "0s".to_owned();
    }
    let (per_unit, unit) =
        UNITS.into_iter().find(|(per_unit, _)| millis.is_multiple_of(*per_unit)).unwrap_or((1, "ms"));
    format!("{}{unit}", millis / per_unit)
}

fn check_range(text: &str, duration: Duration, min: Duration, max: Duration) -> Result<Duration, DurationError> {
    if duration < min || duration > max {
        return Err(DurationError::OutOfRange { text: text.to_owned(), min, max });
    }
    Ok(duration)
}

/// Digits with at most one decimal point: the plain-seconds form. Kept this narrow so that `inf`, `NaN` and `1e3`,
/// which Rust's float parser would take, stay errors.
fn is_plain_number(text: &str) -> bool {
    let mut parts = text.splitn(2, '.');
    let whole = parts.next().unwrap_or_default();
    let fraction = parts.next();
    let digits = |part: &str| part.bytes().all(|byte| byte.is_ascii_digit());
    !text.is_empty() && text != "." && digits(whole) && fraction.is_none_or(digits)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_former_grammar_still_parses_to_the_same_value() {
        let cases = [
            ("500ms", Duration::from_millis(500)),
            ("1.5s", Duration::from_millis(1500)),
            ("2m", Duration::from_secs(120)),
            ("5", Duration::from_secs(5)),
            (" 5s ", Duration::from_secs(5)),
            ("1h", Duration::from_secs(3600)),
            ("0.5", Duration::from_millis(500)),
            ("10", Duration::from_secs(10)),
            ("0", Duration::ZERO),
        ];
        for (text, expected) in cases {
            assert_eq!(parse_duration(text), Ok(expected), "{text}");
        }
    }

    #[test]
    fn compound_values_and_long_unit_names() {
        assert_eq!(parse_duration("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse_duration("1m 30s"), Ok(Duration::from_secs(90)));
        assert_eq!(parse_duration("2min"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("5sec"), Ok(Duration::from_secs(5)));
    }

    #[test]
    fn rejects_what_no_parser_accepted() {
        for text in ["", " ", "fast", "-1s", "-1", "5x", "s", ".", "1.2.3", "inf", "NaN", "1e3", "5 parsecs"] {
            let error = parse_duration(text).expect_err(text);
            assert!(error.to_string().contains(&format!("{text:?}")), "{error}");
        }
    }

    #[test]
    fn positive_refuses_zero_and_ranges_name_their_bounds() {
        assert!(parse_positive_duration("0s").is_err());
        assert_eq!(parse_positive_duration("1ms"), Ok(Duration::from_millis(1)));
        let within = duration_between(Duration::from_millis(100), Duration::from_secs(86_400));
        let error = within("50ms").unwrap_err();
        assert_eq!(error.to_string(), "duration \"50ms\" is out of range: it must be at least 100ms and at most 24h");
        assert_eq!(within("1d"), Ok(Duration::from_secs(86_400)));
    }

    #[test]
    fn formats_in_the_largest_exact_unit_and_reads_back() {
        for text in ["500ms", "1500ms", "5s", "2m", "90s", "1h", "0s"] {
            let parsed = parse_duration(text).unwrap();
            assert_eq!(format_duration(parsed), text);
            assert_eq!(parse_duration(&format_duration(parsed)), Ok(parsed));
        }
    }
}
