#!/usr/bin/env bash
# The fuzz harness in CI, on stable: every committed input of fuzz/corpus (the seeds and the input of every crash
# found so far) replayed through the entry points the cargo-fuzz targets call (fuzz/entries/tests/corpus_replay.rs,
# which also checks that each target has its entry, its [[bin]] and a corpus); the cargo-fuzz manifest resolves; the
# scripts pass shellcheck. The fuzzing itself (nightly, libFuzzer, minutes per target) is scripts/fuzz.sh, run by
# hand; docs/robustness.md has its figures.
set -euo pipefail
cd "$(dirname "$0")/../.."
shellcheck scripts/fuzz.sh scripts/cargo-nightly.sh scripts/checks/fuzz-replay.sh
cargo metadata --manifest-path fuzz/Cargo.toml --format-version 1 --no-deps >/dev/null
if ! output=$(cargo test -p ascend-fuzz --test corpus_replay -- --nocapture 2>&1); then
    printf '%s\n' "$output" >&2
    exit 1
fi
grep -E '^(replayed|test result)' <<<"$output"
