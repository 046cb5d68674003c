//! The `version.info` format of Huawei's packages (driver, firmware, each CANN package), read tolerantly.
//!
//! A file is `key=value` lines; `#` starts a comment line; values may be quoted (`required_package_opp_version="8.2"`);
//! list values are bracketed items separated by commas (`compatible_version=[V100R001C17],[V100R001C18]`,
//! `compatible_version_fw=[6.4.0,6.4.99],[7.0.0,7.7.99]`). The parser keeps every entry in file order, unknown keys
//! included, with its line number, and reports each line it cannot read (no `=`, an empty or strange key, bytes that
//! are not UTF-8) with its number instead of failing: one damaged line must not hide the constraints the others state.
//!
//! Lookups ignore the case of keys, as Huawei's own readers do (`Version` in the driver's file, `version` in a
//! toolkit's `version.cfg`). A repeated key keeps its first value and is reported.

use serde::{Deserialize, Serialize};

/// The most lines read from a file; version files have a few dozen, anything longer is not one.
pub const MAX_LINES: usize = 1_000;

/// The longest line text kept in a [`LineProblem`], so a binary file does not fill a report.
const SHOWN_LINE_CHARS: usize = 80;

/// One `key=value` line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The line number, from 1.
    pub line: usize,
    /// The key, trimmed.
    pub key: String,
    /// The value without blanks or double quotes at either end.
    pub value: String,
}

/// A line that could not be read.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LineProblem {
    /// The line number, from 1.
    pub line: usize,
    /// What is wrong with it.
    pub problem: String,
}

/// A parsed `version.info` (or `*_install.info`, `version.cfg`: the same format).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionInfo {
    /// Every entry, in file order.
    pub entries: Vec<Entry>,
    /// Every line that could not be read, in file order.
    pub problems: Vec<LineProblem>,
}

fn shown(line: &str) -> String {
    let mut text: String = line.chars().take(SHOWN_LINE_CHARS).collect();
    if line.chars().nth(SHOWN_LINE_CHARS).is_some() {
        text.push('…');
    }
    format!("{text:?}")
}

fn key_is_valid(key: &str) -> bool {
    !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
}

impl VersionInfo {
    /// Parses file bytes: lines end in `\n` (a `\r` before it is dropped).
    pub fn parse(bytes: &[u8]) -> VersionInfo {
        let mut info = VersionInfo::default();
        for (index, raw) in bytes.split(|byte| *byte == b'\n').enumerate() {
            let line = index + 1;
            if index == MAX_LINES {
                info.problems.push(LineProblem {
                    line,
                    problem: format!("the file goes on past {MAX_LINES} lines; the rest is not read"),
                });
                break;
            }
            let Ok(text) = std::str::from_utf8(raw) else {
                info.problems.push(LineProblem { line, problem: "not UTF-8 text".to_owned() });
                continue;
            };
            let text = text.trim();
            if text.is_empty() || text.starts_with('#') {
                continue;
            }
            let Some((key, value)) = text.split_once('=') else {
                info.problems.push(LineProblem { line, problem: format!("no `=` in {}", shown(text)) });
                continue;
            };
            let key = key.trim();
            if !key_is_valid(key) {
                info.problems.push(LineProblem {
                    line,
                    problem: format!("{} is not a key (letters, digits, `_`, `-`, `.`)", shown(key)),
                });
                continue;
            }
            if let Some(first) = info.entry(key) {
                let first = first.line;
                info.problems.push(LineProblem {
                    line,
                    problem: format!("{key} is repeated; the value of line {first} is used"),
                });
                continue;
            }
            // Quotes and blanks at either end, in any order, so that a value printed back reads the same.
            let value = value.trim_matches(|c: char| c == '"' || c.is_whitespace());
            info.entries.push(Entry { line, key: key.to_owned(), value: value.to_owned() });
        }
        info
    }

    /// The entry of `key` (case ignored).
    pub fn entry(&self, key: &str) -> Option<&Entry> {
        self.entries.iter().find(|entry| entry.key.eq_ignore_ascii_case(key))
    }

    /// The non-empty value of `key` (case ignored).
    pub fn value(&self, key: &str) -> Option<&str> {
        self.entry(key).map(|entry| entry.value.as_str()).filter(|value| !value.is_empty())
    }

    /// The value of the first of `keys` that has one.
    pub fn first_value(&self, keys: &[&str]) -> Option<&str> {
        keys.iter().find_map(|key| self.value(key))
    }

    /// The entries whose key starts with `prefix` and ends with `suffix` (case ignored), with the part between:
    /// `with_affixes("required_driver_", "_version")` gives `("ascendhal", entry)` for
    /// `required_driver_ascendhal_version`.
    pub fn with_affixes<'a>(&'a self, prefix: &'a str, suffix: &'a str) -> impl Iterator<Item = (&'a str, &'a Entry)> {
        self.entries.iter().filter_map(move |entry| {
            let key = entry.key.as_str();
            let fits = key.len() > prefix.len() + suffix.len()
                && key.get(..prefix.len()).is_some_and(|head| head.eq_ignore_ascii_case(prefix))
                && key.get(key.len() - suffix.len()..).is_some_and(|tail| tail.eq_ignore_ascii_case(suffix));
            fits.then(|| (&key[prefix.len()..key.len() - suffix.len()], entry))
        })
    }
}

/// The items of a bracketed list value, each split at its commas and trimmed: `[6.4.0,6.4.99],[7.0.0,7.7.99]` gives
/// `[["6.4.0", "6.4.99"], ["7.0.0", "7.7.99"]]`, `[V100R001C17],[V100R001C18]` gives `[["V100R001C17"],
/// ["V100R001C18"]]`. Text outside brackets is ignored, an unclosed bracket ends the list, empty items are dropped.
pub fn bracketed_items(value: &str) -> Vec<Vec<String>> {
    let mut items = Vec::new();
    let mut rest = value;
    while let Some(open) = rest.find('[') {
        let after = &rest[open + 1..];
        let Some(close) = after.find(']') else { break };
        let parts: Vec<String> =
            after[..close].split(',').map(str::trim).filter(|part| !part.is_empty()).map(str::to_owned).collect();
        if !parts.is_empty() {
            items.push(parts);
        }
        rest = &after[close + 1..];
    }
    items
}

#[cfg(test)]
mod tests {
    use super::*;

    const DRIVER: &str = "Version=24.1.rc2.2\nascendhal_version=7.35.23\naicpu_version=1.0\ntdt_version=1.0\n\
                          log_version=1.0\nprof_version=2.0\ndvppkernels_version=1.1\ntsfw_version=1.0\n\
                          Innerversion=V100R001C18SPC001B233\n\
                          compatible_version=[V100R001C30],[V100R001C13],[V100R001C15],[V100R001C17],[V100R001C18]\n\
                          compatible_version_fw=[7.0.0,7.2.99]\npackage_version=24.1.rc2.2\n";

    #[test]
    fn a_drivers_file_keeps_every_key_in_order() {
        let info = VersionInfo::parse(DRIVER.as_bytes());
        assert!(info.problems.is_empty(), "{:?}", info.problems);
        assert_eq!(info.entries.len(), 12);
        assert_eq!(info.value("version"), Some("24.1.rc2.2"));
        assert_eq!(info.entry("Innerversion").map(|e| e.line), Some(9));
        assert_eq!(info.value("log_version"), Some("1.0"), "an unchecked key is kept");
        let interfaces: Vec<&str> = info.with_affixes("", "_version").map(|(name, _)| name).collect();
        assert_eq!(
            interfaces,
            ["ascendhal", "aicpu", "tdt", "log", "prof", "dvppkernels", "tsfw", "compatible", "package"]
        );
        let lines = bracketed_items(info.value("compatible_version").expect("listed"));
        assert_eq!(lines.len(), 5);
        assert_eq!(lines[4], ["V100R001C18"]);
    }

    #[test]
    fn quoted_values_crlf_and_comments() {
        let info =
            VersionInfo::parse(b"# toolkit\r\nVersion=8.2.0.0.201\r\nrequired_package_opp_version=\"8.2\"\r\n\r\n");
        assert!(info.problems.is_empty(), "{:?}", info.problems);
        assert_eq!(info.value("required_package_opp_version"), Some("8.2"));
        assert_eq!(info.value("VERSION"), Some("8.2.0.0.201"));
    }

    #[test]
    fn bad_lines_are_reported_with_their_numbers_and_the_rest_is_read() {
        let info =
            VersionInfo::parse(b"Version=7.5.0.1.129\ngarbage line\n=1.0\nfirmware version=1\n\xff\xfe=1\nVersion=9\n");
        assert_eq!(info.value("Version"), Some("7.5.0.1.129"));
        let problems: Vec<(usize, &str)> = info.problems.iter().map(|p| (p.line, p.problem.as_str())).collect();
        assert_eq!(problems.len(), 5, "{problems:?}");
        assert_eq!(problems[0], (2, "no `=` in \"garbage line\""));
        assert_eq!(problems[1].0, 3);
        assert!(problems[2].1.contains("\"firmware version\" is not a key"), "{problems:?}");
        assert_eq!(problems[3], (5, "not UTF-8 text"));
        assert_eq!(problems[4], (6, "Version is repeated; the value of line 1 is used"));
    }

    #[test]
    fn lists_of_ranges_and_of_lines() {
        assert_eq!(
            bracketed_items("[6.4.0,6.4.99],[7.0.0, 7.7.99]"),
            [vec!["6.4.0".to_owned(), "6.4.99".to_owned()], vec!["7.0.0".to_owned(), "7.7.99".to_owned()]]
        );
        assert_eq!(bracketed_items("[23.0.0,23.0.0.],[24.1,24.1.]")[1], ["24.1", "24.1."]);
        assert!(bracketed_items("7.0.0,7.2.99").is_empty());
        assert_eq!(bracketed_items("[a],[],[b"), [vec!["a".to_owned()]]);
    }

    #[test]
    fn an_endless_file_stops_at_the_limit() {
        let text = "k=v\n".repeat(MAX_LINES + 5);
        let info = VersionInfo::parse(text.as_bytes());
        assert_eq!(info.entries.len(), 1);
        assert_eq!(info.problems.len(), MAX_LINES); // every later k=v repeats the key; then the limit
        assert!(info.problems.last().expect("limit").problem.contains("past 1000 lines"));
    }
}
