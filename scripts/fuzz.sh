#!/usr/bin/env bash
# Runs every fuzz target of fuzz/ (cargo-fuzz, libFuzzer) for a bounded time, one after another, and prints the
# executions of each. Needs cargo-fuzz (`cargo install cargo-fuzz`) and nightly features: scripts/cargo-nightly.sh uses
# a nightly toolchain when rustup has one, and otherwise stable with RUSTC_BOOTSTRAP=1.
#
#   scripts/fuzz.sh [--seconds N] [--runs N] [--jobs N] [--merge] [target ...]  (default: every target, 60 s, 1 job)
#
# --runs N stops a target after N executions (libFuzzer's -runs), --seconds still caps it: `--runs 100000 --seconds
# 1800` proves the project's floor of 10^5 executions per target (docs/robustness.md) in the least time.
# Each run starts from the committed seeds in fuzz/corpus/<target>/ and writes what it finds to a scratch corpus, so
# the committed corpus changes only with --merge (which adds the inputs that reach new coverage, minimised by
# libFuzzer's -merge=1). A crash, a hang (one input over 10 s) or an allocation over 512 MiB fails the target: its
# input lands in fuzz/artifacts/<target>/; replay it with
# `scripts/cargo-nightly.sh fuzz run --fuzz-dir fuzz <target> <file>`,
# fix the parser, and copy the input into fuzz/corpus/<target>/ so that CI replays it for ever
# (fuzz/entries/tests/corpus_replay.rs). The summary table is also written to fuzz/last-run.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
# cargo-fuzz runs the fuzzer from the fuzz directory: every path handed to libFuzzer is absolute.
repo=$PWD

seconds=60
runs=
jobs=1
merge=false
targets=()
while (($#)); do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --jobs) jobs=$2; shift 2 ;;
        --merge) merge=true; shift ;;
        -h | --help) sed -n '2,18p' "$0"; exit 0 ;;
        -*) echo "fuzz.sh: unknown option $1" >&2; exit 2 ;;
        *) targets+=("$1"); shift ;;
    esac
done
if ((${#targets[@]} == 0)); then
    for file in fuzz/fuzz_targets/*.rs; do
        targets+=("$(basename "$file" .rs)")
    done
fi
command -v cargo-fuzz >/dev/null || { echo "fuzz.sh: cargo-fuzz is missing: cargo install cargo-fuzz" >&2; exit 1; }

# `--fuzz-dir` goes right after the subcommand: after `--` it would reach libFuzzer, which took `fuzz` for its first
# corpus directory (seeding every target from the whole fuzz/ tree, binaries included, and writing new inputs there).
fuzz() { "$repo/scripts/cargo-nightly.sh" fuzz "$1" --fuzz-dir fuzz "${@:2}"; }
# One build for all targets (cargo-fuzz would otherwise check the build before each run).
fuzz build

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
summary=$repo/fuzz/last-run.txt
printf '%-20s %12s %10s %8s %8s  %s\n' target executions exec/s seeds corpus result | tee "$summary"
failed=0
for target in "${targets[@]}"; do
    seeds=$repo/fuzz/corpus/$target
    [[ -d $seeds ]] || { echo "fuzz.sh: no corpus $seeds" >&2; exit 2; }
    work=$scratch/$target
    mkdir -p "$work" "$repo/fuzz/artifacts/$target"
    log=$scratch/$target.log
    result=ok
    # -timeout: one input over 10 s is a hang; -malloc_limit_mb: one allocation over 512 MiB is unbounded. Parallel
    # jobs are worker processes logging to fuzz-<n>.log; one job runs in this process.
    parallel=()
    ((jobs > 1)) && parallel=(-jobs="$jobs" -workers="$jobs")
    limit=()
    [[ -n $runs ]] && limit=(-runs="$runs")
    started=$SECONDS
    fuzz run "$target" "$work" "$seeds" -- -max_total_time="$seconds" "${limit[@]}" "${parallel[@]}" \
        -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=512 -print_final_stats=1 \
        -artifact_prefix="$repo/fuzz/artifacts/$target/" >"$log" 2>&1 || result=FAILED
    if ((jobs > 1)); then
        cat fuzz-*.log >>"$log" 2>/dev/null || true
        rm -f fuzz-*.log
    fi
    elapsed=$((SECONDS - started))
    executions=$(awk '/stat::number_of_executed_units:/ { sum += $2 } END { print sum + 0 }' "$log")
    rate=$((executions / (elapsed > 0 ? elapsed : 1)))
    if $merge && [[ $result == ok ]]; then
        fuzz run "$target" "$seeds" "$work" -- -merge=1 >>"$log" 2>&1 || result="merge FAILED"
    fi
    printf '%-20s %12s %10s %8s %8s  %s\n' "$target" "$executions" "$rate" "$(find "$seeds" -type f | wc -l)" \
        "$(find "$work" -type f | wc -l)" "$result" | tee -a "$summary"
    if [[ $result != ok ]]; then
        failed=1
        grep -E 'ERROR|panicked|SUMMARY|Test unit written' "$log" | head -20 >&2 || true
    fi
done
exit "$failed"
