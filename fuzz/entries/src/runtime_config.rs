//! The container engines' configuration files that `ascend-ctk runtime configure` edits, and the RuntimeClasses it
//! checks against them.

use std::path::{Path, PathBuf};

use ascend_oci::runtime_config::{
    configure_containerd, configure_crio, configure_docker, parse_runtime_classes, ConfigureOptions,
};

use crate::text;

/// The signature of the three editors.
type Editor = fn(&Path, Option<&str>, &ConfigureOptions) -> ascend_oci::Result<(String, Vec<String>)>;

/// Docker's `daemon.json`; the result is JSON naming our runtime.
pub fn docker_daemon_json(data: &[u8]) {
    if let Some(updated) = edit(data, configure_docker) {
        let parsed: serde_json::Value = serde_json::from_str(&updated).unwrap_or_else(|e| panic!("output: {e}"));
        assert!(parsed.pointer("/runtimes").is_some_and(serde_json::Value::is_object), "{updated}");
    }
}

/// containerd's `config.toml`; the result is TOML.
pub fn containerd_toml(data: &[u8]) {
    if let Some(updated) = edit(data, configure_containerd) {
        if let Err(error) = updated.parse::<toml_edit::DocumentMut>() {
            panic!("output is not TOML: {error}\n{updated}");
        }
    }
}

/// A CRI-O drop-in; the result is TOML.
pub fn crio_toml(data: &[u8]) {
    if let Some(updated) = edit(data, configure_crio) {
        if let Err(error) = updated.parse::<toml_edit::DocumentMut>() {
            panic!("output is not TOML: {error}\n{updated}");
        }
    }
}

/// RuntimeClasses exported from a cluster (`kubectl get runtimeclass -o json` or YAML documents).
pub fn runtime_classes(data: &[u8]) {
    if let Some(text) = text(data) {
        let _ = parse_runtime_classes(text);
    }
}

/// Runs an editor on `data` (the first byte chooses the options, the rest is the file) and checks what every caller
/// relies on: the engine then knows our handler, and running again changes nothing (the command is idempotent).
fn edit(data: &[u8], editor: Editor) -> Option<String> {
    let (&choice, rest) = data.split_first()?;
    let original = text(rest)?;
    let options = ConfigureOptions {
        runtime_name: ["ascend", "runc", "npu.v2"][usize::from(choice >> 2) % 3].to_owned(),
        runtime_path: PathBuf::from("/usr/local/bin/ascend-ctk"),
        set_as_default: choice & 1 != 0,
        enable_cdi: choice & 2 != 0,
    };
    let path = Path::new("fuzzed");
    let (updated, handlers) = editor(path, Some(original), &options).ok()?;
    assert!(handlers.contains(&options.runtime_name), "handlers {handlers:?} lack {:?}", options.runtime_name);
    let again = editor(path, Some(&updated), &options);
    match again {
        Ok((twice, handlers_twice)) => {
            assert_eq!(twice, updated, "a second run changed the file");
            assert_eq!(handlers_twice, handlers);
        }
        Err(error) => panic!("the edited file is refused: {error}\n{updated}"),
    }
    Some(updated)
}
