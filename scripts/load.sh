#!/usr/bin/env bash
# Bounded load runs of docs/robustness.md ("Load"), on loopback and the simulated driver; each prints one line of
# figures. The same code runs, shorter, in CI as an integration test; this script only makes it longer.
#
#   scripts/load.sh device-plugin [--seconds N] [--callers N]   Allocate storm while chips flap (default 30 s, 8 callers)
#
# Builds the debug test binaries (as `cargo test` does). Run as root from a root-owned checkout, like the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,8p' "$0"; }

subcommand=${1:-}
[[ -n $subcommand ]] || { usage; exit 2; }
shift
seconds=30
callers=8
while (($#)); do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --callers) callers=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "load.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# Runs one integration test with its output, and prints the lines that carry figures.
run_test() {
    local test_file=$1 test_name=$2 marker=$3 log
    log=$(mktemp)
    if ! cargo test -p ascend-tools --test "$test_file" "$test_name" -- --exact --nocapture >"$log" 2>&1; then
        cat "$log" >&2
        rm -f "$log"
        echo "load.sh: $test_name failed" >&2
        return 1
    fi
    grep -- "$marker" "$log"
    rm -f "$log"
}

case $subcommand in
    device-plugin)
        ASCEND_DP_STORM_SECONDS=$seconds ASCEND_DP_STORM_CALLERS=$callers \
            run_test device_plugin_faults allocate_storm_while_chips_flap "allocate storm:"
        ;;
    *) echo "load.sh: unknown subcommand $subcommand" >&2; usage; exit 2 ;;
esac
