//! The four patch types of `PATCH`, applied to stored JSON: JSON merge patch (RFC 7386), strategic merge patch,
//! JSON patch (RFC 6902), and the merge of server-side apply.
//!
//! Strategic merge needs each list's merge key, which kube-apiserver takes from the Go types. The fake keeps a small
//! table of the lists this project's kinds patch ([`merge_key`]): Node and Pod conditions by `type`, containers,
//! volumes and env by `name`, owner references by `uid` ... Any other list is replaced whole, which is the API's rule
//! for lists without a patch strategy. The directives kube-rs and kubectl send (`$patch: delete|replace`,
//! `$retainKeys`, `$deleteFromPrimitiveList/<field>`, `$setElementOrder/<field>`) are honoured or, for ordering,
//! ignored.

use serde_json::{Map, Value};

use crate::status::{ApiError, ApiResult};

/// The merge key of a list field under strategic merge and apply, by field name; `None`: the list is atomic.
pub fn merge_key(field: &str) -> Option<&'static str> {
    Some(match field {
        "conditions" | "addresses" => "type",
        "containers"
        | "initContainers"
        | "ephemeralContainers"
        | "volumes"
        | "env"
        | "imagePullSecrets"
        | "resourceClaims"
        | "readinessGates"
        | "containerStatuses"
        | "initContainerStatuses" => "name",
        "volumeMounts" | "volumeDevices" => "mountPath",
        "ports" => "containerPort",
        "ownerReferences" => "uid",
        _ => return None,
    })
}

/// Lists of scalars that strategic merge unions instead of replacing.
fn is_merged_scalar_list(field: &str) -> bool {
    field == "finalizers"
}

/// RFC 7386: objects merge key by key, `null` removes, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    if let Value::Object(fields) = target {
        for (key, value) in changes {
            if value.is_null() {
                fields.remove(key);
            } else {
                merge_patch(fields.entry(key.clone()).or_insert(Value::Null), value);
            }
        }
    }
}

/// Strategic merge patch of an object.
///
/// # Errors
/// 400 for a malformed directive.
pub fn strategic_merge_patch(target: &mut Value, patch: &Value) -> ApiResult<()> {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return Ok(());
    };
    if changes.get("$patch").and_then(Value::as_str) == Some("replace") {
        let mut replacement = changes.clone();
        replacement.remove("$patch");
        *target = Value::Object(replacement);
        return Ok(());
    }
    if !target.is_object() {
        *target = Value::Object(Map::new());
    }
    let Value::Object(fields) = target else { return Ok(()) };
    if let Some(retain) = changes.get("$retainKeys") {
        let keep: Vec<&str> = retain
            .as_array()
            .ok_or_else(|| ApiError::bad_request("$retainKeys must be a list"))?
            .iter()
            .filter_map(Value::as_str)
            .collect();
        fields.retain(|key, _| keep.contains(&key.as_str()) || changes.contains_key(key));
    }
    for (key, value) in changes {
        if key.starts_with("$setElementOrder/") || key == "$retainKeys" || key == "$patch" {
            continue;
        }
        if let Some(field) = key.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Some(remove)) = (fields.get_mut(field), value.as_array()) {
                list.retain(|item| !remove.contains(item));
            }
            continue;
        }
        if value.is_null() {
            fields.remove(key);
            continue;
        }
        let slot = fields.entry(key.clone()).or_insert(Value::Null);
        match (value, merge_key(key)) {
            (Value::Array(items), Some(merge_key)) if slot.is_array() => merge_keyed_list(slot, items, merge_key)?,
            (Value::Array(items), _) if is_merged_scalar_list(key) && slot.is_array() => {
                if let Value::Array(list) = slot {
                    for item in items {
                        if !list.contains(item) {
                            list.push(item.clone());
                        }
                    }
                }
            }
            (Value::Object(nested), _) if nested.get("$patch").and_then(Value::as_str) == Some("delete") => {
                fields.remove(key);
            }
            (Value::Object(_), _) => strategic_merge_patch(slot, value)?,
            (Value::Array(items), Some(_)) => {
                *slot = Value::Array(items.iter().filter(|item| item.get("$patch").is_none()).cloned().collect());
            }
            _ => *slot = value.clone(),
        }
    }
    Ok(())
}

/// Merges a patch list into a list whose elements are identified by `key`.
fn merge_keyed_list(target: &mut Value, items: &[Value], key: &str) -> ApiResult<()> {
    let Value::Array(list) = target else { return Ok(()) };
    if items.iter().any(|item| item.get("$patch").and_then(Value::as_str) == Some("replace")) {
        *list = items.iter().filter(|item| item.get("$patch").is_none()).cloned().collect();
        return Ok(());
    }
    for item in items {
        let identity = item
            .get(key)
            .ok_or_else(|| ApiError::bad_request(format!("map: {item} does not contain declared merge key: {key}")))?;
        let position = list.iter().position(|existing| existing.get(key) == Some(identity));
        let delete = item.get("$patch").and_then(Value::as_str) == Some("delete");
        match (position, delete) {
            (Some(index), true) => {
                list.remove(index);
            }
            (None, true) => {}
            (Some(index), false) => strategic_merge_patch(&mut list[index], item)?,
            (None, false) => list.push(item.clone()),
        }
    }
    Ok(())
}

/// RFC 6902 JSON patch: `add`, `remove`, `replace`, `move`, `copy`, `test`.
///
/// # Errors
/// 422 when an operation does not apply (a missing path, a failed `test`), 400 for a malformed patch.
pub fn json_patch(target: &mut Value, patch: &Value) -> ApiResult<()> {
    let operations = patch.as_array().ok_or_else(|| ApiError::bad_request("a JSON patch is a list of operations"))?;
    for operation in operations {
        let field = |name: &str| operation.get(name).and_then(Value::as_str);
        let op = field("op").ok_or_else(|| ApiError::bad_request(format!("operation without op: {operation}")))?;
        let path =
            field("path").ok_or_else(|| ApiError::bad_request(format!("operation without path: {operation}")))?;
        let failed = |why: &str| ApiError {
            code: 422,
            reason: "Invalid",
            message: format!("the JSON patch operation {op} {path} failed: {why}"),
        };
        match op {
            "add" | "replace" => {
                let value = operation.get("value").cloned().ok_or_else(|| failed("no value"))?;
                if op == "replace" && target.pointer(path).is_none() {
                    return Err(failed("the path does not exist"));
                }
                insert_at(target, path, value, op == "add").map_err(|why| failed(&why))?;
            }
            "remove" => {
                remove_at(target, path).ok_or_else(|| failed("the path does not exist"))?;
            }
            "test" => {
                if target.pointer(path) != operation.get("value") {
                    return Err(failed("the value differs"));
                }
            }
            "move" | "copy" => {
                let from = field("from").ok_or_else(|| failed("no from"))?;
                let value = if op == "move" { remove_at(target, from) } else { target.pointer(from).cloned() };
                insert_at(target, path, value.ok_or_else(|| failed("from does not exist"))?, true)
                    .map_err(|why| failed(&why))?;
            }
            other => return Err(ApiError::bad_request(format!("unknown JSON patch operation {other:?}"))),
        }
    }
    Ok(())
}

fn unescape(token: &str) -> String {
    token.replace("~1", "/").replace("~0", "~")
}

fn split_pointer(path: &str) -> Option<(&str, String)> {
    let (parent, last) = path.rsplit_once('/')?;
    Some((parent, unescape(last)))
}

fn insert_at(target: &mut Value, path: &str, value: Value, insert_into_lists: bool) -> Result<(), String> {
    if path.is_empty() {
        *target = value;
        return Ok(());
    }
    let (parent, last) = split_pointer(path).ok_or("not a JSON pointer")?;
    match target.pointer_mut(parent).ok_or("the parent does not exist")? {
        Value::Object(fields) => {
            fields.insert(last, value);
            Ok(())
        }
        Value::Array(list) if last == "-" => {
            list.push(value);
            Ok(())
        }
        Value::Array(list) => {
            let index: usize = last.parse().map_err(|_| format!("{last:?} is not a list index"))?;
            if insert_into_lists && index <= list.len() {
                list.insert(index, value);
            } else if index < list.len() {
                list[index] = value;
            } else {
                return Err(format!("index {index} is out of range"));
            }
            Ok(())
        }
        _ => Err("the parent is not an object or list".into()),
    }
}

fn remove_at(target: &mut Value, path: &str) -> Option<Value> {
    let (parent, last) = split_pointer(path)?;
    match target.pointer_mut(parent)? {
        Value::Object(fields) => fields.remove(&last),
        Value::Array(list) => {
            let index: usize = last.parse().ok()?;
            (index < list.len()).then(|| list.remove(index))
        }
        _ => None,
    }
}

/// The leaf paths of an applied configuration, as JSON pointers. Objects are walked; lists and scalars are leaves
/// (the fake tracks ownership of a list as a whole).
/// Sorted, so that the order does not depend on whether serde_json keeps insertion order (its `preserve_order`
/// feature, which another crate of a build may turn on).
pub fn leaf_paths(value: &Value) -> Vec<String> {
    fn walk(value: &Value, prefix: String, paths: &mut Vec<String>) {
        match value {
            Value::Object(fields) if !fields.is_empty() => {
                for (key, nested) in fields {
                    walk(nested, format!("{prefix}/{}", key.replace('~', "~0").replace('/', "~1")), paths);
                }
            }
            _ => paths.push(prefix),
        }
    }
    let mut paths = Vec::new();
    walk(value, String::new(), &mut paths);
    paths.sort();
    paths
}

/// Removes the value at a JSON pointer, if present, and then any object left empty above it.
pub fn remove_path(target: &mut Value, path: &str) {
    if remove_at(target, path).is_none() {
        return;
    }
    let mut parent = path;
    while let Some((above, _)) = parent.rsplit_once('/') {
        let empty = matches!(target.pointer(above), Some(Value::Object(fields)) if fields.is_empty());
        if above.is_empty() || !empty {
            break;
        }
        remove_at(target, above);
        parent = above;
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn merge_patch_sets_replaces_and_removes() {
        let mut object = json!({"metadata": {"labels": {"a": "1", "b": "2"}}, "spec": {"list": [1, 2]}});
        merge_patch(&mut object, &json!({"metadata": {"labels": {"a": null, "c": "3"}}, "spec": {"list": [3]}}));
        assert_eq!(object, json!({"metadata": {"labels": {"b": "2", "c": "3"}}, "spec": {"list": [3]}}));
    }

    #[test]
    fn strategic_merge_merges_conditions_by_type() {
        let mut node = json!({"status": {"conditions": [
            {"type": "Ready", "status": "True"}, {"type": "NPUHealthy", "status": "True"}]}});
        let patch = json!({"status": {"conditions": [{"type": "NPUHealthy", "status": "False", "reason": "ChipFault"}],
                                      "$setElementOrder/conditions": [{"type": "Ready"}, {"type": "NPUHealthy"}]}});
        strategic_merge_patch(&mut node, &patch).expect("patch");
        assert_eq!(
            node,
            json!({"status": {"conditions": [{"type": "Ready", "status": "True"},
                                             {"type": "NPUHealthy", "status": "False", "reason": "ChipFault"}]}})
        );
        strategic_merge_patch(&mut node, &json!({"status": {"conditions": [{"type": "Ready", "$patch": "delete"}]}}))
            .expect("delete");
        assert_eq!(node["status"]["conditions"].as_array().map(Vec::len), Some(1));
        let error = strategic_merge_patch(&mut node, &json!({"status": {"conditions": [{"status": "x"}]}}));
        assert_eq!(error.map_err(|e| e.code), Err(400));
    }

    #[test]
    fn strategic_merge_unions_finalizers_and_replaces_atomic_lists() {
        let mut object = json!({"metadata": {"finalizers": ["a"]}, "spec": {"devices": [1, 2]}});
        strategic_merge_patch(&mut object, &json!({"metadata": {"finalizers": ["b", "a"]}, "spec": {"devices": [3]}}))
            .expect("patch");
        assert_eq!(object, json!({"metadata": {"finalizers": ["a", "b"]}, "spec": {"devices": [3]}}));
    }

    #[test]
    fn json_patch_operations() {
        let mut object = json!({"metadata": {"annotations": {"a/b": "1"}}, "list": [1, 3]});
        json_patch(
            &mut object,
            &json!([
                {"op": "test", "path": "/metadata/annotations/a~1b", "value": "1"},
                {"op": "add", "path": "/list/1", "value": 2},
                {"op": "replace", "path": "/metadata/annotations/a~1b", "value": "2"},
                {"op": "copy", "from": "/list/0", "path": "/first"},
                {"op": "remove", "path": "/list/2"},
            ]),
        )
        .expect("patch");
        assert_eq!(object, json!({"metadata": {"annotations": {"a/b": "2"}}, "list": [1, 2], "first": 1}));
        let failed = json_patch(&mut object, &json!([{"op": "test", "path": "/first", "value": 9}]));
        assert_eq!(failed.map_err(|e| e.code), Err(422));
    }

    #[test]
    fn leaf_paths_and_removal_tidy_empty_parents() {
        let config = json!({"metadata": {"labels": {"a/b": "1"}}, "data": {"k": "v"}});
        assert_eq!(leaf_paths(&config), ["/data/k", "/metadata/labels/a~1b"]);
        let mut object = json!({"metadata": {"name": "x", "labels": {"a/b": "1"}}, "data": {"k": "v", "j": "w"}});
        remove_path(&mut object, "/metadata/labels/a~1b");
        remove_path(&mut object, "/data/k");
        assert_eq!(object, json!({"metadata": {"name": "x"}, "data": {"j": "w"}}));
    }
}
