#!/usr/bin/env bash
# The comparison tier's own scripts and harness, checked before the tier runs (run by scripts/test.sh): shellcheck of
# scripts/peers/ and peer-tests/run.sh, and the unit tests of the harness's exposition reader and differ
# (peer-tests/tests/), which need neither Huawei's programs nor ours.
set -euo pipefail
cd "$(dirname "$0")/../.."
shellcheck -x scripts/peers/*.sh peer-tests/run.sh scripts/checks/peer-scripts.sh
python3 -m unittest discover -s peer-tests/tests -t peer-tests
echo "peer scripts: shellcheck clean; the harness's unit tests pass"
