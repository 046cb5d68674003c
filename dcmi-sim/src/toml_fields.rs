//! Parses TOML into a schema type and turns a serde error into a [`Error`] with a field path.
//!
//! `toml` reports the byte span of the offending value or table; the path (`card[1].chip[0].pcie`) is
//! recovered from the table headers and the key that precede that span.

use std::collections::HashMap;
use std::path::Path;

use serde::de::DeserializeOwned;

use crate::error::Error;

/// Deserialises `text`; on error names `origin`, the field path and toml's message with the line.
pub(crate) fn parse<T: DeserializeOwned>(text: &str, origin: &Path) -> Result<T, Error> {
    toml::from_str::<T>(text).map_err(|error| {
        let message = error.message().replace('\n', " ").trim().to_owned();
        match error.span() {
            Some(span) => {
                let line = text[..span.start.min(text.len())].matches('\n').count() + 1;
                Error::config(origin, field_path_at(text, span.start), format!("{message} (line {line})"))
            }
            None => Error::config(origin, "(file)", message),
        }
    })
}

/// The dotted field path of the value or table that starts at byte `offset` of `text`.
pub(crate) fn field_path_at(text: &str, offset: usize) -> String {
    let mut counters: HashMap<String, usize> = HashMap::new();
    let mut current = String::new();
    let mut consumed = 0;
    for line in text.split_inclusive('\n') {
        consumed += line.len();
        let trimmed = line.trim();
        let is_header = trimmed.starts_with('[');
        if is_header {
            current = resolve_header(trimmed, &mut counters);
        }
        if offset < consumed {
            if is_header {
                return non_empty(current);
            }
            // The key of the line holding the offset, whether the span starts at the key (unknown
            // field) or at the value (wrong type).
            let key = line
                .split('=')
                .next()
                .map(str::trim)
                .filter(|key| !key.is_empty() && !key.starts_with('#'))
                .map(|key| key.trim_matches('"').to_owned());
            return match key {
                Some(key) if current.is_empty() => key,
                Some(key) => format!("{current}.{key}"),
                None => non_empty(current),
            };
        }
    }
    non_empty(current)
}

fn non_empty(path: String) -> String {
    if path.is_empty() {
        "(top level)".to_owned()
    } else {
        path
    }
}

/// Path of a `[a.b]` or `[[a.b]]` header, with array indexes resolved from earlier headers.
fn resolve_header(header: &str, counters: &mut HashMap<String, usize>) -> String {
    let is_array = header.starts_with("[[");
    let inner = header.trim_start_matches('[').split(']').next().unwrap_or("").trim();
    let segments: Vec<&str> = inner.split('.').map(str::trim).collect();
    let mut resolved = String::new();
    for (position, segment) in segments.iter().enumerate() {
        let key = if resolved.is_empty() { (*segment).to_owned() } else { format!("{resolved}.{segment}") };
        let last = position + 1 == segments.len();
        if last && is_array {
            let next = counters.entry(key.clone()).and_modify(|count| *count += 1).or_insert(0);
            resolved = format!("{key}[{next}]");
        } else if let Some(index) = counters.get(&key) {
            resolved = format!("{key}[{index}]");
        } else {
            resolved = key;
        }
    }
    resolved
}

#[cfg(test)]
mod tests {
    use super::field_path_at;

    #[test]
    fn paths_follow_array_tables() {
        let text = "[simulation]\nseed = 1\n[[card]]\ncard_id = 0\n[[card.chip]]\nlogic_id = 0\n[[card]]\ncard_id = 1\n[[card.chip]]\nlogic_id = 1\n[[card.chip]]\nlogic_id = x\n";
        let offset = text.rfind('x').unwrap_or(0);
        assert_eq!(field_path_at(text, offset), "card[1].chip[1].logic_id");
        assert_eq!(field_path_at(text, text.find("seed").unwrap_or(0) + 7), "simulation.seed");
        let header = text.rfind("[[card.chip]]").unwrap_or(0);
        assert_eq!(field_path_at(text, header), "card[1].chip[1]");
    }
}
