//! containerd's `config.toml`, config versions 1, 2 and 3, edited with `toml_edit` so comments,
//! formatting and unrelated settings survive.

use std::path::Path;

use toml_edit::{Array, DocumentMut, Item, Table};

use super::configure_options::ConfigureOptions;
use crate::cdi::{DYNAMIC_SPEC_DIR, STATIC_SPEC_DIR};
use crate::error::{Error, Result};

/// The CRI plugin's table of a containerd `config.toml` of this `version` (1, 2 or 3; `None` for others): the
/// section that holds the runtimes, `enable_cdi` and `cdi_spec_dirs`.
pub fn cri_plugin_key(version: i64) -> Option<&'static str> {
    match version {
        1 => Some("cri"),
        2 => Some("io.containerd.grpc.v1.cri"),
        3 => Some("io.containerd.cri.v1.runtime"),
        _ => None,
    }
}

/// The table at `keys` below `table`, created (as implicit tables) where missing.
///
/// # Errors
/// [`Error::InvalidConfig`] if a key on the way holds something other than a table.
pub(super) fn table_at<'a>(path: &Path, mut table: &'a mut Table, keys: &[&str]) -> Result<&'a mut Table> {
    for key in keys {
        let item = table.entry(key).or_insert_with(|| {
            let mut created = Table::new();
            created.set_implicit(true);
            Item::Table(created)
        });
        table = item.as_table_mut().ok_or_else(|| Error::InvalidConfig {
            path: path.to_path_buf(),
            reason: format!("{key:?} is not a table (inline tables are not edited)"),
        })?;
    }
    Ok(table)
}

/// Sets `key` to `new` in `table`, keeping an existing key's comments and indentation; a new
/// key gets the indentation of the table's first key.
pub(super) fn set_key(table: &mut Table, key: &str, new: impl Into<toml_edit::Value>) {
    let mut new = new.into();
    if let Some(old) = table.get_mut(key).and_then(Item::as_value_mut) {
        *new.decor_mut() = old.decor().clone();
        *old = new;
        return;
    }
    let indent = table
        .iter()
        .next()
        .and_then(|(first, _)| table.key(first))
        .and_then(|first| first.leaf_decor().prefix())
        .and_then(|prefix| prefix.as_str())
        // Only the indentation of the key's own line, not the comments above it.
        .map(|prefix| prefix.rsplit('\n').next().unwrap_or_default().to_owned())
        .filter(|indent| indent.chars().all(|c| c == ' ' || c == '\t'));
    new.decor_mut().set_prefix(" ");
    table.insert(key, Item::Value(new));
    if let (Some(indent), Some(mut inserted)) = (indent, table.key_mut(key)) {
        inserted.leaf_decor_mut().set_prefix(indent);
    }
}

/// Returns the new `config.toml` and the runtime handlers containerd's CRI plugin will know.
/// The new runtime copies the plain settings and options of an existing `runc` runtime (so
/// `SystemdCgroup` and friends match), then points `options.BinaryName` at our runtime.
///
/// # Errors
/// [`Error::Toml`] for unparsable TOML, [`Error::InvalidConfig`] for an unknown `version` or a
/// key of the wrong type.
pub fn configure_containerd(
    path: &Path,
    original: Option<&str>,
    options: &ConfigureOptions,
) -> Result<(String, Vec<String>)> {
    let mut doc: DocumentMut =
        original.unwrap_or("").parse().map_err(|source| Error::Toml { path: path.to_path_buf(), source })?;
    let before = doc.to_string();
    let version = match doc.get("version") {
        None if original.is_none_or(|t| t.trim().is_empty()) => {
            doc.insert("version", toml_edit::value(2));
            2
        }
        None => 1,
        Some(item) => item.as_integer().ok_or_else(|| Error::InvalidConfig {
            path: path.to_path_buf(),
            reason: "\"version\" is not an integer".to_owned(),
        })?,
    };
    let plugin = cri_plugin_key(version).ok_or_else(|| Error::InvalidConfig {
        path: path.to_path_buf(),
        reason: format!("config version {version} is not supported (1, 2 or 3)"),
    })?;
    let cri = table_at(path, doc.as_table_mut(), &["plugins", plugin])?;
    if options.enable_cdi {
        if cri.get("enable_cdi").and_then(Item::as_bool) != Some(true) {
            set_key(cri, "enable_cdi", true);
        }
        if !cri.contains_key("cdi_spec_dirs") {
            let mut dirs = Array::new();
            dirs.push(STATIC_SPEC_DIR);
            dirs.push(DYNAMIC_SPEC_DIR);
            set_key(cri, "cdi_spec_dirs", dirs);
        }
    }
    let containerd = table_at(path, cri, &["containerd"])?;
    if options.set_as_default
        && containerd.get("default_runtime_name").and_then(Item::as_str) != Some(options.runtime_name.as_str())
    {
        set_key(containerd, "default_runtime_name", options.runtime_name.as_str());
    }
    let runtimes = table_at(path, containerd, &["runtimes"])?;
    if !runtimes.contains_key(&options.runtime_name) {
        let template = runtimes.get("runc").and_then(Item::as_table).cloned();
        runtimes.insert(&options.runtime_name, Item::Table(runtime_from_template(template.as_ref())));
    }
    let entry = table_at(path, runtimes, &[options.runtime_name.as_str()])?;
    if !entry.contains_key("runtime_type") {
        set_key(entry, "runtime_type", "io.containerd.runc.v2");
    }
    let binary = options.runtime_path.to_string_lossy();
    let runtime_options = table_at(path, entry, &["options"])?;
    runtime_options.set_implicit(false);
    if runtime_options.get("BinaryName").and_then(Item::as_str) != Some(&*binary) {
        set_key(runtime_options, "BinaryName", &*binary);
    }
    let handlers: Vec<String> = table_at(path, doc.as_table_mut(), &["plugins", plugin, "containerd", "runtimes"])?
        .iter()
        .map(|(key, _)| key.to_owned())
        .collect();
    let updated = doc.to_string();
    if updated == before {
        if let Some(text) = original {
            return Ok((text.to_owned(), handlers));
        }
    }
    Ok((updated, handlers))
}

/// A fresh runtime table with the plain values of `template` (and of its `options`), without
/// the template's comments.
fn runtime_from_template(template: Option<&Table>) -> Table {
    let mut table = Table::new();
    let mut options = Table::new();
    if let Some(template) = template {
        for (key, item) in template.iter() {
            match item {
                Item::Value(v) => {
                    let mut v = v.clone();
                    v.decor_mut().clear();
                    table.insert(key, Item::Value(v));
                }
                Item::Table(sub) if key == "options" => {
                    for (option, option_item) in sub.iter() {
                        if let Item::Value(v) = option_item {
                            let mut v = v.clone();
                            v.decor_mut().clear();
                            options.insert(option, Item::Value(v));
                        }
                    }
                }
                _ => {}
            }
        }
    }
    table.insert("options", Item::Table(options));
    table
}
