#!/usr/bin/env bash
# The tests whose output holds a path of the checkout, run once more from a checkout path of over 120 characters (run
# by scripts/test.sh). dcmi-sim's messages name the topology file by its absolute path, and a test that read them into
# a fixed buffer once passed only where the clone happened to sit at a short path (issue 36). The same tree is
# bind-mounted at the long path, so nothing is copied, and the build shares the target directory: only the
# workspace's own crates that these tests need are compiled again. Needs root, for the bind mount.
set -euo pipefail
cd "$(dirname "$0")/../.."
[[ $(id -u) == 0 ]] || { echo "deep-path check: needs root for the bind mount" >&2; exit 1; }

long=/var/cache/ascend-rs-deep-path/a/checkout/path/long/enough/that/every/message/naming/a/file/in/it/overflows/short/buffers/ascend-rs
((${#long} > 120)) || { echo "deep-path check: $long is not over 120 characters" >&2; exit 1; }
mkdir -p "$long"
mountpoint -q "$long" || mount --bind "$PWD" "$long"
trap 'umount "$long"; rm -f "${log:-}"' EXIT
target=${CARGO_TARGET_DIR:-$PWD/target}
# Every test of dcmi-sim: its messages and fixtures carry paths.
log=$(mktemp)
status=0
(cd "$long" && CARGO_TARGET_DIR=$target cargo test -q -p dcmi-sim --no-fail-fast) >"$log" 2>&1 || status=$?
grep -E '^test result|FAILED|panicked' "$log" || true
if ((status != 0)); then
    tail -n 40 "$log" >&2
    echo "deep-path check: dcmi-sim's tests fail at $long (${#long} characters)" >&2
    exit 1
fi
echo "deep-path check: dcmi-sim's tests pass from a checkout path of ${#long} characters"
