//! Kubernetes RuntimeClass: the manifest whose `handler` matches what we registered, and a
//! reader for the RuntimeClasses of a cluster (as YAML or JSON exported to a file).

/// A RuntimeClass: its name and handler (from a file, or from the API server).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuntimeClassRef {
    /// `metadata.name`.
    pub name: String,
    /// `handler`.
    pub handler: String,
}

/// The RuntimeClass manifest (YAML) for a registered handler.
pub fn runtime_class_manifest(name: &str, handler: &str) -> String {
    format!("apiVersion: node.k8s.io/v1\nkind: RuntimeClass\nmetadata:\n  name: {name}\nhandler: {handler}\n")
}

/// Extracts RuntimeClasses from `kubectl get runtimeclass -o json` output (a List or a single
/// object) or from YAML documents separated by `---`. The YAML reader understands the shape
/// kubectl prints (top-level `kind:` and `handler:`, `name:` under `metadata:`); it is not a
/// general YAML parser.
pub fn parse_runtime_classes(text: &str) -> Vec<RuntimeClassRef> {
    if text.trim_start().starts_with('{') {
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            let mut found = Vec::new();
            collect_json(&value, &mut found);
            return found;
        }
    }
    text.split("\n---")
        .filter_map(|document| {
            let mut kind = None;
            let mut handler = None;
            let mut name = None;
            let mut in_metadata = false;
            for line in document.lines() {
                let top_level = !line.starts_with(' ') && !line.starts_with('\t');
                let trimmed = line.trim();
                if top_level {
                    in_metadata = trimmed == "metadata:";
                    if let Some(v) = trimmed.strip_prefix("kind:") {
                        kind = Some(unquote(v));
                    } else if let Some(v) = trimmed.strip_prefix("handler:") {
                        handler = Some(unquote(v));
                    }
                } else if in_metadata && name.is_none() {
                    if let Some(v) = trimmed.strip_prefix("name:") {
                        name = Some(unquote(v));
                    }
                }
            }
            (kind.as_deref() == Some("RuntimeClass"))
                .then(|| RuntimeClassRef { name: name.unwrap_or_default(), handler: handler.unwrap_or_default() })
        })
        .collect()
}

fn unquote(text: &str) -> String {
    text.trim().trim_matches(|c| c == '"' || c == '\'').to_owned()
}

fn collect_json(value: &serde_json::Value, found: &mut Vec<RuntimeClassRef>) {
    if let Some(items) = value.get("items").and_then(|i| i.as_array()) {
        for item in items {
            collect_json(item, found);
        }
    }
    if value.get("kind").and_then(|k| k.as_str()) == Some("RuntimeClass") {
        found.push(RuntimeClassRef {
            name: value.pointer("/metadata/name").and_then(|n| n.as_str()).unwrap_or_default().to_owned(),
            handler: value.get("handler").and_then(|h| h.as_str()).unwrap_or_default().to_owned(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifest_round_trips_through_the_reader() {
        let manifest = runtime_class_manifest("ascend", "ascend");
        let found = parse_runtime_classes(&format!("{manifest}---\nkind: Pod\nmetadata:\n  name: p\n"));
        assert_eq!(found, [RuntimeClassRef { name: "ascend".into(), handler: "ascend".into() }]);
    }

    #[test]
    fn json_list() {
        let text = r#"{"kind":"List","items":[{"kind":"RuntimeClass","metadata":{"name":"npu"},"handler":"huawei"}]}"#;
        assert_eq!(parse_runtime_classes(text), [RuntimeClassRef { name: "npu".into(), handler: "huawei".into() }]);
    }
}
