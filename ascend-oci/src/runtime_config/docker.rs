//! Docker's `daemon.json`.

use std::path::Path;

use serde_json::{json, Map, Value};

use super::configure_options::ConfigureOptions;
use crate::error::{Error, Result};

/// Returns the new `daemon.json` and the runtime names Docker will know. Unrelated keys keep
/// their order; the indentation of the original is reused. An unchanged configuration comes
/// back byte for byte.
///
/// # Errors
/// [`Error::Json`] for unparsable JSON, [`Error::InvalidConfig`] if the top level, `runtimes` or
/// `features` is not an object.
pub fn configure_docker(
    path: &Path,
    original: Option<&str>,
    options: &ConfigureOptions,
) -> Result<(String, Vec<String>)> {
    let text = original.unwrap_or("");
    let mut root: Map<String, Value> = if text.trim().is_empty() {
        Map::new()
    } else {
        serde_json::from_str(text)
            .map_err(|source| Error::Json { what: format!("parse {}", path.display()), source })?
    };
    let before = root.clone();
    let entry = json!({ "path": options.runtime_path.to_string_lossy(), "runtimeArgs": [] });
    object_at(path, &mut root, "runtimes")?.insert(options.runtime_name.clone(), entry);
    if options.set_as_default {
        root.insert("default-runtime".to_owned(), Value::String(options.runtime_name.clone()));
    }
    if options.enable_cdi {
        object_at(path, &mut root, "features")?.insert("cdi".to_owned(), Value::Bool(true));
    }
    let mut handlers = vec!["runc".to_owned()];
    if let Some(Value::Object(runtimes)) = root.get("runtimes") {
        handlers.extend(runtimes.keys().filter(|k| *k != "runc").cloned());
    }
    if root == before {
        if let Some(text) = original {
            return Ok((text.to_owned(), handlers));
        }
    }
    Ok((render(path, &root, detect_indent(text))?, handlers))
}

fn object_at<'a>(path: &Path, root: &'a mut Map<String, Value>, key: &str) -> Result<&'a mut Map<String, Value>> {
    match root.entry(key.to_owned()).or_insert_with(|| Value::Object(Map::new())) {
        Value::Object(map) => Ok(map),
        _ => Err(Error::InvalidConfig { path: path.to_path_buf(), reason: format!("{key:?} is not an object") }),
    }
}

fn detect_indent(text: &str) -> String {
    text.lines()
        .find_map(|line| {
            let indent: String = line.chars().take_while(|c| *c == ' ' || *c == '\t').collect();
            (!indent.is_empty() && indent.len() < line.len()).then_some(indent)
        })
        .unwrap_or_else(|| "  ".to_owned())
}

fn render(path: &Path, root: &Map<String, Value>, indent: String) -> Result<String> {
    use serde::Serialize;
    let mut out = Vec::new();
    let formatter = serde_json::ser::PrettyFormatter::with_indent(indent.as_bytes());
    let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
    root.serialize(&mut serializer)
        .map_err(|source| Error::Json { what: format!("serialise {}", path.display()), source })?;
    out.push(b'\n');
    String::from_utf8(out).map_err(|_| Error::InvalidConfig {
        path: path.to_path_buf(),
        reason: "serialised JSON is not UTF-8".to_owned(),
    })
}
