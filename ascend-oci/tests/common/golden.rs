//! Golden files: compare output with `tests/fixtures/<name>`; `UPDATE_GOLDEN=1` rewrites them.

#![allow(dead_code)]

use std::path::PathBuf;

/// The fixtures directory.
pub fn fixture_path(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures").join(name)
}

/// Reads a fixture.
pub fn read_fixture(name: &str) -> String {
    let path = fixture_path(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("read {}: {e}", path.display()))
}

/// Asserts that `actual` equals the golden file `name`.
pub fn assert_golden(name: &str, actual: &str) {
    let path = fixture_path(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&path, actual).unwrap_or_else(|e| panic!("write {}: {e}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("read golden {} ({e}); run with UPDATE_GOLDEN=1 to create it", path.display()));
    if expected != actual {
        panic!(
            "{} differs from the golden file:\n{}",
            path.display(),
            ascend_oci::runtime_config::unified_diff(name, &expected, actual)
        );
    }
}
