//! Label and field selectors, parsed from the `labelSelector` and `fieldSelector` query parameters.
//!
//! Labels take the whole grammar of kube-apiserver (`a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`, `a`, `!a`).
//! Fields take `path=value`, `path==value` and `path!=value` on any dotted path of the object (`spec.nodeName`,
//! `status.phase`, `regarding.name` ...); an absent field reads as the empty string, as the API server's field
//! sets do, so `spec.nodeName=` selects unscheduled pods. The real server allows only a few paths per kind; the
//! fake allows any, which never makes a correct client fail.

use std::collections::BTreeSet;

use serde_json::Value;

use crate::status::{ApiError, ApiResult};

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
enum LabelRequirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, BTreeSet<String>),
    NotIn(String, BTreeSet<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector(Vec<LabelRequirement>);

impl LabelSelector {
    /// Parses `labelSelector`.
    ///
    /// # Errors
    /// A 400 naming the requirement that is not understood.
    pub fn parse(text: &str) -> ApiResult<LabelSelector> {
        split_top_level(text).into_iter().map(parse_label_requirement).collect::<ApiResult<_>>().map(LabelSelector)
    }

    /// Whether an object's `metadata.labels` satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        let labels = object.pointer("/metadata/labels");
        let label = |key: &str| labels.and_then(|labels| labels.get(key)).and_then(Value::as_str);
        self.0.iter().all(|requirement| match requirement {
            LabelRequirement::Equals(key, value) => label(key) == Some(value.as_str()),
            LabelRequirement::NotEquals(key, value) => label(key) != Some(value.as_str()),
            LabelRequirement::In(key, values) => label(key).is_some_and(|found| values.contains(found)),
            LabelRequirement::NotIn(key, values) => label(key).is_none_or(|found| !values.contains(found)),
            LabelRequirement::Exists(key) => label(key).is_some(),
            LabelRequirement::DoesNotExist(key) => label(key).is_none(),
        })
    }
}

/// A parsed field selector; the empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector(Vec<(String, bool, String)>);

impl FieldSelector {
    /// Parses `fieldSelector`.
    ///
    /// # Errors
    /// A 400 naming the requirement that is not understood.
    pub fn parse(text: &str) -> ApiResult<FieldSelector> {
        let mut requirements = Vec::new();
        for requirement in split_top_level(text) {
            let (path, equal, value) = if let Some((path, value)) = requirement.split_once("!=") {
                (path, false, value)
            } else if let Some((path, value)) = requirement.split_once("==") {
                (path, true, value)
            } else if let Some((path, value)) = requirement.split_once('=') {
                (path, true, value)
            } else {
                return Err(ApiError::bad_request(format!("invalid field selector requirement {requirement:?}")));
            };
            requirements.push((path.trim().to_owned(), equal, value.trim().to_owned()));
        }
        Ok(FieldSelector(requirements))
    }

    /// Whether the object's fields satisfy every requirement.
    pub fn matches(&self, object: &Value) -> bool {
        self.0.iter().all(|(path, equal, value)| (field_text(object, path) == *value) == *equal)
    }
}

/// The text of a dotted field path; numbers and booleans as JSON writes them, absent as empty.
fn field_text(object: &Value, path: &str) -> String {
    let pointer = format!("/{}", path.replace('.', "/"));
    match object.pointer(&pointer) {
        Some(Value::String(text)) => text.clone(),
        Some(Value::Null) | None => String::new(),
        Some(other) => other.to_string(),
    }
}

/// Splits at commas that are not inside parentheses; empty parts are dropped.
fn split_top_level(text: &str) -> Vec<&str> {
    let mut parts = Vec::new();
    let mut depth = 0usize;
    let mut start = 0;
    for (index, character) in text.char_indices() {
        match character {
            '(' => depth += 1,
            ')' => depth = depth.saturating_sub(1),
            ',' if depth == 0 => {
                parts.push(&text[start..index]);
                start = index + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts.into_iter().map(str::trim).filter(|part| !part.is_empty()).collect()
}

fn parse_label_requirement(text: &str) -> ApiResult<LabelRequirement> {
    let invalid = || ApiError::bad_request(format!("unable to parse requirement: {text:?}"));
    if let Some(key) = text.strip_prefix('!') {
        return Ok(LabelRequirement::DoesNotExist(valid_key(key.trim()).ok_or_else(invalid)?));
    }
    for (operator, negated) in [(" notin ", true), (" in ", false)] {
        if let Some((key, set)) = text.split_once(operator) {
            let key = valid_key(key.trim()).ok_or_else(invalid)?;
            let set = set.trim().strip_prefix('(').and_then(|set| set.strip_suffix(')')).ok_or_else(invalid)?;
            let values = set.split(',').map(|value| value.trim().to_owned()).collect();
            return Ok(if negated { LabelRequirement::NotIn(key, values) } else { LabelRequirement::In(key, values) });
        }
    }
    if let Some((key, value)) = text.split_once("!=") {
        return Ok(LabelRequirement::NotEquals(valid_key(key.trim()).ok_or_else(invalid)?, value.trim().to_owned()));
    }
    if let Some((key, value)) = text.split_once("==").or_else(|| text.split_once('=')) {
        return Ok(LabelRequirement::Equals(valid_key(key.trim()).ok_or_else(invalid)?, value.trim().to_owned()));
    }
    Ok(LabelRequirement::Exists(valid_key(text).ok_or_else(invalid)?))
}

fn valid_key(key: &str) -> Option<String> {
    let valid = !key.is_empty() && key.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'));
    valid.then(|| key.to_owned())
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn object() -> Value {
        json!({"metadata": {"name": "p", "labels": {"app": "web", "tier": "front"}},
               "spec": {"nodeName": "n1"}, "status": {"phase": "Pending"}})
    }

    #[test]
    fn label_selectors_follow_the_api_grammar() {
        let matches = |text: &str| LabelSelector::parse(text).expect(text).matches(&object());
        assert!(matches(""));
        assert!(matches("app=web,tier==front"));
        assert!(!matches("app!=web"));
        assert!(matches("app in (db, web),!missing,tier"));
        assert!(!matches("app notin (web)"));
        assert!(matches("missing notin (x)"));
        assert!(!matches("missing"));
        assert!(LabelSelector::parse("app in web").is_err());
        assert!(LabelSelector::parse("a b=c").is_err());
    }

    #[test]
    fn field_selectors_read_dotted_paths_and_absent_fields_as_empty() {
        let matches = |text: &str| FieldSelector::parse(text).expect(text).matches(&object());
        assert!(matches("spec.nodeName=n1,status.phase=Pending"));
        assert!(matches("metadata.name==p"));
        assert!(!matches("spec.nodeName!=n1"));
        assert!(matches("spec.schedulerName="));
        assert!(FieldSelector::parse("spec.nodeName").is_err());
    }
}
