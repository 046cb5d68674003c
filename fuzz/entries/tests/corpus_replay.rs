//! Replays every committed fuzz input, seeds and the inputs of crashes found so far, through the entry points the
//! fuzz targets call, on the stable toolchain: CI's guard that nothing the fuzzer once broke breaks again. Also keeps
//! the three lists in step: each entry has a cargo-fuzz target and a non-empty corpus, and nothing else has either.

use std::collections::BTreeSet;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use ascend_fuzz::TARGETS;

/// A generous bound for one input in a debug build: libFuzzer runs these in microseconds, so anything near it is a
/// hang the fuzzer would report as a timeout.
const SLOW_INPUT: Duration = Duration::from_secs(5);

fn fuzz_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn names_in(dir: &Path, suffix: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("directory entry").file_name().to_string_lossy().into_owned())
        .filter_map(|name| name.strip_suffix(suffix).map(str::to_owned))
        .collect()
}

#[test]
fn every_entry_has_a_fuzz_target_and_a_corpus() {
    let entries: BTreeSet<String> = TARGETS.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(entries.len(), TARGETS.len(), "a target is listed twice");
    assert_eq!(names_in(&fuzz_dir().join("fuzz_targets"), ".rs"), entries, "fuzz/fuzz_targets/*.rs");
    let corpora: BTreeSet<String> =
        names_in(&fuzz_dir().join("corpus"), "").into_iter().filter(|name| !name.starts_with('.')).collect();
    assert_eq!(corpora, entries, "fuzz/corpus/*/");
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    for name in &entries {
        assert!(manifest.contains(&format!("name = \"{name}\"")), "fuzz/Cargo.toml has no [[bin]] {name}");
    }
}

#[test]
fn every_corpus_input_passes() {
    let mut failures = Vec::new();
    let mut replayed = 0;
    for (name, entry) in TARGETS {
        let dir = fuzz_dir().join("corpus").join(name);
        let mut inputs: Vec<PathBuf> = std::fs::read_dir(&dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|item| item.expect("directory entry").path())
            .collect();
        inputs.sort();
        assert!(!inputs.is_empty(), "{} is empty: seed it from the tests' fixtures", dir.display());
        for input in inputs {
            let data = std::fs::read(&input).unwrap_or_else(|e| panic!("{}: {e}", input.display()));
            let started = Instant::now();
            let outcome = catch_unwind(AssertUnwindSafe(|| entry(&data)));
            let took = started.elapsed();
            if outcome.is_err() {
                failures.push(format!("{}: panicked", input.display()));
            } else if took > SLOW_INPUT {
                failures.push(format!("{}: took {took:?}", input.display()));
            }
            replayed += 1;
        }
    }
    assert!(failures.is_empty(), "{} of {replayed} inputs failed:\n{}", failures.len(), failures.join("\n"));
    eprintln!("replayed {replayed} inputs of {} targets", TARGETS.len());
}
