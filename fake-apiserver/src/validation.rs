//! The field rules of the real API server that our clients have broken, checked on create and update so that the
//! fast tests fail as the real server does (422 Invalid, naming the field). Public, so that a client's unit tests
//! can hold what they build against the same rules.
//!
//! ResourceSlices (`resource.k8s.io`, pkg/apis/resource/validation in Kubernetes): a device's name and the names
//! of counter sets and counters must be DNS labels (RFC 1123: lowercase letters, digits and `-`, at most 63,
//! starting and ending alphanumeric). The real server refused `npu-0-vir02_1c` and a counter named `aiCores`.

use serde_json::Value;

use crate::kinds::Kind;
use crate::status::{ApiError, ApiResult};

/// Checks `object` of `kind` against the rules above.
///
/// # Errors
/// 422 Invalid listing every field that breaks a rule.
pub fn check(kind: &Kind, object: &Value) -> ApiResult<()> {
    if kind.group != "resource.k8s.io" || kind.plural != "resourceslices" {
        return Ok(());
    }
    let mut problems = Vec::new();
    let spec = &object["spec"];
    for (index, device) in spec["devices"].as_array().into_iter().flatten().enumerate() {
        label(&mut problems, &format!("spec.devices[{index}].name"), &device["name"]);
        for (set, consumption) in device["consumesCounters"].as_array().into_iter().flatten().enumerate() {
            let path = format!("spec.devices[{index}].consumesCounters[{set}]");
            label(&mut problems, &format!("{path}.counterSet"), &consumption["counterSet"]);
            counters(&mut problems, &path, &consumption["counters"]);
        }
    }
    for (index, set) in spec["sharedCounters"].as_array().into_iter().flatten().enumerate() {
        let path = format!("spec.sharedCounters[{index}]");
        label(&mut problems, &format!("{path}.name"), &set["name"]);
        counters(&mut problems, &path, &set["counters"]);
    }
    if problems.is_empty() {
        return Ok(());
    }
    let name = object.pointer("/metadata/name").and_then(Value::as_str).unwrap_or_default();
    Err(ApiError::invalid(&kind.plural, name, &format!("[{}]", problems.join(", "))))
}

fn counters(problems: &mut Vec<String>, path: &str, counters: &Value) {
    for name in counters.as_object().into_iter().flat_map(|map| map.keys()) {
        if !is_dns_label(name) {
            problems.push(format!("{path}.counters[{name}]: Invalid value: {name:?}: {LABEL_RULE}"));
        }
    }
}

fn label(problems: &mut Vec<String>, path: &str, value: &Value) {
    let text = value.as_str().unwrap_or_default();
    if !is_dns_label(text) {
        problems.push(format!("{path}: Invalid value: {text:?}: {LABEL_RULE}"));
    }
}

const LABEL_RULE: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and \
                          must start and end with an alphanumeric character";

/// An RFC 1123 label: 1 to 63 of `[a-z0-9-]`, alphanumeric at both ends.
fn is_dns_label(text: &str) -> bool {
    let alphanumeric = |byte: u8| byte.is_ascii_lowercase() || byte.is_ascii_digit();
    let bytes = text.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 63
        && bytes.iter().all(|&byte| alphanumeric(byte) || byte == b'-')
        && alphanumeric(bytes[0])
        && alphanumeric(bytes[bytes.len() - 1])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn slices() -> Kind {
        Kind::cluster("resource.k8s.io", "v1", "resourceslices", "ResourceSlice")
    }

    #[test]
    fn device_and_counter_names_must_be_dns_labels() {
        let good = json!({"metadata": {"name": "s"}, "spec": {
            "devices": [{"name": "npu-0-vir02-1c", "consumesCounters": [{"counterSet": "npu-0-counters",
                "counters": {"aicores": {"value": "2"}}}]}],
            "sharedCounters": [{"name": "npu-0-counters", "counters": {"aicores": {"value": "8"}, "memory": {"value": "1"}}}],
        }});
        assert!(check(&slices(), &good).is_ok());
        let bad = json!({"metadata": {"name": "s"}, "spec": {
            "devices": [{"name": "npu-0-vir02_1c", "consumesCounters": [{"counterSet": "npu-0-counters",
                "counters": {"aiCores": {"value": "2"}}}]}],
            "sharedCounters": [{"name": "npu-0-counters", "counters": {"aiCores": {"value": "8"}}}],
        }});
        let error = check(&slices(), &bad).expect_err("refused").message;
        for field in [
            "spec.devices[0].name: Invalid value: \"npu-0-vir02_1c\"",
            "spec.devices[0].consumesCounters[0].counters[aiCores]",
            "spec.sharedCounters[0].counters[aiCores]",
        ] {
            assert!(error.contains(field), "{field} in {error}");
        }
        assert!(check(&Kind::cluster("", "v1", "nodes", "Node"), &bad).is_ok(), "other kinds are not checked");
    }

    #[test]
    fn labels() {
        for good in ["a", "npu-0", "0abc", &"a".repeat(63)] {
            assert!(is_dns_label(good), "{good}");
        }
        for bad in ["", "-a", "a-", "aiCores", "a_b", "a.b", &"a".repeat(64)] {
            assert!(!is_dns_label(bad), "{bad}");
        }
    }
}
