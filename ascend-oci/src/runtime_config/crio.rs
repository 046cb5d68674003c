//! CRI-O: a drop-in file in `/etc/crio/crio.conf.d/`.

use std::path::Path;

use toml_edit::{Array, DocumentMut};

use super::configure_options::ConfigureOptions;
use super::containerd::{set_key, table_at};
use crate::cdi::{DYNAMIC_SPEC_DIR, STATIC_SPEC_DIR};
use crate::error::{Error, Result};

/// Returns the new drop-in and the handlers it defines (plus CRI-O's built-in `runc` and `crun`).
/// CRI-O reads CDI specs by default; with `enable_cdi` the spec directories are stated
/// explicitly so a drop-in elsewhere cannot leave ours out.
///
/// # Errors
/// [`Error::Toml`] for an unparsable existing drop-in, [`Error::InvalidConfig`] if a table we
/// need is some other type.
pub fn configure_crio(
    path: &Path,
    original: Option<&str>,
    options: &ConfigureOptions,
) -> Result<(String, Vec<String>)> {
    let mut doc: DocumentMut =
        original.unwrap_or("").parse().map_err(|source| Error::Toml { path: path.to_path_buf(), source })?;
    let before = doc.to_string();
    {
        let runtime = table_at(path, doc.as_table_mut(), &["crio", "runtime"])?;
        if options.set_as_default {
            set_if_different(runtime, "default_runtime", &options.runtime_name);
        }
        if options.enable_cdi && !runtime.contains_key("cdi_spec_dirs") {
            let mut dirs = Array::new();
            dirs.push(STATIC_SPEC_DIR);
            dirs.push(DYNAMIC_SPEC_DIR);
            set_key(runtime, "cdi_spec_dirs", dirs);
        }
    }
    let entry = table_at(path, doc.as_table_mut(), &["crio", "runtime", "runtimes", &options.runtime_name])?;
    set_if_different(entry, "runtime_path", &options.runtime_path.to_string_lossy());
    set_if_different(entry, "runtime_type", "oci");
    set_if_different(entry, "runtime_root", &format!("/run/{}", options.runtime_name));
    let mut handlers = vec!["runc".to_owned(), "crun".to_owned()];
    if let Some(runtimes) =
        doc.get("crio").and_then(|c| c.get("runtime")).and_then(|r| r.get("runtimes")).and_then(|r| r.as_table_like())
    {
        handlers.extend(runtimes.iter().map(|(k, _)| k.to_owned()).filter(|k| k != "runc" && k != "crun"));
    }
    let updated = doc.to_string();
    if updated == before {
        if let Some(text) = original {
            return Ok((text.to_owned(), handlers));
        }
    }
    Ok((updated, handlers))
}

fn set_if_different(table: &mut toml_edit::Table, key: &str, wanted: &str) {
    if table.get(key).and_then(|item| item.as_str()) != Some(wanted) {
        set_key(table, key, wanted);
    }
}
