#!/usr/bin/env bash
# Bounded load runs of docs/robustness.md ("Load"), on loopback and the simulated driver; each prints one line of
# figures. The same code runs, shorter, in CI as an integration test; this script only makes it longer.
#
#   scripts/load.sh device-plugin [--seconds N] [--callers N]   Allocate storm while chips flap (default 30 s, 8 callers)
#   scripts/load.sh exporter [--seconds N] [--clients N] [--loris N] [--bcrypt-cost N]
#                       HTTPS scrapes with basic auth beside intruders and slow-loris clients (default 60 s, 4 clients,
#                       32 slow-loris connections per kind, bcrypt cost 10 as `htpasswd -nBC 10` makes)
#
# Builds the debug test binaries (as `cargo test` does). Run as root from a root-owned checkout, like the tests.
set -euo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '2,11p' "$0"; }

subcommand=${1:-}
[[ -n $subcommand ]] || { usage; exit 2; }
shift
seconds=
callers=8
clients=4
loris=32
bcrypt_cost=10
while (($#)); do
    case $1 in
        --seconds) seconds=$2; shift 2 ;;
        --callers) callers=$2; shift 2 ;;
        --clients) clients=$2; shift 2 ;;
        --loris) loris=$2; shift 2 ;;
        --bcrypt-cost) bcrypt_cost=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "load.sh: unknown option $1" >&2; exit 2 ;;
    esac
done

# Runs one integration test with its output, and prints the lines that carry figures.
run_test() {
    local package=$1 test_file=$2 test_name=$3 marker=$4 log
    log=$(mktemp)
    if ! cargo test -p "$package" --test "$test_file" "$test_name" -- --exact --nocapture >"$log" 2>&1; then
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
        ASCEND_DP_STORM_SECONDS=${seconds:-30} ASCEND_DP_STORM_CALLERS=$callers \
            run_test ascend-programs device_plugin_faults allocate_storm_while_chips_flap "allocate storm:"
        ;;
    exporter)
        ASCEND_EXPORTER_LOAD_SECONDS=${seconds:-60} ASCEND_EXPORTER_LOAD_CLIENTS=$clients \
            ASCEND_EXPORTER_LOAD_LORIS=$loris ASCEND_EXPORTER_LOAD_BCRYPT_COST=$bcrypt_cost \
            run_test ascend-exporter load \
            tls_scrapes_under_load_lose_no_sample_and_shrug_off_intruders_and_slow_loris "exporter load:"
        ;;
    *) echo "load.sh: unknown subcommand $subcommand" >&2; usage; exit 2 ;;
esac
