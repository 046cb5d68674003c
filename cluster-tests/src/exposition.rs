//! The samples of a Prometheus text exposition (what an exporter's `/metrics` serves), read as a scraper reads them:
//! each sample's metric name and labels. Values and timestamps are not kept: the cluster tests compare which series
//! exporters serve and how they are labelled.

use std::collections::BTreeMap;

/// One sample line: its metric name and labels.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct Sample {
    /// The metric name.
    pub name: String,
    /// Label name to value, unescaped.
    pub labels: BTreeMap<String, String>,
}

impl Sample {
    /// The value of label `name`, or "" when the sample has none (as PromQL reads a missing label).
    pub fn label(&self, name: &str) -> &str {
        self.labels.get(name).map_or("", String::as_str)
    }
}

/// Every sample of `body`; comments and blank lines are skipped. An error names the first line that is not a sample.
pub fn samples(body: &str) -> Result<Vec<Sample>, String> {
    body.lines()
        .filter(|line| !line.trim().is_empty() && !line.starts_with('#'))
        .map(|line| sample(line).ok_or_else(|| format!("not a sample line: {line:?}")))
        .collect()
}

fn sample(line: &str) -> Option<Sample> {
    let name_end = line.find(['{', ' ']).unwrap_or(line.len());
    let name = line[..name_end].to_owned();
    let mut labels = BTreeMap::new();
    if line[name_end..].starts_with('{') {
        let mut rest = &line[name_end + 1..];
        loop {
            rest = rest.trim_start_matches([',', ' ']);
            if let Some(after) = rest.strip_prefix('}') {
                rest = after;
                break;
            }
            let (key, after_key) = rest.split_once("=\"")?;
            let (value, after_value) = quoted(after_key)?;
            labels.insert(key.trim().to_owned(), value);
            rest = after_value;
        }
        rest.split_whitespace().next()?;
    } else {
        line[name_end..].split_whitespace().next()?;
    }
    (!name.is_empty()).then_some(Sample { name, labels })
}

/// The unescaped text up to the closing quote, and what follows the quote.
fn quoted(text: &str) -> Option<(String, &str)> {
    let mut value = String::new();
    let mut chars = text.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '"' => return Some((value, &text[at + 1..])),
            '\\' => match chars.next()?.1 {
                'n' => value.push('\n'),
                other => value.push(other),
            },
            other => value.push(other),
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_names_and_labels_with_escapes_and_skips_comments() {
        let body = "# HELP a help\n# TYPE a gauge\na 1\nb{id=\"0\",pod_name=\"p \\\"q\\\"\"} 2 1700000000000\n\n\
                    c{x=\"a,b}\",} 3\n";
        let read = samples(body).expect("samples");
        assert_eq!(read.len(), 3);
        assert_eq!(read[0].name, "a");
        assert!(read[0].labels.is_empty());
        assert_eq!(read[1].label("pod_name"), "p \"q\"");
        assert_eq!(read[1].label("id"), "0");
        assert_eq!(read[1].label("absent"), "");
        assert_eq!(read[2].label("x"), "a,b}");
    }

    #[test]
    fn a_line_that_is_no_sample_is_an_error_naming_it() {
        let error = samples("a{id=\"0\" 1\n").expect_err("unterminated labels");
        assert!(error.contains("a{id"), "{error}");
        assert!(samples("lonely\n").is_err(), "a name without a value");
    }
}
