//! Golden-file comparison: `UPDATE_SNAPSHOTS=1 cargo test` rewrites the files, a normal run compares.

use std::path::PathBuf;

/// The snapshot directory.
pub fn snapshot_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests").join("snapshots")
}

/// Compares `actual` with `tests/snapshots/<name>`, or writes it when `UPDATE_SNAPSHOTS` is set.
pub fn assert_snapshot(name: &str, actual: &str) {
    let path = snapshot_dir().join(name);
    if std::env::var_os("UPDATE_SNAPSHOTS").is_some() {
        std::fs::write(&path, actual).unwrap_or_else(|error| panic!("writing {}: {error}", path.display()));
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|error| {
        panic!("reading {}: {error}; run with UPDATE_SNAPSHOTS=1 to create it", path.display())
    });
    if expected != actual {
        let first_difference = expected
            .lines()
            .zip(actual.lines())
            .position(|(want, got)| want != got)
            .unwrap_or_else(|| expected.lines().count().min(actual.lines().count()));
        panic!(
            "{} differs from the output at line {}:\n--- expected\n{}\n--- actual\n{}\n(run with UPDATE_SNAPSHOTS=1 to accept)",
            path.display(),
            first_difference + 1,
            expected.lines().nth(first_difference).unwrap_or("<end>"),
            actual.lines().nth(first_difference).unwrap_or("<end>"),
        );
    }
}
